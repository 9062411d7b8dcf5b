"""cuDF's groupby(...).size() on a frame with a column called "name", and without one (fourteenth session)."""

import cudf

for cols in (["name", "x"], ["key", "x"]):
    df = cudf.DataFrame({cols[0]: [1, 2, 1], cols[1]: [1.0, 2.0, 3.0]})
    try:
        print(cols, "groupby(...).size():", df.groupby(cols[0]).size().to_pandas().to_dict())
    except Exception as exc:
        print(cols, "groupby(...).size() raised", type(exc).__name__, exc)
    print(cols, "value_counts():", df[cols[0]].value_counts().to_pandas().to_dict())
