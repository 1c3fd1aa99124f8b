"Edge cases and bad inputs for sentemb_lit.cross_attention (tiny random models only: seconds)."
import numpy as np
import pytest
import torch
from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel
from sentemb_lit.cross_attention import (CAELConfig, TwinTowerCAEL, check_towers, cls_energy, layer_attention,
                                         lockstep_forward, plot_attention_sinks)


def bert(seed=0, **over):
    torch.manual_seed(seed)
    kw = dict(vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32,
              max_position_embeddings=32) | over
    return BertModel(BertConfig(**kw)).eval()


def roberta(seed=0):
    torch.manual_seed(seed)
    return RobertaModel(RobertaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=32, max_position_embeddings=32, pad_token_id=1,
                                      type_vocab_size=1)).eval()


def batch():
    ids = torch.tensor([[2, 7, 8, 9, 3, 0, 0], [2, 11, 12, 13, 14, 15, 3]])
    return ids, (ids != 0).long()


class Tok:
    "A minimal tokenizer stand-in: one id per word, [CLS]=2, [SEP]=3, right padding with 0."
    def __call__(self, sents, padding=True, truncation=True, max_length=32, return_tensors="pt"):
        rows = [[2] + [4 + (sum(map(ord, w)) % 40) for w in s.split()][: max_length - 2] + [3] for s in sents]
        L = max(map(len, rows))
        ids = torch.tensor([r + [0] * (L - len(r)) for r in rows])
        return {"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids)}

    def convert_ids_to_tokens(self, ids):
        return [f"t{int(i)}" for i in ids]


@pytest.mark.parametrize("k", [None, 1, 2, 4])
def test_side_mode_keeps_towers_exact(k):
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with torch.no_grad():
        o = lockstep_forward(m1, m2, ids, am, cael_k=k)
        for mine, m in ((o.tower1, m1), (o.tower2, m2)):
            ref = m(input_ids=ids, attention_mask=am)
            assert (mine.last_hidden_state - ref.last_hidden_state).abs().max() < 1e-5
            assert (mine.pooler_output - ref.pooler_output).abs().max() < 1e-5
    assert (o.C1 is None) == (k is None)
    if k:
        assert o.C1.shape == (2, 16) and torch.isfinite(o.C1).all()
        assert o.cael_layers == CAELConfig(k).layers(4)


def test_roberta_lockstep_equal():
    r1, r2 = roberta(1), roberta(2)
    ids = torch.tensor([[0, 5, 6, 7, 2, 1, 1], [0, 9, 10, 11, 12, 13, 2]])
    am = (ids != 1).long()
    with torch.no_grad():
        o = lockstep_forward(r1, r2, ids, am, cael_k=1)
        assert (o.tower1.last_hidden_state - r1(input_ids=ids, attention_mask=am).last_hidden_state).abs().max() < 1e-5
        assert (o.tower2.last_hidden_state - r2(input_ids=ids, attention_mask=am).last_hidden_state).abs().max() < 1e-5


def test_add_mode_changes_streams_and_expose_mean():
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with torch.no_grad():
        add = lockstep_forward(m1, m2, ids, am, cael_k=2, injection="add")
        ref = m1(input_ids=ids, attention_mask=am).last_hidden_state
        assert (add.tower1.last_hidden_state - ref).abs().max() > 1e-4
        assert torch.allclose(add.C1, add.L1, atol=1e-6)        # last layer is a CAEL: c = own output
        mean = lockstep_forward(m1, m2, ids, am, cael_k=2, expose="mean", output_hidden_states=True)
        assert len(mean.tower1.cross_layer_states) == 2
        assert torch.allclose(mean.C1, torch.stack([x[:, 0] for x in mean.tower1.cross_layer_states]).mean(0))


def test_no_new_parameters():
    m1, m2 = bert(1), bert(2)
    tw = TwinTowerCAEL(m1, m2, CAELConfig(k=2))
    assert sum(p.numel() for p in tw.parameters()) == 2 * sum(p.numel() for p in m1.parameters())


def test_validation_errors():
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with pytest.raises(ValueError, match="same architecture"): lockstep_forward(m1, roberta(), ids, am)
    with pytest.raises(ValueError, match="hidden_size"):
        lockstep_forward(m1, bert(3, hidden_size=32, intermediate_size=32), ids, am)
    with pytest.raises(TypeError, match="BERT-family"): check_towers(m1, torch.nn.Linear(1, 1))
    with pytest.raises(ValueError, match="must divide"): lockstep_forward(m1, m2, ids, am, cael_k=3)
    with pytest.raises(ValueError, match="must divide"): lockstep_forward(m1, m2, ids, am, cael_k=8)
    with pytest.raises(ValueError, match="positive int"): lockstep_forward(m1, m2, ids, am, cael_k=0)
    with pytest.raises(ValueError, match="positive int"): CAELConfig(k=True)
    with pytest.raises(ValueError, match="unknown injection"): lockstep_forward(m1, m2, ids, am, cael_k=2, injection="x")
    with pytest.raises(ValueError, match="unknown expose"): lockstep_forward(m1, m2, ids, am, cael_k=2, expose="x")
    with pytest.raises(ValueError, match="same shape"): lockstep_forward(m1, m2, ids, am[:, :3])
    with pytest.raises(ValueError, match="same shape"): lockstep_forward(m1, m2, ids, am, token_type_ids=am[:1])
    with pytest.raises(ValueError, match="integer"): lockstep_forward(m1, m2, ids.float(), am)
    with pytest.raises(ValueError, match="all padding"): lockstep_forward(m1, m2, ids, am * 0)
    with pytest.raises(ValueError, match="vocabulary"): lockstep_forward(m1, m2, ids + 100, am)
    with pytest.raises(ValueError, match="positions"): lockstep_forward(m1, m2, torch.ones(1, 64, dtype=torch.long))
    with pytest.raises(ValueError, match="decoder"):
        lockstep_forward(bert(1, is_decoder=True), bert(2, is_decoder=True), ids, am)
    with pytest.raises(TypeError, match="CAELConfig"): lockstep_forward(m1, m2, ids, am, cael={"k": 2})


def test_cls_energy_and_plot():
    m = bert(1)
    sents = ["a b c", "the cat sat on the mat", "one"]
    e = cls_energy(m, Tok(), sents, batch_size=2, show_progress=False)
    assert e.shape == (4,) and np.isfinite(e).all() and (e > 0).all()
    # per-sentence value does not depend on padding / batch composition
    single = np.mean([cls_energy(m, Tok(), [s], show_progress=False) for s in sents], axis=0)
    assert np.allclose(e, single, atol=1e-5)
    mass = cls_energy(m, Tok(), sents, kind="attention_mass", show_progress=False)
    assert ((mass > 0) & (mass < 1)).all()
    with pytest.raises(ValueError, match="unknown kind"): cls_energy(m, Tok(), sents, kind="x")
    with pytest.raises(ValueError): cls_energy(m, Tok(), [])
    with pytest.raises(ValueError): cls_energy(m, Tok(), ["ok", ""])
    fig = plot_attention_sinks(m, Tok(), "a b c d", layers=[1, 4], ncols=2)
    assert len([ax for ax in fig.axes if ax.images]) == 2
    with pytest.raises(ValueError, match="1-based"): plot_attention_sinks(m, Tok(), "a b", layers=[5])
    m.train()
    layer_attention(m, *batch())
    assert m.training                                           # mode restored


def test_training_step_with_jtcse_loss():
    from sentemb_lit.losses import jtcse_loss
    m1, m2 = bert(1).train(), bert(2).train()
    ids, am = batch()
    ids, am = ids.repeat_interleave(2, 0), am.repeat_interleave(2, 0)     # interleaved 2B layout
    o = TwinTowerCAEL(m1, m2, CAELConfig(k=2))(ids, am)
    loss, logs = jtcse_loss(o.L1, o.L2, o.P1, o.P2, o.C1, o.C2)
    loss.backward()
    assert torch.isfinite(loss) and logs["R"] in (0, 1)
    for m in (m1, m2):
        assert all(p.grad is None or torch.isfinite(p.grad).all() for p in m.parameters())
        assert m.pooler.dense.weight.grad.abs().sum() > 0
