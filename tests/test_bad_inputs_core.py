"""Bad inputs to the core API (io, evaluation, intervals, report, cli): each gives a clear error that names the
offending input."""
import json, os, subprocess, sys, time, zlib
from pathlib import Path
import numpy as np
import pytest
import sentemb_lit.stats.claims as claims
import sentemb_lit.core.code_keys as code_keys
import sentemb_lit.stats.intervals as intervals
import sentemb_lit.core.io as io
import sentemb_lit.core.store as store
import sentemb_lit.stats.report as report
from sentemb_lit.core.evaluation import (alignment_uniformity, correlations, cosine_scores, evaluate_dev, evaluate_sts,
                                    as_encode)


def bow(sentences, d=64):
    "Bag of words; zlib.crc32, unlike the salted hash(), gives the same buckets under every PYTHONHASHSEED."
    out = np.zeros((len(sentences), d))
    for i, s in enumerate(sentences):
        out[i, 0] = 1
        for w in s.lower().split(): out[i, 1 + zlib.crc32(w.encode()) % (d - 1)] += 1
    return out


# ---------------------------------------------------------------- io
@pytest.mark.parametrize("call, exc, match", [
    (lambda p: io.atomic_write_text(p / "a.txt", b"bytes"), TypeError, "text must be a str"),
    (lambda p: io.atomic_write_text(p / "a.txt", None), TypeError, "text must be a str"),
    (lambda p: io.atomic_write_json(p / "a.json", {"x": float("nan")}), ValueError, "a.json"),
    (lambda p: io.atomic_write_json(p / "a.json", {"x": float("inf")}), ValueError, "a.json"),
    (lambda p: io.atomic_write_json(p / "a.json", {"x": object()}), TypeError, "object is not JSON serialisable"),
    (lambda p: io.append_jsonl(p / "l.jsonl", [1, 2]), TypeError, "record must be a dict"),
    (lambda p: io.append_jsonl(p / "l.jsonl", "text"), TypeError, "record must be a dict"),
    (lambda p: io.append_jsonl(p / "l.jsonl", {"x": float("nan")}), ValueError, "l.jsonl"),
    (lambda p: io.exclusive(p / "o", wait=-1).__enter__(), ValueError, "wait must be seconds"),
    (lambda p: io.exclusive(p / "o", wait="1").__enter__(), ValueError, "wait must be seconds"),
    (lambda p: io.fingerprint(object()), TypeError, "cannot fingerprint a object"),
    (lambda p: io.fingerprint(p / "missing.bin"), FileNotFoundError, "missing.bin"),
    (lambda p: code_keys.code_hash("no_such_module_xyz"), ValueError, "no_such_module_xyz"),
    (lambda p: store.KeyedStore(p).path("", "0" * 64), ValueError, "name must be one folder name"),
    (lambda p: store.KeyedStore(p).path("a/b", "0" * 64), ValueError, "got .a/b."),
    (lambda p: store.KeyedStore(p).path("x", "abc"), ValueError, "key must be a key made by store.cache_key"),
    (lambda p: store.KeyedStore(p).load("x", {"key": 5}), ValueError, "key must be a key made by store.cache_key"),
])
def test_io_bad_inputs(tmp_path, call, exc, match):
    with pytest.raises(exc, match=match): call(tmp_path)


@pytest.mark.parametrize("content, match", [
    ('{"a": 1}\nnot json\n', r"l\.jsonl:2"),
    ('[1, 2]\n', r"l\.jsonl:1: a JSON list"),
    ('{"a": 1}\n{"a": \n{"a": 2}\n', r"l\.jsonl:2"),
    ('"text"\n', r"l\.jsonl:1: a JSON str"),
])
def test_corrupt_jsonl_is_named(tmp_path, content, match):
    (tmp_path / "l.jsonl").write_text(content)
    with pytest.raises(io.CorruptFileError, match=match): io.read_jsonl(tmp_path / "l.jsonl")


