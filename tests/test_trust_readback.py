"""Issue #22, 'trust nothing you read back': a planted pickle never runs, stale temporaries of killed writers are swept,
stored results carry a content hash that every read checks, and a store never writes outside its root."""
import json, os, subprocess, sys, warnings
from pathlib import Path
import pytest, torch
from sentemb_lit.core.io import (CorruptFileError, IntegrityError, read_json_verified, seal_json,
                            write_json_verified)
from sentemb_lit.core.store import KeyedStore, Method, cache_key

DEMO = Method("demo.readback", 1, ("core.similarity.cos_matrix",))
from sentemb_lit.core.checkpoint import read_checkpoint
from sentemb_lit.core.results import save_results
from sentemb_lit.core.training import CHECKPOINT, LEGACY_CHECKPOINT, fit


class Planted:
    "Unpickling this object runs a shell command that creates `marker`."
    def __init__(self, marker): self.marker = str(marker)
    def __reduce__(self): return (os.system, (f"touch {self.marker}",))


def _fit(out, **kw):
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 1)
    opt = torch.optim.AdamW(net.parameters(), lr=0.1)
    return fit({"net": net}, opt, lambda b, s: (net(b).pow(2).mean(), {}), lambda s: torch.ones(4, 3), 4, out,
               ckpt_every=2, progress=False, **kw)


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_planted_pickle_checkpoint_never_runs(tmp_path):
    marker, out = tmp_path / "pwned", tmp_path / "run"
    out.mkdir()
    torch.save({"modules": Planted(marker)}, out / LEGACY_CHECKPOINT)
    with pytest.raises(ValueError, match=r"checkpoint\.pt is a checkpoint in the older pickle format; it is never"):
        _fit(out)
    os.replace(out / LEGACY_CHECKPOINT, out / CHECKPOINT)                 # the same bytes under the new name
    with pytest.raises(ValueError, match=r"cannot read the checkpoint .*checkpoint\.safetensors"):
        _fit(out)
    assert not marker.exists()


def test_checkpoint_is_safetensors_and_json(tmp_path):
    _fit(tmp_path, stop_after=2)
    from safetensors import safe_open
    with safe_open(str(tmp_path / CHECKPOINT), framework="pt") as f:
        state = json.loads(f.metadata()["sentemb_lit"])
        assert "modules/net/state/weight" in f.keys() and "optimizer/state/0/exp_avg" in f.keys()
    assert state["format"] == "sentemb_lit.checkpoint" and state["state"]["step"] == 2
    assert read_checkpoint(tmp_path / CHECKPOINT)["config"]["fit"]["n_steps"] == 4


def test_stale_checkpoint_temporaries_are_swept_on_start(tmp_path):
    _fit(tmp_path, stop_after=2)
    stale = tmp_path / f"{CHECKPOINT}.tmp-{_dead_pid()}-abcd"        # a writer SIGKILLed mid-write
    live = tmp_path / f"{CHECKPOINT}.tmp-{os.getpid()}-efgh"         # a writer still running
    legacy = tmp_path / "checkpoint.pt.x7y8z9.tmp"                   # the older temporary name (no pid)
    for p in (stale, live, legacy): p.write_bytes(b"half")
    _fit(tmp_path)
    assert not stale.exists() and not legacy.exists() and live.exists()


