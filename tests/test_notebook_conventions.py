"""Conventions nbdev's own tools rely on (issue 25). nbdev's doc processor (`nbdev_proc_nbs`, run before quarto by
`nbdev_docs` / `nbdev_preview`) executes every exported cell and every other cell that contains an import anywhere; a
cell that mixes imports with other code then runs outside its notebook's state and breaks the docs build. So imports
live in cells of their own, as nbdev's FAQ asks. (The processors themselves run in CI as `make docs-proc`.)"""
import ast, json, re
from pathlib import Path
import pytest

NBS = sorted((Path(__file__).resolve().parents[1] / "nbs").rglob("*.ipynb"))
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


# --- executed experiment notebooks show their own progress, not the libraries' ---------------------------------------
# papermill keeps every output of an experiment notebook in the executed copy that is committed as the record. With
# ipywidgets installed (it is in the lock, so no "TqdmWarning: IProgress not found") a bar is a widget, without it a
# stream of stderr lines; either way transformers' "Loading weights" / "Writing model shards" bars (one per load or
# save: 173 in a smoke run of 04, 13 and 14 before this rule) bury the notebook's own output. So each experiment
# notebook switches transformers' bars off, and every `SentenceEncoder` it builds is built without its encode bar.
EXPERIMENTS = [p for p in NBS if any("parameters" in c.get("metadata", {}).get("tags", [])
                                     for c in json.loads(p.read_text(encoding="utf-8"))["cells"])]


def code_cells(nb_path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def loud_encoders(src: str) -> list[str]:
    "`SentenceEncoder(...)` / `SentenceEncoder.from_name(...)` calls without `show_progress=False`."
    try: tree = ast.parse(src)
    except SyntaxError: return []
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call): continue
        f = n.func
        name = f.id if isinstance(f, ast.Name) else (f"{f.value.id}.{f.attr}" if isinstance(f, ast.Attribute)
                                                      and isinstance(f.value, ast.Name) else "")
        if name not in ("SentenceEncoder", "SentenceEncoder.from_name"): continue
        quiet = any(k.arg == "show_progress" and isinstance(k.value, ast.Constant) and k.value.value is False
                    for k in n.keywords)
        if not quiet: out.append(ast.unparse(n)[:80])
    return out


def test_the_progress_rules_catch_what_they_should():
    assert loud_encoders("e = SentenceEncoder(m, t, 'cls')") == ["SentenceEncoder(m, t, 'cls')"]
    assert loud_encoders("e = SentenceEncoder.from_name('minilm-l6', show_progress=True)")
    assert loud_encoders("e = SentenceEncoder(m, t, show_progress=False)") == []
    assert len(EXPERIMENTS) >= 7 and all(p.name[:2].isdigit() for p in EXPERIMENTS)


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=lambda p: p.name)
def test_experiment_notebooks_switch_off_library_progress_bars(nb):
    cells = code_cells(nb)
    calls = [i for i, s in enumerate(cells) if "hf_logging.disable_progress_bar()" in s]
    imports = [i for i, s in enumerate(cells) if "from transformers.utils import logging as hf_logging" in s]
    assert calls and imports and imports[0] < calls[0], f"{nb.name}: transformers' progress bars are not switched off"
    first_model = next((i for i, s in enumerate(cells) if any(w in s for w in ("load_encoder(", "tiny_bert(",
                        "tiny_llama(", "load_causal_lm(", "SentenceEncoder"))
                        and "import" not in s.split("\n")[0]), len(cells))
    assert calls[0] < first_model, \
        f"{nb.name}: the bars are switched off only after a model is loaded (cell {first_model})"
    assert [e for s in cells for e in loud_encoders(s)] == []


# --- `papermill --help-notebook` documents every parameter -------------------------------------------------------
def assigned_names(nb_path: Path) -> list[str]:
    "The names the `parameters` cell assigns, in order."
    cell = next(c for c in json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
                if "parameters" in c.get("metadata", {}).get("tags", []))
    out = []
    for n in ast.parse("".join(cell["source"])).body:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        out += [t.id for t in targets if isinstance(t, ast.Name)]
    return out


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=lambda p: p.name)
def test_help_notebook_documents_every_parameter(nb):
    "What `papermill --help-notebook` prints: a type (not 'Unknown type') and a comment for each assigned name."
    from papermill.inspection import inspect_notebook
    params = inspect_notebook(str(nb))
    assert list(params) == assigned_names(nb) and {"profile", "out_dir"} <= set(params), (list(params), nb.name)
    vague = {n: p for n, p in params.items() if p["inferred_type_name"] in ("None", "", None) or not p["help"].strip()}
    assert vague == {}, vague


