"sentemb_lit.jtcse: bad inputs, exact resume of an interrupted twin run, non-finite losses, save/load/export."
import copy, json, math
from pathlib import Path
import numpy as np, pytest, torch
from sentemb_lit.models import tiny_bert
from sentemb_lit.training import NonFiniteLossError, read_jsonl
from sentemb_lit.jtcse import (JTCSEConfig, TwinTowerEncoder, official_config, two_view_batch, positive_index,
                               batch_sentences, make_batch_at, make_loss_fn, train, inference_macs, bert_macs,
                               export_sentence_transformer, energy_sts_correlation, MemoEncoder, load_model)

CORPUS = [f"this is training sentence number {i} about topic {i % 7}" for i in range(64)]


def twin(seed=0):
    (m1, tok), (m2, _) = tiny_bert(seed), tiny_bert(seed + 1)
    return TwinTowerEncoder(m1, m2, tok, max_length=32)


@pytest.fixture(scope="module")
def tok():
    return tiny_bert()[1]


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("kw, msg", [
    (dict(variant="sbert"), "Unknown variant"), (dict(terms=()), "terms"), (dict(terms=("nce", "x")), "terms"),
    (dict(terms="none"), "do not train"), (dict(cael_every=0), "cael_every"), (dict(cael_every=None), "tncse"),
    (dict(lr=0), "lr"), (dict(lr=float("inf")), "lr"), (dict(temperature=-1), "temperature"),
    (dict(batch_size=0), "batch_size"), (dict(n_steps=1.5), "n_steps"), (dict(max_length=1), "max_length"),
    (dict(eval_every=-1), "eval_every"), (dict(dropout=1.0), "dropout"), (dict(on_nonfinite="ignore"), "on_nonfinite"),
    (dict(nce_layout="bb"), "nce_layout"), (dict(distill_target_scale=0), "distill_target_scale"),
])
def test_config_rejects(kw, msg):
    with pytest.raises(ValueError, match=msg): JTCSEConfig(**kw)


def test_official_defaults():
    c = official_config("jtcse")
    assert (c.lr, c.batch_size, c.max_length, c.temperature, c.cael_every, c.eval_every) == (1.3e-6, 64, 64, 0.05, 2, 100)
    assert official_config("tncse").cael_every is None and official_config("simcse").nce_layout == "b"
    with pytest.raises(ValueError, match="Unknown variant"): official_config("x")


def test_batch_inputs(tok):
    with pytest.raises(ValueError, match="empty"): two_view_batch(tok, ["fine", "  "])
    with pytest.raises(ValueError): two_view_batch(tok, [])
    with pytest.raises(TypeError): two_view_batch(tok, ["ok", 3])
    with pytest.raises(ValueError, match="max_length"): two_view_batch(tok, ["ok"], max_length=0)
    with pytest.raises(ValueError, match="even"): positive_index(5)
    with pytest.raises(ValueError, match="step"): batch_sentences(CORPUS, 4, 0)
    with pytest.raises(ValueError, match="fewer than one batch"): batch_sentences(CORPUS[:3], 4, 1)
    with pytest.raises(ValueError, match="empty"): make_batch_at(CORPUS + [""], tok, JTCSEConfig())


def test_twin_inputs(tok):
    t = twin()
    with pytest.raises(ValueError, match="same object"): TwinTowerEncoder(t.tower_1, t.tower_1, tok)
    with pytest.raises(TypeError, match="PreTrainedModel"): TwinTowerEncoder(t.tower_1, torch.nn.Linear(2, 2), tok)
    small = tiny_bert(0, hidden_size=16, num_attention_heads=2)[0]
    with pytest.raises(ValueError, match="hidden sizes"): TwinTowerEncoder(t.tower_1, small, tok)
    with pytest.raises(ValueError, match="empty"): t.encode(["a", ""])
    with pytest.raises(FileNotFoundError, match="twin_config"): TwinTowerEncoder.from_pretrained("/nonexistent")
    with pytest.raises(FileNotFoundError): load_model("/nonexistent")


def test_loss_fn_inputs(tok):
    t, (single, _) = twin(), tiny_bert(7)
    with pytest.raises(TypeError, match="TwinTowerEncoder"): make_loss_fn(JTCSEConfig(), single)
    with pytest.raises(TypeError, match="single tower"): make_loss_fn(JTCSEConfig(variant="simcse", cael_every=None), t)
    with pytest.raises(TypeError, match="teacher"): make_loss_fn(JTCSEConfig(variant="distill", cael_every=None), single)
    with pytest.raises(ValueError, match="only used"): make_loss_fn(JTCSEConfig(), t, teacher=twin(3))
    with pytest.raises(ValueError, match="divide"): make_loss_fn(JTCSEConfig(cael_every=3), t)   # 2-layer towers


