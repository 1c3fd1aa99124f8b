"Bad-input and edge-case tests of sentemb_lit.ranking.posttraining (fast)."
import inspect, math, pytest, torch
import sentemb_lit.ranking.posttraining as R
import sentemb_lit.ranking.runs as RR

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
    with pytest.raises(ValueError, match="no chains"): RR.posttrain([], tmp_path)
    with pytest.raises(ValueError, match="empty"): RR.posttrain([["a", " "]], tmp_path)
    with pytest.raises(ValueError, match="lr"): RR.posttrain([["a", "b"]], tmp_path, lr=float("nan"))


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
    from sentemb_lit.core.tiny_models import tiny_bert
    from sentemb_lit.core.checkpoint import ConfigMismatchError
    chains = [["A man plays.", "A man plays a song.", "Someone sings."], ["Dogs run.", "Animals move.", "It rains."]]
    kw = dict(lr=1e-3, n_steps=3, ckpt_every=1, eval_every=None, dev0=0.5, dev_limit=20, progress=False)
    RR.posttrain(chains, tmp_path, student=tiny_bert(seed=1), stop_after=2, **kw)
    with pytest.raises(ConfigMismatchError, match=r"config\.tau: 0\.05 → 0\.1"):
        RR.posttrain(chains, tmp_path, student=tiny_bert(seed=1), **(kw | {"tau": 0.1}))
    with pytest.raises(ConfigMismatchError, match=r"config\.chains"):
        RR.posttrain(chains[:1] + chains[:1], tmp_path, student=tiny_bert(seed=1), **kw)
    r = RR.posttrain(chains, tmp_path, student=tiny_bert(seed=1), resume="override", **(kw | {"tau": 0.1}))
    assert r["fit"].last_step == 3


# ---- issue 26: the official forms bit for bit, against re-statements of the official algorithms (written here) ----

def restated_official_refine(A: torch.Tensor, w: float, stable: bool = False) -> torch.Tensor:
    """Official Algorithm 1, element by element: per row i, argsort of -A[i, i:] (default sort unless `stable`); the
    element at relative index j-i: its sorted position p, the value at sorted position j-i; sign -1 if p < j (the
    absolute column) else +1; B mirrored; result sign(B)·log(w|B| + 1) + A, all in A's dtype."""
    K, B = A.shape[0], torch.zeros_like(A)
    for i in range(K):
        part = A[i, i:]
        pos = torch.argsort(-part, stable=stable)
        for j in range(i, K):
            p = int((pos == j - i).nonzero()[0, 0])
            B[i, j] = (-1 if p < j else 1) * abs(A[i, j] - part[pos][j - i])
    for i in range(K):
        for j in range(i + 1, K): B[j, i] = B[i, j]
    return torch.sign(B) * torch.log(w * torch.abs(B) + 1) + A


def restated_official_listmle(y_pred: torch.Tensor, y_true: torch.Tensor, mask_padding: bool = True) -> torch.Tensor:
    "Official ListMLE: randperm shuffle (global RNG), default descending sort of the target, -1 masked, max shift, eps."
    perm = torch.randperm(y_pred.shape[-1])
    p, t = y_pred[:, perm], y_true[:, perm]
    t_sorted, order = t.sort(descending=True, dim=-1)
    masked = t_sorted == -1 if mask_padding else torch.zeros_like(t_sorted, dtype=torch.bool)
    x = torch.gather(p, 1, order)
    x[masked] = float("-inf")
    x = x - x.max(dim=1, keepdim=True).values
    cums = torch.cumsum(x.exp().flip(dims=[1]), dim=1).flip(dims=[1])
    obs = torch.log(cums + 1e-7) - x
    obs[masked] = 0.0
    return obs.sum(dim=1).mean()


def fp16_teacher(K: int, g: torch.Generator, ties: bool) -> torch.Tensor:
    x = torch.nn.functional.normalize(torch.randn(K, 4 if ties else 16, generator=g), dim=1).half()
    phi = ((x @ x.T) / 0.05).half()
    return ((phi * 2).round() / 2).half() if ties else phi


def test_official_refine_equals_the_official_algorithm_on_104_fp16_matrices():
    g = torch.Generator().manual_seed(2026)
    differ, stable_differs = [], 0
    for n in range(104):
        phi = fp16_teacher(17 + n % 24, g, ties=n % 2 == 0)                  # K = 17..40, every other one tied
        for A, w in ((phi, 0.5), (phi.float(), 0.7), (phi.double(), 0.1)):
            if not torch.equal(R.refine_similarity(A, w, "official"), restated_official_refine(A, w)): differ.append(n)
        stable_differs += not torch.equal(restated_official_refine(phi, 0.5, stable=True),
                                          restated_official_refine(phi, 0.5))
    assert differ == []
    assert stable_differs > 10                    # the ties are real: a stable sort would give another Φ̂


