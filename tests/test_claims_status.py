"""Every claim of every paper carries a status and a reason (claims.csv + coverage.csv), every table and figure of a
paper is listed at least once, and the "Not reproduced here" section of each NOTES.md is the one the files generate.
`update_notes` on temporary folders: markers absent, present, damaged."""
import csv
from pathlib import Path
import pytest

import sentemb_lit.stats.claim_status as cs
import sentemb_lit.stats.claims as claims
from sentemb_lit.core.io import read_json_verified
from sentemb_lit.stats.claims import (CLAIM_STATUSES, not_reproduced_section, read_claim_status, read_claims,
                                update_notes)
from sentemb_lit.stats.report import judged_by_claim

PAPERS = Path(__file__).resolve().parents[1] / "papers"
START, END = "<!-- not-reproduced:start -->", "<!-- not-reproduced:end -->"
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI"]
# every table and figure of each paper (read from the papers' texts); baselines has no paper
EXPECTED = {
    "jtcse": [f"Table {r}" for r in ROMAN] + [f"Fig. {i}" for i in range(1, 11)],
    "ranking_sentences": [f"Table {i}" for i in range(1, 9)] + [f"Fig. {i}" for i in range(1, 8)],
    "pretcot_ke": [f"Table {i}" for i in range(1, 8)] + ["Fig. 1"],
    "baselines": [],
}


@pytest.mark.parametrize("paper", sorted(EXPECTED))
def test_every_claim_has_a_status_and_a_reason(paper):
    pdir = PAPERS / paper
    rows = read_claim_status(pdir)                                 # raises on an unknown status or an empty reason
    assert rows and all(r["status"] in CLAIM_STATUSES and r["reason"] for r in rows)
    with open(pdir / "claims.csv", encoding="utf-8", newline="") as f:
        header = next(csv.reader(f))
    assert header[:4] == ["table", "method", "metric", "value"] and header[-2:] == ["status", "reason"]
    n_claims = sum(r["file"] == "claims.csv" for r in rows)
    assert len(read_claims(pdir)) == n_claims                      # read_claims still parses every row


@pytest.mark.parametrize("paper", sorted(EXPECTED))
def test_every_table_and_figure_is_listed(paper):
    listed = {r["table"] for r in read_claim_status(PAPERS / paper)}
    assert [t for t in EXPECTED[paper] if t not in listed] == []


@pytest.mark.parametrize("paper", sorted(EXPECTED))
def test_notes_section_is_up_to_date(paper):
    text = (PAPERS / paper / "NOTES.md").read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1
    inside = text[text.index(START) + len(START):text.index(END)]
    assert inside == "\n" + not_reproduced_section(PAPERS / paper), f"run update_notes('papers/{paper}')"


def _paper(tmp_path, notes=None) -> Path:
    (tmp_path / "claims.csv").write_text(
        "table,method,metric,value,source,status,reason\n"
        "Table 1,A,avg,70.0,s,partly,smaller model\n"
        "Table 1,B,avg,71.0,s,not reproduced,does not hold at 135M\n"
        "Table 1,C,avg,72.0,s,reproduced,same number\n", encoding="utf-8")
    (tmp_path / "coverage.csv").write_text("table,item,status,reason\nFig. 2,a schematic,not testable here,no data\n",
                                           encoding="utf-8")
    if notes is not None: (tmp_path / "NOTES.md").write_text(notes, encoding="utf-8")
    return tmp_path


def test_section_groups_by_status_and_leaves_out_the_reproduced(tmp_path):
    sec = not_reproduced_section(_paper(tmp_path))
    assert sec.index("### Not reproduced (1)") < sec.index("### Partly (1)") < sec.index("### Not testable here (1)")
    assert "- **Table 1** — B: does not hold at 135M" in sec and "- **Fig. 2** — a schematic: no data" in sec
    assert "— C:" not in sec
    assert "1 not reproduced, 1 partly, 1 not testable here, 1 reproduced" in sec


def test_update_notes_appends_markers_when_absent(tmp_path):
    pdir = _paper(tmp_path, "# Notes\n\nkept as written\n")
    update_notes(pdir)
    text = (pdir / "NOTES.md").read_text(encoding="utf-8")
    assert text.startswith("# Notes\n\nkept as written\n\n" + START + "\n## Not reproduced here\n")
    assert text.endswith(END + "\n")
    update_notes(pdir)
    assert (pdir / "NOTES.md").read_text(encoding="utf-8") == text   # a second run changes nothing


