"""Bad inputs to sentemb_lit.ranking.posttraining and its runs (sentemb_lit.ranking.runs), the guided decoder
(sentemb_lit.ranking.decoding), the chains (sentemb_lit.ranking.chains) and the ranking-chain job (sentemb_lit.cli):
each gives a clear error of the right type whose message names the offending argument or file."""
import json, math, shutil
from pathlib import Path
import numpy as np
import pytest, torch
import sentemb_lit.ranking.posttraining as R
import sentemb_lit.ranking.runs as RR
import sentemb_lit.ranking.chains as C
import sentemb_lit.ranking.decoding as D
from sentemb_lit.cli import generate_ranking_main
from sentemb_lit.core.io import CorruptFileError, IntegrityError, LockedError, exclusive, write_json_verified
from sentemb_lit.core.tiny_models import tiny_bert, tiny_llama

PHI = torch.eye(4, dtype=torch.float64) * 20
S, T = torch.randn(3, 4), torch.randn(3, 4)
nan_ = float("nan")


@pytest.mark.parametrize("kw,err,msg", [
    (dict(phi=[[1.0, 0.0], [0.0, 1.0]]), TypeError, "phi must be a torch.Tensor"),
    (dict(phi=torch.ones(1, 1)), ValueError, "phi must be a square"),
    (dict(phi=torch.ones(3, 2)), ValueError, r"phi must be a square .* shape \(3, 2\)"),
    (dict(phi=torch.ones(3, 3, dtype=torch.long)), TypeError, "phi must be a floating"),
    (dict(phi=torch.full((3, 3), nan_)), ValueError, "phi contains NaN"),
    (dict(phi=PHI, omega=nan_), ValueError, "omega must be a finite number"),
    (dict(phi=PHI, omega=-1.0), ValueError, "omega .* got -1.0"),
    (dict(phi=PHI, omega=True), ValueError, "omega"),
    (dict(phi=PHI, index_mode="relative"), ValueError, "Unknown index_mode 'relative'"),
])
def test_refine_similarity(kw, err, msg):
    with pytest.raises(err, match=msg): R.refine_similarity(**kw)


@pytest.mark.parametrize("scores,target,kw,err,msg", [
    (S.numpy(), T, {}, TypeError, "scores must be a torch.Tensor"),
    (S, T.tolist(), {}, TypeError, "target must be a torch.Tensor"),
    (S.long(), T, {}, TypeError, "scores must be a floating tensor, got torch.int64"),
    (S, T.int(), {}, TypeError, "target must be a floating"),
    (S * nan_, T, {}, ValueError, "scores contains NaN"),
    (S * float("inf"), T, {}, ValueError, "scores contains NaN or inf"),
    (S, T * float("inf"), {}, ValueError, "target contains NaN or inf"),
    (S, T[:, :3], {}, ValueError, r"one shape, got \(3, 4\) and \(3, 3\)"),
    (S[0], T[0], {}, ValueError, r"\[R, K\]"),
    (S[:, :1], T[:, :1], {}, ValueError, "at least 2 items"),
    (S, T, {"reduction": "max"}, ValueError, "Unknown reduction 'max'"),
    (S, T, {"form": "allrank"}, ValueError, "Unknown form 'allrank'"),
])
def test_listmle_loss(scores, target, kw, err, msg):
    with pytest.raises(err, match=msg): R.listmle_loss(scores, target, **kw)


def test_ranking_target_mode_and_shape():
    with pytest.raises(ValueError, match="Unknown target mode 'both'"): R.ranking_target(PHI, "both")
    with pytest.raises(ValueError, match="phi must be a square"): R.ranking_target(torch.ones(2, 3), "rank")


@pytest.fixture(scope="module")
def models():
    enc, tok = tiny_bert(seed=0)
    st = R.RankStudent(enc, "cls")
    return st, R.RankStudent(tiny_bert(seed=0)[0], "cls", mlp=False), tok


@pytest.mark.parametrize("chain,kw,err,msg", [
    (["only one"], {}, ValueError, "at least 2 sentences, got 1"),
    (["a dog", ""], {}, ValueError, "empty"),
    ("a dog runs", {}, TypeError, "chain"),
    (["a", "b"], {"tau": 0.0}, ValueError, "tau must be a finite number > 0"),
    (["a", "b"], {"tau2": nan_}, ValueError, "tau2"),
    (["a", "b"], {"listmle_form": "x"}, ValueError, "Unknown form 'x'"),
])
def test_chain_loss(models, chain, kw, err, msg):
    st, te, tok = models
    with pytest.raises(err, match=msg): R.chain_loss(st, te, tok, chain, **kw)


