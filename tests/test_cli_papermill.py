"The command line and the papermill runner, end to end."
import io, json, os, subprocess, sys
from pathlib import Path
import pytest
from sentemb_lit.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).parent / "sentemb-lit"


def test_cli_help_and_unknown_command():
    out = subprocess.run([str(EXE), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "reproduce" in out.stdout and "eval-sts" in out.stdout
    bad = subprocess.run([str(EXE), "frobnicate"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown command" in bad.stderr


def test_eval_sts_command(data_root, tmp_path, capsys, monkeypatch):
    "The command in this process (the exit code from the shell: test_cli_help_and_unknown_command)."
    monkeypatch.chdir(ROOT)
    code = main(["eval-sts", "--model", "minilm-l6", "--tasks", "stsb,sickr", "--limit", "150", "--json",
                 str(tmp_path / "r.json")])
    out = capsys.readouterr()
    assert code == 0, out.err[-2000:]
    res = json.loads((tmp_path / "r.json").read_text())
    assert set(res["scores"]) == {"stsb", "sickr", "avg"} and res["pooling"] == "mean"
    assert "| stsb | sickr | avg |" in out.out


def test_reproduce_injects_parameters_and_reports(tmp_path, data_root, capsys, monkeypatch):
    (tmp_path / "nbs" / "experiments").mkdir(parents=True)
    (tmp_path / "settings.ini").write_text("[DEFAULT]\nlib_name = sentemb_lit\n")
    cells = [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "execution_count": None, "outputs": [], "id": "p",
         "source": ['profile = "smoke"\n', "out_dir = None"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "id": "b",
         "source": ["from sentemb_lit.core.results import save_results\n",
                    "from sentemb_lit.stats.report import finding\n",
                    "rows = [{'table': 'T', 'method': 'm', 'metric': 'avg', 'value': 1.5, 'setting': profile}]\n",
                    "ci = (0.2, 0.9) if profile == 'cpu' else (-0.9, -0.2)\n",
                    "save_results(out_dir, '30_probe', rows, [finding('profile injected', 0.4, 0.5, *ci)])"]}]
    nb = {"cells": cells,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "python3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    listed = ("31_pretcot_ke_reproduction.ipynb", "32_mask_prompt_grid.ipynb", "33_pretcot_memory.ipynb")
    for name in listed:                                                                      # the names PAPERS lists
        (tmp_path / "nbs" / "experiments" / name).write_text(json.dumps(nb))
    unlisted = json.loads(json.dumps(nb))
    unlisted["cells"][1]["source"] = ["raise RuntimeError('an unlisted notebook ran')"]
    (tmp_path / "nbs" / "experiments" / "3_unlisted.ipynb").write_text(json.dumps(unlisted))                # never run
    (tmp_path / "papers" / "pretcot_ke").mkdir(parents=True)
    (tmp_path / "papers" / "pretcot_ke" / "claims.csv").write_text("table,method,metric,value,source\n"
                                                                    "T,m,avg,2.0,Table 9\n")
    (tmp_path / "papers" / "pretcot_ke" / "NOTES.md").write_text("## Notes\nhand-written discussion\n")
    monkeypatch.chdir(tmp_path)                                    # the command in this process, run from the folder
    code = main(["reproduce", "--paper", "pretcot_ke", "--profile", "cpu"])
    out = capsys.readouterr()
    assert code == 0, out.out[-2000:] + out.err[-2000:]
    report = (tmp_path / "papers" / "pretcot_ke" / "REPORT.md").read_text()
    details = (tmp_path / "papers" / "pretcot_ke" / "DETAILS.md").read_text()
    assert "| profile injected | +0.40 | +0.50 | +0.20 … +0.90 | — | — | — | holds | **holds** |" in details
    assert "| profile injected | **holds** +0.50 [+0.20, +0.90] |" in report
    assert "[NOTES.md](NOTES.md)" in report and "*Setting:* cpu" in details and "| m | 1.50 (2.00) |" in details
    record = tmp_path / "papers" / "pretcot_ke" / "runs" / "cpu"
    statuses = json.loads((record / "statuses.json").read_text())
    assert [x["notebook"] for x in statuses] == list(listed)
    assert (record / "31_pretcot_ke_reproduction.ipynb").exists() and all(x["status"] == "ok" for x in statuses)
    assert out.out.startswith(f"project folder: {tmp_path.resolve()}")
    assert not list(record.parent.glob("cpu.attempt-*"))               # the successful attempt became the record


def test_generate_ranking_and_embed_commands(tmp_path, data_root, capsys, monkeypatch):
    """The paper commands run end to end (real SmolLM2, tiny sizes) and exit 0: generate-ranking from the shell, its
    restart (which skips done work) and embed (sentences on stdin) in this process."""
    (tmp_path / "s.txt").write_text("A man is playing a guitar.\nTwo dogs run in the park.\n")
    args = [str(EXE), "generate-ranking", "--input", str(tmp_path / "s.txt"), "--out", str(tmp_path / "c.jsonl"),
            "--rounds", "2", "--max-new-tokens", "12", "--quiet"]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(l) for l in lines)
    monkeypatch.chdir(ROOT)                                    # the restart and embed: the commands in this process
    assert main(args[1:]) == 0 and len((tmp_path / "c.jsonl").read_text().splitlines()) == 2
    monkeypatch.setattr(sys, "stdin", io.StringIO("A sentence.\nAnother one here.\n"))
    code = main(["embed", "--model", "smollm2-135m-instruct", "--method", "pcot", "--out", str(tmp_path / "e.npy")])
    assert code == 0, capsys.readouterr().err[-2000:]
    import numpy as np
    e = np.load(tmp_path / "e.npy")
    assert e.shape[0] == 2 and e.dtype == np.float32 and np.isfinite(e).all()
