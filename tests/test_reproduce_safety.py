"""`sentemb-lit reproduce` runs only what it should (issue #22): a project folder is one whose settings.ini declares
lib_name = sentemb_lit, only the notebooks each paper lists by exact name run, the folder is printed before anything
executes, stale attempt folders of dead processes are swept, and promotion goes through io.atomic_write_dir."""
import ast, inspect, json, os, subprocess, sys
from pathlib import Path
import pytest
import sentemb_lit.reproduce as runner

PARAMS_NB = {"cells": [{"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]}, "execution_count": None,
                        "outputs": [], "source": ["profile = 'smoke'\n"]}],
             "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _project(d: Path, ini: str = "[DEFAULT]\nlib_name = sentemb_lit\n", names=("23_ranking_reproduction.ipynb",)):
    (d / "nbs" / "experiments").mkdir(parents=True)
    (d / "settings.ini").write_text(ini)
    for n in [*names, "2_evil.ipynb", "23_other.ipynb"]:
        (d / "nbs" / "experiments" / n).write_text(json.dumps(PARAMS_NB))
    return d


@pytest.mark.parametrize("ini", ["", "[DEFAULT]\nlib_name = other\n", "[DEFAULT]\nrepo = sentemb_lit\n", "[oops"])
def test_a_folder_without_lib_name_sentemb_lit_is_not_a_project(tmp_path, ini):
    _project(tmp_path, ini)
    with pytest.raises(FileNotFoundError, match="is not a sentemb_lit project folder .*lib_name = sentemb_lit"):
        runner.project_root(tmp_path)
    with pytest.raises(FileNotFoundError, match="is not a sentemb_lit project folder"):
        runner.reproduce("ranking_sentences", "smoke", project=tmp_path)


def test_only_the_listed_notebooks_run(tmp_path):
    _project(tmp_path)
    assert [p.name for p in runner.experiment_notebooks("ranking_sentences", tmp_path / "nbs" / "experiments")] == \
        ["23_ranking_reproduction.ipynb"]
    with pytest.raises(FileNotFoundError, match=r"'04_baselines.ipynb'\] of paper 'baselines' do not exist"):
        runner.experiment_notebooks("baselines", tmp_path / "nbs" / "experiments")
    (tmp_path / "nbs" / "experiments" / "23_ranking_reproduction.ipynb").write_text(
        json.dumps(PARAMS_NB | {"cells": []}))
    with pytest.raises(ValueError, match="have no cell tagged 'parameters'"):
        runner.experiment_notebooks("ranking_sentences", tmp_path / "nbs" / "experiments")


@pytest.fixture
def fake_run(monkeypatch, capsys):
    "run_notebook replaced by a recorder that sees what was printed before it; reports not built."
    calls = []
    def run(nb, run_dir, profile, cwd, timeout=None, params=None):
        calls.append((nb.name, capsys.readouterr().out, params))
        (run_dir / "out.txt").write_text(nb.name)
        return {"notebook": nb.name, "status": calls_status[0], "seconds": 0.0, "error": ""}
    calls_status = ["ok"]
    monkeypatch.setattr(runner, "run_notebook", run)
    def reports(paper, profile, run_dir, statuses, paper_dir, shown=None, title=None, promote=False):
        (run_dir / "REPORT.md").write_text("report\n")
        if promote: (paper_dir / "REPORT.md").write_text("report\n")
        return run_dir / "REPORT.md"
    monkeypatch.setattr(runner, "write_reports", reports)
    return calls, calls_status


def test_the_folder_is_named_before_anything_runs(tmp_path, fake_run):
    calls, _ = fake_run
    _project(tmp_path)
    runner.reproduce("ranking_sentences", "smoke", project=tmp_path)
    assert [c[0] for c in calls] == ["23_ranking_reproduction.ipynb"]             # not 2_evil, not 23_other
    assert f"project folder: {tmp_path.resolve()}" in calls[0][1]


def test_every_listed_notebook_is_checked_before_any_runs(tmp_path, fake_run):
    calls, _ = fake_run
    _project(tmp_path)
    with pytest.raises(FileNotFoundError, match="04_baselines.ipynb"):
        runner.reproduce(["ranking_sentences", "baselines"], "smoke", project=tmp_path)
    assert calls == []


def test_stale_attempts_of_dead_processes_are_swept(tmp_path, fake_run):
    calls, status = fake_run
    _project(tmp_path)
    runs = tmp_path / "papers" / "ranking_sentences" / "runs"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    old = [runs / f"smoke.attempt-20200101T000000-{dead.pid}", runs / "smoke.attempt-20200101T000001",
           runs / f"smoke.attempt-20200101T000002-{os.getpid()}", runs / f"cpu.attempt-20200101T000000-{dead.pid}"]
    for d in old: d.mkdir(parents=True)
    status[0] = "failed"
    statuses, run_dir = runner.reproduce_paper("ranking_sentences", "smoke", tmp_path)
    left = sorted(d.name for d in runs.iterdir() if d.is_dir())
    assert old[0].name not in left and old[1].name not in left                   # dead / older unnamed: swept
    assert old[2].name in left and old[3].name in left                           # a live process's; another profile
    assert run_dir.name in left and run_dir.name.endswith(f"-{os.getpid()}")     # the new failed attempt stays


def test_promote_uses_io_atomic_write_dir_and_its_crash_recovery(tmp_path):
    src = inspect.getsource(runner._promote)
    calls = {n.func.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "atomic_write_dir" in calls
    record, attempt = tmp_path / "smoke", tmp_path / "smoke.attempt-1-1"
    (tmp_path / "smoke.old").mkdir()                                              # a swap cut between its renames
    (tmp_path / "smoke.old" / "REPORT.md").write_text("previous")
    attempt.mkdir()
    (attempt / "REPORT.md").write_text("new")
    assert runner._promote(attempt, record) == record
    assert (record / "REPORT.md").read_text() == "new"
    assert not attempt.exists() and not (tmp_path / "smoke.old").exists()


def test_a_successful_run_is_promoted(tmp_path, fake_run):
    _project(tmp_path)
    statuses, run_dir = runner.reproduce_paper("ranking_sentences", "smoke", tmp_path)
    assert run_dir == tmp_path / "papers" / "ranking_sentences" / "runs" / "smoke"
    assert (run_dir / "out.txt").read_text() == "23_ranking_reproduction.ipynb"
    assert not list(run_dir.parent.glob("smoke.attempt-*"))


def test_a_parameter_reaches_only_the_notebooks_that_declare_it(tmp_path, fake_run):
    calls, _ = fake_run
    _project(tmp_path, names=("13_jtcse_reproduction.ipynb", "14_jtcse_table_one.ipynb"))
    nb14 = json.loads(json.dumps(PARAMS_NB))
    nb14["cells"][0]["source"] = ["profile: str = 'smoke'  # the size\n", "seeds: str = None  # seeds to train now\n"]
    (tmp_path / "nbs" / "experiments" / "14_jtcse_table_one.ipynb").write_text(json.dumps(nb14))
    runner.reproduce("jtcse", "smoke", project=tmp_path, params={"seeds": ""})
    assert [(c[0], c[2]) for c in calls] == [("13_jtcse_reproduction.ipynb", {}),
                                             ("14_jtcse_table_one.ipynb", {"seeds": ""})]
    with pytest.raises(ValueError, match=r"\['stages'\] are declared by none of"):
        runner.reproduce("jtcse", "smoke", project=tmp_path, params={"stages": "tower1"})
    assert len(calls) == 2                                   # refused before anything ran