CH = [["A man plays.", "A man plays a song.", "Someone sings."]]


@pytest.mark.parametrize("chains,kw,err,msg", [
    ([], {}, ValueError, "no chains to train on"),
    ("a chain", {}, TypeError, "chains must be a list of sentence lists, got str"),
    ([["a", " "]], {}, ValueError, "empty"),
    ([["one sentence"]], {}, ValueError, r"at least 2 sentences; chains\[0\]"),
    (CH, {"lr": nan_}, ValueError, "lr must be a finite number > 0"),
    (CH, {"lr": -1e-5}, ValueError, "lr .* got -1e-05"),
    (CH, {"mode": "x"}, ValueError, "Unknown target mode 'x'"),
    (CH, {"listmle_form": "allrank"}, ValueError, "Unknown listmle_form 'allrank'"),
    (CH, {"index_mode": "code"}, ValueError, "Unknown index_mode 'code'"),
])
def test_posttrain(tmp_path, chains, kw, err, msg):
    with pytest.raises(err, match=msg): RR.posttrain(chains, tmp_path / "run", student=tiny_bert(seed=0), **kw)


def test_run_config_unknown_argument():
    with pytest.raises(TypeError, match=r"unknown posttrain argument\(s\) \['learning_rate'\]"):
        RR.posttrain_config(CH, learning_rate=1e-5)


def test_cached_run_with_other_config_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    cfg = RR.posttrain_config(CH, lr=1e-5, seed=1)
    write_json_verified(run / "result.json", {"config": cfg | {"listmle_form": "official"}})
    with pytest.raises(ValueError, match="result.json was written with another config .*listmle_form"):
        RR.posttrain_and_evaluate(CH, run, lr=1e-5, seed=1)
    write_json_verified(run / "result.json", {"scores": {}})
    with pytest.raises(ValueError, match="result.json holds no run config"):
        RR.posttrain_and_evaluate(CH, run, lr=1e-5, seed=1)


def test_cached_run_made_by_other_code_is_refused(tmp_path, monkeypatch):
    """The code part of a run's key: after an edit of the code a run reaches (its hash, monkeypatched) the cache is
    refused."""
    run = tmp_path / "run"
    run.mkdir()
    stored = {"record_version": 3, "config": RR.posttrain_config(CH, seed=1), "code": RR.code_hash(*RR.RUN_CODE),
              "scores": {}}
    write_json_verified(run / "result.json", stored)
    assert RR.posttrain_and_evaluate(CH, run, seed=1)["code"] == stored["code"]          # the same code: served
    monkeypatch.setattr(RR, "code_hash", lambda *roots: "f" * 64)                         # the reached code was edited
    with pytest.raises(ValueError, match=r"result\.json was written by other code \{'code': \('[0-9a-f]{16}', "
                                         r"'ffffffffffffffff'\)\}"):
        RR.posttrain_and_evaluate(CH, run, seed=1)
    assert sorted(p.name for p in run.iterdir()) == ["result.json"]                      # refused before any training
    monkeypatch.undo()
    write_json_verified(run / "result.json", {k: v for k, v in stored.items() if k != "code"})   # before code keys
    with pytest.raises(ValueError, match=r"result\.json holds no code part"):
        RR.posttrain_and_evaluate(CH, run, seed=1)


def test_the_code_part_follows_the_code_a_run_reaches(tmp_path):
    "An edit of reached code (the official ListMLE's epsilon) changes the code part; one of unreached code does not."
    from sentemb_lit.core.code_keys import reached_code
    from sentemb_lit.core.io import fingerprint
    pkg = tmp_path / "sentemb_lit"
    shutil.copytree(Path(RR.__file__).parents[1], pkg, ignore=shutil.ignore_patterns("__pycache__"))
    part = lambda: fingerprint({"reached": reached_code(*RR.RUN_CODE, package=pkg)})
    before = part()
    assert before == RR.code_hash(*RR.RUN_CODE)                                           # the copy is the package
    runs = pkg / "ranking" / "runs.py"
    runs.write_text(runs.read_text().replace('ties: the first lr in lrs"}', 'ties: the first lr"}'))
    assert runs.read_text() != (Path(RR.__file__)).read_text() and part() == before       # select_lr: no run reaches it
    ranking = pkg / "ranking" / "posttraining.py"
    ranking.write_text(ranking.read_text().replace("OFFICIAL_EPS = 1e-7", "OFFICIAL_EPS = 1e-8"))
    assert part() != before                                                               # reached by every run


