"""The `status` and `reason` of PretCoT & KE's claims that the cpu record speaks to, written from the record.

    python tools/pretcot_claim_status.py            # rewrite papers/pretcot_ke/claims.csv and coverage.csv
    python tools/pretcot_claim_status.py --check    # exit 1 if either file differs from what the records say

Reads the two cpu records' results JSON (content hashes verified): SmolLM2-135M (`31_pretcot_ke_reproduction`,
the seven STS tasks) and Qwen2.5-0.5B (`..._qwen2.5-0.5b-instruct`, STS-B test). Rewrites `status` and `reason` of the
LLaMA2-7b rows of Tables 3, 5 and 7, the OPT-350m rows of Table 6 and coverage.csv's Fig. 1: every number comes from
a record, none is typed. Every verdict and interval is the finding as the reports judge it
(`sentemb_lit.report.judged_findings`: recomputed from the committed per-pair predictions, Holm within its family, the
smallest effect of interest of claims.csv), matched by its claim text; the analogue's scores come from the results
JSON. Rows about other models (and claims.csv's "Smallest effect of interest" rows) keep their text. After a rewrite
it regenerates NOTES.md's "not reproduced here" list (`claims.update_notes`).
tests/test_claims_status.py runs `--check`: a record read back without this step fails CI."""
import argparse, csv, io, sys
from sentemb_lit.report import judged_text   # the verdict in words, as the reports print it
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "papers" / "pretcot_ke"
RUNS = PAPER / "runs" / "cpu"
SMALL, LARGE = "smollm2-135m-instruct", "qwen2.5-0.5b-instruct"
RECORDS = {SMALL: RUNS / "31_pretcot_ke_reproduction.results.json",
           LARGE: RUNS / f"31_pretcot_ke_reproduction_{LARGE}.results.json"}
SIZE = {SMALL: "135M", LARGE: "0.5B"}
NAME = {"eol": "PromptEOL", "pcot": "Pretended CoT", "ke": "Knowledge Enhancement", "sth": "PromptSTH",
        "sum": "PromptSUM"}
PRESET = {"eol": -1, "pcot": -2, "ke": -2}
CLAIM = {"pcot": ("PCoT > EOL", "Pretended CoT (layer -2) beats PromptEOL (layer -1)"),
         "ke": ("KE > EOL", "Knowledge Enhancement (layer -2) beats PromptEOL (layer -1)"),
         "sth": ("EOL > STH", "Direct inference: PromptEOL beats PromptSTH (Table 3)"),
         "sum": ("EOL > SUM", "Direct inference: PromptEOL beats PromptSUM (Table 3)")}
TASKS = ("sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr")


def judged(run_dir=RUNS) -> dict:
    "claim -> its finding as the reports judge it (`sentemb_lit.report.judged_by_claim` of the run folder)."
    from sentemb_lit.report import judged_by_claim
    return judged_by_claim(run_dir, PAPER)


def ours_ci(f: dict) -> str:
    "ours [lo, hi], with three decimals where two would blur an interval under 0.1 (as the reports print it)."
    k = 3 if max(abs(f["lo"]), abs(f["hi"])) < 0.1 else 2
    return f"{f['ours']:+.{k}f} [{f['lo']:+.{k}f}, {f['hi']:+.{k}f}]"


def not_a_gain(f: dict) -> str:
    "Why a *negligible* or *same model* result does not reproduce the gain the paper reports ('' for other verdicts)."
    if f["verdict"] == "negligible": return " (a difference this small is not the gain the paper reports)"
    if f["verdict"] == "same model": return " (one model on both sides shows none of the gain the paper reports)"
    return ""


