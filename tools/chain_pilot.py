"""Issue 26's chain pilot: which generator and which decoding variant give ranking chains long enough to rank.

    python tools/chain_pilot.py                       # the grid below, 16 sources x 16 rounds (resumable)
    python tools/chain_pilot.py --generators smollm2-135m-instruct --variants paper,refuse_chain

Each (generator, variant) decodes the first `--sources` premises of papers/ranking_sentences/pilot/sources.txt (the
256 SNLI premises of the cpu record before issue 26, copied out of git tag records-archive-2026-11-29) with
`run_ranking_job` (controlled mode, lambda = 0.5, the paper's instruction), into
papers/ranking_sentences/pilot/chains/<generator>__<variant>.jsonl (manifest-checked, resumable). The summary
(papers/ranking_sentences/pilot/chain_pilot.json, content-hashed; README.md beside it) gives per configuration:
distinct sentences per chain and per training list on normalised text, copy rate, frozen chains, the official
filters' counts, monotonicity, the per-round curves (copy rate, distinct, cosine to the source under minilm-l6 mean
pooling) and the decoding seconds per chain on this machine. The summary is keyed by the chain code and each chain
file's SHA-256.
"""
import argparse, json, sys, time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "papers/ranking_sentences/pilot/sources.txt"     # the premises the pilot decoded (first lines)
VARIANTS = {                      # name -> RankingSettings fields beyond the paper's
    "paper": {},
    "few_shot": {"few_shot": True},
    "refuse_previous": {"refuse": "previous"},
    "refuse_chain": {"refuse": "chain"},
    "refuse_chain_few_shot": {"refuse": "chain", "few_shot": True},
}


