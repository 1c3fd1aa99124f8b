"""Issue 44, "Trust nothing you read back, part II": each class of bad input the battery found on the newest surface
(reports, intervals, transfer and its classifier, MTEB, the coverage study, the training rule, claims and their
writers, the twin model, memory, the commands) reproduced with the issue's own example; each now gets one clear
error naming the argument or the file, before any work is done or any file is written."""
import contextlib, io, json, math, os, subprocess, sys
from pathlib import Path
import numpy as np
import pytest

from sentemb_lit import cli, memory, reproduce
from sentemb_lit.core.checks import CorruptFileError, optional_file
from sentemb_lit.core.training_rule import convergence, replay_patience
from sentemb_lit.evals import classifier as clf
from sentemb_lit.evals.mteb import RerankingData, evaluate_reranking, mteb_undersample, rerank_metrics
from sentemb_lit.evals.transfer import TransferData, load_transfer
from sentemb_lit.jtcse.twin_model import TwinTowerConfig
from sentemb_lit.stats import coverage as cov, intervals as iv
from sentemb_lit.stats.claims import read_claim_status, read_claims, read_sesoi
from sentemb_lit.stats.report import finding, headline_verdicts, judged_text, verdict_table

HUGE = 10 ** 400                                                    # no float holds it
G = np.array([1.0, 2, 3, 4, 5, 6, 7, 8])
A, B = G + np.array([.3, -.2, .1, .4, -.5, .2, .1, -.3]), G[::-1].copy()
FAST = clf.ClassifierConfig(kfold=2, max_epoch=2, tenacity=0, epoch_size=1, regs=(1e-3,))


def _project(d: Path) -> Path:
    "A minimal project folder (what project_root accepts) with one stored run of the baselines paper."
    (d / "nbs").mkdir(parents=True)
    (d / "settings.ini").write_text("[DEFAULT]\nlib_name = sentemb_lit\n")
    (d / "papers" / "baselines" / "runs" / "cpu").mkdir(parents=True)
    return d


# ---- path escape: names that become paths ----------------------------------------------------------------------
@pytest.mark.parametrize("profile", ["../../../../OUTSIDE", "<absolute>", "cpu/../../../../OUTSIDE"])
def test_a_profile_or_paper_that_is_a_path_writes_nothing_anywhere(tmp_path, profile):
    project = _project(tmp_path / "proj")
    outside = tmp_path / "OUTSIDE"                               # the folder the attack points at, planted
    profile = str(outside) if profile == "<absolute>" else profile
    outside.mkdir()
    (outside / "statuses.json").write_text("[]")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(ValueError, match="Unknown profile"):
        reproduce.rebuild_report("baselines", profile, project)
    with pytest.raises(ValueError, match="Unknown profile"):
        reproduce.reproduce_paper("baselines", profile, project)
    with pytest.raises(ValueError, match="Unknown paper"):
        reproduce.reproduce_paper("../../OUTSIDE", "smoke", project)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before       # nothing written


@pytest.mark.parametrize("figure", ["../../../OUTSIDE.png", "/etc/x.png"])
def test_a_results_file_cannot_point_its_figure_outside_the_run(figure):
    from sentemb_lit.stats.report import _inside_run
    with pytest.raises(ValueError, match=r"results '13': meta\['main_figure'\] must be a file inside the run folder"):
        _inside_run(figure, {"name": "13"})


def test_statuses_json_that_is_not_json_is_named(tmp_path):
    project = _project(tmp_path)
    (project / "papers" / "baselines" / "runs" / "cpu" / "statuses.json").write_text("{not json")
    with pytest.raises(CorruptFileError, match=r"statuses.json:1: not valid JSON"):
        reproduce.rebuild_report("baselines", "cpu", project)


# ---- numbers beyond float range, seeds, scales -----------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda: iv.verdict(HUGE, 10 ** 401), "lo must be a number or None, got an int beyond the float range"),
    (lambda: finding("c", ours=HUGE), "ours must be a finite number or None"),
    (lambda: iv.two_level_interval(HUGE, 1.0, [1.0, 2.0]), "diff must be a finite number"),
    (lambda: iv.holm([0.1, HUGE]), r"p_values\[1\] must be a p-value"),
    (lambda: iv.paired_bootstrap(G, A, B, n_boot=HUGE), "n_boot must be an int >= 100"),
    (lambda: cov.coverage(lambda g: {}, {}, HUGE), "R must be a positive int"),
    (lambda: memory.fmt(HUGE), "x must be a finite number or None"),
])
def test_an_int_beyond_float_range_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("seed", ["x", -1, 1.5, 2 ** 64])
@pytest.mark.parametrize("call", [
    lambda s: iv.paired_bootstrap(G, A, B, seed=s), lambda s: mteb_undersample([0, 1, 0, 1], 1, seed=s),
    lambda s: clf.ClassifierConfig(seed=s), lambda s: cov.accuracy_world(n_pool=10, seed=s),
    lambda s: cov.coverage(lambda g: {}, {}, 2, seed=s)])
