"Bad-input and edge-case tests of sentemb_lit.ranking (fast)."
import math, pytest, torch
from sentemb_lit import ranking as R

def test_refine_bad_inputs():
    with pytest.raises(TypeError): R.refine_similarity([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="square"): R.refine_similarity(torch.ones(1, 1))
    with pytest.raises(TypeError, match="floating"): R.refine_similarity(torch.ones(3, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="omega"): R.refine_similarity(torch.eye(3), omega=float("nan"))
    with pytest.raises(ValueError, match="index_mode"): R.refine_similarity(torch.eye(3), index_mode="abs")

def test_refine_symmetric_and_identity_on_ranked():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 4, generator=g, dtype=torch.float64)
    phi = torch.nn.functional.normalize(x, dim=1) @ torch.nn.functional.normalize(x, dim=1).T / 0.05
    for mode in R.INDEX_MODES:
        out = R.refine_similarity(phi, 0.5, mode)
        assert torch.allclose(out, out.T) and torch.isfinite(out).all()
        assert torch.allclose(torch.diagonal(out), torch.diagonal(phi))     # the diagonal is rank 0 in its own row

def test_listmle_bad_inputs_and_reductions():
    s, t = torch.randn(3, 4), torch.randn(3, 4)
    with pytest.raises(ValueError, match="one shape"): R.listmle_loss(s, t[:, :3])
    with pytest.raises(ValueError, match="at least 2"): R.listmle_loss(s[:, :1], t[:, :1])
    with pytest.raises(ValueError, match="reduction"): R.listmle_loss(s, t, reduction="max")
    with pytest.raises(TypeError): R.listmle_loss(s.numpy(), t)
    g = lambda: torch.Generator().manual_seed(0)
    none = R.listmle_loss(s, t, g(), "none")
    assert none.shape == (3,) and math.isclose(float(R.listmle_loss(s, t, g(), "sum")), float(none.sum()), rel_tol=1e-6)

def test_target_modes():
    phi = torch.eye(4, dtype=torch.float64)
    with pytest.raises(ValueError, match="Unknown target"): R.ranking_target(phi, "x")
    assert R.ranking_target(phi, "rank")[0].tolist() == [0.0, -1.0, -2.0, -3.0]

def test_posttrain_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="no chains"): R.posttrain([], tmp_path)
    with pytest.raises(ValueError, match="empty"): R.posttrain([["a", " "]], tmp_path)
    with pytest.raises(ValueError, match="lr"): R.posttrain([["a", "b"]], tmp_path, lr=float("nan"))