# --- cell ids are unique in every notebook (nbformat silently renames a duplicate on read, so a second copy of a
# notebook would not match the first; nbdev's export markers name cells by id) ---------------------------------------
@pytest.mark.parametrize("nb", NBS, ids=lambda p: p.name)
def test_cell_ids_are_unique(nb):
    ids = [c.get("id") for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


# --- STYLE's budgets: a cell a reader takes in at once, a test after every few definitions, lines a window shows ------
ROOT = Path(__file__).resolve().parents[1]
EXPORTED = {"export", "exports", "exporti"}
TESTS = re.compile(r"\bassert\b|\btest_\w*\(|\braises\(")
MAX_CELL, MAX_LINE, MAX_UNTESTED = 40, 120, 4


def cells_of(nb_path: Path) -> list[tuple[str, str]]:
    "(id, source) of each code cell."
    return [(c.get("id"), "".join(c["source"])) for c in json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def long_cells(nb_path: Path) -> list[str]:
    "Code cells of more than MAX_CELL lines, `#|` directives not counted."
    return [f"{nb_path.name} {i}: {n} lines" for i, s in cells_of(nb_path)
            if (n := sum(not l.startswith("#|") for l in s.splitlines())) > MAX_CELL]


def untested_stretches(nb_path: Path) -> list[str]:
    "Runs of more than MAX_UNTESTED exported cells with no test cell (assert, test_*(…), raises(…)) between them."
    out, run = [], []
    for i, s in cells_of(nb_path) + [(None, "assert True")]:
        if directives(s).keys() & EXPORTED: run.append(i)
        elif TESTS.search(s):
            if len(run) > MAX_UNTESTED: out.append(f"{nb_path.name}: {', '.join(run)}")
            run = []
    return out


def long_lines(name: str, lines: list[str]) -> list[str]:
    return [f"{name}:{k}: {len(l)} characters" for k, l in enumerate(lines, 1) if len(l) > MAX_LINE]


def nbdev_all_line(line: str) -> bool:
    "nbdev writes `__all__` wrapped at 120 characters and then puts `__all__ = ` before its first line."
    return line.startswith("__all__ = [") and len(line) <= MAX_LINE + len("__all__ = ")


def test_the_style_rules_catch_what_they_should(tmp_path):
    nb = tmp_path / "x.ipynb"
    code = lambda i, s: {"cell_type": "code", "id": i, "source": s}
    nb.write_text(json.dumps({"cells": [code(f"e{k}", "#| export\nx = 1") for k in range(5)] +
                              [code("t", "test_eq(x, 1)"), code("big", "\n".join(["y = 1"] * 41))]}))
    assert untested_stretches(nb) == ["x.ipynb: e0, e1, e2, e3, e4"]
    assert long_cells(nb) == ["x.ipynb big: 41 lines"]
    assert long_lines("f", ["a" * 120, "b" * 121]) == ["f:2: 121 characters"]
    assert nbdev_all_line("__all__ = ['" + "a" * 110 + "',") and not nbdev_all_line("x = '" + "a" * 120 + "'")


@pytest.mark.parametrize("nb", NBS, ids=lambda p: p.name)
def test_cells_are_short_and_tested_and_lines_fit(nb):
    assert long_cells(nb) == [] and untested_stretches(nb) == []
    assert [bad for i, s in cells_of(nb) for bad in long_lines(f"{nb.name} {i}", s.splitlines())] == []


def test_package_and_test_lines_fit():
    files = sorted((ROOT / "sentemb_lit").rglob("*.py")) + sorted((ROOT / "tests").glob("*.py"))
    bad = [b for f in files if f.name != "_modidx.py"
           for b in long_lines(str(f.relative_to(ROOT)), [l for l in f.read_text(encoding="utf-8").splitlines()
                                                          if not nbdev_all_line(l)])]
    assert bad == []


def test_the_readme_table_names_every_derivation_notebook():
    "A newcomer finds every notebook, and the module it exports, in the README's 'What is inside' table."
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w/]+)` \|", readme, flags=re.M))
    derivations = {str(p.relative_to(ROOT / "nbs").with_suffix("")) for p in NBS
                   if p.parent.name != "experiments" and p.name != "index.ipynb"}
    assert len(derivations) >= 46 and derivations - rows == set(), sorted(derivations - rows)