def test_macs_and_misc(tok):
    t = twin()
    assert inference_macs(t, 32) == 2 * inference_macs(t.tower_1, 32) == 2 * bert_macs(t.tower_1.config, 32)
    with pytest.raises(ValueError, match="seq_len"): inference_macs(t, -1)
    with pytest.raises(TypeError): inference_macs(torch.nn.Linear(2, 2), 8)
    with pytest.raises(ValueError, match="≥ 3"): energy_sts_correlation([1, 2], [3, 4])
    with pytest.raises(ValueError, match="finite"): energy_sts_correlation([1, 2, float("nan")], [3, 4, 5])
    with pytest.raises(TypeError): MemoEncoder(None)
    with pytest.raises(ValueError, match="pooling"): export_sentence_transformer(t.tower_1, tok, "/tmp/x", pooling="max")


# ---------------------------------------------------------------- training hygiene
def _cfg(**kw):
    return JTCSEConfig(**(dict(variant="jtcse", cael_every=1, lr=1e-3, batch_size=4, max_length=16, n_steps=5,
                               eval_every=0, ckpt_every=2, seed=3, data_seed=4) | kw))


def test_resume_equals_uninterrupted(tmp_path, tok):
    "JTCSE with CAEL: stop after step 3 (last checkpoint at step 2), resume from a fresh model, same final weights."
    cfg = _cfg()
    full = twin()
    train(cfg, full, tok, CORPUS, tmp_path / "full", progress=False)
    cut = twin()
    r = train(cfg, cut, tok, CORPUS, tmp_path / "cut", progress=False, stop_after=3)
    assert r.stopped_early and r.last_step == 3
    resumed = twin()
    train(cfg, resumed, tok, CORPUS, tmp_path / "cut", progress=False)
    for (n, a), b in zip(full.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), n
    la = [r for r in read_jsonl(tmp_path / "full" / "log.jsonl") if "loss" in r]
    lb = [r for r in read_jsonl(tmp_path / "cut" / "log.jsonl") if "loss" in r]
    assert [r["step"] for r in lb] == [1, 2, 3, 4, 5] and [r["loss"] for r in la] == [r["loss"] for r in lb]
    assert {"nce", "icnce", "icnce_cross", "ictm"} <= set(la[0])


def test_resume_refuses_other_run(tmp_path, tok):
    train(_cfg(n_steps=2), twin(), tok, CORPUS, tmp_path, progress=False)
    with pytest.raises(ValueError, match="belongs to a run"):
        train(_cfg(n_steps=3), twin(), tok, CORPUS, tmp_path, progress=False)


def _poison(t):
    with torch.no_grad(): t.tower_2.encoder.layer[0].output.dense.weight.fill_(float("nan"))
    return t


def test_nonfinite_stops_with_step(tmp_path, tok):
    with pytest.raises(NonFiniteLossError, match="step 1"):
        train(_cfg(variant="tncse", cael_every=None), _poison(twin()), tok, CORPUS, tmp_path, progress=False)


def test_nonfinite_skip(tmp_path, tok):
    r = train(_cfg(variant="tncse", cael_every=None, on_nonfinite="skip", n_steps=2), _poison(twin()), tok, CORPUS,
              tmp_path, progress=False)
    assert r.skipped_steps == 2


def test_distill_and_export(tmp_path, tok):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer
    teacher, (student, _) = twin(5), tiny_bert(9)
    before = copy.deepcopy(teacher.state_dict())
    train(JTCSEConfig(variant="distill", cael_every=None, lr=1e-3, batch_size=4, max_length=16, n_steps=2,
                      eval_every=0, ckpt_every=0), student, tok, CORPUS, tmp_path / "d", teacher=teacher, progress=False)
    assert all(torch.equal(before[k], v) for k, v in teacher.state_dict().items())       # teacher frozen
    export_sentence_transformer(student, tok, tmp_path / "st")
    st = SentenceTransformer(str(tmp_path / "st"), device="cpu")
    sents = ["a quick test", "another sentence here"]
    enc = tok(sents, padding=True, return_tensors="pt")
    student.eval()
    with torch.no_grad(): ours = student(**enc).last_hidden_state[:, 0].numpy()
    np.testing.assert_allclose(st.encode(sents, convert_to_numpy=True), ours, atol=1e-4)
