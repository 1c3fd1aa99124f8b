"Bad-input and edge-case tests of sentemb_lit.data (the notebook 00_data holds the derivation and main tests)."
import gzip
import numpy as np
import pytest
from sentemb_lit.data import STS_SIZES, STS_TASKS, check_sentences, data_root, load_corpus, load_sts, training_corpus


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
