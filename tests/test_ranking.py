"Bad-input and edge-case tests of sentemb_lit.ranking (fast)."
import math, pytest, torch
from sentemb_lit import ranking as R

def test_refine_bad_inputs():
    with pytest.raises(TypeError): R.refine_similarity([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="square"): R.refine_similarity(torch.ones(1, 1))
    with pytest.raises(TypeError, match="floating"): R.refine_similarity(torch.ones(3, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="omega"): R.refine_similarity(torch.eye(3), omega=float("nan"))
    with pytest.raises(ValueError, match="index_mode"): R.refine_similarity(torch.eye(3), index_mode="abs")
    assert R.INDEX_MODES == ("paper", "official")

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


def official_listmle_by_hand(scores, target, perm) -> float:
    """The official ListMLE (allRank style) written out with Python floats: permute the columns, order each row by the
    target with torch's default descending sort, drop the items whose target is the padding value -1, subtract the row
    maximum, and add 1e-7 to every tail sum inside the log; the mean over rows of the per-row sums."""
    t_perm = target[:, perm]
    order = t_perm.sort(dim=-1, descending=True).indices        # the official tie-break: default (unstable) sort
    rows = []
    for r in range(scores.shape[0]):
        x = [float(scores[r, perm][j]) for j in order[r].tolist() if float(t_perm[r, j]) != -1.0]
        m = max(x)
        total = 0.0
        for p in range(len(x)):
            tail = sum(math.exp(v - m) for v in x[p:])
            total += math.log(tail + 1e-7) - (x[p] - m)
        rows.append(total)
    return sum(rows) / len(rows)


def exact_listmle(scores, order_rows) -> float:
    "Eq. 8 with exact log-sum-exp, for given per-row orders."
    out = []
    for r, order in enumerate(order_rows):
        x = [float(scores[r][j]) for j in order]
        out.append(sum(math.log(sum(math.exp(v) for v in x[p:])) - x[p] for p in range(len(x))))
    return sum(out) / len(out)


@pytest.mark.parametrize("K,scale,ties", [(5, 1.0, False), (6, 20.0, False), (33, 20.0, True), (20, 5.0, True)])
def test_official_form_matches_the_transcription(K, scale, ties):
    g = torch.Generator().manual_seed(K)
    scores = scale * torch.randn(4, K, generator=g, dtype=torch.float64)
    if ties:                                                     # the ranking-only target: symmetric ties
        j = torch.arange(K, dtype=torch.float64)
        target = -(j[None, :] - j[:, None]).abs()[:4]
    else:
        target = torch.randn(4, K, generator=g, dtype=torch.float64)
    perm = torch.randperm(K, generator=torch.Generator().manual_seed(11))
    got = R.listmle_loss(scores, target, torch.Generator().manual_seed(11), form="official")
    assert math.isclose(float(got), official_listmle_by_hand(scores, target, perm), rel_tol=1e-10, abs_tol=1e-10)
    # the paper form is Eq. 8 exactly, with the stable order after the same permutation
    stable = target[:, perm].argsort(dim=1, descending=True, stable=True)
    paper = R.listmle_loss(scores, target, torch.Generator().manual_seed(11), form="paper")
    by_hand = exact_listmle(scores[:, perm].tolist(), stable.tolist())
    assert math.isclose(float(paper), by_hand, rel_tol=1e-9)
    if scale >= 20 and not ties: assert float(got) - float(paper) > 1.0       # 1e-7 inside the log is not negligible


def test_official_tie_break_differs_from_stable_beyond_16_items():
    j = torch.arange(33, dtype=torch.float64)
    target = -(j[None, :] - j[:, None]).abs()
    scores = torch.randn(33, 33, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    g = lambda: torch.Generator().manual_seed(5)
    a = R.listmle_loss(scores, target, g(), form="official")
    b = R.listmle_loss(scores, target, g(), form="paper")
    assert abs(float(a) - float(b)) > 1e-6                       # different tie orders, not only the 1e-7


def test_forms_agree_for_well_spread_scores():
    s, t = torch.randn(5, 6, dtype=torch.float64), torch.randn(5, 6, dtype=torch.float64)
    g = lambda: torch.Generator().manual_seed(0)
    a, b = R.listmle_loss(s, t, g(), form="official"), R.listmle_loss(s, t, g(), form="paper")
    assert 0 <= float(a - b) < 1e-5


def test_posttrain_refuses_a_resume_with_another_config(tmp_path, data_root):
    "issue #22: ranking post-training goes through fit's config check (tau, chains, …); override continues"
    from sentemb_lit.models import tiny_bert
    from sentemb_lit.checkpoint import ConfigMismatchError
    chains = [["A man plays.", "A man plays a song.", "Someone sings."], ["Dogs run.", "Animals move.", "It rains."]]
    kw = dict(lr=1e-3, n_steps=3, ckpt_every=1, eval_every=None, dev0=0.5, dev_limit=20, progress=False)
    R.posttrain(chains, tmp_path, student=tiny_bert(seed=1), stop_after=2, **kw)
    with pytest.raises(ConfigMismatchError, match=r"config\.tau: 0\.05 → 0\.1"):
        R.posttrain(chains, tmp_path, student=tiny_bert(seed=1), **(kw | {"tau": 0.1}))
    with pytest.raises(ConfigMismatchError, match=r"config\.chains"):
        R.posttrain(chains[:1] + chains[:1], tmp_path, student=tiny_bert(seed=1), **kw)
    r = R.posttrain(chains, tmp_path, student=tiny_bert(seed=1), resume="override", **(kw | {"tau": 0.1}))
    assert r["fit"].last_step == 3