def test_a_bad_seed_is_named_before_any_generator_sees_it(call, seed):
    with pytest.raises(ValueError, match=r"seed must be an int in 0\.\."):
        call(seed)


@pytest.mark.parametrize("scale", [0, -100.0, math.nan])
def test_a_scale_of_zero_or_nan_is_named_as_the_scale(scale):
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        iv.paired_items([1, 0, 1, 1], [0, 0, 1, 1], scale=scale)
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        iv.paired_task_items({"t": [1, 0, 1, 1]}, {"t": [0, 0, 1, 1]}, scale=scale)


# ---- shapes and lengths ----------------------------------------------------------------------------------------
def test_reranking_queries_and_candidate_lists_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="queries and positives and negatives must be of one length"):
        RerankingData(["q1", "q2"], [["p"]], [["n"], ["m"]])          # was scored over the shorter


def test_transfer_data_with_fewer_labels_than_sentences_is_refused():
    with pytest.raises(ValueError, match="sentences has 2, labels has 1"):
        TransferData("MR", "all", ["a", "b"], np.array([0]))


def test_classifier_inputs_that_cannot_train_are_named():
    X, y = np.random.default_rng(0).normal(size=(40, 3)), np.arange(40) % 2
    with pytest.raises(ValueError, match="y \\(training labels\\) must hold two classes or more"):
        clf.cv_classify(X, np.zeros(40, int), FAST)                   # was accuracy 100
    with pytest.raises(ValueError, match="cv_classify: y has 3 rows"):
        clf.cv_classify(X[:3], np.array([0, 1, 0]), FAST)              # was sklearn's message
    with pytest.raises(ValueError, match=r"y_dev holds label\(s\) \[2\] that y \(training\) lacks"):
        clf.split_classify(X, y, X[:4], np.array([2, 2, 0, 1]), X[:4], y[:4], FAST)


def test_an_encoder_that_returns_strings_is_named():
    class Words:
        def encode(self, sentences, batch_size=32, **kw): return list(sentences)
    data = RerankingData(["q a"], [["p a"]], [["n a"]])
    with pytest.raises(TypeError, match="the embeddings encoder.encode returned must be an array of numbers"):
        evaluate_reranking(Words(), data)


def test_paired_difference_of_nothing_is_refused():
    with pytest.raises(ValueError, match="gold holds no tasks"):
        iv.paired_difference({}, {}, {})


# ---- NaN inside scores and dev curves --------------------------------------------------------------------------
def test_nan_inside_scores_or_a_dev_curve_is_named():
    with pytest.raises(ValueError, match=r"run\['q'\]\['d1'\] must be a finite number, got nan"):
        rerank_metrics({"q": {"d1": math.nan, "d2": 0.5}}, {"q": {"d1": 1, "d2": 0}})
    with pytest.raises(ValueError, match=r"dev_scores\[2\] must be a finite number, got nan"):
        convergence([10, 20, 30], [1.0, 2.0, math.nan], 30)          # was best_dev nan
    with pytest.raises(ValueError, match=r"dev_scores\[1\] must be a finite number"):
        replay_patience([0, 4, 8], [1.0, math.nan, 2.0], 2)


# ---- parameters outside their meaning --------------------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda: cov.accuracy_world(n_pool=0), "n_pool must be a positive int, got 0"),             # an empty pool
    (lambda: cov.accuracy_world(sigma=-0.7), "sigma must be a finite number >= 0"),            # a negative spread
    (lambda: cov.accuracy_world(delta=(math.nan, 0.0)), r"delta\[0\] must be a finite number"),
    (lambda: cov.ap_world(C=4, P=6), r"P must be an int in 1\.\.3, got 6"),                     # inverted bounds
    (lambda: cov.ap_world(mu=(1.1, math.inf)), r"mu\[1\] must be a finite number"),
    (lambda: convergence([30, 10, 20], [1, 2, 3], 30), "dev_steps must increase strictly"),   # unsorted
    (lambda: convergence([10, math.nan, 30], [1, 2, 3], 30), r"dev_steps\[1\] must be an int >= 0, got nan"),
    (lambda: convergence([10, 20, 30], [1, 2, 3], 0), "steps_run must be a positive int, got 0"),
    (lambda: convergence([10, 20, 30], [1, 2, 3], 30, min_tail_evals=2.5), "min_tail_evals must be a positive int"),
    (lambda: convergence([10, 20, 30], [1, 2, 3], 30, tail=1.5), r"tail must be a finite number in \(0, 1\]"),
    (lambda: iv.settle_plan(iv.two_level_interval(0.3, 0.04, [-1.0, 0.3, 1.6]) | {"n_seeds": 0}, 1.0, 100),
     r"r\['n_seeds'\] must be a positive int, got 0"),
])
def test_a_parameter_outside_its_meaning_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_twin_config_whose_tower_is_not_a_dict_is_named():
    with pytest.raises(TypeError, match="tower must be a tower config dict \\(or None\\), got str"):
        TwinTowerConfig(tower="x")