def test_non_utf8_jsonl_is_named(tmp_path):
    (tmp_path / "l.jsonl").write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(io.CorruptFileError, match=r"l\.jsonl: byte .* is not UTF-8"):
        io.read_jsonl(tmp_path / "l.jsonl")


def test_second_writer_is_refused_across_processes(tmp_path):
    # the holder says when it holds the lock (a file, not a guess at how long its start takes) and holds it until killed
    ready = tmp_path / "ready"
    code = (f"from sentemb_lit.core.io import exclusive\nimport time, pathlib\n"
            f"with exclusive({str(tmp_path / 'out')!r}):\n"
            f"    pathlib.Path({str(ready)!r}).touch()\n    time.sleep(3600)")
    holder = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 600
        while not ready.exists():
            assert holder.poll() is None, f"the lock holder exited with {holder.returncode} before taking the lock"
            assert time.monotonic() < deadline, "the lock holder never took the lock"
            time.sleep(0.05)
        with pytest.raises(io.LockedError, match=rf"out is in use by another process \(pid {holder.pid}\)"):
            with io.exclusive(tmp_path / "out"): pass
    finally:
        holder.kill(); holder.wait()
    with io.exclusive(tmp_path / "out"): pass                       # a killed holder leaves no stale lock


# ---------------------------------------------------------------- evaluation
@pytest.mark.parametrize("call, exc, match", [
    (lambda: cosine_scores(np.ones((2, 3)), np.ones((3, 3))), ValueError, "one shape"),
    (lambda: cosine_scores(np.ones(3), np.ones(3)), ValueError, r"\[N, d\]"),
    (lambda: cosine_scores(np.zeros((1, 3)), np.ones((1, 3))), ValueError, "zero embedding"),
    (lambda: cosine_scores(np.full((1, 3), np.nan), np.ones((1, 3))), ValueError, "NaN or inf"),
    (lambda: correlations([1.0], [2.0]), ValueError, "at least 2 pairs"),
    (lambda: correlations([1, 2, 3], [1, 2]), ValueError, "1-D of one length"),
    (lambda: correlations([1, 1, 1], [1, 2, 3]), ValueError, "predicted similarities are constant"),
    (lambda: correlations([1, 2, 3], [2, 2, 2]), ValueError, "gold scores are constant"),
    (lambda: correlations([1, np.nan, 3], [1, 2, 3]), ValueError, "NaN or inf"),
    (lambda: correlations([1, 2, 3], [1, 2, 3], what="sts12 subset MSRpar"), None, None),
    (lambda: evaluate_sts(bow, tasks=("sts99",)), ValueError, "sts99"),
    (lambda: evaluate_sts(bow, tasks=()), ValueError, "tasks is empty"),
    (lambda: evaluate_sts(bow, aggregation="median"), ValueError, "median"),
    (lambda: evaluate_sts(bow, tasks="stsb", limit=1), ValueError, "limit must be None or an int"),
    (lambda: evaluate_sts(bow, tasks="stsb", limit=0), ValueError, "limit must be None or an int"),
    (lambda: evaluate_sts(bow, tasks="stsb", limit=-5), ValueError, "limit must be None or an int"),
    (lambda: evaluate_sts(bow, tasks="stsb", limit=2.5), ValueError, "limit must be None or an int"),
    (lambda: evaluate_sts(bow, tasks="stsb", limit=True), ValueError, "limit must be None or an int"),
    (lambda: evaluate_sts(bow, tasks="sts12", limit=9), ValueError, "limit=9 is too small for sts12"),
    (lambda: evaluate_sts(bow, tasks="sts14", limit=11), ValueError, "limit=11 is too small for sts14"),
    (lambda: evaluate_sts(42, tasks="stsb"), TypeError, "encoder must be callable"),
    (lambda: evaluate_sts(lambda s: np.ones((len(s), 4)), tasks="stsb"), ValueError, "constant"),
    (lambda: evaluate_sts(lambda s: np.array([["x"]] * len(s)), tasks="stsb"), TypeError, "dtype"),
    (lambda: evaluate_sts(lambda s: [object()] * len(s), tasks="stsb"), TypeError, "dtype object"),
    (lambda: evaluate_sts(lambda s: np.ones((3, 4)), tasks="stsb"), ValueError, "must return an array"),
    (lambda: evaluate_sts(lambda s: np.full((len(s), 4), np.nan), tasks="stsb"), ValueError, "NaN or inf"),
    (lambda: evaluate_sts(bow, tasks="stsb", variant="lowercase"), ValueError, "lowercase"),
    (lambda: evaluate_sts(bow, tasks="stsb", split="validation"), ValueError, "validation"),
    (lambda: evaluate_dev(bow, tasks=("sts12",)), ValueError, "dev splits"),
    (lambda: alignment_uniformity(bow, threshold=7), ValueError, "0–5"),
    (lambda: as_encode("model"), TypeError, "got a str"),
])
def test_evaluation_bad_inputs(data_root, call, exc, match):
    if exc is None: call(); return
    with pytest.raises(exc, match=match): call()