class Record:
    "One model's record: its scores, its Table 3/5 averages and its findings (as the reports judge them) by claim."
    def __init__(self, model: str, res: dict, js: dict):
        self.model, self.meta, self.rows = model, res["meta"], res["rows"]
        missing = [f["claim"] for f in res["findings"] if f["claim"] not in js]
        if missing: raise KeyError(f"{model}: no judged finding for {missing[:3]}: rerun the report's judged_findings")
        self.findings = {f["claim"]: js[f["claim"]] for f in res["findings"]}
        self.tasks = self.meta["tasks_all_prompts"]

    def score(self, m: str, task: str) -> float:
        return self.meta["scores"][f"{m}@{PRESET.get(m, -1)}"][task]

    def average(self, table: str, m: str, prefix: str) -> tuple[float, int] | None:
        "(the record's average of method m in `table`, over how many tasks)."
        for r in self.rows:
            if r["table"] == table and r["method"] == NAME[m] and r["metric"].startswith(prefix):
                n = r["metric"].removeprefix(prefix).removeprefix("_").removesuffix("tasks")
                return r["value"], int(n) if n else 7
        return None

    def find(self, claim: str, scope: str) -> dict | None:
        "The finding of `claim` on the task average ('avg') or on STS-B test ('stsb')."
        if scope == "stsb": return self.findings.get(f"{claim} [{self.model}, STS-B test]")
        return next((f for c, f in self.findings.items() if c.startswith(f"{claim} [{self.model}, ")
                     and c.endswith("-task average]")), None)


def claim_text(recs: dict, m: str, scope: str, gain: bool = True) -> tuple[str, list[str]]:
    """'PCoT > EOL at 135M: does not hold, ours -6.76 [...] (95 % CI, unadjusted; Holm p …); at 0.5B (STS-B): …' on the
    scope (0.5B: STS-B only, named), and the scope's verdicts. `gain`: the row is a gain the paper reports, so a
    negligible or same-model result says why it does not reproduce it."""
    short, claim = CLAIM[m]
    parts, verdicts = [], []
    for model in (SMALL, LARGE):
        f = recs[model].find(claim, "stsb" if model == LARGE else scope)
        if f is None: continue
        where = "" if model == SMALL or scope == "stsb" else " (STS-B)"
        parts.append(f"at {SIZE[model]}{where}: {judged_text(f)}" + (not_a_gain(f) if gain and not where else ""))
        if not where: verdicts.append(f["verdict"])            # the status counts results on the row's own scope
    return f"{short} " + "; ".join(parts), verdicts


def status_of(verdicts: list[str]) -> str:
    "An analogue's claim: partly where it holds at one size at least, else not reproduced."
    return "partly" if "holds" in verdicts else "not reproduced"


def table5(recs: dict) -> dict:
    s, q, out = recs[SMALL], recs[LARGE], {}
    for m in ("eol", "pcot", "ke"):
        for task in TASKS + ("avg",):
            if task == "avg":
                v, n = s.average("Table 5", m, "avg")
                base = f"LLaMA2-7b not run; analogue at SmolLM2-135M {v:.2f}" + ("" if n == 7 else f" ({n} tasks)")
            else:
                base = "LLaMA2-7b not run; analogue at SmolLM2-135M on the same task (REPORT.md)"
                if task == "stsb": base += f", Qwen-0.5B {q.score(m, 'stsb'):.2f}"
            if m == "eol": out[("Table 5", NAME[m], task)] = ("partly", base)
            else:
                text, vs = claim_text(recs, m, "stsb" if task == "stsb" else "avg")
                out[("Table 5", NAME[m], task)] = (status_of(vs), f"{base}; {text}")
        if m == "eol":
            v, n = s.average("Table 5", m, "avg")
            out[("Table 6", NAME[m], "avg")] = ("partly", f"OPT-350m not run; analogue at SmolLM2-135M {v:.2f}")
        else:
            v, _ = s.average("Table 5", m, "avg")
            text, vs = claim_text(recs, m, "avg", gain=m != "ke")
            note = " (the paper's OPT-350m row has KE below EOL)" if m == "ke" else ""
            out[("Table 6", NAME[m], "avg")] = (status_of(vs), f"OPT-350m not run; analogue at SmolLM2-135M {v:.2f}; "
                                                              f"{text}{note}")
    return out


