"""Every alias of the experiment keys (`sentemb_lit.core.code_keys.CODE_ALIASES`) is proven again, from the two source trees
archived in keys/trees/ (nothing is imported or run from them): the new tree hashes to the alias, the old tree's own
rule gives the code part the alias serves, and the two trees have the same proof form (nbs/core/05b_code_keys)."""
from pathlib import Path
import pytest
from sentemb_lit.core.code_keys import CODE_ALIASES
from sentemb_lit.core.key_proofs import verify_alias

TREES = Path(__file__).resolve().parents[1] / "keys" / "trees"


@pytest.mark.parametrize("key", sorted(CODE_ALIASES), ids=lambda k: k[:12])
def test_every_alias_is_proven_from_its_archived_trees(key):
    entry = CODE_ALIASES[key]
    proof = verify_alias(key, entry, TREES)
    assert proof["equal"] and proof["key"] == key and proof["code"] == entry["code"]
    assert len(entry["why"]) >= 40 and entry["roots"] == proof["roots"]


def test_a_forged_alias_is_refused():
    key = next(k for k, v in sorted(CODE_ALIASES.items()) if v["roots"] == ["jtcse.run_stage"])
    forged = CODE_ALIASES[key] | {"code": "0" * 64}                      # serve other results under this code
    with pytest.raises(ValueError, match="old tree's code part"):
        verify_alias(key, forged, TREES)
    with pytest.raises(ValueError, match="hashes to"):
        verify_alias("1" * 64, CODE_ALIASES[key], TREES)                 # a key the archived tree does not have
