"""One-off migration (issue #22): give every committed results file its content hash, after checking it against an
independent record, never by hashing whatever is there.

    python tools/seal_records.py            # check; seal only what passed; print one line per file

* `posttrain/<arm>/<seed>/result.json` (ranking): `scores_last` recomputed from the committed per-pair predictions
  `pairs_last.npz` beside it (Spearman ×100 per task, STS12–16 on the pooled "all" pairs); the base encoder's
  `result.json` from its `pairs.npz`; `scores` of a run whose best step is 0 equals the base encoder's scores.
* `<notebook>.results.json`: every finding's `ours`, `lo` and `hi` and every row's value, rounded as the notebook
  printed them, must appear in the outputs of the executed notebook of the same run (its run log).
"""
import glob, json, re, sys
from pathlib import Path
import numpy as np
from scipy import stats
from sentemb_lit.io import HASH_FIELD, seal_json

ROOT = Path(__file__).resolve().parents[1]


def _scores_from_pairs(npz: Path) -> dict:
    with np.load(npz, allow_pickle=False) as z:
        tasks = sorted({k.split(".")[0] for k in z.files})
        s = {t: 100 * stats.spearmanr(z[f"{t}.pred"], z[f"{t}.gold"])[0] for t in tasks}
    return s | {"avg": float(np.mean(list(s.values())))}


def _close(a: dict, b: dict, eps=1e-6) -> list[str]:
    return [f"{k}: {a[k]} vs {b.get(k)}" for k in a if k in b and abs(a[k] - b[k]) > eps] + \
        [f"{k}: missing" for k in a if k not in b]


def check_posttrain(path: Path, base_scores: dict) -> str:
    r = json.loads(path.read_text())
    npz = path.parent / ("pairs.npz" if (path.parent / "pairs.npz").exists() else "pairs_last.npz")
    got = _scores_from_pairs(npz)
    key = "scores" if npz.name == "pairs.npz" else "scores_last"
    bad = _close(got, r[key])
    if r.get("best_step") == 0 and key == "scores_last": bad += _close(base_scores, r["scores"])
    if bad: raise ValueError(f"{path}: {bad[:3]}")
    return f"{key} recomputed from {npz.name} (max |Δ| ≤ 1e-6)" + (
        "; scores = the base encoder's (best step 0)" if r.get("best_step") == 0 and key == "scores_last" else "")


def _printed(nb: Path) -> str:
    out = []
    for c in json.loads(nb.read_text())["cells"]:
        for o in c.get("outputs", []):
            out.append("".join(o.get("text", "")) if o.get("text") else "")
            for k, v in o.get("data", {}).items():
                if k.startswith("text/"): out.append("".join(v) if isinstance(v, list) else v)
    return "\n".join(out)


def _shown(x: float, text: str) -> bool:
    "x as the notebook printed it: rounded to 1–6 decimals (pandas' display; trailing zeros may be dropped)."
    for d in (2, 1, 3, 4, 5, 6):
        s = f"{round(x, d):.{d}f}"
        for form in {s, s.rstrip("0").rstrip("."), s.replace("-", "−")}:
            if re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", text): return True
    return False


ARMS = {"post-trained (method)": "full", "(d) ranking only": "rank", "(e) semantic only": "semantic",
        "(c) shuffled chains": "shuffled", "(b) step-by-step chains": "step"}


def _from_runs(path: Path, row: dict) -> bool:
    "A ranking Table 3 row: the mean over seeds of the runs' scores_last, each run already checked against its pairs."
    arm = ARMS.get(row["method"])
    if not row["table"].startswith("Table 3 (last step") or arm is None: return False
    runs = sorted(path.parent.glob(f"posttrain/{arm}/seed*/result.json"))
    vals = [json.loads(r.read_text())["scores_last"][row["metric"]] for r in runs]
    return bool(vals) and abs(float(np.mean(vals)) - row["value"]) < 1e-9


def _macs(row: dict) -> bool:
    "A Table VII row: inference MACs of minilm-l6 (one tower) or of a twin of two, counted again at 64 tokens."
    if row["table"] != "Table VII": return False
    from sentemb_lit.models import load_encoder
    from sentemb_lit.twin import TwinTowerEncoder
    from sentemb_lit.bench import inference_macs
    model, tok = load_encoder("minilm-l6")
    net = model if row["method"] == "JTCSE D" else TwinTowerEncoder(model, load_encoder("minilm-l6")[0], tok)
    return abs(inference_macs(net, seq_len=64) / 1e9 - row["value"]) < 1e-9


def check_results(path: Path) -> str:
    r = json.loads(path.read_text())
    nb = path.with_name(path.name.replace(".results.json", ".ipynb"))
    if not nb.exists(): raise ValueError(f"{path}: no executed notebook {nb.name} beside it")
    text = _printed(nb)
    nums = [f[k] for f in r["findings"] for k in ("ours", "lo", "hi") if isinstance(f.get(k), (int, float))]
    found = sum(_shown(x, text) for x in nums)
    rows = [row["value"] for row in r["rows"]]
    found_rows = sum(_shown(row["value"], text) or _from_runs(path, row) or _macs(row) for row in r["rows"])
    if found < len(nums) or found_rows < len(rows):
        raise ValueError(f"{path}: only {found}/{len(nums)} finding numbers and {found_rows}/{len(rows)} row values "
                         f"appear in {nb.name}")
    return (f"{found}/{len(nums)} finding numbers and {found_rows}/{len(rows)} row values found in {nb.name}'s outputs "
            "(ranking Table 3 rows: the mean of the checked runs' scores_last; Table VII: MACs counted again)")


def main() -> int:
    done, failed = [], []
    base = sorted(ROOT.glob("papers/ranking_sentences/runs/cpu/posttrain/base/*/result.json"))
    base_scores = _scores_from_pairs(base[0].parent / "pairs.npz") if base else {}
    todo = [(p, check_posttrain) for p in sorted(ROOT.glob("papers/*/runs/cpu/posttrain/*/*/result.json"))]
    todo += [(p, check_results) for p in sorted(ROOT.glob("papers/*/runs/cpu/*.results.json"))]
    for p, check in todo:
        if HASH_FIELD in json.loads(p.read_text()): continue
        try:
            how = check(p, base_scores) if check is check_posttrain else check(p)
            seal_json(p)
            done.append(f"- `{p.relative_to(ROOT)}`: {how}")
        except Exception as e:
            failed.append(f"- NOT sealed `{p.relative_to(ROOT)}`: {e}")
    print("\n".join(done + failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