def test_cached_run_that_was_edited_or_never_hashed_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_json_verified(run / "result.json",
                        {"config": RR.posttrain_config(CH, lr=1e-5, seed=1), "scores": {"avg": 50.0}})
    (run / "result.json").write_text((run / "result.json").read_text().replace("50.0", "99.0"))
    with pytest.raises(IntegrityError, match=r"result\.json: content hash mismatch"):
        RR.posttrain_and_evaluate(CH, run, lr=1e-5, seed=1)
    (run / "result.json").write_text(json.dumps({"config": RR.posttrain_config(CH, lr=1e-5, seed=1), "scores": {}}))
    with pytest.raises(IntegrityError, match=r"result\.json has no content hash.*seal_json"):
        RR.posttrain_and_evaluate(CH, run, lr=1e-5, seed=1)
    (run / "result.json").write_text("{torn")
    with pytest.raises(CorruptFileError, match=r"result\.json:1: not valid JSON"):
        RR.posttrain_and_evaluate(CH, run, lr=1e-5, seed=1)


@pytest.fixture(scope="module")
def llama():
    return tiny_llama(seed=0)


@pytest.mark.parametrize("fn,kw,msg", [
    ("directional_generate", dict(cond_prompts=["a"], neg_prompts=["b"], lam=-1.0), "lam must be a finite number >= 0"),
    ("directional_generate", dict(cond_prompts=["a"], neg_prompts=["b"], lam=nan_), "lam .* got nan"),
    ("generate_chains", dict(sources=["a dog"], lam=-0.5), "lam .* got -0.5"),
    ("generate_chains", dict(sources=["a dog"], first_lam=-1.0), "first_lam .* got -1.0"),
])
def test_negative_lambda(llama, fn, kw, msg):
    m, t = llama
    with pytest.raises(ValueError, match=msg): getattr(C if fn == "generate_chains" else D, fn)(m, t, **kw)


@pytest.mark.parametrize("extra,msg", [
    (["--limit", "0"], "--limit must be >= 1, got 0"),
    (["--limit", "-1"], "--limit must be >= 1, got -1"),
    (["--lam", "-1"], "--lam must be a finite number >= 0"),
    (["--first-lam", "nan"], "--first-lam must be a finite number"),
    (["--rounds", "0"], "--rounds must be >= 1"),
    (["--batch-size", "0"], "--batch-size must be >= 1"),
    (["--max-new-tokens", "-3"], "--max-new-tokens must be >= 1"),
])
def test_job_arguments(tmp_path, llama, extra, msg):
    (tmp_path / "s.txt").write_text("A dog runs.\n")
    args = ["--input", str(tmp_path / "s.txt"), "--out", str(tmp_path / "o.jsonl"), "--quiet"]
    with pytest.raises(ValueError, match=msg): generate_ranking_main(args + extra, model=llama[0], tokenizer=llama[1])
    assert not (tmp_path / "o.jsonl").exists()


def test_job_files(tmp_path, llama):
    m, t = llama
    inp, out = tmp_path / "s.txt", tmp_path / "o.jsonl"
    inp.write_text("A dog runs.\nA cat sleeps.\n")
    args = ["--input", str(inp), "--out", str(out), "--rounds", "1", "--max-new-tokens", "2", "--quiet"]
    generate_ranking_main(args + ["--limit", "1"], model=m, tokenizer=t)
    good = out.read_text()
    out.write_text(good + "{not json\n")                         # a corrupt line is named by file and line
    with pytest.raises(CorruptFileError, match=r"o\.jsonl:2"): generate_ranking_main(args, model=m, tokenizer=t)
    out.write_text(good)
    with pytest.raises(ValueError, match=r"o\.jsonl:1 was written with other settings .*rounds"):
        generate_ranking_main(args + ["--rounds", "2"], model=m, tokenizer=t)
    with exclusive(out):
        with pytest.raises(LockedError, match=r"o\.jsonl is in use by another process"):
            generate_ranking_main(args, model=m, tokenizer=t)
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt.*not UTF-8"):
        generate_ranking_main(["--input", str(tmp_path / "latin1.txt"), "--out", str(out)], model=m, tokenizer=t)
    with pytest.raises(FileNotFoundError, match=r"missing\.txt.*does not exist"):
        generate_ranking_main(["--input", str(tmp_path / "missing.txt"), "--out", str(out)], model=m, tokenizer=t)


