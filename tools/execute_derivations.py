"""Execute derivation notebooks in place so they are committed with their light outputs (figures, small tables, test
prints); volatile outputs are stripped: progress bars and warnings on stderr, timings, absolute paths.

    python tools/execute_derivations.py [nbs/jtcse/10_tensor_modulus_loss.ipynb ...]   (default: every derivation notebook)
"""
import json, os, re, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = re.compile(r"(/work/|/home/|/root/|/tmp/|\d+(\.\d+)?\s*(it/s|s/it)|\bin \d+(\.\d+)? ?s\b|elapsed)")


def is_experiment(nb) -> bool:
    return any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells)


def derivation_notebooks() -> list[Path]:
    "Every notebook of nbs/ and its folders but the experiments (nbs/experiments/, each with a `parameters` cell)."
    found = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb")
                   if not {"experiments", ".ipynb_checkpoints"} & set(p.relative_to(ROOT / "nbs").parts))
    return [p for p in found if not is_experiment(nbformat.read(p, as_version=4))]


def light(output) -> bool:
    "Keep figures, tables and test prints; drop stderr, progress widgets and anything naming a path or a timing."
    if output.output_type == "stream" and output.name == "stderr": return False
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data: return False
    text = output.get("text", "") + "".join(v for k, v in data.items() if k.startswith("text/") and isinstance(v, str))
    return not VOLATILE.search(text)


def execute(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    timeout = int(os.environ.get("SENTEMB_CELL_TIMEOUT", "1200"))                 # seconds per cell
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    kept = 0
    for c in nb.cells:
        if c.cell_type != "code": continue
        c.outputs = [o for o in c.outputs if light(o)]
        for o in c.outputs:
            if "execution_count" in o: o["execution_count"] = None
        c.execution_count = None
        kept += len(c.outputs)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    from nbdev.clean import nbdev_clean                    # execution timestamps and key order, as committed
    nbdev_clean(fname=str(path))
    return kept


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or derivation_notebooks()
    for p in paths: print(f"{p.name}: {execute(p)} outputs kept", flush=True)
