import pytest

from gpu_dask_kit.errors import OptionError
from gpu_dask_kit.memory import align_pool_size, describe_size, parse_size, resolve_size


@pytest.mark.parametrize(
    "given, expected",
    [
        ("4GiB", 4 * 2**30),
        ("512 MB", 512_000_000),
        (1024, 1024),
        ("1e9", 1_000_000_000),
        (0.8, 0.8),
        ("0.5", 0.5),
        ("80%", 0.8),
        ("100%", 1.0),
        (1.0, 1.0),
        ("2 kib", 2048),
    ],
)
def test_parse_size_accepts_documented_forms(given, expected):
    assert parse_size(given, "memory_limit") == expected


@pytest.mark.parametrize(
    "given",
    [
        "12 parsecs",
        "",
        "   ",
        0,
        -1,
        -0.5,
        0.0,
        1.5,
        "150%",
        "-3GB",
        "nan",
        "inf",
        float("inf"),
        True,
        [],
        {},
        object(),
        "1.5",
    ],
)
def test_parse_size_rejects_with_parameter_value_and_forms(given):
    with pytest.raises(OptionError) as info:
        parse_size(given, "device_memory_limit")
    message = str(info.value)
    assert message.startswith(f"device_memory_limit={given!r} is not accepted")
    assert "GiB" in message and "fraction" in message
    assert info.value.parameter == "device_memory_limit"


def test_unit_typo_names_the_units():
    with pytest.raises(OptionError, match="Check the unit: KB, MB"):
        parse_size("12 parsecs", "memory_limit")


def test_resolve_and_align():
    assert resolve_size(0.25, 16 * 2**30) == 4 * 2**30
    assert resolve_size(123, 10**9) == 123
    assert align_pool_size(4 * 2**30 + 100) == 4 * 2**30
    assert align_pool_size(255) == 0


def test_describe_size():
    assert describe_size(0.5) == "50% of the total"
    assert describe_size(2 * 2**30) == "2.00 GiB"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (0.6 * 16 * 2**30, "nor a whole number of bytes (round it: int(...))"),  # learner review 57: 10.3 GB "not plausible"
        (12.5, "nor a plausible number of bytes"),
    ],
)
def test_a_float_above_1_says_what_it_is_not(value, said):
    with pytest.raises(OptionError) as info:
        parse_size(value, "device_memory_limit")
    assert said in str(info.value) and "device_memory_limit" in str(info.value)
