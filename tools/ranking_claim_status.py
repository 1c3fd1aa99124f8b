"""The `status` and `reason` of the ranking paper's post-training claims, written from the record, never typed.

    python tools/ranking_claim_status.py            # rewrite papers/ranking_sentences/claims.csv and coverage.csv
    python tools/ranking_claim_status.py --check    # exit 1 if either file differs from what the record says

Reads the cpu record's results JSON (its content hash verified) and rewrites the columns `status` and `reason` of the
rows its post-training and chain statistics speak to: Table 1's post-trained rows (the `-r` methods), every row of
Table 3, Table 4's rows, Table 8's rows, and coverage.csv's Fig. 1, Fig. 3 and Fig. 4. Every verdict and interval in a
reason is the finding as the reports judge it (`sentemb_lit.report.judged_findings`: recomputed from the committed
per-pair predictions, Holm within its family, the smallest effect of interest of claims.csv), matched by its claim
text; the other numbers (training-rule shares, chain statistics, list counts, seeds) come from the record's meta.
Rows of claims.csv this tool does not speak to (e.g. "Smallest effect of interest") are kept as they are. After a
rewrite it regenerates NOTES.md's "not reproduced here" list from these files (`claims.update_notes`).
tests/test_claims_status.py runs `--check`: a record read back without this step fails CI."""
import argparse, csv, io, sys
from sentemb_lit.report import judged_text   # the verdict in words, as the reports print it
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "papers" / "ranking_sentences"
RECORD = PAPER / "runs" / "cpu" / "23_ranking_reproduction.results.json"
ARM_OF = {"(b)": "The method beats (b) step-by-step chains (Table 3)", "(c)": "The method beats (c) shuffled chains (Table 3)",
          "(d)": "The method beats (d) ranking only (Table 3)", "(e)": "The method beats (e) semantic only (Table 3)"}
TABLE1 = "Post-training on ranking chains improves the student's 7-STS average (Table 1)"
LABEL = {"(b)": "(b) step-by-step chains", "(c)": "(c) shuffled chains", "(d)": "(d) ranking only", "(e)": "(e) semantic only"}
ARM = {"full": "post-trained (method)", "step": "(b) step-by-step chains", "shuffled": "(c) shuffled chains",
       "rank": "(d) ranking only", "semantic": "(e) semantic only"}       # the record's arm names, as its claims word them
FIG1 = ("Controlled decoding gives more monotone chains than the paper's step-by-step prompting (Fig. 1 (c) vs (d); "
        "Eq. 2 with its own prompt): per-chain spearman (×100)")
LONGER = "Ranking sentences are longer than their source (Fig. 4 (a))"
LEVELS = "The lengthening levels off: the first half of the rounds adds more words than the second (Fig. 4 (a))"


def transfer_claim(arm: str) -> str:
    "The record's claim of the SentEval transfer average after > before, for arm `arm` (Table 8)."
    return ("Post-training keeps or improves the student's transfer accuracy: after > before, SentEval average (Table 8)"
            if arm == "full" else f"{ARM.get(arm, arm)} after > before, SentEval transfer average (ablation)")


def mteb_claim(arm: str) -> str:
    return f"{ARM.get(arm, arm)} after > before, MTEB classification average (extra, no paper number)"


def judged(run_dir=RECORD.parent) -> dict:
    "claim -> its finding as the reports judge it (`sentemb_lit.report.judged_by_claim` of the run folder)."
    from sentemb_lit.report import judged_by_claim
    return judged_by_claim(run_dir, PAPER)


def need(js: dict, claim: str) -> dict:
    "The judged finding of `claim`; a clear error when the record has none."
    if claim not in js: raise KeyError(f"the record has no finding {claim!r}: rerun its notebook")
    return js[claim]


def ours_ci(f: dict, unit: str = "") -> str:
    "ours [lo, hi], with three decimals where two would blur an interval under 0.1 (as the reports print it)."
    k = 3 if max(abs(f["lo"]), abs(f["hi"])) < 0.1 else 2
    return f"{f['ours']:+.{k}f} [{f['lo']:+.{k}f}, {f['hi']:+.{k}f}]{unit}"