def summarise(recs: list, encode) -> dict:
    from sentemb_lit.ranking.chains import filter_chains
    from sentemb_lit.ranking.chain_analysis import (chain_stats, monotonicity_summary, chain_similarity, normalise_sentence,
                                            round_stats)
    from sentemb_lit.ranking.posttraining import collapse_repeats
    kept, counts = filter_chains(recs)
    lists = [c for c in (collapse_repeats(r["chain"]) for r in kept) if len(c) >= 3]
    distinct_lists = [len(set(normalise_sentence(x) for x in c)) for c in lists]
    whole = [r for r in recs if all(x.strip() for x in r["chain"])]     # cosines need no empty sentence
    mono = monotonicity_summary(chain_similarity(encode, whole))
    return {"chains": chain_stats(recs), "filters": counts, "usable_lists": len(lists),
            "distinct_per_list_mean": float(np.mean(distinct_lists)) if lists else 0.0,
            "monotonicity": {k: v for k, v in mono.items() if k != "sim_to_source"},
            "rounds": round_stats(whole, encode), "chains_without_empty": len(whole),
            "seconds_per_chain": float(np.mean([r["seconds"] for r in recs]))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generators", default="smollm2-135m-instruct,qwen2.5-0.5b-instruct")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--configs", default=None, help="explicit generator__variant pairs, comma-separated (overrides "
                    "--generators x --variants)")
    ap.add_argument("--sources", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--out", default=str(ROOT / "papers/ranking_sentences/pilot"))
    a = ap.parse_args(argv)
    from sentemb_lit.ranking.chains import RankingSettings, chain_code
    from sentemb_lit.ranking.chain_jobs import run_ranking_job, read_chains, read_sentences
    from sentemb_lit.core.io import fingerprint, file_digest, write_json_verified
    from sentemb_lit.core.models import SentenceEncoder, load_causal_lm
    sources = read_sentences(SOURCES)[:a.sources]
    out = Path(a.out)
    enc = SentenceEncoder.from_name("minilm-l6", show_progress=False)
    summary_path = out / "chain_pilot.json"
    configs, pairs = {}, [tuple(c.split("__")) for c in a.configs.split(",")] if a.configs else \
        [(g, v) for g in a.generators.split(",") for v in a.variants.split(",")]
    model = tok = loaded = None
    for gen, var in pairs:
        s = RankingSettings(model=gen, rounds=a.rounds, **VARIANTS[var])
        path = out / "chains" / f"{gen}__{var}.jsonl"
        if loaded != gen: (model, tok), loaded = load_causal_lm(gen), gen
        t0 = time.time()
        run_ranking_job(s, sources, path, model=model, tokenizer=tok, quiet=False)
        recs = read_chains(path)
        configs[f"{gen}__{var}"] = {"generator": gen, "variant": var, "settings": s.stored(),
                                    "file": str(path.relative_to(out)), "sha256": file_digest(path)} \
            | summarise(recs, enc.encode)
        c = configs[f"{gen}__{var}"]
        print(f"{gen:24s} {var:22s} distinct/chain {c['chains']['distinct']:5.2f}  copy {c['chains']['copy_rate']:.2f}  "
              f"lists {c['usable_lists']:2d}  distinct/list {c['distinct_per_list_mean']:5.2f}  "
              f"({time.time() - t0:.0f} s)", flush=True)
    result = {"sources": len(sources), "rounds": a.rounds, "lam": 0.5, "encoder_for_cosines": "minilm-l6 (mean)",
              "chain_code": fingerprint(chain_code()), "configs": configs}
    write_json_verified(summary_path, result)
    (out / "README.md").write_text(readme(result), encoding="utf-8")
    return 0


def readme(result: dict) -> str:
    "The pilot's table, generated from its summary (no number typed by hand)."
    rows = ["| generator | variant | distinct / chain | copy rate | frozen | kept (official filters) | usable lists | "
            "distinct / list | Spearman (index vs cos to x0) | cos(x0, x16) | s / chain |", "|" + "---|" * 11]
    for c in result["configs"].values():
        ch, r = c["chains"], c["rounds"]
        rows.append(f"| {c['generator']} | {c['variant']} | {ch['distinct']:.2f} | {ch['copy_rate']:.2f} | "
                    f"{ch['frozen']:.2f} | {c['filters']['kept']}/{c['filters']['total']} | {c['usable_lists']} | "
                    f"{c['distinct_per_list_mean']:.2f} | {c['monotonicity']['spearman']:.2f} | "
                    f"{r['cos_to_source'][-1]:.3f} | {c['seconds_per_chain']:.1f} |")
    return "\n".join([
        "# Chain pilot (issue 26): which generator and decoding variant give chains long enough to rank", "",
        f"{result['sources']} SNLI premises (the first lines of sources.txt) x {result['rounds']} rounds, "
        f"controlled decoding (lambda = {result['lam']}, the paper's instruction), batch 16, on a 2-core CPU shared "
        "with two training processes (seconds are wall time under that load). Generated by `tools/chain_pilot.py` "
        "from `chain_pilot.json` (content-hashed; each chain file's SHA-256 inside). Distinct sentences and copies are "
        "counted on normalised text (case, punctuation, white space); a training list is a chain kept by the official "
        "filters with repeats collapsed, >= 3 sentences; cosines under minilm-l6 (mean pooling).", "", *rows, "",
        "Not run (stopped to give the cores to the record): SmolLM2 with refuse=chain, Qwen with refuse=previous.", "",
        "**Decision.** With the paper's decoding both generators copy their input in >= 92 % of rounds, every chain "
        "freezes and none survives the official repeat filter; one worked rewrite as a few-shot turn changes nothing. "
        "Refusing the chain's earlier sentences (`refuse=\"chain\"`, a stated deviation from the paper: Eq. 4 is "
        "unchanged, a token that would complete an earlier sentence is refused) gives Qwen2.5-0.5B-Instruct chains "
        "with ~15 distinct sentences per training list at 16 rounds, above the issue's floor of 8; SmolLM2 with the "
        "weaker rule (refuse=previous) cycles between two spellings or degenerates. The record therefore uses "
        "Qwen2.5-0.5B-Instruct, refuse=chain, 24 rounds, 128 sources (`tests/ranking_chain_record.py`). What the "
        "refusal buys is distinctness, not the paper's kind of rewrite: most rounds substitute the last word or two "
        "(\"snowy ground\" -> \"snowy place\" -> \"snowy area\"), so the chains drift by small lexical steps rather "
        "than by the paraphrases an 8B model writes.", ""])


if __name__ == "__main__":
    sys.exit(main())
