"fetch_data / sentemb_lit.cli.fetch_data_main: the hub → local data root path, run offline on local `datasets` sources."
import hashlib
import json
from pathlib import Path

import datasets
import numpy as np
import pytest
import sentemb_lit.core.data as D
from sentemb_lit.core.data import FETCH_MANIFEST, STSData, fetch_data, load_sts
from sentemb_lit.cli import fetch_data_main
from sentemb_lit.core.io import LockedError, exclusive


def _parquet(folder: Path, split: str, d: STSData, scale: float = 1.0):
    folder.mkdir(parents=True, exist_ok=True)
    table = {"sentence1": d.sentences1, "sentence2": d.sentences2, "score": (d.scores * scale).tolist()}
    datasets.Dataset.from_dict(table).to_parquet(str(folder / f"{split}.parquet"))


@pytest.fixture(scope="module")
def sources(data_root, tmp_path_factory):
    "Local copies shaped like the hub's: STS-B as sentence-transformers/stsb ([0, 1], `validation`), the rest as MTEB."
    src = tmp_path_factory.mktemp("sources")
    for split, hub in (("train", "train"), ("dev", "validation"), ("test", "test")):
        _parquet(src / "stsb", hub, load_sts("stsb", split), scale=0.2)
    _parquet(src / "sts12", "test", load_sts("sts12"))
    sick = [load_sts("sickr", s) for s in ("train", "dev", "test")]        # MTEB's copy: all 9,927 pairs as "test"
    _parquet(src / "sickr", "test", STSData("sickr", "test", "original", sum((d.sentences1 for d in sick), []),
                                            sum((d.sentences2 for d in sick), []),
                                            np.concatenate([d.scores for d in sick])))
    return {t: str(src / t) for t in ("sts12", "stsb", "sickr")}


def test_fetched_root_loads_to_the_same_data(sources, tmp_path, data_root):
    manifest = fetch_data(tmp_path, ("sts12", "stsb"), sources, verbose=False)
    assert sorted(manifest["written"]) == ["sts/sts12.tsv", "sts/stsb_dev.tsv", "sts/stsb_test.tsv",
                                           "sts/stsb_train.tsv"]
    for task, split in (("sts12", "test"), ("stsb", "train"), ("stsb", "dev"), ("stsb", "test")):
        got, ref = load_sts(task, split, root=tmp_path), load_sts(task, split, root=data_root)
        assert got.sentences1 == ref.sentences1 and got.sentences2 == ref.sentences2
        assert np.abs(got.scores - ref.scores).max() < 1e-12
        assert got.subsets is None                                  # no subset table on the hub
    assert load_sts("stsb", "dev", root=tmp_path).scores.max() == 5.0  # the [0, 1] copy was scaled back
    for rel, info in manifest["written"].items():                   # the manifest describes the written bytes
        assert hashlib.sha256((tmp_path / rel).read_bytes()).hexdigest() == info["sha256"]
    assert json.loads((tmp_path / FETCH_MANIFEST).read_text()) == manifest
    # the corpus built on STS-B train works from a fetched root too
    assert len(D.load_corpus("stsb_train", root=tmp_path)) == len(D.load_corpus("stsb_train", root=data_root))


def test_a_non_standard_split_is_skipped_with_its_reason(sources, tmp_path):
    manifest = fetch_data(tmp_path, "sickr", sources, verbose=False)
    assert manifest["written"] == {}
    assert "9927 rows, but the standard size of sickr/test is 4927" in manifest["skipped"]["sickr/test"]
    assert "no split 'train'" in manifest["skipped"]["sickr/train"]
    assert not (tmp_path / "sts" / "sickr_test.tsv").exists()
    with pytest.raises(FileNotFoundError, match="fetch_data skipped it: .*9927 rows"):
        load_sts("sickr", root=tmp_path)


def test_a_second_fetch_merges_the_manifest(sources, tmp_path):
    fetch_data(tmp_path, "sts12", sources, verbose=False)
    manifest = fetch_data(tmp_path, ["stsb"], sources, verbose=False)
    assert "sts/sts12.tsv" in manifest["written"] and "sts/stsb_test.tsv" in manifest["written"]


def test_two_fetches_into_one_folder_do_not_run_together(sources, tmp_path):
    with exclusive(tmp_path / FETCH_MANIFEST):
        with pytest.raises(LockedError, match="in use by another process"):
            fetch_data(tmp_path, "sts12", sources, verbose=False)


def test_cli_entry_point(sources, tmp_path, capsys):
    assert fetch_data_main(["--out", str(tmp_path / "o"), "--tasks", "sts12", "--source",
                            f"sts12={sources['sts12']}"]) == 0
    assert f"export SENTEMB_DATA={(tmp_path / 'o').resolve()}" in capsys.readouterr().out
    assert len(load_sts("sts12", root=tmp_path / "o")) == 3108


@pytest.mark.parametrize("argv, msg", [
    (["--tasks", "sts12"], "--out"),
    (["--out", "x", "--tasks", "sts12,"], "holds an empty name"),
    (["--out", "x", "--source", "sts12"], "is not TASK=HUB_ID_OR_FOLDER"),
    (["--out", "x", "--source", "=folder"], "is not TASK=HUB_ID_OR_FOLDER"),
])
def test_cli_usage_errors_exit_2(argv, msg, capsys):
    with pytest.raises(SystemExit) as e:
        fetch_data_main(argv)
    assert e.value.code == 2 and msg in capsys.readouterr().err


def test_cli_unknown_task_names_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        fetch_data_main(["--out", str(tmp_path), "--tasks", "sts99"])
    assert e.value.code == 2 and "unknown task(s) ['sts99']" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())                                       # nothing written


@pytest.mark.parametrize("var", ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"])
def test_fetch_offline_fails_at_once_without_network(monkeypatch, no_network, tmp_path, var):
    for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"): monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, "1")
    with pytest.raises(FileNotFoundError, match=f"{var}=1 disables the hub"):
        fetch_data(tmp_path, "stsb", verbose=False)
    assert no_network == []
