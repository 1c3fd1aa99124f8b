"""Where the CAEL twin step spends the time its FLOPs do not explain (issue 24's "time ÷ FLOP ≤ 1.05" row).

    python tools/profile_cael.py [--threads 2] [--repeats 3] [--batch 32] [--seq 32] [--k 2]

Runs the benchmark's two training steps (`sentemb_lit.bench`: lockstep twin towers with CAEL every k layers, and the
same twin without CAEL; minilm-l6, 2 × batch rows × seq tokens, float32) under `torch.profiler` and under torch's FLOP
counter, and prints, per family of aten operators (matrix products, attention kernel, softmax, normalisation, the
element-wise rest, copies and reshapes, autograd bookkeeping), the self time of each step, its FLOPs, and what CAEL
adds to each. The CAEL step's time ÷ FLOP ratio against the twin without it is the benchmark's; the table says which
families carry the excess. Profiler overhead inflates the small operators: read the shares, not the milliseconds."""
import argparse, copy, sys, time
from collections import defaultdict
import torch

FAMILIES = [("matrix products", ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear")),
            ("attention kernel", ("scaled_dot_product", "flash_attention")),
            ("softmax", ("softmax", "_softmax")),
            ("normalisation", ("layer_norm", "native_layer_norm")),
            ("copies and reshapes", ("aten::copy_", "aten::cat", "aten::stack", "aten::clone", "aten::contiguous",
                                     "aten::to", "aten::_to_copy", "aten::index", "aten::select_backward",
                                     "aten::slice_backward", "aten::fill_", "aten::zero_", "aten::zeros",
                                     "aten::empty", "aten::new_zeros")),
            ("element-wise rest", ("aten::",))]


def family(op: str) -> str:
    for name, keys in FAMILIES:
        if any(k in op for k in keys): return name
    return "autograd and other"


def profile_step(step, repeats: int) -> dict:
    from torch.profiler import profile, ProfilerActivity
    from torch.utils.flop_counter import FlopCounterMode
    step()                                                          # warm-up
    with FlopCounterMode(display=False) as fc: step()
    flops = defaultdict(float)
    for op, n in fc.get_flop_counts().get("Global", {}).items(): flops[family("aten::" + str(op).split(".")[-1] if "." in str(op) else str(op))] += n
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU]) as prof: step()
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]: best = (wall, prof)
    times = defaultdict(float)
    for e in best[1].key_averages(): times[family(e.key)] += e.self_cpu_time_total / 1e6
    return {"wall": best[0], "times": dict(times), "flops": dict(flops)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--k", type=int, default=2)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    from sentemb_lit.bench import _bench_sentences, _twin_step
    from sentemb_lit.models import load_encoder
    t1, tok = load_encoder("minilm-l6")
    t2 = copy.deepcopy(t1)
    for t in (t1, t2): t.train()
    b = tok(_bench_sentences(a.batch) * 2, padding="max_length", truncation=True, max_length=a.seq, return_tensors="pt")
    ids, mask = b["input_ids"], b["attention_mask"]
    res = {}
    for label, k in (("CAEL", a.k), ("no CAEL", None)):
        step = _twin_step(t1, t2, ids, mask, k)
        def run():
            step(); t1.zero_grad(set_to_none=True); t2.zero_grad(set_to_none=True)
        res[label] = profile_step(run, a.repeats)
    c, n = res["CAEL"], res["no CAEL"]
    tc, tn = sum(c["times"].values()), sum(n["times"].values())
    fc_, fn_ = sum(c["flops"].values()), sum(n["flops"].values())
    print(f"threads={a.threads} rows=2x{a.batch} tokens={a.seq} k={a.k} (profiled self time; wall {c['wall']:.3f} s "
          f"vs {n['wall']:.3f} s)")
    print(f"{'family':22s} {'no CAEL s':>10s} {'CAEL s':>9s} {'added s':>8s} {'GFLOP no':>9s} {'GFLOP CAEL':>10s}")
    for fam in [f for f, _ in FAMILIES] + ["autograd and other"]:
        a_, b_ = n["times"].get(fam, 0.0), c["times"].get(fam, 0.0)
        fa, fb = n["flops"].get(fam, 0.0) / 1e9, c["flops"].get(fam, 0.0) / 1e9
        print(f"{fam:22s} {a_:10.3f} {b_:9.3f} {b_ - a_:+8.3f} {fa:9.1f} {fb:10.1f}")
    print(f"{'total':22s} {tn:10.3f} {tc:9.3f} {tc - tn:+8.3f} {fn_ / 1e9:9.1f} {fc_ / 1e9:10.1f}")
    print(f"time ratio {tc / tn:.3f} for FLOP ratio {fc_ / fn_:.3f}: time / FLOP {tc / tn / (fc_ / fn_):.3f} "
          f"(wall: {c['wall'] / n['wall'] / (fc_ / fn_):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
