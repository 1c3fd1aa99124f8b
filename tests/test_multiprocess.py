"""`fit` in 2 processes (torchrun, gloo on the CPU) equals `fit` in 1 process with the same global batch, for a
SimCSE-style InfoNCE loss whose negatives are gathered across processes; only the main process writes; an interrupted
2-process run resumes to the same weights."""
import json, os, subprocess, sys
from pathlib import Path
import pytest, torch

SCRIPT = r'''
import json, sys
from pathlib import Path
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from transformers import BertConfig, BertModel
from sentemb_lit.core.distributed import gather_with_grad
from sentemb_lit.core.training import fit

def main(out_dir, dropout=0.0, n_steps=6, stop_after=None, global_batch=8):
    torch.set_num_threads(1)
    acc = Accelerator(cpu=True)
    cfg = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     max_position_embeddings=16, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    torch.manual_seed(0)
    model = BertModel(cfg, add_pooling_layer=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)

    def batch_at(step):                                   # the global batch, the same whatever the process count
        g = torch.Generator().manual_seed(step)
        ids = torch.randint(1, 64, (global_batch, 6), generator=g)
        mask = (torch.arange(6)[None] < torch.randint(3, 7, (global_batch,), generator=g)[:, None]).long()
        return {"input_ids": ids * mask, "attention_mask": mask}

    def loss_fn(batch, step):                             # SimCSE: two passes, in-batch negatives from every process
        z1 = gather_with_grad(model(**batch).last_hidden_state[:, 0])
        z2 = gather_with_grad(model(**batch).last_hidden_state[:, 0])
        sim = F.cosine_similarity(z1[:, None], z2[None], dim=-1) / 0.05
        terms = {"negatives": float(len(sim) - 1), "local": float(len(batch["input_ids"]))}
        return F.cross_entropy(sim, torch.arange(len(sim))), terms

    res = fit({"bert": model}, opt, loss_fn, batch_at, n_steps, out_dir, ckpt_every=2, seed=0, accelerator=acc,
              stop_after=stop_after, progress=False)
    if acc.is_main_process:
        torch.save(model.state_dict(), Path(out_dir) / "final.pt")
        result = {"processes": acc.num_processes, "last_step": res.last_step}
        Path(out_dir, "result.json").write_text(json.dumps(result))

if __name__ == "__main__":                                # several runs, one after another, in one launch
    for kw in json.loads(sys.argv[1]): main(**kw)
    from sentemb_lit.core.distributed import end_processes
    end_processes()                                       # shut the group down, no racing teardown
'''


def _env():
    return os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
                         "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}


def _launch(tmp_path, runs):
    "torchrun with 2 processes: each of `runs` (keywords of `main`, `out_dir` a name under tmp_path) in turn."
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    runs = [kw | {"out_dir": str(tmp_path / kw["out_dir"])} for kw in runs]
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                        str(script), json.dumps(runs)], env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def _here(out, **kw):
    "`main` in this process: one process, the same script."
    ns = {"__name__": "one_process"}
    exec(compile(SCRIPT, "train.py", "exec"), ns)
    ns["main"](out_dir=str(out), **kw)
    return out


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """One 2-process launch: a run without dropout ('two'), a run with dropout ('full') and the same run stopped after
    step 3 ('cut', last checkpoint at step 2)."""
    d = tmp_path_factory.mktemp("two")
    _launch(d, [{"out_dir": "two"}, {"out_dir": "full", "dropout": 0.1}, {"out_dir": "cut", "dropout": 0.1,
                                                                           "stop_after": 3}])
    return d


def _log(out):
    return [json.loads(l) for l in (out / "log.jsonl").read_text().splitlines()]


def _max_diff(a, b):
    sa, sb = torch.load(a / "final.pt"), torch.load(b / "final.pt")
    assert sa.keys() == sb.keys()
    return max(float((sa[k].float() - sb[k].float()).abs().max()) for k in sa)


def test_two_processes_equal_one(tmp_path, two):
    one, two = _here(tmp_path / "one"), two / "two"
    assert json.loads((one / "result.json").read_text()) == {"processes": 1, "last_step": 6}
    assert json.loads((two / "result.json").read_text()) == {"processes": 2, "last_step": 6}
    log1, log2 = _log(one), _log(two)
    assert [r["step"] for r in log2] == list(range(1, 7))                 # one record per step: only main writes
    assert {r["negatives"] for r in log2} == {7.0} and {r["local"] for r in log2} == {4.0}   # 4 rows each, 7 negatives
    diff_loss = max(abs(a["loss"] - b["loss"]) for a, b in zip(log1, log2))
    diff_w = _max_diff(one, two)
    print(f"1 vs 2 processes: max |Δloss| {diff_loss:.3g}, max |Δweight| {diff_w:.3g}, "
          f"losses {[round(r['loss'], 6) for r in log1]}")
    assert diff_loss < 1e-5 and diff_w < 1e-4
    assert not list(two.glob("*.tmp*")) and (two / "checkpoint.safetensors").exists() and (two / "fit.json").exists()
    assert json.loads((two / "fit.json").read_text())["config"]["fit"]["processes"] == 2


def test_two_process_resume_is_exact(two):
    from sentemb_lit.core.checkpoint import ConfigMismatchError
    full, cut = two / "full", two / "cut"
    assert json.loads((cut / "result.json").read_text())["last_step"] == 3
    _launch(two, [{"out_dir": "cut", "dropout": 0.1}])                      # the resume: a fresh launch
    assert json.loads((cut / "result.json").read_text()) == {"processes": 2, "last_step": 6}
    assert _max_diff(full, cut) == 0.0
    assert _log(full) == _log(cut)
    with pytest.raises(ConfigMismatchError, match="another configuration"):   # 1 process cannot silently continue it
        _here(cut, dropout=0.1, n_steps=8)
