"""One-off migration of the JTCSE Table I ledger to the growing patience of 2026-11-26 (cap 900, `patience_growth`
0.25). Only a record whose stop provably falls at the same step under the new rule moves; the others are retrained.

    PYTHONPATH=<checkout before> python tools/ledger_keys.py > old.json
    PYTHONPATH=<checkout before> python tools/migrate_patience.py --dump-code > old_code.json
    python tools/migrate_patience.py old.json old_code.json

The proof, checked here for each moved record:
- the code `jtcse.run_stage` reaches differs only in the definitions of the new stop (`_patience_spent`, `_train_loop`,
  `fit`, `_check_fit_args`, `JTCSEConfig`, `_check_config`, `train`);
- no scheduler and a batch order that depends on the step only, so the trajectory up to a step does not depend on
  the cap;
- the recorded run stopped by patience at step t with best step b, t < 900 and t − b > 0.25·b: the new stop (patience
  and t − b > 0.25·b) is the old one with a condition that already held at t and that only delays, so it stops at t.
A score moves with its model (its data part is the model's key); its predictions' SHA-256 is checked first."""
import ast, hashlib, json, os, sys
from pathlib import Path

CHANGED = {"_patience_spent", "_train_loop", "fit", "_check_fit_args", "JTCSEConfig", "_check_config", "train"}
GROWTH, CAP = 0.25, 900
HOW = ("re-keyed for the growing patience (cap 600 -> 900, patience_growth 0 -> 0.25). The code run_stage reaches "
       "differs only in the stop rule's definitions (%s); the learning rate is constant and the batch at a step does "
       "not depend on the cap, so the run is the same up to its stop; it stopped by patience at step %d with its best "
       "at %d (%d > 0.25 x %d and %d < 900), where the new rule stops too. Its n_steps field keeps the cap it ran "
       "under (600). Checked by tools/migrate_patience.py.")

def code_digests() -> dict:
    "name -> digest of the syntax trees `jtcse.run_stage` reaches, under the imported version."
    try: from sentemb_lit.code_keys import reached_code
    except ImportError: from sentemb_lit.io import reached_code
    out = {}
    for k, v in reached_code("jtcse.run_stage").items():
        trees = v if isinstance(v, (list, tuple)) else [v]
        out[k] = hashlib.sha256("".join(ast.dump(t) if isinstance(t, ast.AST) else str(t) for t in trees)
                                .encode()).hexdigest()
    return out

def main(old_file: str, old_code_file: str, root: str = "papers/jtcse/store/cpu"):
    from sentemb_lit.io import KeyedStore, file_digest, read_json_verified
    sys.path.insert(0, str(Path(__file__).parent))
    from ledger_keys import ledger_keys
    old, new = json.loads(Path(old_file).read_text()), ledger_keys()
    old_code, new_code = json.loads(Path(old_code_file).read_text()), code_digests()
    diff = {k for k in old_code.keys() | new_code.keys() if old_code.get(k) != new_code.get(k)}
    assert diff <= CHANGED, f"reached code differs beyond the stop rule: {sorted(diff - CHANGED)}"
    store, pred = KeyedStore(root), Path(root) / "predictions"
    for name in sorted(n for n in old if not n.startswith("score_")):
        o, n = old[name], new[name]
        if not store.is_done(name, o): continue
        assert n["parts"]["data"] == o["parts"]["data"] and n["parts"]["seed"] == o["parts"]["seed"], name
        rec = read_json_verified(store.path(name, o) / "result.json")
        b, t = rec["best_step"], rec["convergence"]["steps_run"]
        if not (rec["stop"] == "patience" and t - b > GROWTH * b and t < CAP):
            print(f"{name}: stays behind (stop {rec['stop']} at {t}, best {b}): retrained under the new rule")
            continue
        store.rekey(name, o, n, HOW % (", ".join(sorted(diff)), t, b, t - b, b, t))
        print(f"{name}: {o['key'][:16]} -> {n['key'][:16]} (stop at {t} = the new rule's; content hash checked)")
        for what in ("cls", "mean", "mean_first_last", "pooler"):
            sname = f"score_{name}_{what}"
            so, sn = old[sname], new[sname]
            if not store.is_done(sname, so): continue
            r = read_json_verified(store.path(sname, so) / "result.json")
            src = pred / f"{name}.{what}.{so['key'][:16]}.npz"
            assert file_digest(src) == r["sha256"], src
            store.rekey(sname, so, sn, f"moved with its model {name} (its data part is the model's key); evaluation "
                                       "code unchanged. " + HOW % (", ".join(sorted(diff)), t, b, t - b, b, t))
            os.replace(src, pred / f"{name}.{what}.{sn['key'][:16]}.npz")
            print(f"{sname}: {so['key'][:16]} -> {sn['key'][:16]} (score and predictions, sha256 checked)")

if __name__ == "__main__":
    if sys.argv[1:] == ["--dump-code"]: json.dump(code_digests(), sys.stdout, indent=0, sort_keys=True)
    else: main(*sys.argv[1:])
