"""PretCoT Table 1 on a GPU at the paper's model sizes: the memory of each way, measured without the weights.

    python tools/gpu_memory.py save DIR                      # here: the two architectures' configs and tokenizers
    python tools/gpu_memory.py run DIR --out raw.json         # on the GPU machine (SENTEMB_DATA for the sentences)
    python tools/gpu_memory.py render raw.json                # here: papers/pretcot_ke/gpu/ (record + README)

The paper's Table 1 compares GPU memory: SimCSE fine-tuning of BERT-base, PromptEOL (QLoRA) fine-tuning of
LLaMA2-7B, and Pretended-CoT / Knowledge-Enhancement direct inference with LLaMA2-7B. The memory of a step depends on
the model's shapes, not on its weights' values, so `sentemb_lit.memory.peak_memory(..., random_init=True,
device="cuda")` measures it from the architecture alone: BERT-base (transformers' `BertConfig()` defaults, the
bert-base-uncased shape, with MiniLM's tokenizer — the same uncased WordPiece vocabulary) and LLaMA2-7B's shape
(hidden 4096, FFN 11008, 32 layers of 32 heads, RMSNorm 1e-5) with SmolLM2's tokenizer, whose 49,152-token vocabulary
replaces LLaMA2's 32,000 (+70M parameters in the embedding and the head, said in the record). The rows are
nb33's (33_pretcot_memory): one step each, the same batch of STS-B dev sentences, fresh processes. Turning the raw
runs into the record and its README needs no GPU: `sentemb_lit.memory.record` and `readme` (nbs/09_memory.ipynb).
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path
# the rows, and the record and README made from the raw runs: the library's, tested in nbs/09_memory.ipynb
from sentemb_lit.memory import LLAMA2_7B, TABLE1_ROWS as ROWS, readme, record

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "papers/pretcot_ke/gpu"
BATCH, MAX_LENGTH, REPEATS = 64, 64, 2

def save(folder: Path) -> None:
    "Write bert-base-shape/ and llama2-7b-shape/ (config.json and tokenizer, no weights) under `folder`."
    from transformers import AutoTokenizer, BertConfig, LlamaConfig
    from sentemb_lit.core.model_cache import model_path
    btok = AutoTokenizer.from_pretrained(model_path("minilm-l6"))
    ltok = AutoTokenizer.from_pretrained(model_path("smollm2-135m-instruct"))
    BertConfig().save_pretrained(folder / "bert-base-shape"); btok.save_pretrained(folder / "bert-base-shape")
    cfg = LlamaConfig(vocab_size=len(ltok), bos_token_id=ltok.bos_token_id, eos_token_id=ltok.eos_token_id,
                      **LLAMA2_7B)
    cfg.save_pretrained(folder / "llama2-7b-shape"); ltok.save_pretrained(folder / "llama2-7b-shape")


def run(folder: Path, out: Path) -> None:
    "Every row REPEATS times, each in a fresh process on the GPU; the raw measurements as JSON."
    import torch, transformers
    from sentemb_lit.core.data import load_sts
    from sentemb_lit.memory import peak_memory
    sents = list(dict.fromkeys(load_sts("stsb", "dev").sentences1))[:BATCH]
    raw = {"env": {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "transformers": transformers.__version__,
                   "gpu_total_mb": torch.cuda.get_device_properties(0).total_memory / 2 ** 20},
           "batch": BATCH, "max_length": MAX_LENGTH, "repeats": REPEATS, "runs": {}}
    for name, (kind, arch, template, dtype) in ROWS.items():
        runs = []
        for _ in range(REPEATS):
            t0 = time.time()
            try:
                runs.append(peak_memory(kind, str(folder / arch), sents, template=template, max_length=MAX_LENGTH,
                                        device="cuda", dtype=dtype, random_init=True, timeout=300) | {"ok": True})
            except RuntimeError as e:          # e.g. out of memory: the row is recorded as failed, with the error
                runs.append({"ok": False, "error": str(e)[-400:]})
            print(name, runs[-1], f"{time.time() - t0:.0f} s", flush=True)
        raw["runs"][name] = runs
        out.write_text(json.dumps(raw, indent=1))        # after each row: a run cut short keeps what it measured


def render(raw_path: Path) -> None:
    "The record of the raw runs in `raw_path` and its README, written to papers/pretcot_ke/gpu/."
    from sentemb_lit.core.io import write_json_verified
    rec = record(json.loads(raw_path.read_text()))
    OUT.mkdir(parents=True, exist_ok=True)
    write_json_verified(OUT / "table1_h100.json", rec)
    (OUT / "README.md").write_text(readme(rec), encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("verb", choices=("save", "run", "render"))
    ap.add_argument("path")
    ap.add_argument("--out", default="gpu_memory_raw.json")
    a = ap.parse_args(argv)
    if a.verb == "save": save(Path(a.path))
    elif a.verb == "run": run(Path(a.path), Path(a.out))
    else: render(Path(a.path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
