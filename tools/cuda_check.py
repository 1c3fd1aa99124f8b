"""CUDA check of sentemb_lit's device paths (CI has no GPU; run this by hand on a machine with one).

    SENTEMB_DATA=/path/to/data python tools/cuda_check.py [--tokenizers DIR] [--out results.json]

Everything runs on tiny randomly initialised models built in code, so no weights are needed. Tokenizers come from the
registry (the model packages) or, with --tokenizers, from DIR/minilm-l6 and DIR/smollm2-135m-instruct (folders that
`AutoTokenizer.from_pretrained` reads; `--save-tokenizers DIR` writes them on a machine that has the packages).
Each check compares the CUDA result with the same computation on the CPU or with transformers' own reference, and the
script exits non-zero when any check fails. Comparisons of tokens are exact; comparisons of floats use tolerances
stated next to each check (float32 on both devices; TF32 is switched off so matmuls are full float32 on the GPU).
"""
from __future__ import annotations
import argparse, copy, json, math, sys, tempfile, time, traceback
from pathlib import Path

import numpy as np
import torch

RESULTS: list[dict] = []
DEV = "cuda"          # --device cpu runs the same checks on the CPU (a dry run of this script)


def check(name):
    "Record one named check: ok / failed with the error, its details and its time."
    def deco(fn):
        def run(*a, **kw):
            t0 = time.time()
            try:
                details = fn(*a, **kw) or {}
                RESULTS.append({"check": name, "ok": True, "seconds": round(time.time() - t0, 2), **details})
            except Exception as e:  # noqa: BLE001 — every check runs, failures are reported together
                RESULTS.append({"check": name, "ok": False, "seconds": round(time.time() - t0, 2),
                                "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]})
            print(("ok   " if RESULTS[-1]["ok"] else "FAIL ") + name, {k: v for k, v in RESULTS[-1].items() if k not in ("check", "trace")}, flush=True)
        return run
    return deco


def tokenizers(folder):
    from transformers import AutoTokenizer
    from sentemb_lit.core.tiny_models import _tokenizer_of
    if folder is None: return _tokenizer_of("minilm-l6"), _tokenizer_of("smollm2-135m-instruct")
    toks = [AutoTokenizer.from_pretrained(Path(folder) / n) for n in ("minilm-l6", "smollm2-135m-instruct")]
    for t in toks:
        if t.pad_token is None: t.pad_token = t.eos_token
    return tuple(toks)


def tiny_pair(builder, config, seed):
    "The same random weights on the CPU and on the GPU."
    torch.manual_seed(seed)
    cpu = builder(config).eval()
    return cpu, copy.deepcopy(cpu).to(DEV)


@check("decoding: directional_generate on CUDA = transformers guidance generate on CUDA (tokens)")
def check_decoding(ltok):
    from transformers import LlamaForCausalLM
    from sentemb_lit.core.tiny_models import tiny_llama_config
    from sentemb_lit.ranking.decoding import directional_generate, hf_guided_generate
    _, gpu = tiny_pair(LlamaForCausalLM, tiny_llama_config(), 0)
    conds = ["Rewrite: a man plays a guitar on stage.", "Rewrite: two dogs run across a snowy field", "Rewrite: x"]
    negs = ["Rewrite: a child sleeps.", "Rewrite: the sun is up", "Rewrite: someone is somewhere over there"]
    out = {}
    for lam in (0.0, 0.5, 1.0):
        ours = directional_generate(gpu, ltok, conds, negs, lam=lam, max_new_tokens=12, batch_size=2, return_details=True)
        ref = [hf_guided_generate(gpu, ltok, c, n, lam=lam, max_new_tokens=12) for c, n in zip(conds, negs)]
        got = [o["ids"] for o in ours]
        assert got == ref, f"lam={lam}: {got} != {ref}"
        out[f"lam={lam}"] = "identical"
    return out


@check("prompting: PromptEncoder on CUDA, cached prefix = uncached, and = CPU")
def check_prompting(ltok):
    from transformers import LlamaForCausalLM
    from sentemb_lit.core.tiny_models import tiny_llama_config
    from sentemb_lit.prompting.prompt_embedding import PromptEncoder
    cpu, gpu = tiny_pair(LlamaForCausalLM, tiny_llama_config(), 1)
    sents = ["A man is playing a guitar.", "Two dogs run.", "The quick brown fox jumps over the lazy dog near the river bank."]
    e_gc = PromptEncoder(gpu, ltok, template="ke", layer=-1, batch_size=2)(sents)
    e_gu = PromptEncoder(gpu, ltok, template="ke", layer=-1, batch_size=2, use_cache=False)(sents)
    e_c = PromptEncoder(cpu, ltok, template="ke", layer=-1, batch_size=2)(sents)
    d_cache, d_dev = float(np.abs(e_gc - e_gu).max()), float(np.abs(e_gc - e_c).max())
    assert d_cache < 1e-4 and d_dev < 1e-4, (d_cache, d_dev)
    return {"max_abs_cached_vs_uncached": d_cache, "max_abs_cuda_vs_cpu": d_dev}


@check("cross attention: lockstep forward without CAEL = HF forward on CUDA; CAEL on CUDA = CAEL on CPU")
def check_lockstep(btok):
    from transformers import BertModel
    from sentemb_lit.core.tiny_models import tiny_bert_config
    from sentemb_lit.jtcse.cross_attention import lockstep_forward
    c1, g1 = tiny_pair(BertModel, tiny_bert_config(), 2)
    c2, g2 = tiny_pair(BertModel, tiny_bert_config(), 3)
    b = btok(["a short one", "a much longer sentence with padding in the batch"], padding=True, return_tensors="pt")
    with torch.no_grad():
        og = lockstep_forward(g1, g2, b["input_ids"], b["attention_mask"], cael_k=None)
        hf = g1(**{k: v.to(DEV) for k, v in b.items()}).last_hidden_state
        oc = lockstep_forward(c1, c2, b["input_ids"], b["attention_mask"], cael_k=1)
        og1 = lockstep_forward(g1, g2, b["input_ids"], b["attention_mask"], cael_k=1)
    m = b["attention_mask"].bool().to(DEV)
    d_hf = float((og.tower_1.last_hidden_state - hf)[m].abs().max())
    d_cael = float((og1.c1.cpu() - oc.c1).abs().max())
    assert d_hf < 1e-5 and d_cael < 1e-4, (d_hf, d_cael)
    return {"max_abs_lockstep_vs_hf": d_hf, "max_abs_cael_cuda_vs_cpu": d_cael}


@check("JTCSE: train (accelerate) on CUDA, a few steps of each variant, finite losses, model on CUDA")
def check_jtcse_train(btok, corpus):
    from transformers import BertModel
    from sentemb_lit.core.tiny_models import tiny_bert_config
    from sentemb_lit.jtcse.twin import TwinTowerEncoder
    from sentemb_lit.jtcse.step import JTCSEConfig
    from sentemb_lit.jtcse.train import train
    from sentemb_lit.bench import inference_macs
    from sentemb_lit.core.training import read_jsonl
    out = {}
    with tempfile.TemporaryDirectory() as d:
        torch.manual_seed(4); t1 = BertModel(tiny_bert_config()).to(DEV)
        torch.manual_seed(5); t2 = BertModel(tiny_bert_config()).to(DEV)
        twin = TwinTowerEncoder(t1, t2, btok, max_length=32)
        for variant, model, kw in (("jtcse", twin, dict(cael_every=1)), ("tncse", twin, dict(cael_every=None)),
                                   ("simcse", t1, dict(cael_every=None, nce_layout="b"))):
            cfg = JTCSEConfig(variant=variant, lr=1e-3, batch_size=4, max_length=16, n_steps=3, eval_every=3, ckpt_every=3, **kw)
            res = train(cfg, model, btok, corpus, Path(d) / variant, dev_limit=20, progress=False)
            losses = [r["loss"] for r in read_jsonl(Path(d) / variant / "log.jsonl") if "loss" in r]
            assert len(losses) == 3 and all(math.isfinite(x) for x in losses), losses
            assert next(model.parameters()).device.type == DEV, "the model left the GPU"
            out[variant] = {"losses": [round(x, 5) for x in losses], "best_dev": res.best_score}
        teacher = twin
        torch.manual_seed(6); st = BertModel(tiny_bert_config()).to(DEV)
        cfg = JTCSEConfig(variant="distill", lr=1e-3, batch_size=4, max_length=16, n_steps=2, eval_every=0, ckpt_every=0, cael_every=None)
        train(cfg, st, btok, corpus, Path(d) / "distill", teacher=teacher, progress=False)
        out["distill"] = "ok"
        out["macs_twin_vs_tower"] = inference_macs(twin, 16) / inference_macs(t1, 16)
        assert out["macs_twin_vs_tower"] == 2.0
    return out


@check("ranking: posttrain (ListMLE, accelerate) on CUDA, finite losses, student on CUDA")
def check_posttrain(btok):
    from transformers import BertModel
    from sentemb_lit.core.tiny_models import tiny_bert_config
    from sentemb_lit.ranking.runs import posttrain
    from sentemb_lit.core.training import read_jsonl
    chains = [["A man plays a guitar on stage.", "A man plays a guitar.", "A man plays music.", "A person makes a sound."],
              ["Two dogs run in snow.", "Dogs run outside.", "Animals move.", "It is cold."]]
    torch.manual_seed(7); enc = BertModel(tiny_bert_config()).to(DEV)
    with tempfile.TemporaryDirectory() as d:
        r = posttrain(chains, Path(d), student=(enc, btok), lr=1e-3, n_steps=4, eval_every=2, ckpt_every=2, dev_limit=20, progress=False)
        losses = [x["loss"] for x in read_jsonl(Path(d) / "log.jsonl") if "loss" in x]
    assert len(losses) == 4 and all(math.isfinite(x) for x in losses), losses
    assert next(r["student"].parameters()).device.type == DEV
    return {"losses": [round(x, 5) for x in losses], "best_step": r["fit"].best_step}


@check("evaluation: evaluate_sts with a CUDA encoder = with the CPU encoder")
def check_eval(btok):
    from transformers import BertModel
    from sentemb_lit.core.models import SentenceEncoder
    from sentemb_lit.core.tiny_models import tiny_bert_config
    from sentemb_lit.core.evaluation import evaluate_sts
    cpu, gpu = tiny_pair(BertModel, tiny_bert_config(), 8)
    a = evaluate_sts(SentenceEncoder(gpu, btok, "mean", show_progress=False), limit=50).scores
    b = evaluate_sts(SentenceEncoder(cpu, btok, "mean", show_progress=False), limit=50).scores
    d = max(abs(a[k] - b[k]) for k in a)
    assert d < 0.05, (a, b)          # Spearman×100 of the same embeddings up to float rounding (ties can flip)
    return {"avg_cuda": round(a["avg"], 3), "avg_cpu": round(b["avg"], 3), "max_abs_diff": d}


def restated_official():
    """The independent re-statement of the official Algorithm 1 and nb21's fp16 teacher matrices, from
    tests/test_ranking.py: one copy to keep right, shared by the CPU tests and this CUDA check (needs pytest importable)."""
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "tests" / "test_ranking.py"
    spec = importlib.util.spec_from_file_location("_restated_official", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.restated_official_refine, mod.fp16_teacher


@check("ranking: refine_similarity(official) on CUDA = the official code on CUDA; CUDA vs CPU tie order counted")
def check_official_sort():
    from sentemb_lit.ranking.posttraining import refine_similarity
    official_refine_by_hand, fp16_chain_sims = restated_official()
    g = torch.Generator().manual_seed(11)
    ours_vs_official, cuda_vs_cpu = [], []
    for n in range(104):                               # K from 17 to 40; every other matrix full of ties
        phi = fp16_chain_sims(17 + n % 24, g, ties=n % 2 == 0)
        gpu = phi.to(DEV)
        official_gpu = official_refine_by_hand(gpu, 0.5)
        if not torch.equal(refine_similarity(gpu, 0.5, "official"), official_gpu): ours_vs_official.append(n)
        if not torch.equal(official_gpu.cpu(), official_refine_by_hand(phi, 0.5)): cuda_vs_cpu.append(n)
    assert not ours_vs_official, f"our official mode differs from the official code on {DEV} for {ours_vs_official}"
    return {"matrices": 104, "ours_vs_official_same_device": 0, "official_cuda_vs_cpu_differ": len(cuda_vs_cpu),
            "differing_matrices": cuda_vs_cpu}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizers", default=None, help="folder with minilm-l6/ and smollm2-135m-instruct/ tokenizers")
    ap.add_argument("--save-tokenizers", default=None, help="write the registry tokenizers to this folder and exit")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a dry run of the script itself")
    a = ap.parse_args(argv)
    global DEV; DEV = a.device
    if a.save_tokenizers:
        for name, t in zip(("minilm-l6", "smollm2-135m-instruct"), tokenizers(None)): t.save_pretrained(Path(a.save_tokenizers) / name)
        return 0
    if DEV == "cuda" and not torch.cuda.is_available(): print("no CUDA device: nothing to check", file=sys.stderr); return 2
    torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
    import transformers
    from sentemb_lit.core.data import training_corpus
    btok, ltok = tokenizers(a.tokenizers)
    corpus = training_corpus()[:64]
    env = {"device": torch.cuda.get_device_name(0) if DEV == "cuda" else "cpu", "torch": torch.__version__, "transformers": transformers.__version__}
    print(env, flush=True)
    check_decoding(ltok); check_prompting(ltok); check_lockstep(btok); check_jtcse_train(btok, corpus)
    check_posttrain(btok); check_eval(btok); check_official_sort()
    n_bad = sum(not r["ok"] for r in RESULTS)
    if a.out: Path(a.out).write_text(json.dumps({"env": env, "checks": RESULTS}, indent=1))
    print(f"{len(RESULTS) - n_bad}/{len(RESULTS)} checks passed")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