def test_prompt_longer_than_the_model_positions_is_refused():
    "A prompt that, with the new tokens, overflows the model's positions is an error, not silent garbage."
    from sentemb_lit.ranking.decoding import directional_generate
    from sentemb_lit.core.tiny_models import tiny_llama
    model, tok = tiny_llama(max_position_embeddings=64)
    long = " ".join(["word"] * 80)
    with pytest.raises(ValueError, match=r"cond_prompts\[0\] has \d+ tokens; with max_new_tokens=3"):
        directional_generate(model, tok, [long], [long], max_new_tokens=3)


def test_monotonicity_refuses_nan_similarities():
    from sentemb_lit.ranking.chain_analysis import monotonicity
    with pytest.raises(ValueError, match="S .* NaN or inf"): monotonicity(np.full((2, 3, 3), np.nan))


# =====================================================================================================
# sentemb_lit.ranking.posttraining: empty inputs, lengths, flags (helper H2's block; decoding cases stay above)
# =====================================================================================================

def test_listmle_loss_refuses_zero_rows():
    "0 rows gave a NaN mean; every reduction now refuses them, naming the argument and its shape."
    for reduction in ("mean", "sum", "none"):
        with pytest.raises(ValueError, match=r"scores has no rows \(shape \(0, 4\)\)"):
            R.listmle_loss(torch.zeros(0, 4), torch.zeros(0, 4), reduction=reduction)


@pytest.mark.parametrize("kw, err, msg", [
    (dict(max_length=0), ValueError, "max_length=0 is too small: the tokenizer adds 2 special"),
    (dict(max_length=1), ValueError, "max_length=1 is too small"),
    (dict(max_length="32"), TypeError, "max_length must be a positive int, got str"),
    (dict(max_length=10_000), ValueError, "max_length=10000 exceeds the 128 positions"),
])
def test_chain_loss_max_length(models, kw, err, msg):
    st, te, tok = models
    with pytest.raises(err, match=msg): R.chain_loss(st, te, tok, ["A dog runs.", "A cat sleeps."], **kw)


@pytest.mark.parametrize("kw, err, msg", [
    (dict(epochs=0), ValueError, "epochs must be a positive int, got 0"),
    (dict(n_steps=0), ValueError, "n_steps must be a positive int or None, got 0"),
    (dict(max_length=0), ValueError, "max_length must be a positive int, got 0"),
    (dict(mlp="yes"), TypeError, "mlp must be True or False, got 'yes'"),
    (dict(tau=-0.05), ValueError, "tau must be a finite number > 0, got -0.05"),
    (dict(omega=float("nan")), ValueError, "omega must be a finite number >= 0, got nan"),
])
def test_posttrain_counts_and_flags(tmp_path, kw, err, msg):
    "Checked before a model is loaded or a file written."
    with pytest.raises(err, match=msg):
        RR.posttrain(CH, tmp_path / "run", student=tiny_bert(seed=0), **kw)
    assert not (tmp_path / "run").exists()


def test_rank_student_arguments():
    enc, _ = tiny_bert(seed=0)
    with pytest.raises(ValueError, match="Unknown pooling 'max'; choose one of"): R.RankStudent(enc, "max")
    with pytest.raises(TypeError, match="mlp must be True or False, got 1"): R.RankStudent(enc, "cls", mlp=1)


def test_shared_cosine_keeps_the_numbers():
    "ranking uses core.similarity.cos_matrix: bit-identical to the former F.normalize product on non-zero rows."
    import torch.nn.functional as F
    from sentemb_lit.core.similarity import cos_matrix
    z = torch.randn(5, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float32) * 2
    assert torch.equal(R.cos_matrix(z, z), F.normalize(z, dim=-1) @ F.normalize(z, dim=-1).T)
    assert R.cos_matrix is cos_matrix
    z[0] = 0
    assert R.cos_matrix(z, z)[0].abs().max() == 0 and R.cos_matrix(z, z)[:, 0].abs().max() == 0


# =====================================================================================================
# sentemb_lit.ranking.decoding.hf_guided_generate, sentemb_lit.ranking.chains: shuffle_chains, filter_chains
# (helper H4's block)
# =====================================================================================================

@pytest.mark.parametrize("kw, err, msg", [
    (dict(lam=-0.5), ValueError, r"lam must be a finite number >= 0 \(λ of Eq. 4\), got -0.5"),
    (dict(cond_prompt=""), ValueError, r"cond_prompt must be a non-empty string \(not only whitespace\)"),
    (dict(neg_prompt="   "), ValueError, r"neg_prompt must be a non-empty string \(not only whitespace\)"),
    (dict(cond_prompt=["a prompt"]), TypeError, "cond_prompt must be a str, got list"),
])
def test_hf_guided_generate_bad_inputs(llama, kw, err, msg):
    model, tok = llama
    args = dict(cond_prompt="Rewrite: A dog runs.", neg_prompt="Rewrite: A cat sleeps.", lam=0.5, max_new_tokens=2)
    with pytest.raises(err, match=msg): D.hf_guided_generate(model, tok, **(args | kw))


