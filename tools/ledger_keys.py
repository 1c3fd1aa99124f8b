"""The keys of the JTCSE Table I ledger's stages and scores, computed by the code that is imported (nbs/14's formulas
for the `cpu` profile). Run under two versions of the package to map each stored entry's old key to its new one:

    PYTHONPATH=<old checkout> python tools/ledger_keys.py > old.json
    PYTHONPATH=<new checkout> python tools/ledger_keys.py > new.json

Used by tools/migrate_ledger.py (the reached-code walk learned to see methods attached after a class body) and
tools/migrate_patience.py (the growing patience of 2026-11-26)."""
import json, sys
from sentemb_lit import jtcse
from sentemb_lit.data import STS_TASKS, training_corpus
from sentemb_lit.io import fingerprint
try: from sentemb_lit.code_keys import cache_key
except ImportError: from sentemb_lit.io import cache_key          # a checkout from before code_keys
from sentemb_lit.models import load_encoder
try: from sentemb_lit.jtcse_step import JTCSEConfig
except ImportError: from sentemb_lit.jtcse import JTCSEConfig

DEV_LIMIT, SEEDS = 500, (0, 1, 2, 3, 4)

GROWING = "patience_growth" in JTCSEConfig.__dataclass_fields__   # the rule of 2026-11-26: cap 900, growth 0.25

def tower_config(tower: int, s: int) -> JTCSEConfig:
    "nbs/14's cfg('simcse', 100·tower + s, lr=lr_stage1[tower - 1]) at the cpu profile of the imported version."
    rule = dict(n_steps=900, patience_growth=0.25) if GROWING else dict(n_steps=600)
    return JTCSEConfig(variant="simcse", batch_size=64, max_length=32, eval_every=10, ckpt_every=10, patience=10,
                       seed=100 * tower + s, data_seed=100 * tower + s, lr=(3e-5, 2e-5)[tower - 1],
                       freeze_word_embeddings=True, nce_layout="b", cael_every=None, **rule)

def stage_key(config, corpus, init_id):
    if hasattr(jtcse, "stage_key"): return jtcse.stage_key(config, corpus, init_id, None, DEV_LIMIT)
    dev = jtcse.sts_fingerprint(("stsb",), "original", "dev", None)        # run_stage's formula before stage_key
    return cache_key({"config": config.to_dict(), "dev_limit": DEV_LIMIT}, seed=config.seed, code=jtcse.TRAIN_CODE,
                     data=(init_id, None, fingerprint(corpus), dev))

def score_key(model_key: str, what: str, sts_fp: str) -> dict:
    return cache_key({"eval": "7-STS", "what": what, "limit": None, "variant": "senteval"}, code=jtcse.EVAL_CODE,
                     data=(model_key, sts_fp))

def ledger_keys() -> dict:
    base_key = jtcse.model_fingerprint(load_encoder("minilm-l6")[0])
    corpus, sts_fp = training_corpus(), jtcse.sts_fingerprint(STS_TASKS, "senteval", "test")
    out, models = {}, {"base": base_key}
    for s in SEEDS:
        for t in (1, 2):
            k = stage_key(tower_config(t, s), corpus, base_key)
            out[f"tower{t}_s{s}"], models[f"tower{t}_s{s}"] = k, k["key"]
    for m, mk in models.items():
        for what in ("cls", "mean", "mean_first_last", "pooler"):
            out[f"score_{m}_{what}"] = score_key(mk, what, sts_fp)
    return out

if __name__ == "__main__":
    json.dump(ledger_keys(), sys.stdout, indent=1)