def test_update_notes_replaces_only_between_the_markers(tmp_path):
    before, after = "# Notes\n\nabove\n\n", "\n\n## Later\n\nbelow, untouched\n"
    pdir = _paper(tmp_path, before + START + "\nstale section\n" + END + after)
    update_notes(pdir)
    text = (pdir / "NOTES.md").read_text(encoding="utf-8")
    assert text.startswith(before + START + "\n## Not reproduced here\n") and text.endswith(END + after)
    assert "stale section" not in text


@pytest.mark.parametrize("damage, message", [
    (lambda t: t.replace(END, ""), "damaged markers"),                           # the end marker is gone
    (lambda t: t + START + "\n", "damaged markers"),                             # a second start marker
    (lambda t: "x\n" + END + "\ny\n" + START + "\n", "NOTES.md:2: " + END + " comes before " + START + " (line 4)"),
])
def test_update_notes_refuses_damaged_markers(tmp_path, damage, message):
    pdir = _paper(tmp_path, "# Notes\n")
    update_notes(pdir)
    bad = damage((pdir / "NOTES.md").read_text(encoding="utf-8"))
    (pdir / "NOTES.md").write_text(bad, encoding="utf-8")
    with pytest.raises(ValueError, match="NOTES.md:") as e:
        update_notes(pdir)
    assert message in str(e.value)
    assert (pdir / "NOTES.md").read_text(encoding="utf-8") == bad              # nothing written


