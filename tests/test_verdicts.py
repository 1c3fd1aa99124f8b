"""The committed reports are what the code gives from the committed per-pair predictions, under one rule (issue 42).

Each paper's REPORT.md and DETAILS.md are rebuilt from its stored run (every finding that names its inputs is
recomputed from the committed predictions, the families adjusted by Holm, the smallest effects of interest of
claims.csv applied) and compared with the committed files, apart from the line that says when and where they were
generated. The rule line is today's, and no verdict line shows a zero-width interval."""
import json, re
from pathlib import Path
import pytest
from sentemb_lit.reproduce import PAPERS
from sentemb_lit.stats.report import RULE, build_details, build_report

ROOT = Path(__file__).resolve().parents[1]
RECORDED = [p for p in PAPERS if (ROOT / "papers" / p / "runs" / "cpu").is_dir()]


def _statuses(run_dir: Path) -> list:
    st = run_dir / "statuses.json"
    return json.loads(st.read_text()) if st.exists() else [
        {"notebook": p.name, "status": "ok", "seconds": "", "error": ""} for p in sorted(run_dir.glob("[0-9]*.ipynb"))]


def _body(text: str) -> str:
    return "\n".join(l for l in text.splitlines() if not l.startswith("Generated "))


@pytest.mark.parametrize("paper", RECORDED)
def test_committed_report_is_rebuilt_from_the_record(paper, data_root):
    paper_dir = ROOT / "papers" / paper
    run_dir = paper_dir / "runs" / "cpu"
    args = (paper, "cpu", run_dir, _statuses(run_dir), paper_dir, run_dir.relative_to(ROOT))
    for name, build in (("REPORT.md", build_report), ("DETAILS.md", build_details)):
        committed = (paper_dir / name).read_text(encoding="utf-8")
        assert _body(build(*args, dest_dir=paper_dir)) == _body(committed), \
            f"papers/{paper}/{name} is not what the record gives: run `sentemb-lit report --paper {paper}`"


@pytest.mark.parametrize("paper", RECORDED)
def test_report_states_the_rule_and_no_zero_width_interval(paper):
    report = (ROOT / "papers" / paper / "REPORT.md").read_text(encoding="utf-8")
    assert RULE in report
    verdicts = report[report.index("## Verdicts"):]
    zero = re.findall(r"\[([+-]?\d+\.\d+), \1\]", verdicts)
    assert not zero, f"papers/{paper}/REPORT.md prints a zero-width interval: {zero}"
