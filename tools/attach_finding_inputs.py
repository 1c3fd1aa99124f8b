"""Attach to every finding of the committed results files the per-pair predictions it was computed from.

Each verdict of the reports comes from a finding (ours = a difference, lo/hi = its 95 % interval) in a sealed
papers/<paper>/runs/cpu/*.results.json. This tool finds, for each finding, the committed predictions files (a, b), the
tasks and the part of the result (task average or one task) that reproduce its stored ours, lo and hi EXACTLY
(|error| <= 1e-9) with `paired_difference` / `paired_task_items` as they were at commit d29c892, before issue 42
(loaded from `git show d29c892:sentemb_lit/intervals.py` as a separate module, so that a change in the working tree cannot move the proof), by
a search over every pair of committed files: a fast pre-filter on the difference of mean Spearman (or mean item
score), then the interval itself. A match is accepted only when it is unique; when several candidates match
(byte-identical files, a difference of exactly 0), the one whose names are the claim's words is picked and the match
is recorded as ambiguous. It then writes into each finding:

  inputs        {"kind": "sts" | "items", "a": {"run", "name"}, "b": {"run", "name"}, "tasks": [...],
                 "what": "avg" | "<task>", "items": null | "correct" | "mteb_share", "trained": bool}
                 trained: a compared side is a trained model (so a verdict needs 3 seeds, even where a file holds
                 one), read from each file's manifest info as nb96's `describe` reads it; checked against what each
                 notebook passes (04, 31: untrained; 13, 14, 23: trained; 96: its leaderboard.json row's "trained")
  inputs_proof  {"max_abs_err": float, "ambiguous": bool}
  rule          2 (only where inputs are attached)
  family        the paper table (or leaderboard column) of the claim
  claim_type    sts / transfer / mteb difference, ratio, memory difference, correlation, chain statistic, attention share
  note          nb14: the compared seeds that never left their starting weights; nb23 (arm vs arm): the across-seed
                correlation of the two sides' per-seed 7-STS averages (what pairing by seed number pairs)

Rerunnable: a finding that already has inputs is re-verified (not searched again). A results file is rewritten
(through `write_json_verified`) only when something changed; afterwards `read_json_verified` must accept it and the
run's predictions must still verify. Run from the repository root:  python tools/attach_finding_inputs.py [--dry-run]
"""
from __future__ import annotations

import argparse, importlib.util, json, re, subprocess, sys, tempfile
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sentemb_lit.io import read_json_verified, write_json_verified          # noqa: E402
from sentemb_lit.predictions import load_predictions, prediction_info, verify_predictions   # noqa: E402

STS_TASKS = ("sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr")
PAPERS = ("baselines", "jtcse", "pretcot_ke", "ranking_sentences")          # the papers with committed predictions
RUN = "runs/cpu"
FILES = ["papers/baselines/runs/cpu/04_baselines.results.json",
         "papers/jtcse/runs/cpu/13_jtcse_reproduction.results.json",
         "papers/jtcse/runs/cpu/14_jtcse_table_one.results.json",
         "papers/ranking_sentences/runs/cpu/23_ranking_reproduction.results.json",
         "papers/pretcot_ke/runs/cpu/31_pretcot_ke_reproduction.results.json",
         "papers/pretcot_ke/runs/cpu/31_pretcot_ke_reproduction_qwen2.5-0.5b-instruct.results.json",
         "papers/pretcot_ke/runs/cpu/32_mask_prompt_grid.results.json",
         "papers/pretcot_ke/runs/cpu/33_pretcot_memory.results.json",
         "papers/leaderboard/runs/cpu/96_leaderboard.results.json"]
TOL, PRE_TOL = 1e-9, 1e-6                    # the proof (ours, lo, hi); the pre-filter on the difference of means
DIFF_TYPES = ("sts difference", "transfer difference", "mteb difference")


# ---------------------------------------------------------------- the interval code the findings were computed with
BEFORE = "d29c892"                        # main before issue 42: the intervals every stored finding was computed with

