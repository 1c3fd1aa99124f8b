"""The leaderboard (issue 27): `nbs/experiments/96_leaderboard.ipynb` at smoke builds leaderboard.json and a results
file the standard report builder turns into REPORT.md, from the committed predictions of papers/baselines alone; a
hand-edited predictions file stops it with the file's name."""
import json, shutil
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "nbs" / "experiments" / "96_leaderboard.ipynb"
TASKS = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]


def run(out: Path, **params):
    import papermill as pm
    params = {"profile": "smoke", "out_dir": str(out)} | params
    return pm.execute_notebook(str(NB), str(out / NB.name), parameters=params, cwd=str(ROOT / "nbs" / "experiments"),
                               kernel_name="python3", progress_bar=False,
                               extra_arguments=["--IPKernelApp.log_level=ERROR"])


def test_smoke_builds_the_table_and_its_report(tmp_path):
    from sentemb_lit.stats.claims import read_claims
    from sentemb_lit.reproduce import PAPERS
    from sentemb_lit.stats.intervals import VERDICTS
    from sentemb_lit.core.io import read_json_verified
    from sentemb_lit.stats.report import write_reports
    assert PAPERS["leaderboard"] == ("96_leaderboard.ipynb",) and list(PAPERS)[-1] == "leaderboard"
    assert read_claims(ROOT / "papers" / "leaderboard") == {}                # claims.csv: the header only
    run(tmp_path)
    rows = json.loads((tmp_path / "leaderboard.json").read_text())
    assert isinstance(rows, list) and len(rows) == 4                          # the 4 committed baselines files
    need = {"encoder", "paper", "seeds", "sts", "transfer", "reranking", "cost", "vs_reference"}
    assert all(need <= set(r) and r["paper"] == "baselines" for r in rows)
    assert all(list(r["sts"]) == TASKS + ["avg"] and r["transfer"] is None and r["reranking"] is None for r in rows)
    assert [r["sts"]["avg"] for r in rows] == sorted((r["sts"]["avg"] for r in rows), reverse=True)
    assert {r["encoder"] for r in rows} == {"minilm-l6 mean", "minilm-l6 CLS", "minilm-l6 mean (senteval text)",
                                            "minilm-l6 CLS (senteval text)"}
    ref = [r for r in rows if r["vs_reference"] is None]
    assert [r["encoder"] for r in ref] == ["minilm-l6 mean"]                 # the fixed reference, no interval
    for r in rows:
        assert r["cost"] == {"macs": 698_499_072, "seq_len": 64, "towers": 1, "source": r["cost"]["source"]}
        v = r["vs_reference"]
        if v: assert v["lo"] <= v["diff"] <= v["hi"] and v["verdict"] in VERDICTS
    cls = next(r for r in rows if r["encoder"] == "minilm-l6 CLS")
    assert cls["vs_reference"]["verdict"] == "does not hold"                   # CLS below mean pooling
    res = read_json_verified(tmp_path / "96_leaderboard.results.json")
    assert res["meta"]["main_figure"] == "leaderboard.png" and (tmp_path / "leaderboard.png").is_file()
    assert len(res["findings"]) == 3
    status = [{"notebook": NB.name, "status": "ok", "seconds": 1.0, "error": ""}]
    report = write_reports("leaderboard", "smoke", tmp_path, status, ROOT / "papers" / "leaderboard").read_text()
    assert len(report.splitlines()) <= 80 and "minilm-l6 CLS · baselines > the reference" in report
    assert "| minilm-l6 mean · baselines |" in report


def test_a_hand_edited_predictions_file_is_refused_by_name(tmp_path):
    import papermill as pm
    src = ROOT / "papers" / "baselines" / "runs" / "cpu" / "predictions"
    dst = tmp_path / "records" / "baselines" / "runs" / "cpu" / "predictions"
    shutil.copytree(src, dst)
    (tmp_path / "out").mkdir()
    edited = dst / "minilm-l6_mean_senteval.npz"
    data = bytearray(edited.read_bytes())
    data[-100] ^= 1                                                            # one bit, by hand
    edited.write_bytes(bytes(data))
    with pytest.raises(pm.PapermillExecutionError) as e:
        run(tmp_path / "out", records=str(tmp_path / "records"))
    assert "minilm-l6_mean_senteval.npz" in str(e.value) and "differs from the manifest" in str(e.value)
    assert not (tmp_path / "out" / "leaderboard.json").exists()
