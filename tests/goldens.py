"""Golden tiny records: each stored method, run on tiny models and a few items, gives numbers that a CI test compares
with `keys/golden.json` (relative 1e-6). They are what an acknowledgement in `keys/versions.json` is checked by: an
edit that is acknowledged as changing no number must leave its method's golden alone.

    python tests/goldens.py            # print the golden records
    python tests/goldens.py --write    # write keys/golden.json (after a version bump, or a new method or case)
"""
from __future__ import annotations
import copy, json, sys, tempfile
from pathlib import Path
import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "keys" / "golden.json"
CORPUS = [f"this is training sentence number {i} about topic {i % 7}" for i in range(16)]
SENTS = ["A man is playing a guitar.", "Two dogs run through the snow.", "A child smiles at the camera.",
         "The market opens at nine."]
CHAINS = [["A man plays a guitar.", "A man plays music.", "Someone makes a sound."],
          ["Two dogs run in snow.", "Dogs run outside.", "Animals move."],
          ["A child smiles.", "A kid is happy.", "A person shows a face."],
          ["The market opens at nine.", "A shop opens early.", "Something starts."]]
JTCSE_CASES = [("simcse", "all"), ("tncse", "all"), ("jtcse", "all"), ("distill", "all"),
               *[("jtcse", t) for t in ("nce", "icnce", "ictm", "nce+icnce", "nce+ictm", "icnce+ictm")]]
POSTTRAIN_CASES = ("full", "rank", "semantic", "self_teacher")
CHAIN_CASES = ("controlled/ours", "step/step", "list/ours")          # mode/prompt of the stored chain sets
TEMPLATE_CASES = ("eol", "pcot", "ke")


def _nums(x):
    "Plain JSON numbers, lists and strings from nested results (arrays, numpy scalars, tuples)."
    if isinstance(x, dict): return {str(k): _nums(v) for k, v in sorted(x.items()) if v is not None}
    if isinstance(x, np.ndarray): return _nums(x.tolist())
    if isinstance(x, (list, tuple)): return [_nums(v) for v in x]
    if x is None or isinstance(x, (bool, str)): return x
    return float(x)


def _twin(seed=0):
    from sentemb_lit.core.tiny_models import tiny_bert
    from sentemb_lit.jtcse.twin import TwinTowerEncoder
    (m1, tok), (m2, _) = tiny_bert(seed), tiny_bert(seed + 1)
    return TwinTowerEncoder(m1, m2, tok, max_length=32), tok


def jtcse_stage(variant: str, terms: str) -> dict:
    from sentemb_lit.core.io import read_jsonl
    from sentemb_lit.core.tiny_models import tiny_bert
    from sentemb_lit.jtcse.step import JTCSEConfig
    from sentemb_lit.jtcse.train import train
    cfg = JTCSEConfig(variant=variant, terms=terms, cael_every=1 if variant == "jtcse" else None, lr=1e-3,
                      batch_size=4, max_length=16, n_steps=2, eval_every=0, ckpt_every=0, seed=1, data_seed=1,
                      **({"nce_layout": "b"} if variant == "simcse" else {}))
    model, tok = _twin(2) if variant in ("tncse", "jtcse") else tiny_bert(2)
    teacher = _twin(4)[0] if variant == "distill" else None
    with tempfile.TemporaryDirectory() as d:
        res = train(cfg, model, tok, CORPUS, Path(d) / "run", teacher=teacher, progress=False)
        losses = [r["loss"] for r in read_jsonl(res.log_path) if "loss" in r]
    return {"loss": losses, "weights_sum": float(sum(p.detach().double().sum() for p in model.parameters()))}


def _tower_encoder():
    from sentemb_lit.core.models import SentenceEncoder
    from sentemb_lit.core.tiny_models import tiny_bert
    return SentenceEncoder(*tiny_bert(3), "cls", show_progress=False)


def jtcse_sts() -> dict:
    from sentemb_lit.core.evaluation import evaluate_sts
    from sentemb_lit.core.tiny_models import tiny_bert
    from sentemb_lit.jtcse.train import TowerPoolings
    pool = TowerPoolings(*tiny_bert(3))
    return {p: evaluate_sts(lambda s, p=p: pool(s, p), variant="senteval", limit=12).scores for p in ("cls", "mean")}


def jtcse_cls_energy() -> dict:
    from sentemb_lit.bench import model_cls_energy
    return model_cls_energy(*_twin(5), SENTS)


def jtcse_attention_sinks() -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sentemb_lit.core.tiny_models import tiny_bert
    from sentemb_lit.jtcse.cross_attention import layer_attention, plot_attention_sinks
    model, tok = tiny_bert(6)
    plt.close(plot_attention_sinks(model, tok, SENTS[0]))
    enc = tok([SENTS[0]], return_tensors="pt")
    parts = layer_attention(model, enc["input_ids"], enc["attention_mask"], enc.get("token_type_ids"))
    return {"sink_share": [float(p[0][0].mean(0)[:, [0, -1]].sum(1).mean()) for p in parts]}