def test_bad_status_files_are_named(tmp_path):
    pdir = _paper(tmp_path)
    (pdir / "coverage.csv").write_text("table,item,status,reason\nFig. 1,x,done,ok\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"coverage\.csv:2: status 'done' is not one of"):
        read_claim_status(pdir)
    (pdir / "claims.csv").write_text("table,method,metric,value\nT,m,avg,1.0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"claims\.csv:1: missing column\(s\) \['status', 'reason'\]"):
        read_claim_status(pdir)
    with pytest.raises(FileNotFoundError, match="no_such_paper' is not an existing folder"):
        update_notes(tmp_path / "no_such_paper")


def test_generated_text_cannot_hold_a_marker(tmp_path):
    pdir = _paper(tmp_path)
    (pdir / "coverage.csv").write_text(f"table,item,status,reason\nFig. 1,x,partly,{END}\n", encoding="utf-8")
    assert END not in not_reproduced_section(pdir)
    update_notes(pdir)
    update_notes(pdir)                                              # still one pair of markers: no damage
    assert (pdir / "NOTES.md").read_text(encoding="utf-8").count(END) == 1
    assert claims._md("a*b_[c]") == "a\\*b\\_\\[c\\]"


def _kept_rows(path: Path, text: str) -> None:
    "The rows a claim-status writer does not own (the smallest effects of interest) come out of its rewrite unchanged."
    sesoi = lambda t: [ln for ln in t.splitlines() if ln.startswith("Smallest effect of interest,")]
    assert sesoi(path.read_text(encoding="utf-8")) and sesoi(text) == sesoi(path.read_text(encoding="utf-8"))


def _judged(paper: Path) -> dict:
    "claim -> its finding as the reports judge it, for the paper's cpu record."
    return judged_by_claim(paper / "runs" / "cpu", paper)


def test_ranking_post_training_claims_are_written_from_the_record(data_root):
    """claims.csv / coverage.csv rows that the ranking record speaks to say what the committed record says, as the
    reports judge it (the writer's check); each status and reason follows the judged finding, never a rule of its
    own."""
    paper = PAPERS / "ranking_sentences"
    assert cs.sync_claim_status(paper, check=True) == [], \
        "run python -m sentemb_lit.stats.claim_status ranking_sentences after reading the record back"
    assert not hasattr(cs, "verdict")                                   # no copy of a verdict rule in the writer
    meta, js = read_json_verified(paper / cs.RANKING_RECORD)["meta"], _judged(paper)
    last, best = f"{cs.RANKING_ARMS['(e)']} — last step weights", f"{cs.RANKING_TABLE1} — best dev weights"
    rows = lambda **fs: cs.ranking_rows(meta | {"best_at_step0_share": 0.5}, js | fs)
    up = js[last] | {"ours": 0.02, "lo": 0.01, "hi": 0.03, "p_holm": 0.004, "family": "Table 3", "family_size": 7}
    # an interval above 0 read as *negligible* (the old rule, lo > 0, would call it holds): not reproduced, and why
    status, reason = rows(**{last: up | {"verdict": "negligible", "sesoi": 0.15}})["table3 (e)"]
    assert status == "not reproduced" and "negligible, ours +0.020 [+0.010, +0.030] (95 % CI, unadjusted" in reason
    assert "within ±0.15, the smallest effect of interest" in reason and "not the paper's gain" in reason
    # the same interval, Holm-adjusted to *inconclusive*: Holm's p within its family is printed
    status, reason = rows(**{last: up | {"verdict": "inconclusive", "p_holm": 0.2}})["table3 (e)"]
    assert status == "not reproduced" and "inconclusive, ours +0.020" in reason
    assert "Holm p 0.2 within Table 3" in reason
    # only a judged *holds* reproduces
    status, reason = rows(**{last: up | {"verdict": "holds"}})["table3 (e)"]
    assert status == "reproduced" and "holds, ours +0.020 [+0.010, +0.030]" in reason and "not reproduced" not in reason
    # a best-dev reading of one model on both sides: no interval, the record's share of runs best at step 0
    status, reason = rows(**{best: js[best] | {"verdict": "same model", "lo": None, "hi": None,
                                               "status": "not tested: training never improved dev"}})["table1"]
    assert "best-dev weights same model (both sides are one model" in reason and "50 % of the" in reason
    # Table 8 and Fig. 4 follow their judged findings too
    t8 = cs.transfer_claim("full")
    assert rows(**{t8: js[t8] | {"verdict": "holds"}})["table8 -r"][0] == "reproduced"
    assert rows(**{t8: js[t8] | {"verdict": "same model"}})["table8 -r"][0] == "not reproduced"
    longer = cs.RANKING_LONGER
    fig4 = rows(**{longer: js[longer] | {"verdict": "does not hold"}})["fig4"][1]
    assert "longer than the source: does not hold" in fig4
    # the writer takes its verdicts from the judged findings: a changed one makes the check fail
    assert cs.sync_claim_status(paper, check=True, js=js | {last: up | {"verdict": "holds"}}) != []
    _kept_rows(paper / "claims.csv", cs.claim_status_texts(paper, js)[paper / "claims.csv"])


def test_pretcot_claims_are_written_from_the_records(data_root):
    """The LLaMA2-7b / OPT-350m rows and Fig. 1 say what the committed PretCoT records say, as the reports judge them
    (the writer's check); each status and reason follows the judged finding, not the verdict stored in the JSON."""
    paper = PAPERS / "pretcot_ke"
    assert cs.sync_claim_status(paper, check=True) == [], \
        "run python -m sentemb_lit.stats.claim_status pretcot_ke after reading the records back"
    res, js = {m: read_json_verified(paper / p) for m, p in cs.PRETCOT_RECORDS.items()}, _judged(paper)
    recs = lambda js: {m: cs.PretcotRecord(m, r, js) for m, r in res.items()}
    small, large, ke_claim = cs.PRETCOT_SMALL, cs.PRETCOT_LARGE, cs.PRETCOT_CLAIMS["ke"][1]
    ke = next(c for c in js if c.startswith(f"{ke_claim} [{small}, ") and c.endswith("-task average]"))
    row = lambda f: cs.pretcot_rows(recs(js | {ke: js[ke] | f}))[("Table 5", "Knowledge Enhancement", "avg")]
    status, reason = row({"verdict": "does not hold", "ours": -1.0, "lo": -1.5, "hi": -0.5})
    assert status == "not reproduced" and "KE > EOL at 135M: does not hold, ours -1.00 [-1.50, -0.50]" in reason
    # an interval above 0 read as *negligible* (a stored "holds" or the rule lo > 0 would make it partly)
    status, reason = row({"verdict": "negligible", "ours": 0.02, "lo": 0.01, "hi": 0.03, "sesoi": 0.05})
    assert status == "not reproduced" and "within ±0.05, the smallest effect of interest" in reason
    assert "not the gain the paper reports" in reason
    status, reason = row({"verdict": "holds", "p_holm": 0.001, "family": "Table 5", "family_size": 9})
    assert status == "partly" and "Holm p 0.001 within Table 5, 9 claims" in reason
    status, reason = row({"verdict": "same model", "lo": None, "hi": None})
    assert status == "not reproduced" and "both sides are one model" in reason
    # the writer takes its verdicts from the judged findings (the NOTES.md block too): a changed one fails the check
    qwen = next(c for c in js if c.startswith("Knowledge Enhancement beats Pretended CoT") and large in c)
    assert js[qwen]["verdict"] != "does not hold"
    assert cs.sync_claim_status(paper, check=True, js=js | {qwen: js[qwen] | {"verdict": "does not hold"}}) != []
    _kept_rows(paper / "claims.csv", cs.claim_status_texts(paper, js)[paper / "claims.csv"])


def test_the_command_names_the_papers_it_writes(capsys):
    "`python -m sentemb_lit.stats.claim_status` refuses a paper without a writer before it reads anything."
    with pytest.raises(SystemExit) as e:
        cs._main(["jtcse", "--root", str(PAPERS)])
    assert e.value.code == 2 and "no claim-status writer for jtcse" in capsys.readouterr().err