def not_a_gain(f: dict) -> str:
    "Why a *negligible* or *same model* result does not reproduce the gain the paper reports ('' for other verdicts)."
    paper = f" {f['paper']:+.2f}" if f.get("paper") is not None else ""
    if f["verdict"] == "negligible": return f"; not reproduced: a difference this small is not the paper's gain{paper}"
    if f["verdict"] == "same model": return f"; not reproduced: one model on both sides shows none of the paper's gain{paper}"
    return ""


def mde(f: dict) -> str:
    return f"; detectable at 80 % power ±{f['mde']:.2f}" if f.get("mde") is not None else ""
def facts(meta: dict, js: dict) -> dict:
    "The numbers every reason below is written from: judged findings for verdicts and intervals, meta for the rest."
    vi = meta["verdict_intervals"]
    def pair(claim):
        best, last = f"{claim} — best dev weights", f"{claim} — last step weights"
        return need(js, best), need(js, last), vi[last]["n_seeds"]
    seeds = sorted({s for v in vi.values() for s in v.get("seeds", [])})
    cs = meta["chain_stats"]
    scale = (f"minilm-l6 student, {meta['chains']['generator']} chains ({meta['n_lists']['controlled']} lists, "
             f"{meta['distinct_per_list_mean']['controlled']:.1f} distinct sentences each), "
             f"{meta['teacher'][0]['name'] if meta['teacher'] else 'no'} teacher, all {vi[TABLE1 + ' — last step weights']['n_pairs']:,} "
             f"test pairs")
    return {"pair": pair, "seeds": seeds, "step0": meta["best_at_step0_share"], "scale": scale, "chain_stats": cs,
            "base": meta["base"]["scores"]["avg"], "monotonicity": meta["monotonicity"], "list": meta["filter_counts"].get("list"),
            "n_runs": len(meta["runs"]), "omega": meta["sizes"]["omega_grid"]}


def post_reason(f: dict, claim: str, what: str) -> tuple[str, str]:
    "Status and reason of a post-training claim: the last-step verdict, with the best-dev reading beside it."
    best, last, n = f["pair"](claim)
    status = "reproduced" if last["verdict"] == "holds" else "not reproduced"
    untested = best.get("status") not in (None, "tested")         # e.g. "not tested: training never improved dev"
    reason = (f"{what}: last-step weights {judged_text(last)}{mde(last)}; {n} seeds; best-dev weights "
              f"{judged_text(best)}" + (f" ({best['status']}; {100 * f['step0']:.0f} % of the {f['n_runs']} runs best "
              "at step 0)" if untested else "") + f"; at {f['scale']}" + not_a_gain(last))
    return status, reason


def rows_for(meta: dict, js: dict) -> dict:
    "(table, method-or-item) matcher -> (status, reason); `js`: claim -> judged finding (`judged`)."
    f = facts(meta, js)
    out = {}
    st, rs = post_reason(f, TABLE1, "post-training vs the untrained student")
    out["table1"] = (st, rs + "; BERT/RoBERTa students not run")
    out["table3 method"] = post_reason(f, TABLE1, "the method vs the untrained student")
    for k, claim in ARM_OF.items():
        out[f"table3 {k}"] = post_reason(f, claim, f"the method vs {LABEL[k]}")
    lst = f["list"]
    out["table3 (a)"] = ("not testable here",
                         f"{meta['chains']['generator']} gives {lst['kept']}/{lst['total']} single-step lists kept by the "
                         f"official filters ({lst['repeat']} with repeats); too few to post-train on (paper: LLaMA3-70B)"
                         if lst else "the single-step list baseline is not in the record")
    out["table3 base"] = ("partly", f"analogue: the untouched minilm-l6 student, {f['base']:.2f} on all test pairs "
                                    f"(MultiCSR-BERT not in the record)")
    _, last, _ = f["pair"](TABLE1)
    out["table4"] = ("not testable here", "the SimCSE / InfoCSE / PCL / RankCSE BERT checkpoints are not in the record; "
                                          f"on minilm-l6 the analogous change (last step) is {judged_text(last)}")
    m, fm = f["monotonicity"].get("controlled vs step_paper/spearman"), js.get(FIG1)
    cs = f["chain_stats"]
    out["fig1"] = ("partly", f"{meta['chains']['generator']} chains scored with minilm-l6 (not DiffCSE): (d) vs (c) "
                             f"per-chain Spearman ×100 over {m['n_items']} paired chains: {judged_text(fm)}; "
                             f"copy rate {cs['controlled']['copy_rate']:.3f} / {cs['step_paper']['copy_rate']:.3f}; (a) not "
                             "measured; (b): " + (f"{lst['kept']}/{lst['total']} usable lists" if lst else "not in the record")
                   if m and fm else "not in the record")
    out["fig3"] = ("partly", f"(a) ω ∈ {{{', '.join(str(w) for w in f['omega'])}}} on one seed (runs/cpu, table "
                             f"'omega'); (b) not run: all {meta['n_lists']['controlled']} usable lists, no sweep of the amount")
    ln = meta.get("length") or {}
    out["fig4"] = ("partly" if ln else "not testable here",
                   (f"(a) words per index, {ln['longer']['n_items']} {meta['chains']['generator']} controlled chains: "
                    f"source {ln['longer']['b']:.1f}, rounds 1–{meta['chains']['rounds']} {ln['longer']['a']:.1f}; longer "
                    f"than the source: {judged_text(need(js, LONGER), ' words')}; levels off (first-half minus "
                    f"second-half growth): {judged_text(need(js, LEVELS), ' words')}"
                    if ln else "(a) not in the record") + "; (b) needs GPT-4o as judge, not reachable here")
    out |= table8_rows(meta, js)
    return out


