"""Golden tiny records (issue 43): every stored method, each variant, Table X preset, post-training arm, chain mode and
prompt template that stored records use, recomputed on tiny models and compared with `keys/golden.json` (relative
1e-6). An acknowledgement in `keys/versions.json` says an edit changes no number: its method's golden must not move."""
import json, math
from pathlib import Path
import pytest
import goldens as G
from sentemb_lit.core.store import read_acks

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = json.loads(G.GOLDEN.read_text(encoding="utf-8"))
ACKS = read_acks(ROOT / "keys" / "versions.json")


def _close(a, b, where="") -> list[str]:
    "Where two golden records differ (relative 1e-6 for numbers; strings, lists and keys exactly)."
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b): return [f"{where}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in _close(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b): return [f"{where}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _close(x, y, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) else [f"{where}: {a!r} != {b!r}"]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


@pytest.mark.parametrize("method,case", [(m, c) for m, cs in G.CASES.items() for c in cs], ids=lambda x: x)
def test_golden_record_is_unchanged(method, case):
    assert method in COMMITTED and case in COMMITTED[method]["cases"], \
        f"{method}/{case} has no golden record: run `python tests/goldens.py --write` and commit keys/golden.json"
    diff = _close(G.compute(method, case), COMMITTED[method]["cases"][case], f"{method}/{case}")
    acked = [a for a in ACKS if a["method"] == method]
    assert not diff, (f"the golden record of {method}/{case} changed: {diff[:3]}. "
                      + (f"The acknowledgement(s) {[a['reason'] for a in acked]} in keys/versions.json are refused: "
                         "this edit changes numbers, so raise the method's version instead. " if acked else "")
                      + "If the change is intended, raise the method's version and rewrite the goldens.")


def test_every_declared_method_has_its_goldens_at_its_version():
    declared = G.declared()
    assert set(declared) == set(G.CASES) == set(COMMITTED), (sorted(declared), sorted(G.CASES), sorted(COMMITTED))
    stale = {n: (m.version, COMMITTED[n]["version"]) for n, m in declared.items()
             if COMMITTED[n]["version"] != m.version}
    assert not stale, f"goldens written for another version (declared, golden): {stale}; rewrite them"


def test_every_acknowledgement_names_a_method_with_goldens():
    for a in ACKS:
        assert a["method"] in COMMITTED, f"keys/versions.json acknowledges {a['method']}, which has no golden record"


def _stored_configs():
    "(method, readable configuration) of every record under papers/*/store, in the one store's form or the former."
    for rec in sorted((ROOT / "papers").glob("*/store/**/record.json")):
        key = json.loads(rec.read_text(encoding="utf-8"))["key"]
        yield key["parts"]["method"], key["config"]


def test_every_variant_preset_arm_mode_and_template_in_the_store_has_a_golden():
    missing = set()
    for method, config in _stored_configs():
        cases = COMMITTED.get(method, {}).get("cases", {})
        if method == "jtcse.stage":
            c = config["config"]
            case = f"{c['variant']}/{c['terms']}"
        elif method == "ranking.posttrain":
            c = config["config"]
            case = "self_teacher" if c.get("teacher") is None else {"full": "full"}.get(c["mode"], c["mode"])
        elif method == "ranking.chains": case = f"{config['mode']}/{config['prompt']}"
        elif method == "prompting.encode":
            case = next((t for t, s in __import__("sentemb_lit.prompting.prompt_embedding", fromlist=["x"])
                         .TEMPLATES.items() if s == config["template"]), config["template"])
        else: case = "tiny"
        if case not in cases: missing.add(f"{method}/{case}")
    assert not missing, f"stored records use cases without a golden record: {sorted(missing)}"
