"""Bad inputs to the public API of sentemb_lit.jtcse.twin, .jtcse_step, .jtcse and the JTCSE cost measures: each raises
a clear ValueError/TypeError naming the input."""
import numpy as np, pytest, torch
from sentemb_lit.core.store import KeyedStore
from sentemb_lit.core.tiny_models import tiny_bert
from sentemb_lit.jtcse.twin import TwinTowerEncoder, TwinTowerModel, export_sentence_transformer
from sentemb_lit.jtcse.step import (JTCSEConfig, SimCSEHead, official_config, positive_index, two_view_batch,
                                    make_loss_fn, set_dropout)
from sentemb_lit.jtcse.train import (TowerPoolings, MemoEncoder, batch_sentences, make_batch_at, train, run_stage,
                               run_sts, model_fingerprint, sts_fingerprint, inference_encoder, load_model)
from sentemb_lit.bench import inference_macs, bert_macs, model_cls_energy, energy_sts_correlation
from sentemb_lit.core.models import sentences_of as texts_of

CORPUS = [f"sentence number {i} about topic {i % 5}" for i in range(20)]


@pytest.fixture(scope="module")
def parts():
    (m1, tok), (m2, _) = tiny_bert(0), tiny_bert(1)
    return m1, m2, tok, TwinTowerEncoder(m1, m2, tok, max_length=32)


CONFIG_CASES = [
    (dict(variant="sbert"), ValueError, "variant"),
    (dict(lr=-1.0), ValueError, "lr"),
    (dict(temperature=0.0), ValueError, "temperature"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(batch_size=1), ValueError, "batch_size must be >= 2 for variant 'jtcse'.*identically 0"),
    (dict(n_steps=2.5), ValueError, "n_steps"),
    (dict(max_length=1), ValueError, "max_length"),
    (dict(eval_every=-3), ValueError, "eval_every"),
    (dict(dropout=1.5), ValueError, "dropout"),
    (dict(cael_every=0), ValueError, "cael_every"),
    (dict(cael_injection="inject"), ValueError, "cael_injection"),
    (dict(nce_layout="4b"), ValueError, "nce_layout"),
    (dict(terms=("nce", "mlm")), ValueError, "terms"),
    (dict(on_nonfinite="ignore"), ValueError, "on_nonfinite"),
    (dict(distill_target_scale=-1), ValueError, "distill_target_scale"),
    (dict(variant="tncse", cael_every=None, mlp_only_train=True), ValueError, "mlp_only_train"),
]


@pytest.mark.parametrize("kw, err, name", CONFIG_CASES, ids=[c[2] for c in CONFIG_CASES])
def test_config_bad(kw, err, name):
    with pytest.raises(err, match=name):
        JTCSEConfig(**kw)


