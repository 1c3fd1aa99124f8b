"""Conventions nbdev's own tools rely on (issue 25). nbdev's doc processor (`nbdev_proc_nbs`, run before quarto by
`nbdev_docs` / `nbdev_preview`) executes every exported cell and every other cell that contains an import anywhere; a
cell that mixes imports with other code then runs outside its notebook's state and breaks the docs build. So imports
live in cells of their own, as nbdev's FAQ asks. (The processors themselves run in CI as `make docs-proc`.)"""
import ast, json
from pathlib import Path
import pytest

NBS = sorted((Path(__file__).resolve().parents[1] / "nbs").glob("*.ipynb"))
SHOWN = {"export", "exports", "exporti", "exec_doc"}


def directives(src: str) -> dict:
    "The `#| key: value` lines at the top of a cell."
    out = {}
    for line in src.splitlines():
        if not line.startswith("#|"): break
        key, _, value = line[2:].strip().partition(" ")
        out[key.rstrip(":")] = value.strip()
    return out


def mixes_imports(src: str) -> bool:
    "nbdev's test (processors._do_eval): an import anywhere in the cell together with an expression or assignment."
    if src.strip()[:1] in ("%", "!"): return False
    try: trees = ast.parse(src).body
    except SyntaxError: return False
    nodes = [n for t in trees for n in ast.walk(t)]
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes) and \
        any(isinstance(n, (ast.Expr, ast.Assign)) for n in nodes)


def offending_cells(nb_path: Path) -> list[str]:
    bad = []
    for i, c in enumerate(json.loads(nb_path.read_text(encoding="utf-8"))["cells"]):
        if c["cell_type"] != "code": continue
        src = "".join(c["source"])
        d = directives(src)
        if d.keys() & SHOWN or d.get("eval", "").lower() == "false": continue
        if mixes_imports(src): bad.append(f"{nb_path.name} cell {i} ({c.get('id')})")
    return bad


def test_the_rule_is_nbdevs():
    assert mixes_imports("import os\nx = os.sep")
    assert mixes_imports("def f():\n    import os\n    return os.sep\nf()")         # nbdev walks the whole cell
    assert not mixes_imports("import os\nfrom pathlib import Path")
    assert not mixes_imports("x = 1\nprint(x)")
    assert directives("#| export\n#| eval: false\nx = 1") == {"export": "", "eval": "false"}


@pytest.mark.parametrize("nb", NBS, ids=lambda p: p.name)
def test_no_cell_mixes_imports_with_code(nb):
    assert offending_cells(nb) == []
