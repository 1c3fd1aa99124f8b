"""Bad-input and edge-case tests of sentemb_lit.ranking.decoding, sentemb_lit.ranking.chains and the generate-ranking
job of sentemb_lit.cli (fast; tiny random LLaMA)."""
import json
import numpy as np, pytest, torch
import sentemb_lit.ranking.chain_analysis as CA
import sentemb_lit.ranking.chains as C
import sentemb_lit.ranking.decoding as D
from sentemb_lit.cli import generate_ranking_main
from sentemb_lit.core.tiny_models import tiny_llama

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
    b = D.directional_generate(m, t, ["hello there", "a"], ["zzz", "yyy"], lam=0.0, max_new_tokens=4,
                               return_details=True)
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
    with pytest.raises(ValueError, match="Unknown prompt"): C.instruction_text("x", prompt="other")
    with pytest.raises(TypeError): C.instruction_text(3)
    with pytest.raises(ValueError, match="Unknown filter"): C.filter_chains([], rules=["x"])
    kept, counts = C.filter_chains([])
    assert kept == [] and counts["total"] == 0

def test_monotonicity_bad_shapes():
    with pytest.raises(ValueError, match="K >= 3"): CA.monotonicity(np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="no chains"): CA.chain_similarity(lambda s: np.ones((len(s), 2)), [])
    with pytest.raises(ValueError, match="same length"):
        CA.chain_similarity(lambda s: np.ones((len(s), 2)), [{"chain": ["a", "b"]}, {"chain": ["a"]}])
    with pytest.raises(ValueError, match="zero vector"):
        CA.chain_similarity(lambda s: np.zeros((len(s), 2)), [{"chain": ["a", "b"]}])

def test_job_errors(tmp_path, tl):
    m, t = tl
    (tmp_path / "empty.txt").write_text("\n  \n")
    with pytest.raises(ValueError, match="no sentences"):
        generate_ranking_main(["--input", str(tmp_path / "empty.txt"), "--out", str(tmp_path / "o.jsonl")],
                              model=m, tokenizer=t)
    (tmp_path / "s.txt").write_text("A dog.\n")
    with pytest.raises(ValueError, match="must be >= 1"):
        generate_ranking_main(["--input", str(tmp_path / "s.txt"), "--out", str(tmp_path / "o.jsonl"), "--rounds", "0"],
                              model=m, tokenizer=t)
    with pytest.raises(SystemExit):
        generate_ranking_main(["--out", "x"])          # --input missing: argparse error

def test_job_torn_line_is_ignored_and_redone(tmp_path, tl):
    m, t = tl
    (tmp_path / "s.txt").write_text("A dog runs.\nA cat sleeps.\n")
    out = tmp_path / "o.jsonl"
    args = ["--input", str(tmp_path / "s.txt"), "--out", str(out), "--rounds", "1", "--max-new-tokens", "3", "--quiet"]
    assert generate_ranking_main(args + ["--limit", "1"], model=m, tokenizer=t)["new"] == 1
    with open(out, "a") as f: f.write('{"source": "A cat sl')          # an interrupted write
    with pytest.warns(UserWarning, match="torn last line of 20 characters|decoded again") as seen:
        r = generate_ranking_main(args, model=m, tokenizer=t)
    assert {"torn last line", "decoded again"} <= {k for w in seen for k in ("torn last line", "decoded again")
                                                    if k in str(w.message)}, [str(w.message) for w in seen]
    assert r["new"] == 1 and r["done"] == 2


# --- the job under interruption, concurrency and several processes (subprocesses on a saved tiny LLaMA) ---
import os, signal, subprocess, sys, time
from pathlib import Path
from sentemb_lit.core.io import read_jsonl, LockedError
from sentemb_lit.cli import main

SOURCES = [f"Sentence number {i} is about a {w} in the park." for i, w in
           enumerate(["dog", "cat", "man", "child", "bird", "tree", "car", "woman", "ball", "bench", "kite", "duck"])]
RUN = "import sys; from sentemb_lit.cli import main; sys.exit(main(['generate-ranking'] + sys.argv[1:]))"
# generate-ranking that stops before its third group until killed, after creating the file named by its first argument
HELD = """import sys, time
from pathlib import Path
import sentemb_lit.ranking.chain_jobs as J
real, calls = J._decode_group, [0]
def held(*a, **k):
    calls[0] += 1
    if calls[0] == 3:
        Path(sys.argv[1]).touch()
        while True: time.sleep(1)
    return real(*a, **k)
J._decode_group = held
from sentemb_lit.cli import main
sys.exit(main(['generate-ranking'] + sys.argv[2:]))"""