def _cases(parts):
    m1, m2, tok, tw = parts
    store = KeyedStore("unused-store-never-written")
    return {
        "official variant": (lambda: official_config("bert"), ValueError, "variant"),
        "positive_index odd": (lambda: positive_index(5), ValueError, "n_rows"),
        "two_view empty": (lambda: two_view_batch(tok, []), ValueError, "sentences"),
        "two_view max_length": (lambda: two_view_batch(tok, ["a b"], max_length=1), ValueError, "max_length"),
        "two_view tokenizer": (lambda: two_view_batch(None, ["a b"]), TypeError, "tokenizer"),
        "twin tower_2 type": (lambda: TwinTowerEncoder(m1, torch.nn.Linear(2, 2), tok), TypeError, "tower_2"),
        "twin same object": (lambda: TwinTowerEncoder(m1, m1, tok), ValueError, "tower_1 and tower_2"),
        "twin max_length": (lambda: TwinTowerEncoder(m1, m2, tok, max_length=0), ValueError, "max_length"),
        "twin tokenizer": (lambda: TwinTowerEncoder(m1, m2, "bert-base"), TypeError, "tokenizer"),
        "encode batch_size": (lambda: tw.encode(["a b"], batch_size=0), ValueError, "batch_size"),
        "encode int input": (lambda: tw.encode(123), TypeError, "sentences"),
        "encode empty str": (lambda: tw.encode(["fine", " "]), ValueError, r"sentences\[1\]"),
        "encode precision": (lambda: tw.encode(["a b"], precision="int8"), ValueError, "precision"),
        "encode output_value": (lambda: tw.encode(["a b"], output_value="token_embeddings"), ValueError,
                                "output_value"),
        "encode bad batch": (lambda: tw.encode([[1, 2]]), TypeError, r"sentences\[0\]"),
        "sentences_of number": (lambda: texts_of(3), TypeError, "sentences"),
        "sentences_of batch without text": (lambda: texts_of([{"txt": ["a"]}]), TypeError, "batch 0"),
        "pairwise shapes": (lambda: tw.similarity_pairwise(np.ones((2, 3)), np.ones((3, 3))), ValueError,
                            "embeddings1"),
        "similarity empty": (lambda: tw.similarity(np.ones((0, 3)), np.ones((2, 3))), ValueError, "embeddings1"),
        "export pooling": (lambda: export_sentence_transformer(m1, tok, "export-never-written", pooling="max"),
                           ValueError, "pooling"),
        "export max_seq_length": (lambda: export_sentence_transformer(m1, tok, "export-never-written",
                                                                      max_seq_length=0),
                                  ValueError, "max_seq_length"),
        "export model type": (lambda: export_sentence_transformer(torch.nn.Linear(2, 2), tok, "export-never-written"),
                              TypeError, "model"),
        "export tokenizer": (lambda: export_sentence_transformer(m1, None, "export-never-written"), TypeError,
                             "tokenizer"),
        "TwinTowerModel from tower": (lambda: TwinTowerModel.from_twin(m1), TypeError, "twin"),
        "batch_sentences step": (lambda: batch_sentences(CORPUS, 4, 0), ValueError, "step"),
        "batch_sentences batch_size": (lambda: batch_sentences(CORPUS, 0, 1), ValueError, "batch_size"),
        "batch_sentences small corpus": (lambda: batch_sentences(CORPUS[:2], 4, 1), ValueError, "batch_size"),
        "make_batch_at config": (lambda: make_batch_at(CORPUS, tok, {"batch_size": 4}), TypeError, "config"),
        "make_batch_at corpus": (lambda: make_batch_at(CORPUS + [""], tok, JTCSEConfig()), ValueError, "corpus"),
        "SimCSEHead size": (lambda: SimCSEHead(0), ValueError, "hidden_size"),
        "SimCSEHead init_std": (lambda: SimCSEHead(8, init_std=0), ValueError, "init_std"),
        "loss_fn head missing": (lambda: make_loss_fn(JTCSEConfig(variant="simcse", cael_every=None), m1), TypeError,
                                 "head"),
        "loss_fn head extra": (lambda: make_loss_fn(JTCSEConfig(variant="tncse", cael_every=None), tw,
                                                    head=SimCSEHead(32)), ValueError, "head"),
        "loss_fn head size": (lambda: make_loss_fn(JTCSEConfig(variant="simcse", cael_every=None), m1,
                                                   head=SimCSEHead(8)), ValueError, "head size"),
        "loss_fn twin for tower": (lambda: make_loss_fn(JTCSEConfig(variant="tncse", cael_every=None), m1), TypeError,
                                   "TwinTowerEncoder"),
        "loss_fn config": (lambda: make_loss_fn("jtcse", tw), TypeError, "config"),
        "loss_fn interval": (lambda: make_loss_fn(JTCSEConfig(cael_every=3), tw), ValueError, "k=3"),
        "set_dropout p": (lambda: set_dropout(m1, 1.5), ValueError, "p "),
        "set_dropout model": (lambda: set_dropout("bert", 0.1), TypeError, "model"),
        "train config": (lambda: train({"variant": "jtcse"}, tw, tok, CORPUS, "export-never-written"), TypeError,
                         "config"),
        "run_stage store": (lambda: run_stage("store-never-written", "s", JTCSEConfig(), lambda: (tw, tok), CORPUS),
                            TypeError, "store"),
        "run_stage init": (lambda: run_stage(store, "s", JTCSEConfig(), tw, CORPUS), TypeError, "init"),
        "run_sts model_fp": (lambda: run_sts(store, "e", tw.encode, "abc"), ValueError, "model_fp"),
        "run_sts encode": (lambda: run_sts(store, "e", "encode", "0" * 64), TypeError, "encode"),
        "run_sts what": (lambda: run_sts(store, "e", tw.encode, "0" * 64, what=""), ValueError, "what"),
        "sts_fingerprint tasks": (lambda: sts_fingerprint(("sts99",)), ValueError, "tasks"),
        "sts_fingerprint variant": (lambda: sts_fingerprint(variant="raw"), ValueError, "variant"),
        "model_fingerprint": (lambda: model_fingerprint({"w": 1}), TypeError, "model"),
        "TowerPoolings pooling": (lambda: TowerPoolings(m1, tok)(["a b"], "max"), ValueError, "pooling"),
        "TowerPoolings batch_size": (lambda: TowerPoolings(m1, tok, batch_size=0), ValueError, "batch_size"),
        "inference_macs seq_len": (lambda: inference_macs(tw, 0), ValueError, "seq_len"),
        "inference_macs too long": (lambda: inference_macs(m1, 100000), ValueError, "seq_len"),
        "bert_macs config": (lambda: bert_macs(None), TypeError, "config"),
        "model_cls_energy model": (lambda: model_cls_energy("bert", tok, ["a b"]), TypeError, "model"),
        "energy lengths": (lambda: energy_sts_correlation([1, 2, 3], [1, 2]), ValueError, "energies"),
        "energy finite": (lambda: energy_sts_correlation([1, 2, np.nan], [1, 2, 3]), ValueError, "finite"),
        "MemoEncoder": (lambda: MemoEncoder(None), TypeError, "encode"),
        "inference_encoder tokenizer": (lambda: inference_encoder(m1), ValueError, "tokenizer"),
        "load_model folder type": (lambda: load_model(3), TypeError, "folder"),
        "load_model missing": (lambda: load_model("/nonexistent/twin"), FileNotFoundError, "/nonexistent/twin"),
    }


CASE_NAMES = list(_cases((None, None, None, None)).keys())


@pytest.mark.parametrize("case", CASE_NAMES)
def test_api_bad(parts, case):
    fn, err, name = _cases(parts)[case]
    with pytest.raises(err, match=name):
        fn()