def test_peak_memory_refuses_a_negative_timeout_before_starting_a_process(monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("a process was started"))
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0 or None, got -1"):
        memory.peak_memory("contrastive-step", "tiny-bert", ["a sentence"], timeout=-1)


# ---- files -----------------------------------------------------------------------------------------------------
HEAD = "table,method,metric,value\n"


@pytest.mark.parametrize("content, error, message", [
    (b"table,method,value\nT1,JTCSE,79.5\n", ValueError, r"claims.csv:1: missing column\(s\) \['metric'\]"),
    (HEAD.encode() + b"T1,JTCSE \xff,avg,79.5\n", CorruptFileError, r"claims.csv:2: byte 35 \(0xff\) is not UTF-8"),
    (HEAD.encode() + b"T,m,avg,79.5\nT,m,avg,80.1\n", ValueError, r"claims.csv:3: \('T', 'm', 'avg'\) is given twice"),
    (HEAD.encode() + b"T,m,avg,inf\n", ValueError, "claims.csv:2: value 'inf' is not a finite number"),
])
def test_a_damaged_claims_csv_is_named_by_file_and_line(tmp_path, content, error, message):
    (tmp_path / "claims.csv").write_bytes(content)
    with pytest.raises(error, match=message):
        read_claims(tmp_path)


def test_a_path_given_as_a_number_is_named():
    for read in (read_claims, read_sesoi, read_claim_status):
        with pytest.raises(TypeError, match="paper_dir must be a path \\(str or os.PathLike\\), got int"):
            read(5)
    with pytest.raises(TypeError, match="project must be a str or os.PathLike"):
        reproduce.reproduce_paper("baselines", "smoke", 5)


def test_a_symlink_loop_is_an_error_never_a_missing_file(tmp_path):
    (tmp_path / "claims.csv").symlink_to(tmp_path / "claims.csv")
    for read in (read_claims, read_sesoi, read_claim_status):
        with pytest.raises(OSError, match="claims.csv' is a symbolic link loop"):
            read(tmp_path)
    (tmp_path / "transfer" / "MR").mkdir(parents=True)
    (tmp_path / "transfer" / "MR" / "all.tsv").symlink_to(tmp_path / "transfer" / "MR" / "all.tsv")
    with pytest.raises(OSError, match="all.tsv' is a symbolic link loop"):
        load_transfer("MR", root=tmp_path)
    assert optional_file(tmp_path / "coverage.csv") is None                # nothing there: absent, as before


def test_report_findings_fed_strings_are_named():
    f = {"claim": "A > B", "ours": 0.4, "lo": "0.1", "hi": 0.6, "verdict": "holds"}
    for call in (lambda: verdict_table([f]), lambda: headline_verdicts([f])):
        with pytest.raises(TypeError, match=r"findings\[0\]\['lo'\] must be a number or None, got str"):
            call()
    with pytest.raises(TypeError, match=r"f\['lo'\] must be a number or None, got str"):
        judged_text(f)
    with pytest.raises(ValueError, match="ours must be a finite number or None, got '1.5'"):
        finding("c", ours="1.5", lo="1", hi="2")


# ---- the commands ----------------------------------------------------------------------------------------------
def _main(*argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(list(argv))
    return code, err.getvalue()


def test_embed_with_standard_input_closed_says_so(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)                          # what Python holds when the shell ran `0<&-`
    code, err = _main("embed")
    assert code == 2 and "standard input is closed" in err and "internal error" not in err, err


def test_fetch_data_that_wrote_nothing_exits_non_zero(tmp_path):
    code, err = _main("fetch-data", "--out", str(tmp_path / "out"), "--tasks", "TREC", "--source",
                      f"senteval={tmp_path / 'none'}")
    assert code == 1 and "not written: TREC/test, TREC/train" in err, err


@pytest.mark.parametrize("command", [["eval-sts", "--model", "/no/such/model"], ["compare", "/no/a", "/no/b"]])
def test_json_pointing_at_a_folder_is_refused_before_any_work(tmp_path, command):
    code, err = _main(*command, "--json", str(tmp_path))            # the model would be the first thing to fail
    assert code == 2 and "--json" in err and "is a folder" in err and "/no/" not in err, err


def test_generate_ranking_reads_dev_null_as_empty_not_missing(tmp_path):
    code, err = _main("generate-ranking", "--input", "/dev/null", "--out", str(tmp_path / "chains.jsonl"))
    assert code == 2 and "holds no sentences" in err and "does not exist" not in err, err


def test_a_symlink_loop_is_an_input_error_not_an_internal_one(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    loop = str(tmp_path / "loop")
    for argv in (["eval-sts", "--json", f"{loop}/r.json"], ["fetch-data", "--out", loop], ["embed", "--input", loop]):
        code, err = _main(*argv)
        assert code == 2 and "symbolic link loop" in err and "internal error" not in err, (argv, err)