def test_killed_checkpoint_write_leaves_nothing_after_the_next_run(tmp_path):
    "SIGKILL a process inside the checkpoint write (its temporary exists), then run again: no temporary remains."
    code = ("import os, signal, sys, torch\nimport sentemb_lit.core.io as io\nfrom safetensors import torch as st\n"
            "real = st.save_file\n"
            "def die(t, p, metadata=None):\n    open(p, 'wb').write(b'half')\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "st.save_file = die\n"
            "net = torch.nn.Linear(3, 1)\nopt = torch.optim.AdamW(net.parameters(), lr=0.1)\n"
            "from sentemb_lit.core.training import fit\n"
            "fit({'net': net}, opt, lambda b, s: (net(b).pow(2).mean(), {}), lambda s: torch.ones(4, 3), 4, "
            f"{str(tmp_path)!r}, ckpt_every=2, progress=False)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert r.returncode == -9, r.stderr[-2000:]
    assert list(tmp_path.glob(f"{CHECKPOINT}.tmp-*"))                # the killed writer's temporary is there
    _fit(tmp_path)
    assert not list(tmp_path.glob("*.tmp*"))


def test_results_json_carries_a_hash_that_reads_check(tmp_path):
    p = save_results(tmp_path, "demo", [{"table": "T", "method": "m", "metric": "avg", "value": 0.5}])
    assert read_json_verified(p)["rows"][0]["value"] == 0.5
    p.write_text(p.read_text().replace("0.5", "0.99"))
    with pytest.raises(IntegrityError, match=r"demo\.results\.json: content hash mismatch \(recorded [0-9a-f]{64}"):
        read_json_verified(p)


def test_unhashed_json_is_refused_until_sealed(tmp_path):
    p = tmp_path / "old.results.json"
    p.write_text(json.dumps({"rows": [], "findings": []}))
    with pytest.raises(IntegrityError, match="has no content hash.*seal_json"):
        read_json_verified(p)
    h = seal_json(p)
    assert read_json_verified(p) == {"rows": [], "findings": []} and json.loads(p.read_text())["_sha256"] == h
    p.write_text("{not json")
    with pytest.raises(CorruptFileError, match=r"old\.results\.json:1: not valid JSON"):
        read_json_verified(p)


def test_keyed_store_never_serves_an_edited_result(tmp_path):
    store, key = KeyedStore(tmp_path), cache_key(DEMO, {"x": 1})
    store.save("eval", key, {"score": 0.5})
    f = store.path("eval", key) / "record.json"
    f.write_text(f.read_text().replace("0.5", "0.99"))
    with pytest.raises(IntegrityError, match="content hash mismatch"):
        store.load("eval", key)                                     # refused, never served


@pytest.mark.parametrize("name", ["", "..", ".", "a/b", "../x", "/etc", "a\\b", "x\0"])
def test_keyed_store_names_stay_inside_the_root(tmp_path, name):
    with pytest.raises(ValueError, match="name must be one folder name inside"):
        KeyedStore(tmp_path).path(name, cache_key(DEMO, {}))


def test_write_json_verified_refuses_what_it_cannot_prove(tmp_path):
    with pytest.raises(TypeError, match="obj must be"):
        write_json_verified(tmp_path / "x.json", [1, 2])
    with pytest.raises(ValueError, match="must not have a key '_sha256'"):
        write_json_verified(tmp_path / "x.json", {"_sha256": "0"})


def test_a_malformed_checkpoint_state_is_named_not_a_bare_key_error(tmp_path):
    from sentemb_lit.core.checkpoint import _write_checkpoint
    _fit(tmp_path, stop_after=2)
    ck = read_checkpoint(tmp_path / CHECKPOINT)
    del ck["state"]["step"]
    _write_checkpoint(tmp_path / CHECKPOINT, ck)
    with pytest.raises(ValueError, match=r"checkpoint\.safetensors has no valid run state or config; delete it"):
        _fit(tmp_path)
    del ck["optimizer"]
    _write_checkpoint(tmp_path / CHECKPOINT, ck)
    with pytest.raises(ValueError, match=r"checkpoint\.safetensors lacks \['optimizer'\]"):
        _fit(tmp_path)


def test_report_command_refuses_a_hand_edited_results_file(tmp_path):
    "`sentemb-lit report` on a record whose results file was edited by hand: exit 2, one line naming the file."
    import shutil
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "nbs").mkdir()
    (tmp_path / "settings.ini").write_text("[DEFAULT]\nlib_name = sentemb_lit\n")
    shutil.copytree(root / "papers" / "baselines", tmp_path / "papers" / "baselines")
    exe = [str(Path(sys.executable).parent / "sentemb-lit"), "report", "--paper", "baselines", "--project",
           str(tmp_path)]
    ok = subprocess.run(exe, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr[-1500:]                 # the record as committed rebuilds
    res = tmp_path / "papers" / "baselines" / "runs" / "cpu" / "04_baselines.results.json"
    rec = json.loads(res.read_text())
    row = next(r for r in rec["rows"] if isinstance(r.get("value"), float))
    row["value"] = 99.99                                          # a hand edit of a stored number
    res.write_text(json.dumps(rec, indent=2))
    bad = subprocess.run(exe, capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, (bad.returncode, bad.stderr[-1500:])
    assert "04_baselines.results.json: content hash mismatch" in bad.stderr, bad.stderr[-1500:]
    assert "99.99" not in (tmp_path / "papers" / "baselines" / "REPORT.md").read_text()


def test_a_planted_best_student_never_runs(tmp_path):
    """ranking post-training restores best/student.safetensors (tensors only): a planted pickle there is refused, and
    one left as the former best/student.pt is never read."""
    import sentemb_lit.ranking.posttraining as R
    import sentemb_lit.ranking.runs as RR
    from sentemb_lit.core.tiny_models import tiny_bert
    marker = tmp_path / "pwned"
    (tmp_path / "best").mkdir()
    torch.save({"x": Planted(marker)}, tmp_path / "best" / "student.pt")          # the former name: never read
    (tmp_path / "log.jsonl").write_text('{"step": 0, "dev": 50.0}\n')
    student = R.RankStudent(tiny_bert(seed=0)[0], "cls", mlp=False)
    RR._after_training(student, tmp_path)
    assert not marker.exists()
    torch.save({"x": Planted(marker)}, tmp_path / "best" / RR.BEST_FILE)         # a pickle under the new name
    with pytest.raises(ValueError, match=r"cannot read .*best/student\.safetensors .*delete it and rerun"):
        RR._after_training(student, tmp_path)
    assert not marker.exists()
