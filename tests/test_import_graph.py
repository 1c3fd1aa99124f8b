"""The import graph of sentemb_lit (issues #23, #43): every module imports alone in a fresh interpreter, no module
imports `cli` but `cli` itself and `bench`, the graph of imports between the package's modules has no cycle, and the
folders keep their layers: `core` imports only `core`; `evals`, `stats` and each paper's folder (`jtcse`, `ranking`,
`prompting`) import only themselves and `core` — no paper folder imports another; only the application layer at the
top (`cli`, `reproduce`, `bench`, `compare`, `memory`) imports across folders. Imports are
found in every form: `import x`, `from . import x`, `from .cli import y`, `from sentemb_lit import cli`,
`importlib.import_module("...")` / `__import__("...")` with a constant name, and inside functions."""
import ast, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest
import sentemb_lit

PKG = Path(sentemb_lit.__file__).parent
MODULES = sorted(p.relative_to(PKG).with_suffix("").as_posix().replace("/", ".") for p in PKG.rglob("*.py")
                 if p.stem not in ("__init__", "_modidx"))            # dotted: 'core.io', 'jtcse.losses', 'cli'
FOLDERS = {"core": {"core"}, "evals": {"evals", "core"}, "stats": {"stats", "core"}, "jtcse": {"jtcse", "core"},
           "ranking": {"ranking", "core"}, "prompting": {"prompting", "core"}}   # folder -> the folders it may import
MAY_IMPORT_CLI = {"cli", "bench"}


def _target(name: str, level: int, package: str = "sentemb_lit") -> str | None:
    "The absolute module name an import of `name` at relative `level` means inside `package`."
    if level:
        base = package.split(".")[: len(package.split(".")) - level + 1]
        name = ".".join(base + ([name] if name else []))
    return name


def _module_of(full: str) -> str | None:
    "`sentemb_lit.cli.x` -> 'cli', `sentemb_lit.core.io.f` -> 'core.io' (the longest module of the package), else None."
    parts = full.split(".")
    if parts[0] != "sentemb_lit" or len(parts) < 2: return None
    return next((".".join(parts[1:k]) for k in range(len(parts), 1, -1) if ".".join(parts[1:k]) in MODULES), None)


def imports_of(source: str, package: str = "sentemb_lit") -> set[str]:
    "The package modules `source` (a module of `package`) imports, in any form and anywhere in the file."
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {_module_of(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _target(node.module or "", node.level, package)
            found.add(_module_of(base))
            found |= {_module_of(f"{base}.{a.name}") for a in node.names}         # from . import cli
        elif isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if fname in ("import_module", "__import__") and args:
                pkg = next((k.value.value for k in node.keywords if k.arg == "package"
                            and isinstance(k.value, ast.Constant)), "sentemb_lit")
                name = args[0]
                level = len(name) - len(name.lstrip("."))
                found.add(_module_of(_target(name.lstrip("."), level, pkg) if level else name))
    return found - {None}


def graph() -> dict:
    "module -> the package modules it imports; relative imports resolve against the module's own package."
    out = {}
    for m in MODULES:
        package = "sentemb_lit" + ("." + m.rpartition(".")[0] if "." in m else "")
        out[m] = imports_of((PKG / f"{m.replace('.', '/')}.py").read_text(encoding="utf-8"), package) - {m}
    return out


def test_the_walker_sees_every_form(monkeypatch):
    src = '''
import sentemb_lit.a1
from . import a2
from .a3 import thing
from sentemb_lit import a4
from sentemb_lit.a5 import y
import importlib
def f():
    from .a6 import z
    importlib.import_module("sentemb_lit.a7")
    importlib.import_module(".a8", package="sentemb_lit")
    __import__("sentemb_lit.a9")
import numpy, os.path
'''
    monkeypatch.setattr(sys.modules[__name__], "MODULES", [f"a{i}" for i in range(1, 10)])
    assert imports_of(src) == {f"a{i}" for i in range(1, 10)}


def test_no_library_module_imports_cli():
    bad = {m: sorted(deps) for m, deps in graph().items() if "cli" in deps and m not in MAY_IMPORT_CLI}
    assert not bad, f"library modules that import sentemb_lit.cli: {bad}"


def _cycle(g: dict) -> list | None:
    "One cycle of the directed graph `g`, or None."
    state, stack = {}, []
    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == 1: return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)): return c
        state[n] = 2
        stack.pop()
        return None
    for n in sorted(g):
        if n not in state and (c := visit(n)): return c
    return None