def table7(recs: dict) -> dict:
    out = {}
    for what in ("uniformity", "alignment"):
        vs = [recs[m].findings[f"Higher STS-B Spearman goes with lower {what} across the six (prompt, layer) settings "
                                f"(Table 7) [{m}]"]["verdict"] for m in (SMALL, LARGE)]
        out[what] = ("inconclusive at both sizes" if vs == ["inconclusive"] * 2
                     else f"{vs[0]} at 135M, {vs[1]} at 0.5B")
    base = "LLaMA2-7b not run; analogue measured at SmolLM2-135M and Qwen-0.5B (REPORT.md Table 7); "
    rows = {}
    for m in ("eol", "pcot", "ke"):
        for layer in (-1, -2):
            meth = f"{NAME[m]} (layer {layer})"
            rows[("Table 7", meth, "spearman")] = ("partly", base + "the Spearman column is STS-B test (as Table 5)")
            for what in ("alignment", "uniformity"):
                rows[("Table 7", meth, what)] = ("partly", base + f"Spearman vs {what} across the six settings "
                                                                  f"{out[what]}")
    return rows


def table3(recs: dict) -> dict:
    s, q, out = recs[SMALL], recs[LARGE], {}
    for m in ("eol", "sth", "sum"):
        v, n = s.average("Table 3", m, "direct_inference_avg")
        text = f"analogue at SmolLM2-135M: {v:.2f} ({n} tasks), Qwen-0.5B STS-B {q.score(m, 'stsb'):.2f}"
        if m == "eol": out[("Table 3", NAME[m], "direct_inference_avg")] = ("partly", text)
        else:
            claim, vs = claim_text(recs, m, "avg")
            out[("Table 3", NAME[m], "direct_inference_avg")] = (status_of(vs), f"{text}; {claim}")
    return out


def fig1(recs: dict) -> tuple[str, str]:
    claim = ("Knowledge Enhancement puts more of the final token's cosine share (the paper's measure) on content words "
             "than PromptEOL (Fig. 1)")
    fs = {m: next(f for c, f in recs[m].findings.items() if c.startswith(claim)) for m in (SMALL, LARGE)}
    vs = [fs[m]["verdict"] for m in (SMALL, LARGE)]
    return (status_of(vs), "with the paper's cosine-share measure KE − EOL on content words: at SmolLM2-135M "
            f"{judged_text(fs[SMALL])}{not_a_gain(fs[SMALL])}; at Qwen-0.5B {judged_text(fs[LARGE])}"
            f"{not_a_gain(fs[LARGE])}")


def rows_for(recs: dict) -> dict:
    return table5(recs) | table7(recs) | table3(recs) | {("Fig. 1", None, None): fig1(recs)}


def _fmt(v) -> str: return f"{v:.2f}".replace("-", "−")


def _cell(f: dict) -> str:
    "A judged finding in a NOTES.md table: ours [95 % CI] **verdict**, with Holm's p and the smallest effect."
    v = f["verdict"]
    if v == "same model": return "one model, no interval **same model**"
    ci = "no interval" if f.get("lo") is None or f.get("hi") is None else ours_ci(f).replace("-", "−")
    out = f"{ci} **{v}**" + (f" within ±{f['sesoi']:g}" if v == "negligible" else "")
    return out + (f", Holm p {f['p_holm']:.2g} ({f['family']}, {f['family_size']})" if f.get("p_holm") is not None
                  else "")


def _paper(claims: list[dict], table: str, method: str, metric: str) -> float | None:
    return next((float(r["value"]) for r in claims if (r["table"], r["method"], r["metric"]) == (table, method, metric)),
                None)


