"""The most the prompt prefix cache can buy on the benchmark's sentences: token counts, no timing (issue 24's
"prefix cache ≥ 3.5× batched" row).

    python tools/profile_prefix_cache.py [--template ke] [--n 64] [--batch 32]

Tokenizes the benchmark's prompts (`sentemb_lit.bench.bench_prompting`'s sentences, SmolLM2-135M-Instruct's tokenizer)
with and without the shared prefix, and prints the tokens each way must push through the model: unpadded, and padded
to the longest row of each batch (batches in input order, and sorted by length as the encoder plans them). At equal
efficiency per token, the cached path's speed-up over the uncached batched path cannot exceed the ratio of the two
padded counts (attention over the cached prefix makes the cached tokens slightly dearer still)."""
import argparse, sys
import numpy as np


def padded(lengths: np.ndarray, order: np.ndarray, batch: int) -> int:
    return int(sum(lengths[order[i:i + batch]].max() * len(order[i:i + batch]) for i in range(0, len(order), batch)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--template", default="ke")
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    a = p.parse_args(argv)
    from sentemb_lit.bench import _bench_sentences
    from sentemb_lit.models import load_causal_lm
    from sentemb_lit.prompting import PromptEncoder
    model, tok = load_causal_lm("smollm2-135m-instruct")
    enc = PromptEncoder(model, tok, template=a.template, batch_size=a.batch)
    sentences = _bench_sentences(a.n)
    full = np.array([sum(len(x) for x in enc.tokenize(s, use_cache=False)) for s in sentences])
    rest = np.array([len(enc.tokenize(s, use_cache=True)[1]) for s in sentences])
    prefix = len(enc.prefix_ids)
    print(f"template={a.template} sentences={a.n} batch={a.batch} prefix={prefix} tokens")
    print(f"tokens per prompt: full {full.mean():.1f} (max {full.max()}), after the prefix {rest.mean():.1f} (max {rest.max()})")
    for label, order in (("input order", np.arange(a.n)), ("sorted by length", np.argsort(full, kind="stable"))):
        u, c = padded(full, order, a.batch), padded(rest, order, a.batch)
        print(f"padded, {label:16s}: uncached {u:6d} · cached {c:6d} · bound {u / c:.2f}x")
    print(f"unpadded: uncached {full.sum():6d} · cached {rest.sum():6d} · bound {full.sum() / rest.sum():.2f}x")
    from sentemb_lit.prompting import BATCH_OVERHEAD_TOKENS, _token_batches
    def plan(ks, lens):                     # the encoder's own batches on the CPU: rows x longest row, summed
        bs = _token_batches(ks, lens, a.batch, BATCH_OVERHEAD_TOKENS)
        return sum(len(idx) * max(lens[i] for i in idx) for _, idx in bs), len(bs)
    (u, nu), (c, nc) = plan([0] * a.n, full.tolist()), plan([prefix] * a.n, rest.tolist())
    print(f"the encoder's plan (CPU, overhead {BATCH_OVERHEAD_TOKENS} tokens per batch): uncached {u} tokens in {nu} "
          f"batches · cached {c} in {nc} · bound {(u + nu * BATCH_OVERHEAD_TOKENS) / (c + nc * BATCH_OVERHEAD_TOKENS):.2f}x "
          f"(tokens alone {u / c:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