def test_shuffle_chains_refuses_a_string_chain():
    "A str chain would be shuffled character by character."
    recs = [dict(chain=["x0", "a", "b"]), dict(chain="x0 a b")]
    with pytest.raises(TypeError, match=r"recs\[1\]\['chain'\] must be a list of sentences, got str"):
        C.shuffle_chains(recs)


@pytest.mark.parametrize("min_repeat, err", [(0, ValueError), (-2, ValueError), ("3", ValueError)])
def test_filter_chains_min_repeat(min_repeat, err):
    "min_repeat=0 would flag every chain as a repeat."
    with pytest.raises(err, match=f"min_repeat must be a positive int, got {min_repeat!r}"):
        C.filter_chains([dict(chain=["a", "b"], stops=["eos"])], min_repeat=min_repeat)


def test_load_pairs_names_a_damaged_file(tmp_path):
    (tmp_path / "pairs.npz").write_bytes(b"not an npz")
    with pytest.raises(ValueError, match=r"cannot read the pairs file .*pairs\.npz"):
        RR.load_pairs(tmp_path / "pairs.npz")
    np.savez(tmp_path / "odd.npz", nodot=np.zeros(2))
    with pytest.raises(ValueError, match=r"cannot read the pairs file .*odd\.npz"):
        RR.load_pairs(tmp_path / "odd.npz")


def test_weights_fingerprint_needs_a_module():
    with pytest.raises(TypeError, match="module must be a torch.nn.Module"):
        RR.weights_fingerprint({"w": torch.ones(2)})
    with pytest.raises(TypeError, match="module must be"): RR.weights_fingerprint(None)


@pytest.mark.parametrize("kw,err,msg", [
    (dict(arm=1), TypeError, "arm must be a non-empty str label"),
    (dict(arm=""), TypeError, "arm must be a non-empty str label"),
    (dict(keep_pairs="yes"), TypeError, "keep_pairs must be True or False"),
    (dict(learning_rate=1e-5), TypeError, r"unknown posttrain argument\(s\) \['learning_rate'\]"),
])
def test_posttrain_and_evaluate_arguments(tmp_path, kw, err, msg):
    with pytest.raises(err, match=msg): RR.posttrain_and_evaluate(CH, tmp_path / "run", **kw)
    assert not (tmp_path / "run").exists()                     # refused before any file


def test_a_cached_run_of_another_arm_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_json_verified(run / "result.json", {"record_version": 3, "arm": "method",
                                              "config": RR.posttrain_config(CH, seed=1),
                                              "code": RR.code_hash(*RR.RUN_CODE)})
    assert RR.posttrain_and_evaluate(CH, run, seed=1, arm="method")["arm"] == "method"
    with pytest.raises(ValueError, match="holds the run of arm 'method', not 'semantic only'"):
        RR.posttrain_and_evaluate(CH, run, seed=1, arm="semantic only")


@pytest.mark.parametrize("kw,err,msg", [
    (dict(lrs=()), TypeError, "lrs must be a non-empty sequence"),
    (dict(lrs="1e-5"), TypeError, "lrs must be a non-empty sequence"),
    (dict(lrs=(1e-5, 0.0)), ValueError, r"lrs\[1\] must be a finite number > 0, got 0.0"),
    (dict(lrs=(1e-5, 1e-5)), ValueError, "holds a learning rate twice"),
    (dict(lr=1e-5), TypeError, "select_lr sets lr itself"),
    (dict(run_root=None), TypeError, "run_root must be a path"),
])
def test_select_lr_arguments(tmp_path, kw, err, msg):
    args = dict(run_root=tmp_path / "grid") | kw
    with pytest.raises(err, match=msg): RR.select_lr(CH, **args)
    assert not (tmp_path / "grid").exists()


@pytest.mark.parametrize("runs,err,msg", [
    ([], TypeError, "runs must be a dict"),
    ({}, ValueError, "runs is empty"),
    ({1e-5: {"best_dev": None}}, ValueError, r"runs for lr \[1e-05\] have no best_dev"),
])
def test_pick_by_dev_arguments(runs, err, msg):
    with pytest.raises(err, match=msg): RR.pick_by_dev(runs)