def record_block(recs: dict, claims: list[dict]) -> str:
    "NOTES.md's numbers, every one read from the records (scores, Table 7 geometry, verdicts, attention shares)."
    s, q = recs[SMALL], recs[LARGE]
    settings = [("eol", -1), ("pcot", -2), ("ke", -2), ("eol", -2), ("pcot", -1), ("ke", -1)]
    order = [t for t in ("sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr") if t in s.tasks]
    head = {"sts12": "STS12", "sts13": "STS13", "sts14": "STS14", "sts15": "STS15", "sts16": "STS16", "stsb": "STS-B",
            "sickr": "SICK-R"}
    sc = lambda r, m, l, t: r.meta["scores"][f"{m}@{l}"][t]
    out = [f"### Tables 5/6: SmolLM2-135M-Instruct, {len(order)} STS test sets in full (Spearman × 100, "
           f"{s.meta['dtype']})", "",
           "| method (layer) | " + " | ".join(head[t] for t in order) + f" | avg ({len(order)}) |",
           "|---|" + "---|" * (len(order) + 1)]
    for m, l in settings:
        v = [sc(s, m, l, t) for t in order]
        avg = sum(v) / len(v)
        bold = (m, l) in (("eol", -1), ("pcot", -2), ("ke", -2))
        out.append(f"| {NAME[m]} ({l}) | " + " | ".join(_fmt(x) for x in v) + " | "
                   + (f"**{_fmt(avg)}**" if bold else _fmt(avg)) + " |")
    out += ["", f"### Qwen2.5-Coder-0.5B-Instruct, STS-B test in full ({q.meta['dtype']})", "",
            "| method (layer) | STS-B | paper LLaMA2-7b STS-B |", "|---|---|---|"]
    for m, l in settings + [("sth", -1), ("sum", -1)]:
        p = _paper(claims, "Table 7", f"{NAME[m]} (layer {l})", "spearman")
        out.append(f"| {NAME[m]} ({l}) | {_fmt(sc(q, m, l, 'stsb'))} | {'—' if p is None else _fmt(p)} |")
    t3 = [t for t in order if all(t in s.meta["scores"][f"{m}@-1"] for m in ("eol", "sth", "sum"))]
    out += ["", "### Table 3 (direct inference, layer −1): PromptEOL vs PromptSTH / PromptSUM", "",
            "| model | method | " + " | ".join(head[t] for t in t3) + f" | avg ({len(t3)}) | paper LLaMA2-7b avg (7) |",
            "|---|---|" + "---|" * (len(t3) + 2)]
    for m in ("eol", "sth", "sum"):
        v = [sc(s, m, -1, t) for t in t3]
        p = _paper(claims, "Table 3", NAME[m], "direct_inference_avg")
        out.append(f"| SmolLM2-135M | {NAME[m]} | " + " | ".join(_fmt(x) for x in v) + f" | {_fmt(sum(v) / len(v))} | "
                   f"{_fmt(p)} |")
    for m in ("eol", "sth", "sum"):
        out.append(f"| Qwen-0.5B | {NAME[m]} | " + " | ".join(_fmt(sc(q, m, -1, t)) if t == "stsb" else "—" for t in t3)
                   + " | — | |")
    au = lambda r, m, l: r.meta["alignment_uniformity"][f"{m}@{l}"]
    out += ["", "### Table 7 analogue (STS-B test; alignment over the pairs with gold ≥ 4.5, uniformity over all "
            "sentences)", "", "| method | layer | SmolLM2: STS-B / align / uniform | Qwen-0.5B: STS-B / align / uniform | "
            "paper (LLaMA2-7b) |", "|---|---|---|---|---|"]
    for l in (-1, -2):
        for m in ("eol", "pcot", "ke"):
            meth = f"{NAME[m]} (layer {l})"
            cell = lambda r: (f"{_fmt(sc(r, m, l, 'stsb'))} / {au(r, m, l)['alignment']:.4f} / "
                              f"{au(r, m, l)['uniformity']:.4f}".replace("-", "−"))
            pp = [_paper(claims, "Table 7", meth, k) for k in ("spearman", "alignment", "uniformity")]
            out.append(f"| {NAME[m]} | {str(l).replace('-', '−')} | {cell(s)} | {cell(q)} | "
                       + f"{_fmt(pp[0])} / {pp[1]:.4f} / {pp[2]:.4f}".replace("-", "−") + " |")
    out += ["", "### Verdicts (ours [95 % CI of the paired difference, unadjusted], Spearman × 100; the verdict as the "
            "reports judge it)", "",
            f"135M = SmolLM2 on its {len(order)}-task average (STS-B alone after the ·); 0.5B = Qwen on STS-B. Holm p "
            "(family, size): Holm-adjusted within the family; *negligible*: the interval lies within ± the smallest "
            "effect of interest (claims.csv).", "",
            "| claim | 135M | 0.5B |", "|---|---|---|"]
    iv = lambda f: "not run" if f is None else _cell(f)
    for c in dict.fromkeys(c.split(" [")[0] for c in s.findings if "beats" in c):
        a, b, z = s.find(c, "avg"), s.find(c, "stsb"), q.find(c, "stsb")
        out.append(f"| {c} | {iv(a)} · STS-B {iv(b)} | {iv(z)} |")
    for c in dict.fromkeys(c.split(" [")[0] for c in s.findings if c.startswith("Higher")):
        fs = [next(f for k, f in r.findings.items() if k.startswith(c)) for r in (s, q)]
        out.append(f"| {c} | " + " | ".join(f"ρ = {_cell(f)}" for f in fs) + " |")
    out += ["", "### Attention analysis (Fig. 1): KE or PCoT minus EOL, percentage points, paired over sentences", "",
            "| measure | " + " | ".join(f"{SIZE[r.model]}: {k} − EOL" for r in (s, q) for k in ("KE", "PCoT"))
            + " |", "|---|---|---|---|---|"]
    for label in ("cosine share (the paper's measure)", "attention share"):
        cells = []
        for r in (s, q):
            for m in ("Knowledge Enhancement", "Pretended CoT"):
                f = next(f for k, f in r.findings.items() if k.startswith(f"{m} puts more of the final token's {label}"))
                cells.append(iv(f))
        out.append(f"| {label} on content words | " + " | ".join(cells) + " |")
    ex = {r.model: r.meta["fig1_example_core_share"] for r in (s, q)}
    out += ["", "On the paper's own example sentence (\"a man is driving a car\") the cosine share of *man*, *driving*, "
            "*car* is " + "; ".join(f"{SIZE[m]}: EOL {e['eol']:.3f}, PCoT {e['pcot']:.3f}, KE {e['ke']:.3f}"
                                    for m, e in ex.items()) + "."]
    return "\n".join(out) + "\n"