def test_evaluation_limits_work_for_every_task(data_root):
    "Every limit from 2 × subsets upward gives a score (no 'needs 2 pairs' surprise)."
    from sentemb_lit.core.data import STS_TASKS, load_sts
    for t in STS_TASKS:
        d = load_sts(t)
        lim = 2 * max(1, len(set(d.subsets or [None])))
        assert np.isfinite(evaluate_sts(bow, tasks=t, limit=lim + 4).scores[t])


# ---------------------------------------------------------------- report
g = {"t": np.linspace(0, 5, 50)}
a = {"t": np.linspace(0, 5, 50) + np.sin(np.arange(50))}
@pytest.mark.parametrize("call, exc, match", [
    (lambda: intervals.verdict(0.5, 0.1), ValueError, "above the upper bound"),
    (lambda: intervals.verdict(0.1, 0.5, direction=2), ValueError, "direction must be"),
    (lambda: intervals.paired_bootstrap(g, a, a, n_boot=10), ValueError, "n_boot must be"),
    (lambda: intervals.paired_bootstrap(g, a, a, level=1.5), ValueError, "level must be"),
    (lambda: intervals.paired_bootstrap(g, a, {"u": a["t"]}), ValueError, "has tasks"),
    (lambda: intervals.paired_bootstrap(g, a, {"t": a["t"][:10]}), ValueError, "same pairs"),
    (lambda: intervals.paired_bootstrap(g, a, {"t": np.full(50, np.nan)}), ValueError, "NaN or inf"),
    (lambda: intervals.paired_bootstrap(g, [a, a], [a, a, a]), ValueError, "seeds are paired"),
    (lambda: intervals.paired_bootstrap(g, [], a), ValueError, "empty list of seeds"),
    (lambda: intervals.paired_bootstrap({"t": [1, 2]}, a, a), ValueError, ">= 3 pairs"),
    (lambda: intervals.seed_comparison([1, 2], [1]), ValueError, "paired seeds"),
    (lambda: intervals.seed_comparison([], []), ValueError, "paired seeds"),
    (lambda: intervals.seed_comparison([1, np.nan], [1, 2]), ValueError, "NaN or inf"),
    (lambda: intervals.correlation_ci([1, 2], [1, 2]), ValueError, "at least|>= 3 points"),
    (lambda: intervals.correlation_ci([1, 1, 1, 1], [1, 2, 3, 4]), ValueError, "vary"),
    (lambda: intervals.correlation_ci([1, 2, 3], [1, 2]), ValueError, "one length"),
    (lambda: report.finding("", 1, 1), ValueError, "claim must be"),
    (lambda: report.finding("c", ours=float("nan")), ValueError, "ours must be a finite number"),
    (lambda: report.finding("c", paper="high"), ValueError, "paper must be a finite number"),
    (lambda: report.finding("c", lo=float("inf"), hi=1.0), ValueError, "lo must be a finite number"),
])
def test_report_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match): call()


