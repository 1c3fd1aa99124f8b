"""The GPU rows of issue 24's benchmark on a machine that has a GPU but not the model packages.

    python tools/gpu_bench.py --save DIR                      # here: write the configs and tokenizers (kilobytes)
    python tools/gpu_bench.py --models DIR --out rows.json    # on the GPU machine

`sentemb-lit bench --device cuda` is the command for a user whose GPU machine has the model packages: it loads the
real weights. A lent machine that cannot install them gets the same architectures from their configs with seeded
random weights instead (SmolLM2-135M-Instruct for decoding and prompting, MiniLM-L6 and BERT-base for the twin step).
Speed does not depend on the values of the weights, with one exception said where it applies: decoding stops a row
at EOS, so both sides of a decoding ratio generate the same tokens only where their tokens agree (counted in the
row). Each row calls the library's own benchmark function, so the ratios are those `sentemb-lit bench` prints.
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path

import torch

DEV = "cuda"          # --device cpu: a dry run of this script
NAMES = {"causal": "smollm2-135m-instruct", "encoder": "minilm-l6"}


def save(folder: Path) -> None:
    "Write each model's config and tokenizer to folder/<name>/ (no weights)."
    from transformers import AutoConfig, AutoTokenizer
    from sentemb_lit.core.model_cache import model_path
    for name in NAMES.values():
        path = model_path(name)
        AutoConfig.from_pretrained(path).save_pretrained(folder / name)
        AutoTokenizer.from_pretrained(path).save_pretrained(folder / name)


def random_model(folder: Path, name: str, kind: str, dtype, seed: int = 0):
    "The architecture of `name` with seeded random weights, on CUDA in `dtype`, and its tokenizer."
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer
    cfg = AutoConfig.from_pretrained(folder / name)
    tok = AutoTokenizer.from_pretrained(folder / name)
    if tok.pad_token is None: tok.pad_token = tok.eos_token
    torch.manual_seed(seed)
    model = (AutoModelForCausalLM if kind == "causal" else AutoModel).from_config(cfg)
    return model.to(DEV, dtype).eval(), tok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", default=None)
    ap.add_argument("--models", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a dry run of the script itself")
    a = ap.parse_args(argv)
    global DEV; DEV = a.device
    if a.save: save(Path(a.save)); return 0
    if DEV == "cuda" and not torch.cuda.is_available(): print("no CUDA device", file=sys.stderr); return 2
    from transformers import BertConfig, BertModel
    from sentemb_lit import bench
    folder, B, bf16 = Path(a.models), a.batch_size, torch.bfloat16
    n = 8192 if DEV == "cuda" else 256
    rows = {"device": torch.cuda.get_device_name(0) if DEV == "cuda" else "cpu", "torch": torch.__version__, "batch_size": B,
            "weights": "seeded random weights of the named architectures (speed only)"}
    t0 = time.time()
    rows["matmul_bf16_tflop_per_s"] = bench.matmul_flops_per_s(n, 2.0, device=DEV, dtype=bf16) / 1e12
    rows["matmul_fp32_tflop_per_s"] = bench.matmul_flops_per_s(n, 2.0, device=DEV, dtype=torch.float32) / 1e12
    print({k: v for k, v in rows.items()}, flush=True)
    # twin step: float32 weights under bfloat16 autocast, as GPU training runs; MiniLM-L6 and BERT-base (Table I's model)
    tower, btok = random_model(folder, NAMES["encoder"], "encoder", torch.float32)
    rows["twin_minilm"] = bench.bench_twin_step(tower, None, btok, batch_size=B, seq_len=32, repeats=10, autocast=bf16)
    print("twin minilm", rows["twin_minilm"], flush=True)
    torch.manual_seed(0)
    base = BertModel(BertConfig()).to(DEV)
    rows["twin_bert_base"] = bench.bench_twin_step(base, None, btok, batch_size=B, seq_len=32, repeats=10, autocast=bf16)
    print("twin bert-base", rows["twin_bert_base"], flush=True)
    del tower, base
    lm, ltok = random_model(folder, NAMES["causal"], "causal", bf16)
    sents = bench._bench_sentences(4 * B)
    rows["decoding"] = {str(k): v for k, v in bench.bench_decoding(model=lm, tokenizer=ltok, batch_sizes=(1, B),
                                                                    sentences=sents[:B], repeats=2).items()}
    print("decoding", rows["decoding"], flush=True)
    rows["prompting"] = bench.bench_prompting(lm, ltok, batch_size=B, sentences=sents, repeats=2, verbose=False)
    print("prompting", rows["prompting"], flush=True)
    rows["seconds"] = round(time.time() - t0, 1)
    if a.out: Path(a.out).write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