BLOCK = ("<!-- record:start -->", "<!-- record:end -->")




def rewrite(path: Path, new: dict, coverage: bool) -> str:
    "The CSV's text with `status`/`reason` of every matched row replaced (other rows and columns untouched)."
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    fields = list(rows[0].keys())
    for r in rows:
        k = (r["table"], None, None) if coverage else (r["table"], r["method"], r["metric"])
        if k in new: r["status"], r["reason"] = new[k]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader(); w.writerows(rows)
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    from sentemb_lit.io import read_json_verified
    js = judged()
    recs = {m: Record(m, read_json_verified(p), js) for m, p in RECORDS.items()}
    from sentemb_lit.claims import replace_block, sync_texts, update_notes
    new = rows_for(recs)
    claims = list(csv.DictReader((PAPER / "claims.csv").open(encoding="utf-8", newline="")))
    notes = PAPER / "NOTES.md"
    texts = {notes: replace_block(notes.read_text(encoding="utf-8"), BLOCK, record_block(recs, claims), notes)}
    texts |= {path: rewrite(path, new, coverage) for path, coverage in ((PAPER / "claims.csv", False),
                                                                       (PAPER / "coverage.csv", True))}
    stale = sync_texts(texts, check=a.check)
    if a.check and stale:
        print(f"{', '.join(p.name for p in stale)} differ from the records: run python tools/pretcot_claim_status.py",
              file=sys.stderr)
        return 1
    for p in stale: print(f"rewrote {p.relative_to(ROOT)}")
    if not a.check: update_notes(PAPER)
    return 0

if __name__ == "__main__":
    sys.exit(main())
