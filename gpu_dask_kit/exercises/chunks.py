"""00-1's array: its shape, dtype and chunks (how many, and not merged again before the work)."""

from __future__ import annotations

from typing import Any

from .judging import describe, is_lazy
from .model import Hint

__all__ = ["check_a", "chunks_merged"]


def check_a(a: Any, n: int) -> None:
    if not (is_lazy(a) and hasattr(a, "numblocks")):
        raise Hint(f"a is {describe(a)}, made in this notebook: the exercise is about a Dask array, split into chunks the workers compute.")
    if tuple(a.shape) != (n,):
        raise Hint(f"a has shape {a.shape}: it should hold the N integers 0, 1, ..., N-1 (one dimension).")
    if a.dtype.kind not in "iu":
        raise Hint(f"a holds {a.dtype} values: the integers 0 ... N-1 are integers (floats cannot add up this sum exactly).")
    if a.dtype.itemsize < 8:
        raise Hint(
            f"a holds {a.dtype} values: the largest square, (N-1)**2, does not fit in {a.dtype.itemsize * 8} bits, so the "
            "squares and their sum overflow and wrap around silently. Use 64-bit integers (the default of arange)."
        )
    chunks = a.numblocks[0]
    if chunks > 100:
        raise Hint(
            f"a has {chunks:,} chunks, not 10. `chunks=` is the SIZE of one chunk, not how many chunks: yours makes "
            f"{chunks:,} of them, hence over {chunks:,} tasks at roughly a millisecond of scheduling each, minutes for a sum "
            "that takes milliseconds. Which chunk size splits N numbers into 10? Rule of thumb (Dask's best practices, as "
            "in the lesson above): chunks of about 100 MB, and far fewer than 100,000 tasks."
        )
    if chunks != 10:
        raise Hint(f"a has {chunks} chunk{'s' if chunks != 1 else ''}; the exercise asks for 10. `chunks=` is the size of one chunk: which size makes 10?")


def chunks_merged(total: Any, a: Any) -> bool:
    """True when the array total's work starts from has fewer chunks than a (a rechunk into bigger chunks)."""
    layers = getattr(total.__dask_graph__(), "layers", {})
    sizes = [len(layer) for name, layer in layers.items() if str(name).startswith("rechunk")]
    return bool(sizes) and min(sizes) < a.numblocks[0]