def table8_rows(meta: dict, js: dict) -> dict:
    "Table 8 (transfer): the post-trained student's SentEval average against the untrained one, from the record."
    tr = meta.get("transfer") or {}
    iv = (tr.get("intervals") or {}).get("full")
    if not iv:
        why = "not run yet: the cpu record has no transfer rows of the untrained and the post-trained student"
        return {"table8 -r": ("not testable here", why), "table8 base": ("not testable here", why)}
    a, s = need(js, transfer_claim("full")), len(iv["seeds"])
    arms = "; ".join(f"{ARM.get(k, k)} {judged_text(need(js, transfer_claim(k)))}" for k in tr["intervals"] if k != "full")
    reason = (f"minilm-l6 student (mean pooling), SentEval record settings, all test items: after post-training (last "
              f"step) {tr['avg']['full']:.2f} vs before {tr['avg']['base']:.2f}, {judged_text(a)}{mde(a)}; {s} seeds"
              + (f"; arms vs before: {arms}" if arms else "")
              + "; the paper's BERT/RoBERTa students are not in the record" + not_a_gain(a))
    base = ("not testable here", f"this checkpoint is not in the record; the analogue here, the untrained minilm-l6 "
                                 f"student, averages {tr['avg']['base']:.2f} at SentEval's record settings")
    return {"table8 base": base,
            "table8 -r": ("reproduced" if a["verdict"] == "holds" else "not reproduced", reason)}


BLOCK = ("<!-- table8:start -->", "<!-- table8:end -->")
T8 = "Table 8 (transfer accuracy, mean over seeds)"


def _ci_cell(f: dict) -> str:
    return "one model (no interval)" if f["verdict"] == "same model" else "—" if f.get("lo") is None else ours_ci(f)


def _holm_cell(f: dict) -> str:
    return f"{f['p_holm']:.2g} ({f['family']}, {f['family_size']})" if f.get("p_holm") is not None else "—"


def _verdict_cell(f: dict) -> str:
    return f["verdict"] + (f" (within ±{f['sesoi']:g})" if f["verdict"] == "negligible" else "")