@pytest.fixture(scope="module")
def saved_llama(tmp_path_factory):
    """A tiny random LLaMA with SmolLM2's tokenizer, saved with save_pretrained (a local model path for subprocesses);
    untied output embeddings, so its greedy rewrites are non-empty and differ between sources."""
    d = tmp_path_factory.mktemp("tiny_llama")
    m, t = tiny_llama(seed=0, tie_word_embeddings=False)
    m.save_pretrained(d)
    t.save_pretrained(d)
    return d


def _env():
    return os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
                         "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}


def _job_args(model_dir, inp, out, rounds=6, tokens=12):
    return ["--model", str(model_dir), "--input", str(inp), "--out", str(out), "--rounds", str(rounds),
            "--max-new-tokens", str(tokens), "--batch-size", "2", "--quiet"]


def _chains(path):
    return [(r["source"], r["chain"], r["stops"], r["raw"]) for r in read_jsonl(path)]


def test_sigkill_mid_run_then_resume(tmp_path, saved_llama):
    "A run killed with SIGKILL mid-write (plus a torn last line) resumes to exactly the uninterrupted file."
    inp = tmp_path / "s.txt"
    inp.write_text("\n".join(SOURCES) + "\n")
    ref, cut = tmp_path / "ref.jsonl", tmp_path / "cut.jsonl"
    from sentemb_lit.core.models import load_causal_lm
    m, t = load_causal_lm(str(saved_llama))
    assert generate_ranking_main(_job_args(saved_llama, inp, ref), model=m, tokenizer=t)["new"] == len(SOURCES)
    gate = tmp_path / "held"
    p = subprocess.Popen([sys.executable, "-c", HELD, str(gate), *_job_args(saved_llama, inp, cut)], env=_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300                     # no race: two groups written, the third waits to be killed
    while not gate.exists():
        assert p.poll() is None, p.stderr.read()[-2000:]
        assert time.monotonic() < deadline, "the run never reached its third group"
        time.sleep(0.02)
    with pytest.raises(LockedError, match="in use"):          # meanwhile a second writer on the same file is refused
        generate_ranking_main(_job_args(saved_llama, inp, cut), model=m, tokenizer=t)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert p.returncode == -signal.SIGKILL, p.stderr.read()[-2000:]
    n_before = cut.read_text().count("\n")
    assert n_before == 4                                      # two groups of 2
    with open(cut, "a") as f: f.write('{"source": "' + SOURCES[n_before][:10])     # a write cut short
    with pytest.warns(UserWarning, match="torn last line|decoded again") as seen:     # the resume: the command, here
        assert main(["generate-ranking", *_job_args(saved_llama, inp, cut)]) == 0
    assert {"torn last line", "decoded again"} <= {k for w in seen for k in ("torn last line", "decoded again")
                                                    if k in str(w.message)}, [str(w.message) for w in seen]
    got = _chains(cut)
    assert [c[0] for c in got] == SOURCES                     # each source exactly once, in input order
    assert got == _chains(ref)                                # bit-identical chains
    assert len({c[1][1] for c in got}) > 1 and all(c[1][1] for c in got)    # non-trivial rewrites


def test_two_processes_write_the_same_chains(tmp_path, saved_llama):
    "torchrun with 2 processes: the groups are split over the processes and the main one writes them in input order."
    inp = tmp_path / "s.txt"
    inp.write_text("\n".join(SOURCES[:9]) + "\n")
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    args = lambda out: _job_args(saved_llama, inp, out, rounds=3, tokens=6)
    assert main(["generate-ranking", *args(one)]) == 0                   # one process: this one
    script = tmp_path / "job.py"
    script.write_text(RUN.replace("; ", "\n"))
    r2 = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                         str(script), *args(two)], env=_env(), capture_output=True, text=True, timeout=300)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert [c[0] for c in _chains(two)] == SOURCES[:9]
    assert _chains(two) == _chains(one)
    assert not (tmp_path / "two.jsonl.torn").exists()

