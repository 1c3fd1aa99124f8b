"""Where one step of directional decoding spends its time (the profile table of nbs/20_contrastive_decoding).

    python tools/profile_decoding.py [--batch 16] [--threads 2] [--repeats 2]

Runs `directional_generate` on the benchmark's ranking prompts (SmolLM2-135M-Instruct, λ = 0.5, 48 new tokens) and
times, with wall-clock wrappers and forward hooks, each part of the decoding steps (the forwards of one new token per
row): the linear layers of the blocks, the lm_head, the attention kernel, the KV-cache appends and row drops, the
attention-mask construction, the rest of the forward, the logits processing (log-softmax, Eq. 4) and what the host
does between forwards. Prints each part as a share of the steps' time, and the prompt forwards' share of the call.
The wrappers cost time themselves: read the shares, not the milliseconds. Works on any commit of the decoder."""
import argparse, sys, time
from collections import defaultdict
import torch

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=2)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    import transformers.models.llama.modeling_llama as llama
    from transformers import cache_utils
    from sentemb_lit import decoding as D
    from sentemb_lit.bench import BENCH_SENTENCES
    from sentemb_lit.chains import ranking_prompt
    from sentemb_lit.models import load_causal_lm
    model, tok = load_causal_lm("smollm2-135m-instruct")
    if a.batch > len(BENCH_SENTENCES): raise SystemExit(f"--batch: at most {len(BENCH_SENTENCES)}")
    conds = [ranking_prompt(tok, s) for s in BENCH_SENTENCES][:a.batch]
    negs = [ranking_prompt(tok, s) for s in BENCH_SENTENCES[1:] + BENCH_SENTENCES[:1]][:a.batch]
    acc, on = defaultdict(float), [False]

    def timed(name, fn):
        def wrapper(*args, **kw):
            if not on[0]: return fn(*args, **kw)
            t0 = time.perf_counter()
            try: return fn(*args, **kw)
            finally: acc[name] += time.perf_counter() - t0
        return wrapper
    def patch(obj, attr, name): setattr(obj, attr, timed(name, getattr(obj, attr)))
    patch(llama, "create_causal_mask", "mask")
    layers = [cache_utils.DynamicLayer] + ([D._preallocated_layer()] if hasattr(D, "_preallocated_layer") else [])
    for cls in layers:
        patch(cls, "update", "cache")
        patch(cls, "batch_select_indices", "cache")
    patch(torch.nn.functional, "scaled_dot_product_attention", "attention")
    patch(D, "_eq4" if hasattr(D, "_eq4") else "guided_scores", "logits")
    if hasattr(D, "_head"): patch(D, "_head", "lm_head")                  # the head's product, outside the model
    patch(torch, "log_softmax", "logits")
    started = {}
    def pre(m, args):
        if on[0]: started[id(m)] = time.perf_counter()
    def post(name):
        def hook(m, args, out):
            if on[0] and id(m) in started: acc[name] += time.perf_counter() - started.pop(id(m))
        return hook
    for n, m in model.named_modules():
        if isinstance(m, torch.nn.Linear):
            m.register_forward_pre_hook(pre)
            m.register_forward_hook(post("lm_head" if n.endswith("lm_head") else "linear"))
    body = model.model                                      # every forward runs the body (the head may not be a module call)
    call, clock = type(body).__call__, {"prompt": 0.0, "forward": 0.0, "steps": 0}
    def model_call(self, *args, **kw):
        ids, t0 = kw.get("input_ids"), time.perf_counter()
        if ids is None or ids.shape[1] != 1:                        # a prompt forward
            try: return call(self, *args, **kw)
            finally: clock["prompt"] += time.perf_counter() - t0
        if not on[0]: on[0], clock["first_step"] = True, t0
        try: return call(self, *args, **kw)
        finally: clock["forward"] += time.perf_counter() - t0; clock["steps"] += 1
    type(body).__call__ = model_call
    D.directional_generate(model, tok, conds[:1], negs[:1], lam=0.5, max_new_tokens=4)        # warm-up
    best = None
    for _ in range(a.repeats):
        acc.clear(); clock.update(prompt=0.0, forward=0.0, steps=0); on[0] = False
        t0 = time.perf_counter()
        D.directional_generate(model, tok, conds, negs, lam=0.5, max_new_tokens=48, batch_size=a.batch)
        end = time.perf_counter(); on[0] = False
        steps_time = end - clock["first_step"]
        r = dict(call=end - t0, steps_time=steps_time, prompt=clock["prompt"], steps=clock["steps"], acc=dict(acc),
                 forward=clock["forward"] + acc["lm_head"])                  # body + head
        if best is None or r["steps_time"] < best["steps_time"]: best = r
    f, s = best["acc"], best["steps_time"]
    inner = sum(f.get(k, 0.0) for k in ("linear", "lm_head", "attention", "cache", "mask"))
    parts = {"linear layers of the blocks": f.get("linear", 0.0), "lm_head": f.get("lm_head", 0.0),
             "attention (SDPA kernel)": f.get("attention", 0.0), "KV cache: append, drop rows": f.get("cache", 0.0),
             "attention-mask construction": f.get("mask", 0.0),
             "rest of the forward (norms, RoPE, activations, calls)": best["forward"] - inner,
             "logits processing (log-softmax, Eq. 4)": f.get("logits", 0.0),
             "host: argmax to list, stop rules, next inputs": s - best["forward"] - f.get("logits", 0.0)}
    print(f"batch {a.batch}, {a.threads} thread(s): {best['steps']} decoding steps; the prompt forwards take "
          f"{best['prompt'] / best['call']:.0%} of the call, the steps {s / best['call']:.0%}")
    print("| part of a decoding step | share |\n|---|---|")
    for k, v in parts.items(): print(f"| {k} | {100 * v / s:.0f} % |")
    return 0

if __name__ == "__main__":
    sys.exit(main())
