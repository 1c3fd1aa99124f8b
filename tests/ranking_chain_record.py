"""The chain stage of the ranking record (issue 26), run ahead of nb23 and served to it by key.

    python tests/ranking_chain_record.py --kinds controlled,step_paper       # resumable; commit the store as it grows
    python tests/ranking_chain_record.py --kinds list                       # the single-step list baseline (a)

Decodes the ranking chains of nb23's `cpu` profile into papers/ranking_sentences/store/cpu/chains/<kind>/<key>/ with
`chain_jobs.cached_chains` (one JSON line per chain, a manifest with the SHA-256 and record count; a restart resumes
at the first missing group). The settings below are nb23's cpu chain settings (`CHAINS["cpu"]` and `CHAIN_KINDS` in
nbs/experiments/23_ranking_reproduction.ipynb, which is the source; tests/test_ranking_record.py imports this module
and checks that both spell the same settings and source sample): the same settings, sources and chain code give the
same key, so the notebook finds these files and serves them after their check instead of decoding again (the cpu
controlled set: d2ffb9d6f9d8e153). Chosen by the pilot (papers/ranking_sentences/pilot/): with the paper's decoding
both generators copy their input in >= 92 % of rounds and no chain survives the official repeat filter; refusing
every earlier sentence of the chain (`refuse="chain"`, a stated deviation) with Qwen2.5-0.5B gives 15.1 distinct
sentences per training list at 16 rounds. It lives beside its test, which imports it; run it from the project folder.
"""
import argparse, random, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = dict(generator="qwen2.5-0.5b-instruct", n_sources=128, rounds=24, max_new_tokens=100, batch_size=16,
              refuse="chain")
KINDS = {"controlled": dict(mode="controlled", prompt="ours"),     # the paper's method (Eq. 4)
         "step_paper": dict(mode="step", prompt="step"),            # (b) step-by-step generation
         "lam0": dict(mode="step", prompt="ours")}                  # λ = 0 with the paper's instruction
LIST = dict(list_n=8, list_sources=32)       # nb23's cpu SIZES for Table 3 (a): one generation of 8 items per source


def record_sources(n: int) -> list:
    "nb23's sources: a seeded sample of SNLI premises of 5-25 words."
    from sentemb_lit.core.data import load_corpus
    prem = load_corpus("snli_premises")
    return random.Random(0).sample([s for s in prem if 5 <= len(s.split()) <= 25], n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default="controlled,step_paper", help=f"among {', '.join([*KINDS, 'list'])}")
    ap.add_argument("--store", default=str(ROOT / "papers/ranking_sentences/store/cpu"))
    a = ap.parse_args(argv)
    from sentemb_lit.ranking.chains import RankingSettings
    from sentemb_lit.ranking.chain_jobs import cached_chains
    from sentemb_lit.core.models import load_causal_lm
    sources = record_sources(RECORD["n_sources"])
    model, tok = load_causal_lm(RECORD["generator"])
    for kind in a.kinds.split(","):
        if kind == "list":                   # nb23's JOBS["list"]: its own size, the list instruction, no refusal
            s, src = RankingSettings(model=RECORD["generator"], mode="list", rounds=LIST["list_n"],
                                     max_new_tokens=30 * LIST["list_n"], batch_size=RECORD["batch_size"]), \
                sources[:LIST["list_sources"]]
        else:
            s = RankingSettings(model=RECORD["generator"], rounds=RECORD["rounds"],
                                max_new_tokens=RECORD["max_new_tokens"], batch_size=RECORD["batch_size"],
                                refuse=RECORD["refuse"], **KINDS[kind])
            src = sources
        f, key = cached_chains(Path(a.store) / "chains", kind, s, model=model, tokenizer=tok, sources=src)
        print(kind, f, key["key"][:16], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