def _naive_cfg(m, t, cond: str, neg: str, lam: float, steps: int) -> list[int]:
    "Eq. 4 with no cache, no batch, no padding: both whole sequences recomputed at every step."
    eos, out = D.eos_token_ids(m, t), []
    c, n = t(cond)["input_ids"], t(neg)["input_ids"]
    with torch.inference_mode():
        for _ in range(steps):
            lc = m(input_ids=torch.tensor([c + out])).logits[0, -1].float().log_softmax(-1)
            lu = m(input_ids=torch.tensor([n + out])).logits[0, -1].float().log_softmax(-1)
            tok = int(((1 + lam) * (lc - lu) + lu).argmax())
            if tok in eos: break
            out.append(tok)
    return out

@pytest.mark.parametrize("lam", [0.5, 0.0, 2.0])
def test_matches_naive_cfg_loop(tl, lam):
    "The batched, cached, prefix-sharing decoder (rows padded, finishing apart) gives the naive loop's tokens."
    m, t = tl
    pre = "Rewrite the following sentence with other words, keeping its meaning: "
    ps = [pre + s for s in ("a man plays", "two dogs run across the field near the old barn", "x", "snow falls")]
    ns = ps[1:] + ps[:1]
    got = D.directional_generate(m, t, ps, ns, lam=lam, max_new_tokens=10, batch_size=3, return_details=True)
    assert isinstance(D.new_cache(m, 2, 8).layers[0], D.preallocated_layer())       # the preallocated path ran
    for p, n, g in zip(ps, ns, got):
        assert g["ids"] == _naive_cfg(m, t, p, n, lam, 10)

_PRE = "Rewrite the following sentence with other words, keeping its meaning: "
_PS = [_PRE + s for s in ("a man plays", "two dogs run across the field near the old barn", "x", "snow falls")]
_NS = _PS[1:] + _PS[:1]

def test_rows_finish_apart_eos_at_step_0(tl):
    """Rows of mixed lengths stopping at different steps (row 0 at step 0, so it emits nothing) and dropped from the
    batch and its cache as they stop: the naive loop's tokens and transformers' guided generate's, row by row."""
    m, t = tl
    free = [_naive_cfg(m, t, p, n, 0.5, 8) for p, n in zip(_PS, _NS)]
    assert len(free[1]) >= 4
    old = m.generation_config.eos_token_id
    try:
        m.generation_config.eos_token_id = sorted(D.eos_token_ids(m, t) | {free[0][0], free[1][3]})
        got = D.directional_generate(m, t, _PS, _NS, lam=0.5, max_new_tokens=8, batch_size=4, return_details=True)
        want = [_naive_cfg(m, t, p, n, 0.5, 8) for p, n in zip(_PS, _NS)]
        assert [g["ids"] for g in got] == want
        assert got[0] == {"ids": [], "stop": "eos", "text": ""}                      # EOS at step 0
        assert len({len(w) for w in want}) >= 2 and {g["stop"] for g in got} == {"eos", "length"}
        for p, n, g in zip(_PS, _NS, got):
            assert g["ids"] == D.hf_guided_generate(m, t, p, n, lam=0.5, max_new_tokens=8)
    finally:
        m.generation_config.eos_token_id = old

def test_batch_1_runs_the_call_prefix_once(tl, monkeypatch):
    "batch_size=1 with prompts sharing a prefix: the prefix runs once per call, each batch copies it; tokens unchanged."
    m, t = tl
    calls, real = [], D._call_prefix
    monkeypatch.setattr(D, "_call_prefix", lambda *a: calls.append(real(*a)) or calls[-1])
    got = D.directional_generate(m, t, _PS, _NS, lam=0.5, max_new_tokens=6, batch_size=1, return_details=True)
    assert len(calls) == 1 and len(calls[0][0]) >= D.MIN_SHARED_PREFIX       # one call prefix, for all 4 batches
    assert [g["ids"] for g in got] == [_naive_cfg(m, t, p, n, 0.5, 6) for p, n in zip(_PS, _NS)]
    off = D.directional_generate(m, t, _PS, _NS, lam=0.5, max_new_tokens=6, batch_size=1, share_prefix=False)
    assert [g["text"] for g in got] == off and len(calls) == 1               # share_prefix=False: no call prefix

def test_batch_1_single_row_lam0(tl):
    "One row and no negative stream (one row per forward, so the head is `linear`): the naive greedy loop's tokens."
    m, t = tl
    got = D.directional_generate(m, t, _PS[:1], None, lam=0.0, max_new_tokens=6, batch_size=1, return_details=True)
    assert got[0]["ids"] == _naive_cfg(m, t, _PS[0], _PS[0], 0.0, 6)
