"""One-off migration (issue 22's rule: re-keyed records migrate in one commit that says how each was verified) of the
JTCSE Table I ledger to the keys of the complete reached-code walk.

    PYTHONPATH=<checkout at 0ff4543> python tools/ledger_keys.py > old.json
    python tools/migrate_ledger.py old.json

Each finished entry moves with `KeyedStore.rekey` (its content hash verified first; its old key and this proof kept in
key.json); a per-pair predictions file moves with its score after its SHA-256 is checked; a stage still training moves
its folder (its resume is checked against its configuration by `fit`). Every new key's config, seed and data parts must
equal the old key's, except a score's data part, which holds its model's key and must equal the hash of the model's
new key."""
import json, os, sys
from pathlib import Path
from sentemb_lit.io import KeyedStore, file_digest, fingerprint, read_json_verified
from sentemb_lit.jtcse import sts_fingerprint
from sentemb_lit.data import STS_TASKS
sys.path.insert(0, str(Path(__file__).parent))
from ledger_keys import ledger_keys

HOW = ("re-keyed when the reached-code walk learned to include methods attached after a class body (@patch, Cls.x = …). "
       "Under the complete walk the code these records reach was identical at every commit from 6bb5dd4 to 0ff4543 (the "
       "window in which they were produced) and differs at the migration commit only in key bookkeeping (the walk, "
       "stage_key, rekey), in training-seconds bookkeeping, in the rank term of the step seed (rank 0, the only rank "
       "here, unchanged), in error-message text and in import placement of the twin module: none reaches a number. "
       "Config, seed and data parts recomputed and equal (tools/migrate_ledger.py).")

def main(old_file: str, root: str = "papers/jtcse/store/cpu"):
    old, new = json.loads(Path(old_file).read_text()), ledger_keys()
    store, pred = KeyedStore(root), Path(root) / "predictions"
    model_of = lambda n: n.removeprefix("score_").rsplit("_", 1)[0] if not n.endswith(("_mean_first_last",)) \
        else n.removeprefix("score_").removesuffix("_mean_first_last")
    what_of = lambda n: "mean_first_last" if n.endswith("_mean_first_last") else n.rsplit("_", 1)[1]
    for name in sorted(old):
        o, n = old[name], new[name]
        folder = Path(root) / name / o["key"][:16]
        if not folder.is_dir(): continue
        assert n["parts"]["config"] == o["parts"]["config"] and n["parts"]["seed"] == o["parts"]["seed"], name
        if name.startswith("score_"):
            m = model_of(name)
            mk_old = old[m]["key"] if m in old else None
            mk_new = new[m]["key"] if m in new else None
            if mk_old is None: assert n["parts"]["data"] == o["parts"]["data"], name          # the base encoder
            else:
                sts = sts_fingerprint(STS_TASKS, "senteval", "test")
                assert o["parts"]["data"] == fingerprint(mk_old, sts) and n["parts"]["data"] == fingerprint(mk_new, sts)
            r = read_json_verified(folder / "result.json")
            src = pred / f"{m}.{what_of(name)}.{o['key'][:16]}.npz"
            assert file_digest(src) == r["sha256"], src
            store.rekey(name, o, n, HOW)
            os.replace(src, pred / f"{m}.{what_of(name)}.{n['key'][:16]}.npz")
            print(f"{name}: {o['key'][:16]} -> {n['key'][:16]} (score and predictions, sha256 checked)")
        else:
            assert n["parts"]["data"] == o["parts"]["data"], name
            if store.is_done(name, o):
                store.rekey(name, o, n, HOW)
                print(f"{name}: {o['key'][:16]} -> {n['key'][:16]} (stage record, content hash checked)")
            else:                                                 # still training: its checkpoint moves with it
                dst = store.path(name, n)
                assert not dst.exists(), dst
                os.replace(folder, dst)
                print(f"{name}: {o['key'][:16]} -> {n['key'][:16]} (unfinished stage: run folder moved)")

if __name__ == "__main__":
    main(*sys.argv[1:])
