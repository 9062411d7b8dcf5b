import os
import re

from gpu_dask_kit.options import options_markdown_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_options_table_is_generated_from_the_option_docs():
    text = open(os.path.join(ROOT, "README.md")).read()
    table = re.search(r"<!-- options-table:.*?-->\n(.*?)<!-- end options-table -->", text, re.S).group(1)
    assert table == options_markdown_table(), "regenerate with gpu_dask_kit.options.options_markdown_table()"


def test_readme_first_screen_gives_the_two_commands():
    first_screen = "\n".join(open(os.path.join(ROOT, "README.md")).read().splitlines()[:40])
    assert "make lab" in first_screen and "make test" in first_screen
    assert "GPU" in first_screen and "CPU" in first_screen
