"Edge cases and bad inputs for sentemb_lit.jtcse.losses (fast: well under a second each)."
import math
import pytest
import torch
from sentemb_lit.jtcse.losses import (tmc_loss, tmc_loss_kt, info_nce, cross_info_nce, icnce, tmc_dynamic, ictm_loss,
                                jtcse_loss, TABLE_X_ABLATIONS)

D = torch.float64


def rnd(*shape, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=D, generator=g).requires_grad_(grad)


def finite(x):
    return bool(torch.isfinite(torch.as_tensor(x)).all())


# ---- L_TMC known values and forms
def test_tmc_known_values():
    h = rnd(5, 4)
    assert torch.allclose(tmc_loss(h, h, reduction="none"), torch.zeros(5, dtype=D))
    assert torch.allclose(tmc_loss(h, -h, reduction="none"), torch.ones(5, dtype=D))
    assert torch.allclose(tmc_loss(h, 0 * h, reduction="none"), torch.ones(5, dtype=D))
    assert torch.allclose(tmc_loss(0 * h, h, reduction="none"), torch.ones(5, dtype=D))
    z = torch.zeros(3, 4, dtype=D)
    assert torch.equal(tmc_loss(z, z, reduction="none"), torch.zeros(3, dtype=D))


def test_tmc_forms_agree():
    h, hp = rnd(200, 16, seed=1) * 3, rnd(200, 16, seed=2) * 0.2
    k = hp.norm(dim=-1) / h.norm(dim=-1)
    t = torch.nn.functional.cosine_similarity(h, hp, dim=-1).clamp(-1, 1)
    assert (tmc_loss(h, hp, reduction="none") - tmc_loss_kt(k, t)).abs().max() < 1e-6


def test_tmc_scale_invariant_and_bounded():
    h, hp = rnd(50, 8, seed=3), rnd(50, 8, seed=4)
    v = tmc_loss(h, hp, reduction="none")
    assert ((v >= 0) & (v <= 1)).all()
    assert torch.allclose(tmc_loss(1e3 * h, 1e3 * hp, reduction="none"), v)


def test_tmc_kt_minimum_and_errors():
    assert tmc_loss_kt(1.0, 1.0).item() == 0.0
    assert math.isclose(tmc_loss_kt(0.0, -0.2).item(), 1.0, rel_tol=1e-7)
    with pytest.raises(ValueError, match=">= 0"): tmc_loss_kt(-0.1, 0.5)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"): tmc_loss_kt(1.0, -1.01)
    with pytest.raises(ValueError, match="finite"): tmc_loss_kt(float("nan"), 0.0)


def test_tmc_zero_gradient_finite():
    z = torch.zeros(2, 4, dtype=D, requires_grad=True)
    tmc_loss(z, torch.zeros(2, 4, dtype=D)).backward()
    assert finite(z.grad)
    h = rnd(4, seed=5)
    hh = h.clone().requires_grad_(True)
    tmc_loss(hh, h).backward()                     # exactly at the kink: torch's subgradient 0
    assert torch.equal(hh.grad, torch.zeros(4, dtype=D))


def test_tmc_bad_inputs():
    h = rnd(3, 4)
    with pytest.raises(ValueError, match="same shape"): tmc_loss(h, h[:2])
    with pytest.raises(TypeError, match="floating-point"): tmc_loss(h.long(), h.long())
    with pytest.raises(TypeError, match="same dtype"): tmc_loss(h, h.float())
    with pytest.raises(ValueError, match="NaN"): tmc_loss(h, torch.full_like(h, float("nan")))
    with pytest.raises(ValueError, match="empty"): tmc_loss(torch.zeros(0, 4), torch.zeros(0, 4))
    with pytest.raises(ValueError, match="reduction"): tmc_loss(h, h, reduction="max")
    with pytest.raises(ValueError, match="eps"): tmc_loss(h, h, eps=0)
    with pytest.raises(TypeError, match="torch.Tensor"): tmc_loss([1.0], [1.0])


# ---- InfoNCE
@pytest.mark.parametrize("B", [1, 2, 5])
@pytest.mark.parametrize("tau", [0.05, 0.5])
def test_info_nce_analytic(B, tau):
    e = torch.eye(2 * B, dtype=D)[:B]
    x = e.repeat_interleave(2, dim=0)
    expected_2b, expected_b = math.log1p((2 * B - 2) * math.exp(-1 / tau)), math.log1p((B - 1) * math.exp(-1 / tau))
    assert math.isclose(info_nce(x, temperature=tau).item(), expected_2b, rel_tol=1e-9, abs_tol=1e-15)
    assert math.isclose(info_nce(e, e, temperature=tau, layout="b").item(), expected_b, rel_tol=1e-9, abs_tol=1e-15)


