"Bad-input and edge-case tests of sentemb_lit.core.data (the notebook 00_data holds the derivation and main tests)."
import gzip
import numpy as np
import pytest
from sentemb_lit.core.data import (STS_SIZES, STS_TASKS, check_sentences, data_root, load_corpus, load_sts,
                                   training_corpus)


def test_every_task_and_split_loads_with_standard_size(data_root):
    for (task, split), n in STS_SIZES.items():
        for variant in ("original", "senteval"):
            d = load_sts(task, split, variant)
            assert len(d) == len(d.sentences1) == len(d.sentences2) == n
            assert d.scores.dtype == np.float64 and np.isfinite(d.scores).all()
            assert (d.subsets is not None) == (task in STS_TASKS[:5])


def test_variants_share_gold_scores(data_root):
    for task in STS_TASKS:
        assert (load_sts(task).scores == load_sts(task, variant="senteval").scores).all()


@pytest.mark.parametrize("bad, msg", [
    ("score\tsentence1\tsentence2\n4.0\ta\tb\textra\n", ":2: expected 3"),
    ("score\tsentence1\tsentence2\ninf\ta\tb\n", "not a finite value"),
    ("score\tsentence1\tsentence2\n7.5\ta\tb\n", "not a finite value"),
    ("score\tsentence1\tsentence2\n4.0\ta\t\n", "empty sentence2"),
    ("s1\ts2\n", "header"),
])
def test_malformed_rows_name_file_and_line(tmp_path, bad, msg):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sickr_dev.tsv").write_text(bad)
    with pytest.raises(ValueError, match=msg):
        load_sts("sickr", "dev", root=tmp_path)


def test_missing_root_and_files(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="not an existing folder"):
        data_root(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="missing"):
        load_sts("stsb", "test", root=tmp_path)
    with pytest.raises(ValueError, match="Unknown variant"):
        load_sts("stsb", variant="moses")


def test_hub_fallback_offline_names_the_variable(monkeypatch):
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1"); monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="SENTEMB_DATA"):
        load_sts("sts12")
    with pytest.raises(FileNotFoundError, match="SENTEMB_DATA"):
        data_root()


def test_corpus_cleaning(tmp_path):
    (tmp_path / "corpus").mkdir()
    with gzip.open(tmp_path / "corpus" / "wiki1m_head.txt.gz", "wt") as f:
        f.write("  a b \n\na b\nc\n   \nc\n")
    assert load_corpus("wiki1m_head", root=tmp_path) == ["a b", "c"]
    with pytest.raises(ValueError, match="names is empty"):
        training_corpus((), root=tmp_path)


@pytest.mark.parametrize("bad, err", [("one string", TypeError), ([], ValueError), ([b"bytes"], TypeError),
                                      (["ok", 1.5], TypeError), (["\t\n"], ValueError), (None, TypeError)])
def test_check_sentences_rejects(bad, err):
    with pytest.raises(err):
        check_sentences(bad)


def test_crlf_and_bom_read_like_the_original(tmp_path, data_root):
    (tmp_path / "sts").mkdir()
    original = (data_root / "sts" / "sickr_dev.tsv").read_bytes()
    (tmp_path / "sts" / "sickr_dev.tsv").write_bytes(b"\xef\xbb\xbf" + original.replace(b"\n", b"\r\n"))
    got, ref = load_sts("sickr", "dev", root=tmp_path), load_sts("sickr", "dev")
    assert got.sentences1 == ref.sentences1 and got.sentences2 == ref.sentences2
    assert (got.scores == ref.scores).all()


def test_non_utf8_bytes_name_file_and_line(tmp_path):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sickr_dev.tsv").write_bytes(b"score\tsentence1\tsentence2\n3.0\ta\tb\n1.0\tna\xefve\tc\n")
    with pytest.raises(ValueError, match=r"sickr_dev\.tsv:3: byte 0xef is not UTF-8"):
        load_sts("sickr", "dev", root=tmp_path)


# mtime=0: gzip otherwise stamps the clock into the bytes, and pytest-xdist's workers must collect the same tests
@pytest.mark.parametrize("payload, msg", [
    (b"not gzip at all", "not a readable gzip file"),
    (gzip.compress(b"line one\nline two\n", mtime=0)[:-12], "not a readable gzip file"),          # cut short
    (gzip.compress(b"ok\n\xff\xfe bad\n", mtime=0), r"wiki1m_head\.txt\.gz:2: byte 0xff is not UTF-8"),
], ids=["not gzip", "cut short", "not UTF-8"])
def test_damaged_corpus_files_are_named(tmp_path, payload, msg):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "wiki1m_head.txt.gz").write_bytes(payload)
    with pytest.raises(ValueError, match=msg):
        load_corpus("wiki1m_head", root=tmp_path)