def test_bad_claims_csv_is_named(tmp_path):
    (tmp_path / "claims.csv").write_text("table,method,metric,value\nT,m,avg,high\n")
    with pytest.raises(ValueError, match=r"claims\.csv:2: value 'high'"): claims.read_claims(tmp_path)


# ---------------------------------------------------------------- command line
@pytest.mark.parametrize("args, match", [
    (["eval-sts", "--tasks", ""], "--tasks"),
    (["eval-sts", "--tasks", "stsb,,sickr"], "--tasks"),
    (["eval-sts", "--tasks", "sts99"], "sts99"),
    (["eval-sts", "--batch-size", "0"], "--batch-size must be >= 1"),
    (["eval-sts", "--batch-size", "x"], "--batch-size must be an integer"),
    (["eval-sts", "--limit", "-1"], "--limit must be >= 1"),
    (["eval-sts", "--limit", "1", "--tasks", "stsb"], "limit must be None or an int"),
    (["eval-sts", "--model", "/no/such/model", "--tasks", "stsb"], "/no/such/model"),
    (["eval-sts", "--variant", "lower"], "lower"),
    (["eval-sts", "--data-root", "/no/such/data", "--tasks", "stsb", "--limit", "20"], "/no/such/data"),
    (["reproduce", "--paper", "bert"], "bert"),
    (["reproduce", "--profile", "huge"], "huge"),
    (["reproduce", "--timeout", "0"], "--timeout must be >= 1"),
    (["reproduce", "--root", "/"], "is not a sentemb_lit project folder"),
    (["report", "--paper", "jtcse", "--profile", "full"], "no stored run"),
    (["frobnicate"], "unknown command 'frobnicate'"),
])
def test_cli_input_errors_are_one_line(data_root, args, match, capsys):
    "The command in this process: `main` returns the exit code the shell sees (from the shell: test_cli_papermill)."
    from sentemb_lit.cli import main
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, (code, err[-1500:])
    assert "Traceback" not in err
    assert match in err, err[-1500:]


# ---------------------------------------------------------------- report: folders, levels, finding numbers
def test_read_claims_names_a_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"paper_dir '.*no_such_paper' is not an existing folder"):
        claims.read_claims(tmp_path / "no_such_paper")
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(FileNotFoundError, match="a_file' is not an existing folder"):
        claims.read_claims(tmp_path / "a_file")
    assert claims.read_claims(tmp_path) == {}                   # a folder without claims.csv: no paper numbers


@pytest.mark.parametrize("call, exc, match", [
    (lambda: intervals.seed_comparison([1, 2, 3], [1, 2, 4], level=95), ValueError, r"level must be .* in \(0, 1\)"),
    (lambda: intervals.correlation_ci([1, 2, 3, 4], [1, 3, 2, 4], level=0), ValueError, "level must be"),
    (lambda: intervals.seed_comparison([1, 2], [np.inf, 2]), ValueError, "b_by_seed contains NaN or inf"),
    (lambda: intervals.correlation_ci([1, 2, 3], [1, 2, np.nan]), ValueError, "y contains NaN or inf"),
    (lambda: intervals.paired_bootstrap(g, a, a, n_boot=True), ValueError, "n_boot must be an int >= 100, got True"),
    (lambda: report.finding("c", ours=True), ValueError, "ours must be a finite number or None, got True"),
    (lambda: io.exclusive("never_written", wait=float("inf")).__enter__(), ValueError, "wait must be seconds >= 0"),
])
def test_report_and_io_numbers(call, exc, match):
    with pytest.raises(exc, match=match): call()
