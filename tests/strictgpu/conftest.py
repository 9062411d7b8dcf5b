"""The host/device-strict tier: never collect the CuPy stand-in itself (importing site/cupy here would
shadow the real CuPy of the test process)."""

collect_ignore = ["site"]