def table8_block(res: dict, js: dict) -> str:
    "NOTES.md's Table 8 block: the record's rows (accuracy per task, mean over seeds) and each arm's judged finding."
    rows = [r for r in res["rows"] if r["table"] == T8]
    if not rows: return "Not run yet: the cpu record has no transfer rows.\n"
    tr = res["meta"]["transfer"]
    tasks = tr["tasks"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    val = {(r["method"], r["metric"]): r["value"] for r in rows}
    seeds = {r["method"]: r["setting"].split("seeds ")[1].split(",")[0] for r in rows}
    out = ["| student | " + " | ".join(tasks) + " | avg | MRPC F1 | seeds |", "|---|" + "---|" * (len(tasks) + 3)]
    for m in methods:
        out.append(f"| {m} | " + " | ".join(f"{val[(m, t)]:.2f}" for t in tasks) + f" | **{val[(m, 'avg')]:.2f}** | "
                   f"{val.get((m, 'MRPC F1'), float('nan')):.2f} | {seeds[m]} |")
    out += ["", "| after − before (last step), SentEval average | ours [95 % CI, unadjusted] | Holm p (family, size) | "
            "verdict | detectable (80 %) | seeds |", "|---|---|---|---|---|---|"]
    for arm, v in tr["intervals"].items():
        f = need(js, transfer_claim(arm))
        out.append(f"| {'the method' if arm == 'full' else ARM.get(arm, arm)} | {_ci_cell(f)} | {_holm_cell(f)} | "
                   f"{_verdict_cell(f)} | {'—' if f.get('mde') is None else '±%.2f' % f['mde']} | "
                   f"{', '.join(map(str, v['seeds']))} |")
    return "\n".join(out + mteb_lines(res, js)) + "\n"


M_TABLE = "MTEB classification (extra, accuracy, mean over seeds)"


def mteb_lines(res: dict, js: dict) -> list[str]:
    "The extra beside Table 8: MTEB classification (no paper number) per row, and after − before, judged."
    rows = [r for r in res["rows"] if r["table"] == M_TABLE]
    if not rows: return []
    m = res["meta"]["mteb_classification"]
    tasks, methods = m["tasks"], list(dict.fromkeys(r["method"] for r in rows))
    val = {(r["method"], r["metric"]): r["value"] for r in rows}
    seeds = {r["method"]: r["setting"].split("seeds ")[1].split(",")[0] for r in rows}
    out = ["", "MTEB classification (an extra: no paper reports it; mteb 2.26's protocol, accuracy ×100):", "",
           "| student | " + " | ".join(tasks) + " | avg | seeds |", "|---|" + "---|" * (len(tasks) + 2)]
    out += [f"| {k} | " + " | ".join(f"{val[(k, t)]:.2f}" for t in tasks) + f" | **{val[(k, 'avg')]:.2f}** | "
            f"{seeds[k]} |" for k in methods]
    for arm, v in m["intervals"].items():
        f = need(js, mteb_claim(arm))
        out += ["", f"after − before (last step), MTEB classification average: {judged_text(f)}{mde(f)}; seeds "
                f"{', '.join(map(str, v['seeds']))}"]
    return out


def key_of(table: str, method: str) -> str | None:
    if table == "Table 1" and "-r [" in method: return "table1"
    if table == "Table 3":
        if method.startswith("MultiCSR-r"): return "table3 method"
        if method.startswith("MultiCSR ["): return "table3 base"
        for k in ("(a)", "(b)", "(c)", "(d)", "(e)"):
            if method.startswith(k): return f"table3 {k}"
    if table == "Table 4": return "table4"
    if table == "Table 8":
        return "table8 -r" if "-r [" in method else "table8 base"
    if table == "Fig. 1": return "fig1"
    if table == "Fig. 3": return "fig3"
    if table == "Fig. 4": return "fig4"
    return None


def rewrite(path: Path, col: str, new: dict) -> str:
    "The CSV's text with `status`/`reason` of every matched row replaced (other rows and columns untouched)."
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    fields = list(rows[0].keys())
    for r in rows:
        k = key_of(r["table"], r[col])
        if k is not None and k in new: r["status"], r["reason"] = new[k]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader(); w.writerows(rows)
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", default=str(RECORD))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    from sentemb_lit.io import read_json_verified
    res, js = read_json_verified(a.record), judged(Path(a.record).parent)
    from sentemb_lit.claims import replace_block, sync_texts, update_notes
    new = rows_for(res["meta"], js)
    notes = PAPER / "NOTES.md"
    texts = {notes: replace_block(notes.read_text(encoding="utf-8"), BLOCK, table8_block(res, js), notes)}
    texts |= {path: rewrite(path, col, new) for path, col in ((PAPER / "claims.csv", "method"),
                                                             (PAPER / "coverage.csv", "item"))}
    stale = sync_texts(texts, check=a.check)
    if a.check and stale:
        print(f"{', '.join(p.name for p in stale)} differ from the record {a.record}: run python "
              "tools/ranking_claim_status.py", file=sys.stderr)
        return 1
    for p in stale: print(f"rewrote {p.relative_to(ROOT)}")
    if not a.check: update_notes(PAPER)
    return 0

if __name__ == "__main__":
    sys.exit(main())
