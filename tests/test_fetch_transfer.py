"""fetch_transfer / load_transfer's hub path / `fetch-data` for transfer and reranking sets, run offline on local
sources."""
import gzip
import hashlib
import json
from pathlib import Path

import datasets
import numpy as np
import pytest
import sentemb_lit.evals.transfer as T
from sentemb_lit.cli import fetch_data_main
from sentemb_lit.core.data import FETCH_MANIFEST, fetch_data, load_sts
from sentemb_lit.core.io import CorruptFileError
from sentemb_lit.evals.mteb import load_reranking
from sentemb_lit.evals.transfer import MTEB_CLASSIFICATION, load_transfer
from sentemb_lit.evals.transfer_data import HUB_RERANKING, fetch_transfer, reranking_source, senteval_rows


def _hub_copy(folder: Path, task: str, damage=None):
    "A local folder shaped like the MTEB copy of `task` (text, label, label_text; `validation` for dev)."
    for (t, split) in T.TRANSFER_SIZES:
        if t != task: continue
        d = load_transfer(task, split)
        names = d.label_names or ("0", "1")
        texts = [("\n" + s + " \n" if i % 97 == 5 else s) for i, s in enumerate(d.sentences)]   # outer breaks: stripped
        rows = {"text": texts, "label": d.labels.tolist(), "label_text": [names[y] for y in d.labels]}
        if damage: rows = damage(rows)
        folder.mkdir(parents=True, exist_ok=True)
        datasets.Dataset.from_dict(rows).to_parquet(str(folder / f"{T.HUB_SPLIT.get(split, split)}.parquet"))
    return str(folder)


@pytest.mark.parametrize("task", MTEB_CLASSIFICATION)
def test_mteb_sets_from_a_hub_copy_are_the_data_roots_bytes(task, tmp_path, data_root):
    m = fetch_transfer(tmp_path / "out", [task], {task: _hub_copy(tmp_path / "src", task)}, verbose=False)
    assert m["skipped"] == {} and m["written"]
    for rel, info in m["written"].items():
        got = (tmp_path / "out" / rel).read_bytes()
        assert got == (data_root / rel).read_bytes(), rel
        assert hashlib.sha256(got).hexdigest() == info["sha256"]


def test_a_damaged_hub_copy_is_skipped_with_its_reason(tmp_path):
    drop = lambda rows: {k: v[:-1] for k, v in rows.items()}
    m = fetch_transfer(tmp_path / "out", ["AmazonCounterfactualEN"],
                       {"AmazonCounterfactualEN": _hub_copy(tmp_path / "src", "AmazonCounterfactualEN", drop)},
                       verbose=False)
    assert m["written"] == {}
    assert ("669 rows, but the standard size of AmazonCounterfactualEN/test is 670"
            in m["skipped"]["AmazonCounterfactualEN/test"])
    assert not (tmp_path / "out" / "transfer").exists()


def test_the_manifest_keeps_earlier_sts_files(tmp_path, data_root):
    d = load_sts("sts12")
    src = tmp_path / "sts12"
    src.mkdir()
    datasets.Dataset.from_dict({"sentence1": d.sentences1, "sentence2": d.sentences2, "score": d.scores.tolist()}
                               ).to_parquet(str(src / "test.parquet"))
    fetch_data(tmp_path / "out", ["sts12"], {"sts12": str(src)}, verbose=False)
    m = fetch_transfer(tmp_path / "out", ["Emotion"], {"Emotion": _hub_copy(tmp_path / "emo", "Emotion")},
                       verbose=False)
    assert {"sts/sts12.tsv", "transfer/Emotion/test.tsv"} <= set(m["written"])
    assert json.loads((tmp_path / "out" / FETCH_MANIFEST).read_text()) == m


def test_reranking_from_a_hub_copy_round_trips(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    rows = {"query": ["how do I mount a usb", "é unicode query"], "positive": [["mount usb drive"], []],
            "negative": [["install python", "grub error"], ["wifi drops"]]}
    datasets.Dataset.from_dict(rows).to_parquet(str(src / "test.parquet"))
    m = fetch_transfer(tmp_path / "root", ["SciDocsRR"], {"SciDocsRR": str(src)}, verbose=False)
    path = tmp_path / "root" / "reranking" / "SciDocsRR" / "test.jsonl.gz"
    assert m["written"]["reranking/SciDocsRR/test.jsonl.gz"]["rows"] == 2
    first = path.read_bytes()
    assert gzip.decompress(first).decode("utf-8").count("\n") == 2
    back = load_reranking(reranking_source("SciDocsRR", root=tmp_path / "root"))
    assert (back.queries, back.positives, back.negatives) == (rows["query"], rows["positive"], rows["negative"])
    fetch_transfer(tmp_path / "root", ["SciDocsRR"], {"SciDocsRR": str(src)}, verbose=False)
    assert path.read_bytes() == first                                  # the same data gives the same bytes
    assert (reranking_source("StackOverflowDupQuestions", root=tmp_path / "root")
            == HUB_RERANKING["StackOverflowDupQuestions"])


def test_offline_hub_paths_fail_at_once(monkeypatch, no_network, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="'mteb/banking77' from the Hugging Face hub: HF_HUB_OFFLINE=1"):
        load_transfer("Banking77")
    with pytest.raises(FileNotFoundError, match="has no hub copy in SentEval's preprocessing"):
        load_transfer("SST2")
    m = fetch_transfer(tmp_path / "out", ["AmazonCounterfactualEN", "AskUbuntuDupQuestions"], verbose=False)
    assert m["written"] == {} and set(m["skipped"]) == {"AmazonCounterfactualEN/train", "AmazonCounterfactualEN/dev",
                                                       "AmazonCounterfactualEN/test", "AskUbuntuDupQuestions"}
    assert all("HF_HUB_OFFLINE=1" in why for why in m["skipped"].values())
    assert no_network == []


def test_senteval_rows_name_the_file_and_line(tmp_path):
    (tmp_path / "MRPC").mkdir()
    (tmp_path / "MRPC" / "msr_paraphrase_test.txt").write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t2\ta\n")
    with pytest.raises(CorruptFileError, match=r"msr_paraphrase_test.txt:2: expected 5 tab-separated fields, found 3"):
        senteval_rows(tmp_path, "MRPC", "test")


def test_cli_fetches_a_group_with_its_sources(tmp_path, capsys):
    src = _hub_copy(tmp_path / "src", "Banking77")
    assert fetch_data_main(["--out", str(tmp_path / "o"), "--tasks", "Banking77", "--source", f"Banking77={src}"]) == 0
    assert "2 files in" in capsys.readouterr().out
    b = load_transfer("Banking77", "test", root=tmp_path / "o")
    assert len(b) == 3080 and len(b.label_names) == 77
    with pytest.raises(SystemExit) as e:
        fetch_data_main(["--out", str(tmp_path / "o2"), "--tasks", "senteval"])
    assert e.value.code == 2 and "add --source senteval=FOLDER" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()
