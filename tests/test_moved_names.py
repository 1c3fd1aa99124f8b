"""Names moved to another module keep their old import path for one release (issues #22, #23): `sentemb_lit.<old>.<name>`
is the very object of the new home, and reading it from the old module warns with a DeprecationWarning that names
the new path — whether or not the old module still imports the name for its own use. Every split module declares its
table through `sentemb_lit.moved.keep_old_paths`, so the cases below are all of them."""
import importlib, warnings
import pytest
from sentemb_lit.moved import _MOVES, _home

OLD = ("models", "training", "transfer", "jtcse", "chains", "prompting", "cli", "report", "ranking")
for _m in OLD: importlib.import_module(f"sentemb_lit.{_m}")
CASES = [(old.removeprefix("sentemb_lit."), name, target) for old, table in sorted(_MOVES.items())
         for name, target in table.items()]


def test_every_split_module_declares_its_table():
    assert {f"sentemb_lit.{m}" for m in OLD} <= set(_MOVES)
    assert len(CASES) >= 80


@pytest.mark.parametrize("old,name,target", CASES, ids=[f"{o}.{n}" for o, n, _ in CASES])
def test_the_old_path_gives_the_moved_object_and_warns(old, name, target):
    mod = importlib.import_module(f"sentemb_lit.{old}")
    module, new = _home(target, name)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = getattr(mod, name)
    assert got is getattr(importlib.import_module(f"sentemb_lit.{module}"), new)
    assert any(issubclass(x.category, DeprecationWarning) and f"sentemb_lit.{module}.{new}" in str(x.message)
               for x in w), [str(x.message) for x in w]


@pytest.mark.parametrize("old", OLD)
def test_an_unknown_name_is_still_an_attribute_error(old):
    with pytest.raises(AttributeError, match=f"module 'sentemb_lit.{old}' has no attribute 'no_such_name'"):
        getattr(importlib.import_module(f"sentemb_lit.{old}"), "no_such_name")


def test_the_package_itself_uses_no_old_path():
    "Importing every module with DeprecationWarning as an error: no module of the library reads a moved name."
    import subprocess, sys
    code = "import " + ", ".join(f"sentemb_lit.{m}" for m in OLD + ("bench", "ranking_runs", "compare", "coverage", "memory"))
    subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], check=True)
