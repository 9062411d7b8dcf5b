"""``python -m gpu_dask_kit.options --readme-table | --yaml | --doc | --write [README.md]``."""

from .docs import main

raise SystemExit(main())
