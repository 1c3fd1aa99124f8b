"Bad-input and edge-case tests of sentemb_lit.decoding (fast; tiny random LLaMA)."
import json
import numpy as np, pytest, torch
from sentemb_lit import decoding as D
from sentemb_lit.models import tiny_llama

@pytest.fixture(scope="module")
def tl():
    return tiny_llama(seed=0)

def test_guided_scores_shapes():
    a = torch.zeros(2, 5).log_softmax(-1)
    with pytest.raises(ValueError, match="differ in shape"): D.guided_scores(a, a[:1], 0.5)
    assert torch.equal(D.guided_scores(a, None, 0.0), a)

@pytest.mark.parametrize("cond,neg,kw,err,msg", [
    ("text", ["x"], {}, TypeError, "not a single"),
    ([], [], {}, ValueError, "empty"),
    (["a", 3], ["a", "b"], {}, TypeError, "not str"),
    (["a"], ["a", "b"], {}, ValueError, "differ in length"),
    (["a"], None, {"lam": 0.5}, ValueError, "neg_prompts is required"),
    (["a"], ["b"], {"lam": float("inf")}, ValueError, "finite"),
    (["a"], ["b"], {"max_new_tokens": 0}, ValueError, "positive int"),
    (["a"], ["b"], {"batch_size": 1.5}, ValueError, "positive int"),
])
def test_directional_generate_bad_inputs(tl, cond, neg, kw, err, msg):
    m, t = tl
    with pytest.raises(err, match=msg): D.directional_generate(m, t, cond, neg, **kw)

def test_lam0_without_negatives_is_greedy(tl):
    m, t = tl
    a = D.directional_generate(m, t, ["hello there", "a"], None, lam=0.0, max_new_tokens=4, return_details=True)
    b = D.directional_generate(m, t, ["hello there", "a"], ["zzz", "yyy"], lam=0.0, max_new_tokens=4, return_details=True)
    assert [x["ids"] for x in a] == [x["ids"] for x in b]

def test_batch_size_invariance(tl):
    m, t = tl
    ps, ns = ["one two", "three four five six", "seven"], ["a b", "c", "d e f"]
    r1 = D.directional_generate(m, t, ps, ns, max_new_tokens=5, batch_size=1, return_details=True)
    r3 = D.directional_generate(m, t, ps, ns, max_new_tokens=5, batch_size=3, return_details=True)
    assert [x["ids"] for x in r1] == [x["ids"] for x in r3]

def test_shared_prefix_matches_unshared(tl):
    "Prompts sharing a long prefix (the chat template): the shared-prefix path gives the same tokens as the plain one."
    m, t = tl
    pre = "Rewrite the following sentence with other words, keeping its meaning: "
    ps = [pre + s for s in ("a man plays", "two dogs run across the field", "x")]
    ns = [pre + s for s in ("a child", "snow falls", "the sun is up over the hills")]
    assert D.common_prefix_len([t(p)["input_ids"] for p in ps + ns]) >= D.MIN_SHARED_PREFIX
    a = D.directional_generate(m, t, ps, ns, max_new_tokens=6, batch_size=2, return_details=True)
    b = D.directional_generate(m, t, ps, ns, max_new_tokens=6, batch_size=2, return_details=True, share_prefix=False)
    assert [x["ids"] for x in a] == [x["ids"] for x in b]
    with pytest.raises(ValueError, match="at least one"): D.common_prefix_len([])

def test_prompts_and_filters():
    with pytest.raises(ValueError, match="Unknown prompt"): D.instruction_text("x", prompt="other")
    with pytest.raises(TypeError): D.instruction_text(3)
    with pytest.raises(ValueError, match="Unknown filter"): D.filter_chains([], rules=["x"])
    kept, counts = D.filter_chains([])
    assert kept == [] and counts["total"] == 0

def test_monotonicity_bad_shapes():
    with pytest.raises(ValueError, match="K >= 3"): D.monotonicity(np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="no chains"): D.chain_similarity(lambda s: np.ones((len(s), 2)), [])
    with pytest.raises(ValueError, match="same length"):
        D.chain_similarity(lambda s: np.ones((len(s), 2)), [{"chain": ["a", "b"]}, {"chain": ["a"]}])
    with pytest.raises(ValueError, match="zero vector"):
        D.chain_similarity(lambda s: np.zeros((len(s), 2)), [{"chain": ["a", "b"]}])

def test_job_errors(tmp_path, tl):
    m, t = tl
    (tmp_path / "empty.txt").write_text("\n  \n")
    with pytest.raises(ValueError, match="no sentences"):
        D.generate_ranking_main(["--input", str(tmp_path / "empty.txt"), "--out", str(tmp_path / "o.jsonl")], model=m, tokenizer=t)
    (tmp_path / "s.txt").write_text("A dog.\n")
    with pytest.raises(ValueError, match="must be >= 1"):
        D.generate_ranking_main(["--input", str(tmp_path / "s.txt"), "--out", str(tmp_path / "o.jsonl"), "--rounds", "0"], model=m, tokenizer=t)
    with pytest.raises(SystemExit):
        D.generate_ranking_main(["--out", "x"])          # --input missing: argparse error

def test_job_torn_line_is_ignored_and_redone(tmp_path, tl):
    m, t = tl
    (tmp_path / "s.txt").write_text("A dog runs.\nA cat sleeps.\n")
    out = tmp_path / "o.jsonl"
    args = ["--input", str(tmp_path / "s.txt"), "--out", str(out), "--rounds", "1", "--max-new-tokens", "3", "--quiet"]
    assert D.generate_ranking_main(args + ["--limit", "1"], model=m, tokenizer=t)["new"] == 1
    with open(out, "a") as f: f.write('{"source": "A cat sl')          # an interrupted write
    r = D.generate_ranking_main(args, model=m, tokenizer=t)
    assert r["new"] == 1 and r["done"] == 2
