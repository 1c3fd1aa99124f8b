"""Pilot of the converged JTCSE Table I: how long does dev keep rising at batch 64?

Trains seed 0's stages (stage-1 tower I and II, then SimCSE continued and JTCSE k=2) on the whole unlabeled corpus at
batch 64 with STS-B dev (500 strided pairs) every 10 steps and no patience stop, up to a cap, and writes each stage's
dev curve to papers/jtcse/pilot/<stage>.json. The record's cap and patience are fixed from these curves.
Run: python tools/jtcse_pilot.py STAGE [CAP] [LR]   (STAGE: tower1 | tower2 | simcse | jtcse; LR: tower1's, default 2e-5)
"""
import json, os, sys, copy, time
from pathlib import Path
import torch
torch.set_num_threads(1)
from sentemb_lit.core.data import training_corpus
from sentemb_lit.core.models import load_encoder
from sentemb_lit.core.model_cache import cache_dir
from sentemb_lit.core.io import atomic_write_json
from sentemb_lit.core.store import KeyedStore
from sentemb_lit.jtcse.twin import TwinTowerEncoder
from sentemb_lit.jtcse.step import JTCSEConfig
from sentemb_lit.jtcse.train import run_stage

STAGE = sys.argv[1]
CAP = int(sys.argv[2]) if len(sys.argv) > 2 else 422          # one pass over the 27,029 sentences at batch 64
LR = float(sys.argv[3]) if len(sys.argv) > 3 else 2e-5
OUT = Path(__file__).resolve().parent.parent / "papers" / "jtcse" / "pilot"
STORE = KeyedStore(cache_dir() / "jtcse_work" / "pilot")
corpus = training_corpus()
base = lambda: load_encoder("minilm-l6")
shared = dict(batch_size=64, max_length=32, eval_every=10, ckpt_every=10, dropout=None, freeze_word_embeddings=True,
              n_steps=CAP)

def cfg(variant, seed, lr=2e-5, **over):
    kw = {"simcse": dict(nce_layout="b", cael_every=None), "jtcse": dict(cael_every=2)}[variant]
    return JTCSEConfig(variant=variant, seed=seed, data_seed=seed, lr=lr, **(shared | kw | over))

def tower(i, only_cached=False):
    lr = (LR, 3e-5)[i - 1]
    return run_stage(STORE, f"tower{i}", cfg("simcse", 100 * i, lr=lr), base, corpus, dev_limit=500,
                     only_cached=only_cached)

if STAGE in ("tower1", "tower2"):
    m, tok, info = tower(int(STAGE[-1]))
elif STAGE == "simcse":
    t1 = tower(1, only_cached=True)
    m, tok, info = run_stage(STORE, "simcse", cfg("simcse", 0), lambda: (copy.deepcopy(t1[0]), t1[1]), corpus,
                             dev_limit=500)
else:
    t1, t2 = tower(1, only_cached=True), tower(2, only_cached=True)
    twin = lambda: (TwinTowerEncoder(copy.deepcopy(t1[0]), copy.deepcopy(t2[0]), t1[1], max_length=128), t1[1])
    m, tok, info = run_stage(STORE, "jtcse", cfg("jtcse", 0), twin, corpus, dev_limit=500)
curve = [{"step": r["step"], "dev": r["dev"]} for r in info["log"] if "dev" in r]
OUT.mkdir(parents=True, exist_ok=True)
tag = STAGE if LR == 2e-5 else f"{STAGE}_lr{LR:g}"
atomic_write_json(OUT / f"{tag}.json", {"stage": STAGE, "cap": CAP, "lr": LR, "batch_size": 64, "eval_every": 10,
                                          "dev_limit": 500, "seconds": info.get("seconds"), "curve": curve})
print(STAGE, "best", info["best_step"], info["best_dev"], "seconds", info.get("seconds"))
