"""Execute notebooks in GPU mode (exercises solved), five side by side, each with its own kit registry;
write pass/fail and every cell's text output to $OUT."""

import concurrent.futures as cf
import os
import subprocess
import sys
import time

import nbformat

OUT = os.environ["OUT"]
os.makedirs("/tmp/nbout", exist_ok=True)


def one(stem):
    env = dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=f"/tmp/rt-{stem}", GPU_DASK_KIT_SOLVE_EXERCISES="1")
    os.makedirs(env["GPU_DASK_KIT_RUNTIME_DIR"], exist_ok=True)
    code = (
        "import json; from gpu_dask_kit.venue import execute_notebook; "
        f"r = execute_notebook('notebooks/{stem}.ipynb', scale='small', timeout=400, output_path='/tmp/nbout/{stem}.ipynb'); "
        "import dataclasses; print('RESULT', json.dumps(dataclasses.asdict(r)))"
    )
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return stem, p


def dump(stem, fh):
    try:
        nb = nbformat.read(f"/tmp/nbout/{stem}.ipynb", as_version=4)
    except Exception as exc:
        fh.write(f"\n##### {stem}: no executed copy ({exc})\n")
        return
    fh.write(f"\n##### {stem}\n")
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        texts = []
        for o in c.get("outputs", []):
            if o.output_type == "stream":
                texts.append(o.text)
            elif o.output_type in ("execute_result", "display_data"):
                texts.append(o.get("data", {}).get("text/plain", "[" + ",".join(o.get("data", {})) + "]"))
            elif o.output_type == "error":
                texts.append(f"ERROR {o.ename}: {o.evalue}")
        if texts:
            fh.write(f"--- cell {i}\n" + "\n".join(t[:3000] for t in texts) + "\n")


stems = sys.argv[1:]
t0 = time.time()
with cf.ThreadPoolExecutor(len(stems)) as pool:
    results = list(pool.map(one, stems))
with open(f"{OUT}/nb_{stems[0][:2]}_{stems[-1][:2]}.txt", "w") as fh:
    for stem, p in results:
        line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")), None)
        print(stem, line or f"no result rc={p.returncode} {p.stderr[-1500:]}", flush=True)
        fh.write(f"{stem}: {line}\n")
    for stem, _ in results:
        dump(stem, fh)
print(f"total {time.time() - t0:.0f}s")