def test_cycle_finder():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_import_graph_has_no_cycle():
    g = graph()
    c = _cycle(g)
    assert c is None, f"import cycle: {' -> '.join(c)}"
    # cli calls the job, not the reverse
    assert "ranking.chain_jobs" in g["cli"] and "cli" not in g["ranking.chain_jobs"]
    assert "reproduce" in g["cli"] and "cli" not in g["reproduce"]    # cli calls the runner, not the reverse
    assert "ranking.chains" in g["ranking.chain_jobs"] and "ranking.chain_jobs" not in g["ranking.chains"]
    assert "ranking.posttraining" in g["ranking.runs"] and "ranking.runs" not in g["ranking.posttraining"]


def test_no_paper_folder_imports_another():
    "Each folder imports only the folders FOLDERS allows: what two papers share lives in core/ under a public name."
    assert {m.split(".")[0] for m in MODULES if "." in m} == set(FOLDERS)
    bad = {m: sorted(d for d in deps if "." in d and d.split(".")[0] not in FOLDERS[m.split(".")[0]])
           for m, deps in graph().items() if "." in m}
    assert not {m: d for m, d in bad.items() if d}, bad
    assert not [m for m, deps in graph().items() if "." in m and any("." not in d for d in deps)]   # nor the top layer


def test_the_walker_resolves_relative_imports_in_folders():
    src = "from ..core.io import x\nfrom .losses import y\nfrom . import step\n"
    assert imports_of(src, "sentemb_lit.jtcse") == {"core.io", "jtcse.losses", "jtcse.step"}


# One interpreter per chunk loads the third-party libraries every module needs (torch, transformers), then forks a
# child per module that imports it: each child starts with no sentemb_lit module loaded, so a module that works only
# after another of ours was imported fails here, as in a fresh interpreter, without paying torch's import each time.
FORKING_IMPORTER = r"""
import importlib, json, os, sys, traceback, warnings
warnings.simplefilter("ignore")
import torch, transformers
from transformers import PreTrainedModel
assert not [m for m in sys.modules if m.split(".")[0] == "sentemb_lit"], "sentemb_lit was loaded before the fork"
out = {}
for m in sys.argv[1:]:
    if not hasattr(os, "fork"):                                   # no fork (Windows): a fresh interpreter each
        import subprocess
        p = subprocess.run([sys.executable, "-c", "import sentemb_lit." + m], capture_output=True, text=True)
        out[m] = [p.returncode, p.stderr[-1500:]]
        continue
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try: importlib.import_module("sentemb_lit." + m); code, msg = 0, ""
        except BaseException: code, msg = 1, traceback.format_exc()[-1500:]
        os.write(w, msg.encode()); os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f: err = f.read().decode()
    out[m] = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), err]
print(json.dumps(out))
"""


def test_each_module_imports_alone_in_a_fresh_interpreter():
    import json
    env = os.environ | {"PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}
    def run(chunk):
        r = subprocess.run([sys.executable, "-c", FORKING_IMPORTER, *chunk], env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])
    with ThreadPoolExecutor(2) as ex: results = {k: v for part in ex.map(run, [MODULES[0::2], MODULES[1::2]])
                                                 for k, v in part.items()}
    assert sorted(results) == MODULES                                       # every module was tried
    failed = {m: err for m, (rc, err) in results.items() if rc != 0}
    assert not failed, failed


def test_the_forking_importer_catches_a_module_that_needs_another_first(tmp_path):
    "A package whose module works only after its sibling was imported fails under the importer (each child is fresh)."
    import json
    pkg = tmp_path / "sentemb_lit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import sys\nX = 1\n")
    (pkg / "b.py").write_text("import sys\nY = sys.modules['sentemb_lit.a'].X\n")        # needs a imported first
    env = os.environ | {"PYTHONPATH": str(tmp_path), "PYTHONWARNINGS": "ignore"}
    preload = "import torch, transformers\nfrom transformers import PreTrainedModel\n"   # not needed by this package
    assert preload in FORKING_IMPORTER
    r = subprocess.run([sys.executable, "-c", FORKING_IMPORTER.replace(preload, ""), "a", "b", "a"], env=env,
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["a"][0] == 0 and got["b"][0] == 1 and "KeyError" in got["b"][1], got
