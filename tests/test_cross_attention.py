"""Behaviour of sentemb_lit.jtcse.cross_attention: twin towers in lockstep with the propagating CAEL (tiny random
models)."""
import warnings
import matplotlib
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel
from sentemb_lit.jtcse.cross_attention import (CAELConfig, CAELWarning, INJECTIONS, cls_energy,
                                         layer_attention, lockstep_forward, plot_attention_sinks)
from sentemb_lit.jtcse.twin import TwinTowerEncoder
from sentemb_lit.jtcse.losses import jtcse_loss


def bert(seed=0, **over):
    torch.manual_seed(seed)
    kw = dict(vocab_size=50, hidden_size=16, num_hidden_layers=6, num_attention_heads=2, intermediate_size=32,
              max_position_embeddings=32) | over
    return BertModel(BertConfig(**kw)).eval()


def roberta(seed=0):
    torch.manual_seed(seed)
    return RobertaModel(RobertaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=32, max_position_embeddings=32, pad_token_id=1,
                                      type_vocab_size=1)).eval()


def batch():
    "A right-padded batch of 3 sentences (row 0 and 2 padded)."
    ids = torch.tensor([[2, 7, 8, 9, 3, 0, 0], [2, 11, 12, 13, 14, 15, 3], [2, 21, 3, 0, 0, 0, 0]])
    return ids, (ids != 0).long()


def interleaved():
    "The batch in the 2B layout of the losses (rows 2i, 2i+1 = sentence i)."
    ids, am = batch()
    return ids.repeat_interleave(2, 0), am.repeat_interleave(2, 0)