def test_info_nce_zero_rows_and_bad_inputs():
    x = rnd(6, 4)
    x = x.clone()
    x[2] = 0
    x.requires_grad_(True)
    loss = info_nce(x)
    loss.backward()
    assert finite(loss) and finite(x.grad)
    y = rnd(6, 4).detach()
    with pytest.raises(ValueError, match="even number of rows"): info_nce(y[:5])
    with pytest.raises(ValueError, match="2-D"): info_nce(y[0])
    with pytest.raises(ValueError, match="needs both views"): info_nce(y, layout="b")
    with pytest.raises(ValueError, match="layout"): info_nce(y, layout="4b")
    with pytest.raises(ValueError, match="temperature"): info_nce(y, temperature=-1)
    with pytest.raises(TypeError, match="floating-point"): info_nce(y.int())


def test_gradchecks():
    a, b, c, d, e, f = (rnd(6, 5, seed=s, grad=True) for s in range(6))
    assert torch.autograd.gradcheck(lambda x, y: tmc_loss(x, y, reduction="none"), (a, b))
    k = (torch.rand(7, dtype=D) * 2 + 0.1).requires_grad_(True)
    t = (torch.rand(7, dtype=D) * 1.6 - 0.8).requires_grad_(True)
    assert torch.autograd.gradcheck(tmc_loss_kt, (k, t))
    assert torch.autograd.gradcheck(lambda x: info_nce(x, temperature=0.3), (a,))
    assert torch.autograd.gradcheck(lambda x, y: info_nce(x, y, temperature=0.3, layout="b"), (a, b))
    assert torch.autograd.gradcheck(lambda x, y: cross_info_nce(x, y, temperature=0.3), (a, b))
    assert torch.autograd.gradcheck(lambda x, y, z, w: icnce(x, y, z, w, R="both", temperature=0.3)[0], (a, b, c, d))
    assert torch.autograd.gradcheck(lambda x, y, z, w: ictm_loss(x, y, z, w)[0], (a, b, c, d))
    assert torch.autograd.gradcheck(lambda x, y, z, w: ictm_loss(x, y, z, w, negative_cos="softplus")[0], (a, b, c, d))
    assert torch.autograd.gradcheck(lambda *z: jtcse_loss(*z, temperature=0.3, R=1)[0], (a, b, c, d, e, f))


# ---- ICNCE / ICTM / total
def test_icnce_directions_and_errors():
    h1, h2 = rnd(8, 4, seed=1), rnd(8, 4, seed=2)
    assert torch.allclose(icnce(h1, h2, R=1)[0], cross_info_nce(h1, h2))
    assert torch.allclose(icnce(h1, h2, R=0)[0], cross_info_nce(h2, h1))
    with pytest.raises(ValueError, match="R must be"): icnce(h1, h2, R=True)
    with pytest.raises(ValueError, match="both cross outputs"): icnce(h1, h2, c2=h1)
    with pytest.raises(ValueError, match="even number of rows"): cross_info_nce(h1[:7], h2[:7])


def test_ictm_negative_cos_clamp_no_nan():
    l1 = rnd(6, 4, seed=3)
    p1, p2 = rnd(6, 4, seed=4), rnd(6, 4, seed=5)
    l2 = -l1[[1, 0, 3, 2, 5, 4]]                   # every cross pair has cosine exactly -1
    loss, _ = ictm_loss(l1, l2, p1, p2)
    expected = -math.log(1e-4) * (tmc_loss(p1[0::2], p2[1::2], reduction="none") / 2).mean() \
               - math.log(1e-4) * (tmc_loss(p2[0::2], p1[1::2], reduction="none") / 2).mean()
    assert torch.allclose(loss, expected)
    assert finite(ictm_loss(l1, l2, p1, p2, negative_cos="softplus")[0])
    z = torch.zeros(4, 3, dtype=D)
    assert ictm_loss(z, z, z, z)[0].item() == 0.0


def test_ictm_bad_inputs():
    a = rnd(6, 4)
    with pytest.raises(ValueError, match="even number of rows"): ictm_loss(a[:5], a[:5], a[:5], a[:5])
    with pytest.raises(ValueError, match="same number of rows"): ictm_loss(a, a, a[:4], a[:4])
    with pytest.raises(ValueError, match="negative_cos"): ictm_loss(a, a, a, a, negative_cos="abs")
    with pytest.raises(ValueError, match="cos_source"): ictm_loss(a, a, a, a, cos_source="mean")
    with pytest.raises(ValueError, match="clamp_value"): ictm_loss(a, a, a, a, clamp_value=0.0)


def test_jtcse_presets_and_logs():
    t = [rnd(8, 4, seed=s) for s in range(6)]
    for name, use in TABLE_X_ABLATIONS.items():
        total, logs = jtcse_loss(*t, terms=name, R=0)
        assert math.isclose(total.item(), logs["nce"] + logs["icnce"] + logs["ictm"], rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(logs["loss"], total.item(), rel_tol=1e-12)
        for term in ("nce", "icnce", "ictm"):
            assert (logs[term] != 0.0) == (term in use)
    with pytest.raises(ValueError, match="pooler"): jtcse_loss(t[0], t[1], terms="ictm")
    with pytest.raises(ValueError, match="unknown"): jtcse_loss(*t, terms="everything")
    with pytest.raises(ValueError, match="same shape"): jtcse_loss(t[0], t[1][:, :3], terms="nce")
