"""Run a notebook in GPU mode up to one exercise's answer cell, then several answers (each followed by the check),
in the same kernel; print what each answer cell and each check said. Usage: claims.py STEM ANSWER_CELL CODES.json"""

import json
import re
import sys

import nbformat
from nbclient import NotebookClient

stem, upto, codes = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
nb = nbformat.read(f"notebooks/{stem}.ipynb", as_version=4)
check = nb.cells[upto + 1].source
client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": "notebooks"}})


def text(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            out.append(o.get("data", {}).get("text/plain", ""))
        elif o.output_type == "error":
            tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(o.get("traceback", [])))
            out.append(f"ERROR {o.ename}: {o.evalue[:600]}\n{tb[-6000:]}")
    return "\n".join(out).strip()


with client.setup_kernel():
    for i, cell in enumerate(nb.cells[:upto]):
        if cell.cell_type == "code":
            client.execute_cell(cell, i)
            if i in (2, 3, 4):
                print(f"[cell {i}]", text(cell)[:800])
    for code in [*codes, "import cupy; print('cupy allocator:', cupy.cuda.get_allocator())"]:
        for src in (code, check):
            cell = nbformat.v4.new_code_cell(src)
            nb.cells.append(cell)
            client.execute_cell(cell, len(nb.cells) - 1)
            print(f"--- {'answer' if src is code else 'check'}:\n{src if src is code else ''}\n>>> {text(cell)}\n", flush=True)
    cell = nbformat.v4.new_code_cell("session.close()")
    nb.cells.append(cell)
    client.execute_cell(cell, len(nb.cells) - 1)
