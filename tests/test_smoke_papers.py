"`make smoke` runs the papers in two processes: its two lists must name every paper of `reproduce.PAPERS` once."
import re
from pathlib import Path
from sentemb_lit.reproduce import PAPERS

ROOT = Path(__file__).resolve().parents[1]


def test_the_two_smoke_lists_cover_every_paper_once():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    lists = {k: re.findall(r"--paper (\S+)", v) for k, v in re.findall(r"^(SMOKE_[AB]) := (.*)$", make, re.M)}
    assert set(lists) == {"SMOKE_A", "SMOKE_B"}, lists
    named = lists["SMOKE_A"] + lists["SMOKE_B"]
    assert sorted(named) == sorted(PAPERS), f"make smoke names {named}; reproduce.PAPERS is {sorted(PAPERS)}"
