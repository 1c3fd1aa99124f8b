"""Names moved to another module keep their old import path for one release (issue #23): `sentemb_lit.<old>.<name>`
is the very object of the new home, and reading it through the module's `__getattr__` warns with a DeprecationWarning
that names the new path."""
import importlib, warnings
import pytest

OLD = ("models", "report", "transfer")                  # modules whose `_MOVED` maps a name to its new module
CASES = [(old, name, new) for old in OLD for name, new in importlib.import_module(f"sentemb_lit.{old}")._MOVED.items()]


@pytest.mark.parametrize("old,name,new", CASES, ids=[f"{o}.{n}" for o, n, _ in CASES])
def test_the_old_path_gives_the_moved_object(old, name, new):
    mod = importlib.import_module(f"sentemb_lit.{old}")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = getattr(mod, name)
    assert got is getattr(importlib.import_module(f"sentemb_lit.{new}"), name)
    if name not in vars(mod):                            # one the old module still uses itself is a plain import
        assert any(issubclass(x.category, DeprecationWarning) and f"sentemb_lit.{new}.{name}" in str(x.message)
                   for x in w), [str(x.message) for x in w]


@pytest.mark.parametrize("old", OLD)
def test_an_unknown_name_is_still_an_attribute_error(old):
    with pytest.raises(AttributeError, match=f"module 'sentemb_lit.{old}' has no attribute 'no_such_name'"):
        getattr(importlib.import_module(f"sentemb_lit.{old}"), "no_such_name")