def test_official_listmle_equals_the_official_loss_with_padding():
    g = torch.Generator().manual_seed(2027)
    differ, padding_changes = [], 0
    for n in range(104):
        K = 17 + n % 24
        x = torch.nn.functional.normalize(torch.randn(K, 16, generator=g), dim=1)
        rank_only = n % 2 == 0
        T = R.ranking_target(fp16_teacher(K, g, True), "rank") if rank_only else \
            R.refine_similarity(fp16_teacher(K, g, n % 4 == 1), 0.5, "official")
        if rank_only: assert int((T == -1).sum()) == 2 * (K - 1)                 # the -1s beside the diagonal
        for dt in (torch.float16, torch.float32, torch.float64):
            S, Tt = ((x @ x.T) / 0.05).to(dt), T.to(dt)
            torch.manual_seed(n)
            ours = R.listmle_loss(S, Tt, form="official")
            torch.manual_seed(n)
            if not torch.equal(ours, restated_official_listmle(S, Tt)): differ.append((n, dt))
            torch.manual_seed(n)
            padding_changes += rank_only and not torch.equal(ours, restated_official_listmle(S, Tt, False))
    assert differ == []
    assert padding_changes == 52 * 3              # every rank-only target: the mask is what makes them equal


def word_level_teacher(sentences):
    """A tiny random BERT over a word-level vocabulary of `sentences` (another vocabulary than MiniLM's) and its
    tokenizer."""
    import tempfile
    from pathlib import Path
    from transformers import BertConfig, BertModel, BertTokenizerFast
    words = sorted({w.strip(".").lower() for s in sentences for w in s.split()})
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words) + "\n")
        tok = BertTokenizerFast(vocab_file=str(Path(d) / "vocab.txt"))
    torch.manual_seed(3)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32)
    return BertModel(cfg).eval(), tok


def test_a_teacher_with_another_vocabulary_gets_its_own_tokenization(tmp_path, data_root):
    from sentemb_lit.core.tiny_models import tiny_bert
    chains = [["A man plays.", "A man plays a song.", "Someone sings."], ["Dogs run.", "Animals move.", "It rains."]]
    tenc, ttok = word_level_teacher([s for c in chains for s in c])
    student, stok = tiny_bert(seed=1)
    assert not R.same_tokenizer(ttok, stok)
    st, te = R.RankStudent(student, "cls").eval(), R.RankStudent(tenc, "mean", mlp=False)
    with torch.no_grad():
        tb = ttok(chains[0], padding=True, truncation=True, max_length=32, return_tensors="pt")
        t = te(tb["input_ids"], tb["attention_mask"])
        sb = stok(chains[0], padding=True, truncation=True, max_length=32, return_tensors="pt")
        z = st(sb["input_ids"], sb["attention_mask"])
        want = R.listmle_loss(R.cos_matrix(z, z) / 0.05,
                              R.ranking_target((R.cos_matrix(t, t) / 0.05).double()).float(),
                              generator=torch.Generator().manual_seed(0))
        got = R.chain_loss(st, te, stok, chains[0], generator=torch.Generator().manual_seed(0),
                           teacher_tokenizer=ttok)[0]
    assert math.isclose(float(got), float(want), rel_tol=1e-6)
    r = RR.posttrain(chains, tmp_path, student=(student, stok), teacher=(tenc, ttok), teacher_pooling="mean",
                    lr=1e-3, n_steps=2, eval_every=None, dev0=0.5, dev_limit=20, progress=False)
    assert r["fit"].last_step == 2 and r["teacher_fingerprint"] == RR.weights_fingerprint(tenc)


def test_the_lr_is_picked_by_dev_never_by_test():
    runs = {3e-6: {"best_dev": 70.0, "scores": {"avg": 90.0}}, 1e-5: {"best_dev": 75.0, "scores": {"avg": 10.0}},
            3e-5: {"best_dev": 75.0, "scores": {"avg": 95.0}}}
    assert RR.pick_by_dev(runs) == 1e-5
    assert RR.LR_GRID == (3e-6, 1e-5, 3e-5)
    assert inspect.signature(RR.posttrain).parameters["lr"].default == 3e-6