def ranking_base_sts() -> dict:
    from sentemb_lit.core.evaluation import evaluate_dev, evaluate_sts
    enc = _tower_encoder()
    return {"test": evaluate_sts(enc, limit=12).scores, "dev": evaluate_dev(enc, limit=12)["avg"]}


def ranking_posttrain(arm: str) -> dict:
    from sentemb_lit.core.tiny_models import tiny_bert
    from sentemb_lit.ranking.runs import posttrain_and_evaluate
    mode = {"full": "full", "self_teacher": "full", "rank": "rank", "semantic": "semantic"}[arm]
    with tempfile.TemporaryDirectory() as d:
        r = posttrain_and_evaluate(CHAINS, Path(d) / "run", test_limit=12, student=tiny_bert(0),
                                   teacher=None if arm == "self_teacher" else tiny_bert(1), mode=mode, lr=1e-3,
                                   n_steps=3, eval_every=1, ckpt_every=1, dev_limit=12, seed=1, progress=False)
    return {k: r[k] for k in ("best_dev", "best_step", "dev_scores", "scores", "scores_last")}


def ranking_chains(case: str) -> dict:
    from sentemb_lit.core.tiny_models import tiny_llama
    from sentemb_lit.ranking.chains import RankingSettings, _decode_group
    mode, prompt = case.split("/")
    s = RankingSettings(model="tiny-llama", mode=mode, prompt=prompt, rounds=2, max_new_tokens=6, batch_size=2)
    return {"chains": [r["chain"] for r in _decode_group(*tiny_llama(0, tie_word_embeddings=False), SENTS[:2], s)]}


def ranking_transfer() -> dict:
    from sentemb_lit.evals.classifier import SMOKE
    from sentemb_lit.evals.transfer import evaluate_transfer
    r = evaluate_transfer(_tower_encoder(), ("MRPC",), cfg=SMOKE, limit=60)
    return {"scores": r.scores, "f1": r.f1, "dev": r.dev}


def ranking_mteb() -> dict:
    from sentemb_lit.evals.mteb import evaluate_mteb_classification
    res = evaluate_mteb_classification(_tower_encoder(), ("AmazonCounterfactualEN",), n_experiments=2, limit=60)
    return {t: r["accuracy"] for t, r in res.items()}


def prompting_encode(template: str) -> dict:
    from sentemb_lit.core.tiny_models import tiny_llama
    from sentemb_lit.prompting.prompt_embedding import PromptEncoder
    enc = PromptEncoder(*tiny_llama(0), template=template)
    return {"embedding_head": np.asarray(enc.encode(SENTS[:2]))[:, :8]}


CASES = {                                    # method -> case -> how to compute its golden record
    "jtcse.stage": {f"{v}/{t}": (lambda v=v, t=t: jtcse_stage(v, t)) for v, t in JTCSE_CASES},
    "jtcse.sts": {"tiny": jtcse_sts},
    "jtcse.cls_energy": {"tiny": jtcse_cls_energy},
    "jtcse.attention_sinks": {"tiny": jtcse_attention_sinks},
    "ranking.base_sts": {"tiny": ranking_base_sts},
    "ranking.posttrain": {a: (lambda a=a: ranking_posttrain(a)) for a in POSTTRAIN_CASES},
    "ranking.chains": {m: (lambda m=m: ranking_chains(m)) for m in CHAIN_CASES},
    "ranking.transfer": {"tiny": ranking_transfer},
    "ranking.mteb": {"tiny": ranking_mteb},
    "prompting.encode": {t: (lambda t=t: prompting_encode(t)) for t in TEMPLATE_CASES},
}


def compute(method: str, case: str) -> dict:
    torch.manual_seed(0)
    return _nums(CASES[method][case]())


def declared() -> dict:
    "The stored methods the library declares: name -> Method."
    import sentemb_lit.jtcse.train, sentemb_lit.ranking.runs, sentemb_lit.ranking.chain_jobs  # noqa: F401 (declare)
    import sentemb_lit.prompting.prompt_embedding  # noqa: F401
    from sentemb_lit.core.store import METHODS
    return {n: m for n, m in METHODS.items() if n in CASES}


def compute_all() -> dict:
    versions = {n: m.version for n, m in declared().items()}
    return {m: {"version": versions[m], "cases": {c: compute(m, c) for c in cases}} for m, cases in CASES.items()}


if __name__ == "__main__":
    torch.set_num_threads(1)
    got = compute_all()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN.relative_to(ROOT)}: {sum(len(v['cases']) for v in got.values())} cases")
    else: print(json.dumps(got, indent=1, sort_keys=True)[:4000])
