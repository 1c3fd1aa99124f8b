"""Bad inputs to sentemb_lit.core.training and the modules split from it (checkpoint, distributed, results): each gives
a clear error naming the offending argument or value."""
import math
from pathlib import Path
import pandas as pd, pytest, torch
from sentemb_lit.core.checkpoint import ConfigMismatchError, config_diff, run_config
from sentemb_lit.core.distributed import gather_with_grad, shard_batch
from sentemb_lit.core.results import markdown_table, plot_training_log, profile_value, resolve_out_dir, save_results
from sentemb_lit.core.training import check_finite_loss, fit, set_seed, to_device


def _task():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    return net, opt, (lambda b, s: (net(b).pow(2).mean(), {})), (lambda s: torch.ones(4, 3))


def _fit(tmp_path, **kw):
    net, opt, loss_fn, batch_at = _task()
    args = dict(modules={"net": net}, optimizer=opt, loss_fn=loss_fn, batch_at=batch_at, n_steps=2,
                out_dir=tmp_path / "run", progress=False) | kw
    return fit(**args)


@pytest.mark.parametrize("kw, err, msg", [
    (dict(modules={}), TypeError, "modules must be a non-empty dict"),
    (dict(modules=[torch.nn.Linear(3, 1)]), TypeError, "modules must be a non-empty dict"),
    (dict(modules={"net": "linear"}), TypeError, "modules must be a non-empty dict"),
    (dict(optimizer="adam"), TypeError, "optimizer must be a torch.optim.Optimizer, got str"),
    (dict(loss_fn=None), TypeError, "loss_fn must be callable"),
    (dict(batch_at=3), TypeError, "batch_at must be callable, got int"),
    (dict(shard="halves"), TypeError, "shard must be callable, got str"),
    (dict(evaluate="dev"), TypeError, "evaluate must be callable or None"),
    (dict(save_best=1), TypeError, "save_best must be callable or None"),
    (dict(n_steps=0), ValueError, "n_steps must be a positive int, got 0"),
    (dict(n_steps=1.5), ValueError, "n_steps must be a positive int, got 1.5"),
    (dict(n_steps=True), ValueError, "n_steps must be a positive int, got True"),
    (dict(eval_every=-1), ValueError, "eval_every must be an int >= 0, got -1"),
    (dict(eval_every=2), ValueError, "eval_every=2 is set but no evaluate function"),
    (dict(ckpt_every="3"), ValueError, "ckpt_every must be an int >= 0, got '3'"),
    (dict(stop_after=0), ValueError, "stop_after must be a positive int or None, got 0"),
    (dict(seed="0"), TypeError, "seed must be an int, got '0'"),
    (dict(seed=1.0), TypeError, "seed must be an int, got 1.0"),
    (dict(on_nonfinite="ignore"), ValueError, "on_nonfinite must be 'raise' or 'skip', got 'ignore'"),
    (dict(max_grad_norm=0), ValueError, "max_grad_norm must be a finite number > 0 or None, got 0"),
    (dict(max_grad_norm=float("nan")), ValueError, "max_grad_norm must be a finite number > 0 or None, got nan"),
    (dict(resume="yes"), ValueError, "resume must be 'strict' or 'override', got 'yes'"),
    (dict(config=3), TypeError, "config must be a dict, a dataclass or have .to_dict"),
    (dict(out_dir=3), TypeError, "out_dir must be a folder path, got 3"),
    (dict(out_dir=""), TypeError, "out_dir must be a folder path, got ''"),
    (dict(config_file="../config.json"), ValueError, "config_file must be a file name inside out_dir"),
])
def test_fit_rejects_arguments(tmp_path, kw, err, msg):
    with pytest.raises(err, match=msg.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        _fit(tmp_path, **kw)


def test_fit_rejects_a_file_as_out_dir(tmp_path):
    (tmp_path / "run").write_text("not a folder")
    with pytest.raises(ValueError, match=r"out_dir .*run exists and is not a folder"):
        _fit(tmp_path)


@pytest.mark.parametrize("loss_fn, err, msg", [
    (lambda b, s: 1.0, TypeError, "loss_fn must return \\(loss, \\{name: value\\}\\), got float"),
    (lambda b, s: (1.0, {}), TypeError, "loss_fn must return a scalar tensor as its loss, got float at step 1"),
    (lambda b, s: (torch.ones(2, requires_grad=True), {}), TypeError, "scalar tensor as its loss, got Tensor"),
    (lambda b, s: (torch.tensor(1.0), {}), ValueError, "loss_fn returned a loss without a gradient at step 1"),
    (lambda b, s: (torch.ones((), requires_grad=True), [1]), TypeError,
     "loss_fn must return \\(loss, \\{name: value\\}\\), got terms \\[1\\]"),
    (lambda b, s: (torch.ones((), requires_grad=True), {"t": "x"}), TypeError, "loss_fn's terms must be numbers"),
])
def test_fit_rejects_what_loss_fn_returns(tmp_path, loss_fn, err, msg):
    with pytest.raises(err, match=msg):
        _fit(tmp_path, loss_fn=loss_fn)


def test_fit_rejects_a_non_finite_dev_score(tmp_path):
    with pytest.raises(ValueError, match=r"evaluate\(\) returned nan at step 0"):
        _fit(tmp_path, evaluate=lambda: math.nan, eval_every=1)


def test_fit_names_an_unreadable_checkpoint(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint.safetensors").write_bytes(b"\x00not a checkpoint")
    with pytest.raises(ValueError, match=r"cannot read the checkpoint .*checkpoint\.safetensors.*delete it"):
        _fit(tmp_path)


def test_fit_refuses_other_steps_without_override(tmp_path):
    _fit(tmp_path, ckpt_every=1, stop_after=1)
    with pytest.raises(ConfigMismatchError, match="fit.n_steps: 2 → 5"):
        _fit(tmp_path, n_steps=5)


@pytest.mark.parametrize("call, err, msg", [
    (lambda: set_seed("1"), TypeError, "seed must be an int, got '1'"),
    (lambda: set_seed(True), TypeError, "seed must be an int, got True"),
    (lambda: set_seed(-1), ValueError, r"seed must be in \[0, 2\*\*63\), got -1"),
    (lambda: set_seed(2**64), ValueError, "seed must be in"),
    (lambda: check_finite_loss(float("nan"), 1), TypeError, "loss must be a torch.Tensor, got float"),
    (lambda: check_finite_loss(torch.tensor(1.0), "3"), TypeError, "step must be an int, got '3'"),
    (lambda: check_finite_loss(torch.tensor(1.0), 1, "warn"), ValueError,
     "on_nonfinite must be 'raise' or 'skip', got 'warn'"),
    (lambda: profile_value("gpu", {"smoke": 1}), ValueError, "Unknown profile 'gpu'"),
    (lambda: profile_value("cpu", {"smoke": 1}), ValueError, "No setting for profile 'cpu'"),
    (lambda: profile_value("cpu", None), TypeError, "table must be a dict profile -> value, got NoneType"),
    (lambda: resolve_out_dir(3.5), TypeError, "out_dir must be a folder path, got 3.5"),
    (lambda: gather_with_grad([1.0]), TypeError, "x must be a torch.Tensor, got list"),
    (lambda: shard_batch(torch.ones(5, 2), 0, 2), ValueError, "a global batch of 5 rows cannot be split evenly over 2"),
    (lambda: shard_batch(torch.ones(4), 2, 2), ValueError, r"index must be an int in \[0, 2\), got 2"),
    (lambda: shard_batch(torch.ones(4), 0, 0), ValueError, "count must be a positive int, got 0"),
    (lambda: config_diff({}, None), TypeError, "new must be a dict, got NoneType"),
    (lambda: config_diff("a", {}), TypeError, "old must be a dict, got str"),
    (lambda: run_config({"net": torch.nn.Linear(1, 1)}, torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=0.1),
                        config=[1]), TypeError, "config must be a dict"),
    (lambda: to_device(torch.ones(1), "gpu0"), ValueError, "device 'gpu0' is not a torch device"),
    (lambda: markdown_table([[1, 2]]), TypeError, "df must be a pandas DataFrame, got list"),
    (lambda: markdown_table(pd.DataFrame({"a": [1.0]}), floatfmt="%.2f"), ValueError,
     "floatfmt '%.2f' is not a float format"),
    (lambda: plot_training_log(42), TypeError, "log must be a path or a list of records"),
    (lambda: plot_training_log([{"step": 1}]), ValueError, "the log has no loss records"),
    (lambda: plot_training_log("/nonexistent/log.jsonl"), FileNotFoundError,
     "log /nonexistent/log.jsonl is not a file"),
])
def test_helpers_reject(call, err, msg):
    with pytest.raises(err, match=msg):
        call()


ROW = {"table": "T1", "method": "m", "metric": "avg", "value": 1.0}


@pytest.mark.parametrize("kw, err, msg", [
    (dict(name=""), ValueError, "name must be a file stem"),
    (dict(name="../x"), ValueError, r"name must be a file stem .*got '\.\./x'"),
    (dict(rows={"table": "T1"}), TypeError, "rows must be a list of dicts, got dict"),
    (dict(rows=["T1"]), TypeError, r"rows\[0\] must be a dict, got str"),
    (dict(rows=[{"table": "T1"}]), ValueError, r"rows\[0\] lacks \['method', 'metric', 'value'\]"),
    (dict(rows=[ROW | {"value": float("inf")}]), ValueError, r"rows\[0\] value inf is not a finite number"),
    (dict(rows=[ROW | {"value": True}]), ValueError, r"rows\[0\] value True is not a finite number"),
    (dict(rows=[ROW | {"value": "1.0"}]), ValueError, r"rows\[0\] value '1.0' is not a finite number"),
    (dict(findings={"claim": "x"}), TypeError, "findings must be a list of dicts or None, got dict"),
    (dict(findings=[{"claim": "x"}]), ValueError, r"findings\[0\] needs 'claim' and 'holds'"),
    (dict(meta=[1]), TypeError, "meta must be a dict or None, got list"),
])
def test_save_results_rejects(tmp_path, kw, err, msg):
    args = dict(out_dir=tmp_path, name="demo", rows=[ROW]) | kw
    with pytest.raises(err, match=msg):
        save_results(**args)
    assert not list(Path(tmp_path).glob("*.results.json"))            # nothing half-written