@pytest.mark.parametrize("table, msg", [
    ("file\tsubset\tfirst_row\tn_rows\nsts/sts13.tsv\tA\t1\n", r"sts_subsets\.tsv:2: expected 4"),
    ("file\tsubset\tfirst_row\tn_rows\nsts/sts13.tsv\tA\tone\t2\n", r"sts_subsets\.tsv:2: first_row/n_rows"),
    ("file\tsubset\tfirst_row\tn_rows\nsts/sts13.tsv\tA\t1\t1499\n", "do not cover all its 1500 rows"),
    ("file\tsubset\tfirst_row\tn_rows\nsts/sts13.tsv\tA\t2\t1500\n", r"sts_subsets\.tsv:2: rows 2\.\.1501 run past"),
    ("name\tsubset\n", r"sts_subsets\.tsv:1: the header"),
])
def test_malformed_subset_table_names_file_and_line(tmp_path, data_root, table, msg):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sts13.tsv").write_bytes((data_root / "sts" / "sts13.tsv").read_bytes())
    (tmp_path / "sts_subsets.tsv").write_text(table)
    with pytest.raises(ValueError, match=msg):
        load_sts("sts13", root=tmp_path)


def test_without_a_subset_table_a_root_loads_without_subsets(tmp_path, data_root):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sts13.tsv").write_bytes((data_root / "sts" / "sts13.tsv").read_bytes())
    assert load_sts("sts13", root=tmp_path).subsets is None


@pytest.fixture
def hub_only(monkeypatch):
    "No data root and no offline variable; any `datasets` call is recorded and refused."
    import datasets
    for v in ("SENTEMB_DATA", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(v, raising=False)
    calls = []
    def refuse(*a, **k):
        calls.append(a)
        raise AssertionError("datasets was called")
    monkeypatch.setattr(datasets, "load_dataset", refuse)
    return calls


@pytest.mark.parametrize("value", ["1", "true", "ON", "yes"])
def test_offline_variable_fails_at_once_without_a_socket(monkeypatch, hub_only, value):
    import socket
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("a socket was opened"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", value)
    with pytest.raises(FileNotFoundError, match=r"SENTEMB_DATA.*HF_DATASETS_OFFLINE=.* disables the hub"):
        load_sts("stsb")
    assert hub_only == []


def test_refused_connection_fails_at_once(monkeypatch, hub_only):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")                # nothing listens on the discard port
    with pytest.raises(FileNotFoundError, match=r"127\.0\.0\.1:9 is unreachable.*Set SENTEMB_DATA"):
        load_sts("sts12")
    assert hub_only == []


def test_a_hanging_connection_is_cut_at_the_probe_timeout(monkeypatch, hub_only):
    import socket, threading
    import sentemb_lit.core.data as D
    release = threading.Event()
    def hang(*a, **k):                                                       # DNS or SYN hanging
        release.wait(30)
        raise OSError("released by the test")
    monkeypatch.setattr(socket, "create_connection", hang)
    monkeypatch.setattr(D, "HUB_PROBE_TIMEOUT", 0.2)
    try:
        with pytest.raises(FileNotFoundError, match=r"huggingface\.co:443 is unreachable \(no answer within 0\.2 s\)"):
            load_sts("sts12")
    finally:
        release.set()
    assert hub_only == []


def test_hub_tables_are_checked_like_files(monkeypatch, tmp_path, data_root):
    "The hub path (here pointed at a local folder) refuses a copy of non-standard size and names SENTEMB_DATA."
    import datasets
    import sentemb_lit.core.data as D
    d = load_sts("stsb", "test", root=data_root)
    (tmp_path / "stsb").mkdir()
    table = {"sentence1": d.sentences1[:-1], "sentence2": d.sentences2[:-1], "score": d.scores[:-1].tolist()}
    datasets.Dataset.from_dict(table).to_parquet(str(tmp_path / "stsb" / "test.parquet"))
    monkeypatch.setitem(D.HUB_STS, "stsb", str(tmp_path / "stsb"))
    monkeypatch.delenv("SENTEMB_DATA")
    with pytest.raises(ValueError, match=r"1378 rows, but the standard size of stsb/test is 1379.*Set SENTEMB_DATA"):
        load_sts("stsb")
    table["sentence1"][5] = " "
    datasets.Dataset.from_dict(table).to_parquet(str(tmp_path / "stsb" / "test.parquet"))
    with pytest.raises(ValueError, match=r"\[test\] row 5: empty sentence1"):
        load_sts("stsb")
