"""The library logs, the CLI and the notebooks print (issue 25): a library user silences or redirects the library's
messages with `logging` (one logger per module, `sentemb_lit.<module>`), and `sentemb-lit` shows them as the prints
did (INFO on stdout, warnings on stderr). The prints left in the library are listed here with the reason each stays."""
import ast, logging
from pathlib import Path
import pytest
import sentemb_lit

PKG = Path(sentemb_lit.__file__).parent
# (module, top-level definition) -> why its `print` stays
KEPT = {("cli", "*"): "the command line's own output",
        ("verify", "verify_main"): "the `verify` command's output: one line per store and run it checked",
        ("bench", "_print_train"): "the `bench --only train` row: seconds per step, their ratio and both dev scores",
        ("bench", "_model_rows"): "bench's report: the model rows (called by bench_main only)",
        ("bench", "_cpu_rows"): "bench's report: the CPU rows (called by bench_main only)",
        ("reproduce", "reproduce"): "the `reproduce` command's first line, the project folder, before anything runs",
        ("reproduce", "reproduce_paper"): "the `reproduce` command's progress: a line as each notebook starts and ends",
        ("bench", "bench_main"): "the `sentemb-lit bench` command's report",
        ("bench", "_print_twin"): "part of that report (called by bench_main only)",
        ("memory", "_child"): "a child process's result on stdout, read back by its parent",
        ("stats.claim_status", "_main"): "the `python -m sentemb_lit.stats.claim_status` command's report",
        ("core.model_cache", "cached_build"):
            "keyed: reached by the JTCSE, STS and nb23 keys (their methods record it)",
        ("core.model_cache", "gguf_to_safetensors"): "keyed: as cached_build"}


def print_sites() -> set[tuple[str, str]]:
    "(module, top-level definition) of every `print(...)` call in the package's modules."
    out = set()
    for path in sorted(PKG.rglob("*.py")):
        for top in ast.parse(path.read_text(encoding="utf-8")).body:
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
                   for n in ast.walk(top)):
                module = path.relative_to(PKG).with_suffix("").as_posix().replace("/", ".")
                out.add((module, getattr(top, "name", type(top).__name__)))
    return out


def test_every_print_left_in_the_library_has_its_reason():
    sites = print_sites()
    assert ("cli", "main") in sites                                  # the walk finds prints
    assert {s for s in sites if s[0] != "cli"} <= set(KEPT), sorted(s for s in sites if s not in KEPT and s[0] != "cli")


def test_each_logging_module_has_its_own_logger():
    "A module that logs does so through `logging.getLogger(__name__)`, never the root logger or a shared one."
    for path in sorted(PKG.rglob("*.py")):
        src = path.read_text(encoding="utf-8")
        if "_log." not in src: continue
        assert "_log = logging.getLogger(__name__)" in src, path.name
        assert "logging.info(" not in src and "logging.warning(" not in src, path.name


def test_training_corpus_logs_its_counts_and_prints_nothing(data_root, caplog, capsys, monkeypatch):
    from sentemb_lit.core.data import training_corpus
    for name in ("sentemb_lit", "sentemb_lit.core", "sentemb_lit.core.data"):    # a command run earlier in this
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])            # process may have shown the logs
    with caplog.at_level(logging.INFO, logger="sentemb_lit.core.data"):
        corpus = training_corpus(("sickr_train",), verbose=True)
    lines = [r.getMessage() for r in caplog.records if r.name == "sentemb_lit.core.data"]
    assert lines[-1].split() == ["union:", str(len(corpus)), "distinct", "sentences"], lines
    assert capsys.readouterr().out == ""
    caplog.clear()
    training_corpus(("sickr_train",))
    assert not [r for r in caplog.records if r.name == "sentemb_lit.core.data"]          # not verbose: nothing


def test_a_refused_adoption_is_a_warning_of_chain_jobs(tmp_path, caplog, capsys):
    from sentemb_lit.ranking.chain_jobs import _matching
    bad = tmp_path / "chains.jsonl"
    bad.write_text("{not json\n")
    with caplog.at_level(logging.WARNING, logger="sentemb_lit.ranking.chain_jobs"):
        assert _matching(bad, [{"source": "a"}], {}) is None
    (rec,) = [r for r in caplog.records if r.name == "sentemb_lit.ranking.chain_jobs"]
    assert rec.levelno == logging.WARNING and rec.getMessage().startswith("not adopted:")
    assert capsys.readouterr().out == ""


@pytest.fixture
def cli_logs():
    "The CLI's handler, removed again afterwards (the logger is process-wide)."
    from sentemb_lit import cli
    log = logging.getLogger("sentemb_lit")
    before, level = list(log.handlers), log.level
    yield cli
    log.handlers[:] = before
    log.setLevel(level)


def test_the_command_line_shows_library_logs_as_plain_lines(cli_logs, capsys):
    cli_logs._show_library_logs()
    cli_logs._show_library_logs()                                    # a second call adds no second handler
    logging.getLogger("sentemb_lit.core.data").info("wrote sts/x.tsv")
    logging.getLogger("sentemb_lit.ranking.chain_jobs").warning("not adopted: x")
    logging.getLogger("sentemb_lit.core.data").debug("not shown")
    out, err = capsys.readouterr()
    assert out == "wrote sts/x.tsv\n" and err == "not adopted: x\n", (out, err)
