"""`fit`: a run killed with SIGKILL resumes bit-identically; a second process on the same out_dir is refused; a resume
with another configuration is refused naming the keys, or applied and recorded with resume='override'."""
import json, os, signal, subprocess, sys, time
from pathlib import Path
import pytest, torch
from sentemb_lit.core.io import LockedError
from sentemb_lit.core.checkpoint import ConfigMismatchError
from sentemb_lit.core.training import fit, read_jsonl

SCRIPT = r'''
import json, sys, time
from pathlib import Path
import torch
from sentemb_lit.core.training import fit

# hold: a file to create, then stop at the 6th step until killed
out, hold, n_steps = sys.argv[1], sys.argv[2], 12
calls = [0]
torch.set_num_threads(1)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Dropout(0.3), torch.nn.Linear(16, 1))
opt = torch.optim.AdamW(net.parameters(), lr=1e-2)

def batch_at(step):
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(step))
    return x, x.sum(1, keepdim=True)

def loss_fn(batch, step):
    calls[0] += 1
    if hold != "-" and calls[0] == 6:                         # 5 steps logged: say so and wait to be killed
        Path(hold).touch()
        while True: time.sleep(1)
    x, y = batch
    return ((net(x) - y) ** 2).mean(), {}

fit({"net": net}, opt, loss_fn, batch_at, n_steps, out, ckpt_every=2, seed=3, progress=False)
torch.save(net.state_dict(), Path(out) / "final.pt")
'''


def _env():
    return os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


def _task(lr=1e-2, width=8, sched=False):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.Dropout(0.3), torch.nn.Linear(width, 1))
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / 8) if sched else None

    def batch_at(step):
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(step))
        return x, x.sum(1, keepdim=True)

    def loss_fn(batch, step):
        x, y = batch
        return ((net(x) - y) ** 2).mean(), {"lr": opt.param_groups[0]["lr"]}
    return net, opt, scheduler, loss_fn, batch_at


def _fit(out, lr=1e-2, width=8, sched=False, **kw):
    net, opt, scheduler, loss_fn, batch_at = _task(lr, width, sched)
    fit({"net": net}, opt, loss_fn, batch_at, 8, out, ckpt_every=2, scheduler=scheduler, progress=False, **kw)
    return net


def _run_here(out):
    "SCRIPT run to its end in this process (no stop): `python train.py OUT -` without a second interpreter start."
    argv = sys.argv
    sys.argv = ["train.py", str(out), "-"]
    try: exec(compile(SCRIPT, "train.py", "exec"), {"__name__": "__main__"})
    finally: sys.argv = argv


def test_sigkill_resume_is_bit_identical_and_the_folder_is_locked(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    cut, full = tmp_path / "cut", tmp_path / "full"
    held = tmp_path / "held"
    child = subprocess.Popen([sys.executable, str(script), str(cut), str(held)], env=_env())
    try:                                                       # no race: the child waits at step 6 until killed
        deadline = time.monotonic() + 300
        while not held.exists():
            assert child.poll() is None, "the run ended before it reached step 6"
            assert time.monotonic() < deadline, "the run never reached step 6"
            time.sleep(0.05)
        assert len(read_jsonl(cut / "log.jsonl")) == 5
        with pytest.raises(LockedError, match=rf"out_dir {cut} is being trained by another process.*pid {child.pid}"):
            _fit(cut)                                                  # a second run on the same folder
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None: child.kill()
    assert child.returncode == -signal.SIGKILL and not (cut / "final.pt").exists()
    _run_here(cut)                                                     # the resume, in this process
    _run_here(full)                                                    # uninterrupted
    a, b = torch.load(cut / "final.pt"), torch.load(full / "final.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert read_jsonl(cut / "log.jsonl") == read_jsonl(full / "log.jsonl")
    assert [r["step"] for r in read_jsonl(cut / "log.jsonl")] == list(range(1, 13))


def test_changed_user_config_is_refused_then_overridden(tmp_path):
    _fit(tmp_path, config={"temperature": 0.05, "pooling": "cls"}, stop_after=3)
    with pytest.raises(ConfigMismatchError, match=r"config\.temperature: 0\.05 → 0\.1"):
        _fit(tmp_path, config={"temperature": 0.1, "pooling": "cls"})
    _fit(tmp_path, config={"temperature": 0.1, "pooling": "cls"}, resume="override")
    rec = json.loads((tmp_path / "fit.json").read_text())
    assert rec["config"]["config"] == {"temperature": 0.1, "pooling": "cls"}
    change = {"config.temperature": {"checkpoint": 0.05, "now": 0.1}}
    assert rec["segments"] == [{"from_step": 0, "config_changes": {}}, {"from_step": 2, "config_changes": change}]


def test_override_applies_the_new_rate_on_the_schedule(tmp_path):
    _fit(tmp_path, lr=0.1, sched=True, stop_after=5)                  # checkpoint at step 4
    with pytest.raises(ConfigMismatchError, match="optimizer.groups.0.initial_lr: 0.1 → 0.05"):
        _fit(tmp_path, lr=0.05, sched=True)
    _fit(tmp_path, lr=0.05, sched=True, resume="override")
    lrs = {r["step"]: r["lr"] for r in read_jsonl(tmp_path / "log.jsonl")}
    for step, lr in lrs.items():                              # LambdaLR: lr at step s = lr0 · (1 − (s−1)/8)
        assert lr == pytest.approx((0.1 if step <= 4 else 0.05) * (1 - (step - 1) / 8)), step


def test_other_modules_cannot_be_overridden(tmp_path):
    _fit(tmp_path, stop_after=2)
    with pytest.raises(ConfigMismatchError, match="modules.net.parameters: 49 → 97"):
        _fit(tmp_path, width=16)
    with pytest.raises(ConfigMismatchError, match="does not fit the modules or optimizer given now"):
        _fit(tmp_path, width=16, resume="override")


def test_config_file_is_written_only_after_the_resume_check(tmp_path):
    _fit(tmp_path, config={"temperature": 0.05}, config_file="config.json", stop_after=3)
    assert json.loads((tmp_path / "config.json").read_text()) == {"temperature": 0.05}
    with pytest.raises(ConfigMismatchError, match=r"config\.temperature: 0\.05 → 0\.1"):
        _fit(tmp_path, config={"temperature": 0.1}, config_file="config.json")
    assert json.loads((tmp_path / "config.json").read_text()) == {"temperature": 0.05}   # the refused value not kept


def test_unused_parameters_keep_no_gradient(tmp_path):
    "a module part the loss never touches stays as it was (no zero-gradient AdamW updates)"
    torch.manual_seed(0)
    used, unused = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    before = unused.weight.detach().clone()
    opt = torch.optim.AdamW([*used.parameters(), *unused.parameters()], lr=0.1)
    fit({"used": used, "unused": unused}, opt, lambda b, s: (used(b).pow(2).mean(), {}), lambda s: torch.ones(4, 2),
        3, tmp_path, progress=False)
    assert torch.equal(unused.weight, before)






def test_names_that_stayed_in_training_do_not_warn():
    import warnings, sentemb_lit.core.training as training
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from sentemb_lit.core.training import CHECKPOINT, FitResult, convergence, fit, set_seed  # noqa: F401
        assert training.fit is fit
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"): training.no_such_name