class Tok:
    "A minimal tokenizer stand-in: one id per word, [CLS]=2, [SEP]=3, right padding with 0."
    def __call__(self, sents, padding=True, truncation=True, max_length=32, return_tensors="pt"):
        rows = [[2] + [4 + (sum(map(ord, w)) % 40) for w in s.split()][: max_length - 2] + [3] for s in sents]
        L = max(map(len, rows))
        ids = torch.tensor([r + [0] * (L - len(r)) for r in rows])
        return {"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids)}

    def convert_ids_to_tokens(self, ids):
        return [f"t{int(i)}" for i in ids]


# ---- the main streams are the two models
@pytest.mark.parametrize("k,injection", [(None, "propagate"), (1, "propagate"), (2, "propagate"), (3, "propagate"),
                                         (6, "propagate"), (2, "side")])
def test_main_streams_equal_hf_forward(k, injection):
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", CAELWarning)
        o = lockstep_forward(m1, m2, ids, am, cael_k=k, injection=injection, output_hidden_states=True)
        for mine, m in ((o.tower_1, m1), (o.tower_2, m2)):
            ref = m(input_ids=ids, attention_mask=am, output_hidden_states=True)
            assert (mine.last_hidden_state - ref.last_hidden_state).abs().max() < 1e-5
            assert (mine.pooler_output - ref.pooler_output).abs().max() < 1e-5
            assert all((a - b).abs().max() < 1e-5 for a, b in zip(mine.hidden_states, ref.hidden_states))
    assert (o.c1 is None) == (k is None)
    if k:
        assert o.c1.shape == (3, 16) and torch.isfinite(o.c1).all()
        assert o.cael_layers == CAELConfig(k).layers(6) == tuple(range(k, 7, k))


def test_roberta_lockstep_equal():
    r1, r2 = roberta(1), roberta(2)
    ids = torch.tensor([[0, 5, 6, 7, 2, 1, 1], [0, 9, 10, 11, 12, 13, 2]])
    am = (ids != 1).long()
    with torch.no_grad():
        o = lockstep_forward(r1, r2, ids, am, cael_k=1)
        assert (o.tower_1.last_hidden_state - r1(input_ids=ids, attention_mask=am).last_hidden_state).abs().max() < 1e-5
        assert (o.tower_2.last_hidden_state - r2(input_ids=ids, attention_mask=am).last_hidden_state).abs().max() < 1e-5
        assert (o.c1 - o.l1).abs().max() > 1e-3


# ---- the propagating cross stream
def _by_hand(lay, x, lay_v, y, am):
    "Layer `lay` on x with the values of `lay_v` on y, from the raw weights (eval mode, exact GELU)."
    sa, n = lay.attention.self, lay.attention.self.num_attention_heads
    B, L, H = x.shape

    def heads(t):
        return t.view(B, L, n, H // n).transpose(1, 2)

    def lin(m, t):
        return t @ m.weight.T + m.bias

    def ln(m, t):
        return F.layer_norm(t, (H,), m.weight, m.bias, m.eps)

    q, k, v = heads(lin(sa.query, x)), heads(lin(sa.key, x)), heads(lin(lay_v.attention.self.value, y))
    s = (q @ k.transpose(-1, -2) / (H // n) ** 0.5).masked_fill(am[:, None, None, :] == 0, float("-inf"))
    ctx = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, L, H)
    a = ln(lay.attention.output.LayerNorm, lin(lay.attention.output.dense, ctx) + x)
    return ln(lay.output.LayerNorm, lin(lay.output.dense, F.gelu(lin(lay.intermediate.dense, a))) + a)


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_propagated_path_matches_hand_computation(k):
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with torch.no_grad():
        o = lockstep_forward(m1, m2, ids, am, cael_k=k, output_hidden_states=True)
        h, c = [m.embeddings(input_ids=ids) for m in (m1, m2)], None
        cross_at = []
        for j, (l1, l2) in enumerate(zip(m1.encoder.layer, m2.encoder.layer), start=1):
            c = list(h) if j == k else c                              # the cross streams branch off at j0 = k
            if c is not None and j % k == 0:                          # CAEL: the other cross stream's values
                c = [_by_hand(l1, c[0], l2, c[1], am), _by_hand(l2, c[1], l1, c[0], am)]
                cross_at.append(c)
            elif c is not None:
                c = [_by_hand(l1, c[0], l1, c[0], am), _by_hand(l2, c[1], l2, c[1], am)]
            h = [_by_hand(l1, h[0], l1, h[0], am), _by_hand(l2, h[1], l2, h[1], am)]
    assert len(o.tower_1.cross_layer_states) == len(cross_at) == 6 // k
    for mine, ref in zip(o.tower_1.cross_layer_states, cross_at):
        assert (mine - ref[0]).abs().max() < 1e-5
    for mine, ref in zip(o.tower_2.cross_layer_states, cross_at):
        assert (mine - ref[1]).abs().max() < 1e-5
    assert (o.c1 - c[0][:, 0]).abs().max() < 1e-5 and (o.c2 - c[1][:, 0]).abs().max() < 1e-5
    assert (o.tower_1.last_hidden_state - h[0]).abs().max() < 1e-5


def test_k_changes_cross_output_and_loss():
    m1, m2 = bert(1), bert(2)
    ids, am = interleaved()
    ks = (1, 2, 3, 6)
    with torch.no_grad():
        outs = {k: lockstep_forward(m1, m2, ids, am, cael_k=k) for k in ks}
    loss = {k: jtcse_loss(o.l1, o.l2, o.p1, o.p2, o.c1, o.c2, R=1)[0].item() for k, o in outs.items()}
    for a in ks:
        assert (outs[a].c1 - outs[a].l1).abs().max() > 1e-2        # the cross output is not the CLS state
        assert torch.equal(outs[a].l1, outs[1].l1)                  # the towers' own outputs do not depend on k
        for b in ks:
            if a < b:
                assert (outs[a].c1 - outs[b].c1).abs().max() > 1e-3, (a, b)
                assert (outs[a].c2 - outs[b].c2).abs().max() > 1e-3, (a, b)
                assert loss[a] != loss[b], (a, b, loss)


def test_side_last_cannot_depend_on_k_and_warns():
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with pytest.warns(CAELWarning, match="k cannot matter"):
        cfg = CAELConfig(1, injection="side")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", CAELWarning)
        c = [lockstep_forward(m1, m2, ids, am, cael_k=k, injection="side").c1 for k in (1, 2, 3, 6)]
        mean = [lockstep_forward(m1, m2, ids, am, cael_k=k, injection="side", expose="mean").c1 for k in (1, 6)]
    assert all(torch.equal(x, c[0]) for x in c)                     # the defect the propagating design removes
    assert (mean[0] - mean[1]).abs().max() > 1e-3                   # side + mean: k acts
    assert cfg.k == 1
    with pytest.warns(CAELWarning, match="repeats its CLS term"):
        CAELConfig(2, injection="add")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CAELWarning)
        CAELConfig(2)
        CAELConfig(2, injection="side", expose="mean")
        CAELConfig(None, injection="side")


@pytest.mark.parametrize("injection", INJECTIONS)
@pytest.mark.parametrize("k", [1, 3])
def test_tower_crossed_with_itself_is_its_own_stream(injection, k):
    "G^j(x, x) with one tower's weights is F^j(x), so c^O = h^L in every mode."
    m = bert(3)
    ids, am = batch()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", CAELWarning)
        o = lockstep_forward(m, m, ids, am, cael_k=k, injection=injection)
    assert (o.c1 - o.l1).abs().max() < 1e-5 and (o.c2 - o.l2).abs().max() < 1e-5


def test_add_mode_changes_streams_and_expose_mean():
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    with torch.no_grad():
        with pytest.warns(CAELWarning):
            add = lockstep_forward(m1, m2, ids, am, cael_k=2, injection="add")
        ref = m1(input_ids=ids, attention_mask=am).last_hidden_state
        assert (add.tower_1.last_hidden_state - ref).abs().max() > 1e-4
        assert torch.allclose(add.c1, add.l1, atol=1e-6)           # last layer is a CAEL: c^O = own output
        mean = lockstep_forward(m1, m2, ids, am, cael_k=2, expose="mean", output_hidden_states=True)
        assert len(mean.tower_1.cross_layer_states) == 3
        assert torch.allclose(mean.c1, torch.stack([x[:, 0] for x in mean.tower_1.cross_layer_states]).mean(0))


def _grad_sums(loss, *models):
    for m in models:
        m.zero_grad(set_to_none=True)
    loss.backward()
    return [{n: 0.0 if p.grad is None else p.grad.abs().sum().item() for n, p in m.named_parameters()}
            for m in models]


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_gradients_reach_both_towers_through_cross_path(k):
    m1, m2 = bert(1), bert(2)
    ids, am = batch()
    g1, g2 = _grad_sums(lockstep_forward(m1, m2, ids, am, cael_k=k).c1.pow(2).sum(), m1, m2)
    assert sum(g1.values()) > 0 and sum(g2.values()) > 0
    for j in CAELConfig(k).layers(6):                              # tower II's values enter c_I at every CAEL
        assert g2[f"encoder.layer.{j - 1}.attention.self.value.weight"] > 0
    assert g2["embeddings.word_embeddings.weight"] > 0
    g1, g2 = _grad_sums(lockstep_forward(m1, m2, ids, am, cael_k=k).l1.pow(2).sum(), m1, m2)
    assert sum(g1.values()) > 0 and sum(g2.values()) == 0           # the main streams stay independent


def test_no_new_parameters():
    m1, m2 = bert(1), bert(2)
    tw = TwinTowerEncoder(m1, m2, Tok(), cael=CAELConfig(k=2))
    assert sum(p.numel() for p in tw.parameters()) == 2 * sum(p.numel() for p in m1.parameters())
    assert tw.cael.injection == "propagate"


def test_cls_energy_and_plot():
    m = bert(1, num_hidden_layers=4)
    sents = ["a b c", "the cat sat on the mat", "one"]
    e = cls_energy(m, Tok(), sents, batch_size=2, show_progress=False)
    assert e.shape == (4,) and np.isfinite(e).all() and (e > 0).all()
    single = np.mean([cls_energy(m, Tok(), [s], show_progress=False) for s in sents], axis=0)
    assert np.allclose(e, single, atol=1e-5)                        # padding / batch composition change nothing
    mass = cls_energy(m, Tok(), sents, kind="attention_mass", show_progress=False)
    assert ((mass > 0) & (mass < 1)).all()
    backend = matplotlib.get_backend()
    fig = plot_attention_sinks(m, Tok(), "a b c d", layers=[1, 4], ncols=2)
    assert isinstance(fig, matplotlib.figure.Figure) and matplotlib.get_backend() == backend
    assert len([ax for ax in fig.axes if ax.images]) == 2
    matplotlib.pyplot.close(fig)
    m.train()
    layer_attention(m, *batch())
    assert m.training                                               # mode restored


def test_training_step_with_jtcse_loss():
    m1, m2 = bert(1).train(), bert(2).train()
    ids, am = interleaved()
    o = TwinTowerEncoder(m1, m2, Tok(), cael=CAELConfig(k=2)).lockstep(ids, am)
    loss, logs = jtcse_loss(o.l1, o.l2, o.p1, o.p2, o.c1, o.c2)
    loss.backward()
    assert torch.isfinite(loss) and logs["R"] in (0, 1) and logs["icnce_cross"] > 0
    for m in (m1, m2):
        assert all(p.grad is None or torch.isfinite(p.grad).all() for p in m.parameters())
        assert m.pooler.dense.weight.grad.abs().sum() > 0