def old_intervals():
    "sentemb_lit/intervals.py of commit BEFORE as a module of its own (its relative import made absolute)."
    src = subprocess.run(["git", "show", f"{BEFORE}:sentemb_lit/intervals.py"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    src, n = re.subn(r"^from \.checks import", "from sentemb_lit.checks import", src, flags=re.M)
    assert n == 1, f"{BEFORE}'s intervals.py: expected exactly one `from .checks import` line"
    with tempfile.TemporaryDirectory(prefix="old_intervals_") as d:
        path = Path(d) / "old_intervals_head.py"
        path.write_text(src, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("old_intervals_head", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    return mod


OLD = old_intervals()


# ---------------------------------------------------------------- the committed predictions
def run_of(paper: str) -> str: return f"papers/{paper}/{RUN}"

def load_all() -> dict:
    "(run, name) -> {kind, gold, seeds, info, tasks, S, score [S, T] (Spearman x100 or mean item score x100)}."
    out = {}
    for paper in PAPERS:
        run = run_of(paper)
        for name in verify_predictions(ROOT / run):
            gold, seeds = load_predictions(ROOT / run, name)
            info = prediction_info(ROOT / run, name)
            kind = {"transfer": "correct", "mteb_classification": "mteb_share"}.get(info.get("kind"), "sts")
            rec = {"kind": kind, "gold": gold, "seeds": seeds, "info": info, "S": len(seeds)}
            if kind == "sts":
                rec["tasks"] = list(gold)
                rec["score"] = np.array([[100 * stats.spearmanr(s[t], gold[t])[0] for t in gold] for s in seeds])
            else:
                rec["items"] = item_scores(rec, kind)
                rec["tasks"] = list(rec["items"])
                rec["score"] = np.stack([100 * rec["items"][t].mean(1) for t in rec["tasks"]], axis=1)
            rec["sig"] = {t: hash(np.asarray(g).tobytes()) for t, g in (rec["gold"].items() if kind == "sts" else
                                                                        item_gold(rec).items())}
            out[run, name] = rec
    return out

def item_scores(rec: dict, kind: str) -> dict:
    "task -> [seeds, items]: 0/1 correct (transfer), or each item's share of its correct experiments (MTEB 'set@k')."
    g = rec["gold"]
    if kind == "correct":
        return {t: np.stack([s[t] == g[t] for s in rec["seeds"]]).astype(float) for t in g}
    sets = list(dict.fromkeys(k.split("@")[0] for k in g))
    share = lambda s, t: np.mean([s[k] == gk for k, gk in g.items() if k.split("@")[0] == t], axis=0)
    return {t: np.stack([share(s, t) for s in rec["seeds"]]).astype(float) for t in sets}

def item_gold(rec: dict) -> dict:
    "task (or MTEB set) -> its gold labels, all experiments of a set together (what 'the same items' means)."
    g = rec["gold"]
    if rec["kind"] == "correct": return g
    sets = list(dict.fromkeys(k.split("@")[0] for k in g))
    return {t: np.concatenate([gk for k, gk in g.items() if k.split("@")[0] == t]) for t in sets}


# ---------------------------------------------------------------- the search
def seeds_pair(Sa: int, Sb: int) -> int | None:
    "The number of paired seeds paired_difference / paired_task_items use (None: they refuse the pair)."
    if Sa == Sb or min(Sa, Sb) == 1: return max(Sa, Sb)
    return None

def task_sets(A: dict, B: dict, kind: str):
    "The candidate task lists of a pair: all shared tasks with equal gold (the order of the file the code iterates),"
    " then each such task alone."
    order = B["tasks"] if kind == "sts" else A["tasks"]          # sts: gold = b's (the reference's); items: a's
    shared = [t for t in order if t in A["sig"] and A["sig"][t] == B["sig"][t]]
    if len(shared) > 1: yield shared
    for t in shared: yield [t]

def pre_diff(A: dict, B: dict, tasks: list, S: int) -> float:
    "The difference of means the interval is centred on (seed s pairs with min(s, S_x - 1))."
    ia, ib = [A["tasks"].index(t) for t in tasks], [B["tasks"].index(t) for t in tasks]
    sa = A["score"][[min(s, A["S"] - 1) for s in range(S)]][:, ia]
    sb = B["score"][[min(s, B["S"] - 1) for s in range(S)]][:, ib]
    return float((sa - sb).mean(1).mean())

_CACHE: dict = {}
def interval(P: dict, a: tuple, b: tuple, tasks: list, kind: str) -> dict:
    "HEAD's interval of a − b on `tasks` (the task average's entry)."
    key = (a, b, tuple(tasks), kind)
    if key not in _CACHE:
        A, B = P[a], P[b]
        if kind == "sts":
            r = OLD.paired_difference({t: B["gold"][t] for t in tasks}, [{t: s[t] for t in tasks} for s in A["seeds"]],
                                      [{t: s[t] for t in tasks} for s in B["seeds"]])
        else:
            r = OLD.paired_task_items({t: A["items"][t] for t in tasks}, {t: B["items"][t] for t in tasks})
        _CACHE[key] = r["avg"]
    return _CACHE[key]

def err(r: dict, f: dict) -> float:
    "max |HEAD's value − the stored one| over ours, lo and hi."
    return max(abs(r["diff"] - f["ours"]), abs(r["lo"] - f["lo"]), abs(r["hi"] - f["hi"]))

def search(P: dict, f: dict, kind: str) -> list[tuple]:
    "Every (a, b, tasks, max_abs_err) of that kind whose HEAD interval gives the finding's ours, lo and hi."
    keys = [k for k, r in P.items() if (r["kind"] == "sts") == (kind == "sts") and
            (kind == "sts" or r["kind"] == kind)]
    hits = []
    for a in keys:
        for b in keys:
            if a == b: continue                                   # a file against itself is no claim
            S = seeds_pair(P[a]["S"], P[b]["S"])
            if S is None: continue
            for tasks in task_sets(P[a], P[b], kind if kind == "sts" else "items"):
                if abs(pre_diff(P[a], P[b], tasks, S) - f["ours"]) > PRE_TOL: continue
                e = err(interval(P, a, b, tasks, kind), f)
                if e <= TOL: hits.append((a, b, tasks, e))
    return hits

def verify(P: dict, f: dict) -> float:
    "max |error| of the finding's stored inputs, recomputed with HEAD's code."
    i = f["inputs"]
    a, b = (i["a"]["run"], i["a"]["name"]), (i["b"]["run"], i["b"]["name"])
    kind = "sts" if i["kind"] == "sts" else i["items"]
    r = interval(P, a, b, i["tasks"], kind)
    assert i["what"] == "avg", i
    return err(r, f)


# ---------------------------------------------------------------- what the claims' words name
T1_NAMES = {"JTCSE": "jtcse", "TNCSE": "tncse", "SimCSE": "simcse", "JTCSE D": "jtcse_D", "plain sum": "plain_sum"}
X_NAMES = {"None": "plain_sum", "L_NCE": "jtcse_nce", "L_ICNCE": "jtcse_icnce", "L_ICTM": "jtcse_ictm",
           "L_NCE+L_ICNCE": "jtcse_nce_icnce", "L_NCE+L_ICTM": "jtcse_nce_ictm", "L_ICNCE+L_ICTM": "jtcse_icnce_ictm"}
ARM_CLAIMS = {"Post-training on ranking chains improves the student's 7-STS average (Table 1)": "base",
              "The method beats (b) step-by-step chains (Table 3)": "step",
              "The method beats (c) shuffled chains (Table 3)": "shuffled",
              "The method beats (d) ranking only (Table 3)": "rank",
              "The method beats (e) semantic only (Table 3)": "semantic",
              "all-mpnet-base-v2 as Φ beats the student's frozen copy as Φ (ablation; not a claim of the paper)":
                  "self_teacher"}
PCOT = {"Pretended CoT (layer -2) beats PromptEOL (layer -1)": ("pcot.L-2", "eol.L-1"),
        "Knowledge Enhancement (layer -2) beats PromptEOL (layer -1)": ("ke.L-2", "eol.L-1"),
        "Knowledge Enhancement beats Pretended CoT (paper: yes for LLaMA2-7b, OPT-13b; not OPT-350m)": ("ke.L-2", "pcot.L-2"),
        "At the same layer (-1), Pretended CoT beats PromptEOL": ("pcot.L-1", "eol.L-1"),
        "At the same layer (-1), Knowledge Enhancement beats PromptEOL": ("ke.L-1", "eol.L-1"),
        "PromptEOL: layer -2 beats layer -1 (Table 7)": ("eol.L-2", "eol.L-1"),
        "Pretended CoT: layer -2 beats layer -1 (Table 7)": ("pcot.L-2", "pcot.L-1"),
        "Knowledge Enhancement: layer -2 beats layer -1 (Table 7)": ("ke.L-2", "ke.L-1"),
        "Direct inference: PromptEOL beats PromptSTH (Table 3)": ("eol.L-1", "sth.L-1"),
        "Direct inference: PromptEOL beats PromptSUM (Table 3)": ("eol.L-1", "sum.L-1")}
LB_ARMS = {"full": "the method", "step": "(b) step-by-step chains", "shuffled": "(c) shuffled chains",
           "rank": "(d) ranking only", "semantic": "(e) semantic only", "self_teacher": "self-teacher ablation"}
LB_NAMES = {"simcse": "SimCSE", "tncse": "TNCSE", "jtcse": "JTCSE", "jtcse_D": "JTCSE-D", "plain_sum": "plain sum"}
REFERENCE = ("papers/baselines/runs/cpu", "minilm-l6_mean_original")

def lb_label(name: str, info: dict) -> str:
    "A predictions file's row label, as nb96's `describe` builds it."
    if "pooling" in info:
        variant = "" if info.get("variant", "original") == "original" else f" ({info['variant']} text)"
        return f"{info['encoder']} {info['pooling'].replace('cls', 'CLS')}{variant}"
    if "what" in info:
        stem, what = name.split(".")[0], info["what"]
        if stem == "base": label = f"{info['base']} {what.replace('cls', 'CLS')}"
        elif what == "cls": label = LB_NAMES.get(stem, stem) + (" (CLS)" if stem == "simcse" else "")
        else: label = f"{LB_NAMES.get(stem, stem)}, {what.replace('cls', 'CLS')}"
        return label + ("" if "kind" in info or stem == "base" else ", until learning ends")
    if "prompt" in info: return info["method"]
    if "arm" in info: return f"minilm-l6 post-trained, {LB_ARMS.get(info['arm'], info['arm'])} ({info['reading']})"
    if "model" in info: return f"{info['model']}, the ranking student before post-training"
    return info.get("method", name)

def expected(path: str, claim: str, P: dict) -> tuple | None:
    "(a, b, tasks or None) the claim's words name; None where they name no single pair of files."
    run = str(Path(path).parent)
    stem = Path(path).name.removesuffix(".results.json")
    allt = list(STS_TASKS)
    if stem == "04_baselines":
        v = re.search(r"\((\w+) text", claim).group(1)
        return (run, f"minilm-l6_mean_{v}"), (run, f"minilm-l6_cls_{v}"), allt
    if stem in ("13_jtcse_reproduction", "14_jtcse_table_one"):
        sfx = ".full.cls" if stem.startswith("13") else ".cls"
        base = "base.full.mean" if stem.startswith("13") else "base.mean"
        if m := re.match(r"(.+?) > (.+?) \(Table I,", claim):
            return (run, T1_NAMES[m[1]] + sfx), (run, T1_NAMES[m[2]] + sfx), allt
        if claim.startswith("JTCSE (CLS) ends above"): return (run, "jtcse" + sfx), (run, base), allt
        if m := re.match(r"JTCSE with a CAEL every \d+ layers > (.+?) \(Table IX", claim):
            b = "tncse" if m[1].startswith("w/o") else f"jtcse_k{m[1].split('=')[1]}"
            return (run, "jtcse.sub.cls"), (run, f"{b}.sub.cls"), allt
        if m := re.match(r"All three loss terms > (.+?) \(Table X", claim):
            return (run, "jtcse.sub.cls"), (run, f"{X_NAMES[m[1]]}.sub.cls"), allt
        return None
    if stem == "23_ranking_reproduction":
        if m := re.match(r"(.+) — (best dev|last step) weights$", claim):
            arm, reading = ARM_CLAIMS.get(m[1]), m[2].replace(" ", "_")
            if arm is None: return None
            return (run, f"full.{reading}"), (run, "base" if arm == "base" else f"{arm}.{reading}"), allt
        if "SentEval" in claim:
            arm = "full" if claim.startswith("Post-training keeps") else \
                next(a for a, l in LB_ARMS.items() if claim.startswith(l))
            return (run, f"transfer.{arm}.last_step"), (run, "transfer.base"), None
        if "MTEB" in claim: return (run, "mteb.full.last_step"), (run, "mteb.base"), None
        return None
    if stem.startswith("31_pretcot_ke_reproduction"):
        tag = stem.removeprefix("31_pretcot_ke_reproduction")
        for k, (a, b) in PCOT.items():
            if claim.startswith(k + " ["):
                tasks = ["stsb"] if "STS-B test" in claim else [t for t in P[run, a + tag]["tasks"]]
                return (run, a + tag), (run, b + tag), tasks
        return None
    if stem == "96_leaderboard":
        m = re.match(r"(.+) · (\w+) > the reference, (.+)$", claim)
        if not m: return None
        label, paper, col = m[1], m[2], m[3]
        rows = [(r, n) for (r, n), x in P.items() if r == run_of(paper) and x["kind"] == "sts"
                and lb_label(n, x["info"]) == label]
        if len(rows) != 1: return None
        (r, n), = rows
        if col == "7-STS avg": return (r, n), REFERENCE, allt
        if col.startswith("SentEval"): return (r, f"transfer.{n}"), (run_of("ranking_sentences"), "transfer.base"), None
        if col.startswith("MTEB"): return (r, f"mteb.{n}"), (run_of("ranking_sentences"), "mteb.base"), None
        if col.endswith(" only"): return (r, n), REFERENCE, [t.strip() for t in col.removesuffix(" only").split(",")]
    return None


# ---------------------------------------------------------------- family and claim type
def classify(path: str, f: dict) -> tuple[str, str]:
    "(family, claim_type) of a finding."
    c, stem = f["claim"], Path(path).name.removesuffix(".results.json")
    if stem == "04_baselines": return "7-STS (mean vs CLS pooling)", "sts difference"
    if "not a claim of the paper" in c: return "not a claim of the paper", "sts difference"   # kept out of the tables
    if stem == "13_jtcse_reproduction":
        if "Table IX" in c: return "Table IX", "sts difference"
        if "Table X," in c: return "Table X", "sts difference"
        if "Fig. 10" in c: return "Fig. 10", "correlation"
        if "Table VII" in c: return "Table VII", "ratio"
        return "Table I (short budget)", "sts difference"    # the Table I rows, its plain sum's towers, base mean
    if stem == "14_jtcse_table_one": return "Table I (trained until learning ends)", "sts difference"
    if stem == "23_ranking_reproduction":
        if "monotone chains" in c: return "Fig. 1", "chain statistic"
        if "longer than their source" in c or "lengthening levels off" in c: return "Fig. 4", "chain statistic"
        if "MTEB" in c: return "MTEB classification (extra)", "mteb difference"
        if "SentEval" in c: return "Table 8", "transfer difference"
        if "(Table 1)" in c: return "Table 1", "sts difference"
        return "Table 3", "sts difference"                    # the arms (and the Φ ablation) against the method
    if stem.startswith("31_pretcot_ke_reproduction"):
        if "goes with lower" in c: return "Table 7", "correlation"
        if "(Fig. 1)" in c: return "Fig. 1", "attention share"
        if "(Table 3)" in c: return "Table 3", "sts difference"
        if "(Table 7)" in c or c.startswith("At the same layer"): return "Table 7", "sts difference"
        return "Table 5", "sts difference"                    # layer -2 prompts against PromptEOL, KE against PCoT
    if stem == "32_mask_prompt_grid": return "Table 2", "sts difference"
    if stem == "33_pretcot_memory": return "memory (Table 1)", "memory difference"
    if stem == "96_leaderboard":
        if c.endswith("SentEval transfer avg"): return "leaderboard transfer", "transfer difference"
        if "MTEB classification" in c: return "leaderboard MTEB classification", "mteb difference"
        if c.endswith(" only"): return "leaderboard STS-B only", "sts difference"
        return "leaderboard 7-STS", "sts difference"
    raise ValueError(f"{path}: no family for {c!r}")

NO_INPUTS = {"32_mask_prompt_grid": "no committed predictions: the mask grid's STS-B dev pairs",
             "33_pretcot_memory": "memory"}


# ---------------------------------------------------------------- restatements of issue 42 (numbers from the record)
def restate(f: dict, meta: dict) -> None:
    """The MACs claim as a ratio against its stated value (nb13's meta['macs'], as nb13 now states it); a correlation's
    p-value, which correlation_finding printed in its basis but did not store (Holm needs it)."""
    from sentemb_lit.report import finding
    if f["claim"].startswith("A twin costs twice the MACs of one tower") and f.get("equals") is None:
        m, new = meta["macs"], None
        r = m["twin"] / m["tower"]
        base = re.search(r"measured, deterministic \(([^,]+), 64 tokens", f["evidence"])[1]
        new = finding(f["claim"], paper=round(10.90 / 5.40, 3), ours=r, lo=r, hi=r, equals=2.0,
                      basis=f"measured, deterministic ({base}, 64 tokens; twin {m['twin'] / 1e9:.3f}, tower "
                            f"{m['tower'] / 1e9:.3f} GMAC)", unit="× one tower", family=f["family"],
                      claim_type="ratio")
        f.clear(); f.update(new)
    if f.get("claim_type") == "correlation" and f.get("p") is None:
        m = re.search(r"Spearman over \d+ points, p = ([0-9.e+-]+)\)", f["evidence"])
        if m: f["p"], f["rule"] = float(m[1]), 2
    lo, hi, d = f.get("lo"), f.get("hi"), f.get("ours")
    normal = f.get("claim_type") in ("chain statistic", "attention share") and None not in (lo, hi, d) and hi > lo
    if normal and f.get("p") is None:        # one-seed paired items: a normal interval, so its p is exact; bootstrap: ≈
        se = (hi - lo) / (2 * stats.norm.ppf(0.975))
        f["p"], f["rule"] = float(2 * stats.norm.sf(abs(d) / se)), 2
        if f["claim_type"] == "attention share":
            add_note(f, "p from the bootstrap interval's width (normal approximation)")
    if f.get("claim_type") == "memory difference" and not f.get("note"):
        add_note(f, "a range over fresh processes, not a sampling interval: no p-value, not adjusted")
        f["rule"] = 2


# ---------------------------------------------------------------- notes
def add_note(f: dict, text: str) -> None:
    "Set the note, or append to an existing non-empty one with '; ' (never twice)."
    old = f.get("note")
    if old is None: f["note"] = text
    elif text and text not in old: f["note"] = f"{old}; {text}" if old else text

def seeds_text(seeds: list) -> str: return ", ".join(str(s) for s in seeds)

def never_improved_note(P: dict, meta: dict, f: dict) -> str:
    "nb14: each compared side's seeds (of its predictions) whose training never left its starting weights."
    stages, parts = meta["stages"], []
    sides = re.match(r"(.+?) > (.+?) \(", f["claim"])
    labels = (sides[1], sides[2]) if sides else ("JTCSE", "base")
    for side, label in zip(("a", "b"), labels):
        name = f["inputs"][side]["name"]
        stem = name.split(".")[0]
        seeds = prediction_info(ROOT / f["inputs"][side]["run"], name).get("seeds") or []
        if stem == "base": continue                              # the untrained encoder: nothing was trained
        per_start: dict = {}
        for s in seeds:
            own = [f"{stem}_s{s}"] if f"{stem}_s{s}" in stages else [f"tower1_s{s}", f"tower2_s{s}"]
            for st in own:
                i = stages.get(st)
                if not i or not i["convergence"]["never_improved"]: continue
                start = next((f"tower {'I' * k}" for k in (1, 2) if st != f"tower{k}_s{s}" and
                              stages.get(f"tower{k}_s{s}", {}).get("best_dev") == i["best_dev"]), "its starting weights")
                per_start.setdefault(start, []).append(s)
        for start, ss in per_start.items():
            word = (f"seed {ss[0]} never left its" if len(ss) == 1 else f"seeds {seeds_text(ss)} never left their")
            parts.append(f"{label} {word} starting weights ({start})")
    return "; ".join(parts)

def seed_pairing_note(P: dict, f: dict) -> str:
    "nb23 arm vs arm: the across-seed correlation of the two sides' per-seed 7-STS averages."
    A, B = (P[f["inputs"][s]["run"], f["inputs"][s]["name"]] for s in ("a", "b"))
    sa, sb = A["info"].get("seeds"), B["info"].get("seeds")
    assert sa == sb and len(sa) == A["S"] == B["S"], (sa, sb)
    xa, xb = A["score"].mean(1), B["score"].mean(1)               # per seed, mean over the 7 tasks
    head = (f"arms paired by seed number (same training seed, different chains; seeds {sa[0]}–{sa[-1]}): "
            "across-seed correlation of the two sides' 7-STS averages")
    const = [n for n, x in ((f["inputs"]["a"]["name"], xa), (f["inputs"]["b"]["name"], xb)) if np.ptp(x) == 0]
    if const: return f"{head} undefined ({', '.join(const)} the same at every seed: {', '.join(f'{x[0]:.2f}' for x in (xa, xb) if np.ptp(x) == 0)})"
    r = float(np.corrcoef(xa, xb)[0, 1])
    rho = float(stats.spearmanr(xa, xb)[0])
    return f"{head} {r:+.2f} (Pearson, np.corrcoef over {len(sa)} seeds; Spearman {rho:+.2f})"


# ---------------------------------------------------------------- trained or not
def side_trained(name: str, info: dict) -> bool:
    "Whether a predictions file holds a trained model, from its manifest info (the rule of nb96's `describe`)."
    if "pooling" in info and "encoder" in info: return False              # baselines: an untrained encoder
    if "what" in info: return name.split(".")[0] != "base"                # jtcse: every stage but the base encoder
    if "prompt" in info: return False                                     # pretcot_ke: a prompt, no training
    if "arm" in info: return info["arm"] != "base"                        # ranking: post-trained arms (and their
    return False                                                          # transfer/MTEB files); its student: no

TRAINED_BY_NOTEBOOK = {"04_baselines": False, "13_jtcse_reproduction": True, "14_jtcse_table_one": True,
                       "23_ranking_reproduction": True, "31_pretcot_ke_reproduction": False}
LEADERBOARD_ROWS = ROOT / "papers/leaderboard/runs/cpu/leaderboard.json"

def trained_of(path: str, f: dict) -> bool:
    "inputs['trained'] of a finding: either side trained; checked against what its notebook passes or records."
    i, stem = f["inputs"], Path(path).name.removesuffix(".results.json")
    t = any(side_trained(i[s]["name"], prediction_info(ROOT / i[s]["run"], i[s]["name"])) for s in ("a", "b"))
    want = next((v for k, v in TRAINED_BY_NOTEBOOK.items() if stem.startswith(k)), None)
    if stem == "96_leaderboard":
        rows = {f"{r['encoder']} · {r['paper']}": r["trained"] for r in json.loads(LEADERBOARD_ROWS.read_text())}
        want = rows[f["claim"].split(" > the reference, ")[0]]
    if want is None or t != want:
        raise SystemExit(f"{path}: {f['claim'][:70]!r}: trained {t} from the manifests, its notebook: {want}")
    return t


# ---------------------------------------------------------------- main
def inputs_of(a: tuple, b: tuple, tasks: list, kind: str) -> dict:
    return {"kind": "sts" if kind == "sts" else "items", "a": {"run": a[0], "name": a[1]},
            "b": {"run": b[0], "name": b[1]}, "tasks": list(tasks), "what": "avg",
            "items": None if kind == "sts" else kind}

def show(i: dict) -> str:
    tasks = f"{len(i['tasks'])} tasks" if len(i["tasks"]) > 1 else i["tasks"][0]
    return f"{i['a']['name']} − {i['b']['name']} ({tasks}, {i['what']}{', ' + i['items'] if i['items'] else ''})"

def process(path: str, P: dict, log: list) -> tuple[dict, dict, int, int]:
    "The results file with its findings completed; (original, new, matched, not matched)."
    orig = read_json_verified(ROOT / path)
    res = json.loads(json.dumps(orig))
    stem = Path(path).name.removesuffix(".results.json")
    matched = unmatched = 0
    for f in res["findings"]:
        family, ctype = classify(path, f)
        f["family"], f["claim_type"] = family, ctype
        restate(f, res["meta"])
        short = f["claim"][:70]
        if "inputs" in f and None in (f["inputs"]["a"].get("run"), f["inputs"]["b"].get("run")):
            log.append(f"{Path(path).name} | {short} | written by its notebook (issue 42 code): nothing to attach")
            continue                                            # a finding of a rerun: its notebook named its inputs
        if "inputs" in f:                                       # attached before: verify, never search again
            e = verify(P, f)
            if e > TOL: raise SystemExit(f"{path}: {short!r}: its stored inputs give |error| {e:.3g} > {TOL}")
            f["inputs_proof"] = {"max_abs_err": e, "ambiguous": f.get("inputs_proof", {}).get("ambiguous", False)}
            f["rule"] = 2
            matched += 1
            amb = " [ambiguous: picked by the claim's names]" if f["inputs_proof"]["ambiguous"] else ""
            log.append(f"{Path(path).name} | {short} | {show(f['inputs'])} [re-verified] | {e:.1e}{amb}")
        else:
            why = NO_INPUTS.get(stem) or (None if ctype in DIFF_TYPES else ctype)
            hits = []
            if why is None and f.get("ours") is not None and f.get("lo") is not None:
                kind = {"sts difference": "sts", "transfer difference": "correct", "mteb difference": "mteb_share"}[ctype]
                hits = search(P, f, kind)
                exp = expected(path, f["claim"], P)
                pick, ambiguous = None, len(hits) > 1
                if len(hits) == 1: pick = hits[0]
                elif hits and exp:
                    named = [h for h in hits if (h[0], h[1]) == exp[:2] and (exp[2] is None or h[2] == exp[2])]
                    pick = named[0] if len(named) == 1 else None
                if pick:
                    a, b, tasks, e = pick
                    for t in tasks:                              # the hash pre-filter, confirmed on the arrays
                        ga, gb = (P[x]["gold"][t] if kind == "sts" else item_gold(P[x])[t] for x in (a, b))
                        assert np.array_equal(ga, gb), (a, b, t)
                    f["inputs"] = inputs_of(a, b, tasks, kind)
                    f["inputs_proof"] = {"max_abs_err": e, "ambiguous": ambiguous}
                    f["rule"] = 2
                    matched += 1
                    flag = ""
                    if exp and ((a, b) != exp[:2] or (exp[2] is not None and tasks != exp[2])):
                        flag = f" [NAMES DIFFER from the claim's: {exp[0][1]} − {exp[1][1]}]"
                    if ambiguous:
                        alt = [f"{h[0][1]} − {h[1][1]} ({f'{len(h[2])} tasks' if len(h[2]) > 1 else h[2][0]})"
                               for h in sorted(hits, key=lambda h: -len(h[2])) if h is not pick]
                        flag += (f" [AMBIGUOUS: {len(alt)} other match(es): " + "; ".join(alt[:4])
                                 + ("; …" if len(alt) > 4 else "") + "]")
                    log.append(f"{Path(path).name} | {short} | {show(f['inputs'])} | {e:.1e}{flag}")
                else:
                    why = ("no pair of committed files reproduces it" if not hits else
                           f"{len(hits)} matches, none named by the claim")
            if "inputs" not in f:
                unmatched += 1
                log.append(f"{Path(path).name} | {short} | no per-pair inputs ({why or ctype}) | -")
        if "inputs" in f: f["inputs"]["trained"] = trained_of(path, f)
        if stem == "13_jtcse_reproduction" and "inputs" in f:
            f["note"] = "coverage at 3 seeds of this spread: 97.6 % (pairs or sentences redrawn), 91.4 % (clusters; " \
                        "93_coverage)"                          # the record's only note on these findings
        if stem == "14_jtcse_table_one" and "inputs" in f:
            add_note(f, never_improved_note(P, res["meta"], f))
        if stem == "23_ranking_reproduction" and "inputs" in f and f["inputs"]["kind"] == "sts" \
                and f["inputs"]["b"]["name"] != "base":
            add_note(f, seed_pairing_note(P, f))
        if "note" in f and stem in ("14_jtcse_table_one", "23_ranking_reproduction"):
            log.append(f"    note: {f['note']!r}")
    return orig, res, matched, unmatched

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="search and print, write nothing")
    args = ap.parse_args(argv)
    P = load_all()
    print(f"{len(P)} committed predictions files loaded and verified; interval code: git HEAD's intervals.py")
    counts, log = {}, []
    for path in FILES:
        orig, res, m, u = process(path, P, log)
        counts[path] = (m, u)
        while log: print(log.pop(0), flush=True)
        if res != orig and not args.dry_run:
            write_json_verified(ROOT / path, res)
            assert read_json_verified(ROOT / path) == res, path
            print(f"  written: {path}")
    for paper in PAPERS: verify_predictions(ROOT / run_of(paper))         # raises when any file changed
    print("\nper file: matched / not matched")
    for path, (m, u) in counts.items(): print(f"  {path}: {m} / {u}")
    print("predictions of", ", ".join(PAPERS), "still verify")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
