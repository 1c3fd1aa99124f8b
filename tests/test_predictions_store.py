"""Per-pair predictions through the one store's guarantees (issue 43, step 4): a manifest's fields are sealed and its
counts recomputed from the arrays (b); a kill after each write step leaves the old or the new record (c); a second
writer waits or is refused before it writes (d); a save checks every argument before it touches disk (e)."""
import json, os, subprocess, sys, textwrap
from pathlib import Path
import numpy as np
import pytest
from sentemb_lit.core.io import LockedError, exclusive
import sentemb_lit.stats.predictions as P

G = {"stsb": np.arange(5.0), "sickr": np.arange(4.0)}
SEEDS = [{t: v + s for t, v in G.items()} for s in range(2)]


def _manifest(d):
    return Path(d) / "predictions" / "MANIFEST.json"


@pytest.mark.parametrize("field,value", [("n_seeds", 1), ("tasks", ["stsb"]), ("info", {"seeds": [9]}),
                                         ("n_pairs", 5)])
def test_an_edited_manifest_field_is_refused(tmp_path, field, value):                         # (b)
    P.save_predictions(tmp_path, "m", G, SEEDS, {"seeds": [0, 1]})
    m = json.loads(_manifest(tmp_path).read_text())
    m["m.npz"][field] = value
    _manifest(tmp_path).write_text(json.dumps(m))
    with pytest.raises(ValueError, match="differs from the manifest"):
        P.load_predictions(tmp_path, "m")
    m["m.npz"]["seal"] = P.fingerprint({k: v for k, v in m["m.npz"].items() if k != "seal"})   # resealed by hand
    _manifest(tmp_path).write_text(json.dumps(m))
    if field == "info": assert P.prediction_info(tmp_path, "m") == {"seeds": [9]}              # (a sealed claim)
    else:
        with pytest.raises(ValueError, match="the file holds"):                                # counts recomputed
            P.load_predictions(tmp_path, "m")


_SAVE = textwrap.dedent("""
    import sys, numpy as np
    from sentemb_lit.stats.predictions import save_predictions
    v = float(sys.argv[2])
    save_predictions(sys.argv[1], "m", {"stsb": np.arange(5.0)}, [{"stsb": np.arange(5.0) + v}], {"v": v})
""")
STEPS = ["written:m.npz", "written:MANIFEST.json", "replaced:MANIFEST.json", "replaced:m.npz",
         "written:MANIFEST.json#2", "replaced:MANIFEST.json#2"]                 # every write step of a save, in order


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_after_each_write_step_leaves_the_old_or_the_new_record(tmp_path, step):        # (c)
    run = lambda v, env=None: subprocess.run([sys.executable, "-c", _SAVE, str(tmp_path), str(v)],
                                             env=env, capture_output=True, text=True)
    assert run(1).returncode == 0
    r = run(2, os.environ | {"SENTEMB_KILL_AT": step})
    assert r.returncode == 137, r.stderr[-400:]
    gold, seeds = P.load_predictions(tmp_path, "m")
    old_or_new = seeds[0]["stsb"][0]
    assert old_or_new == (1.0 if STEPS.index(step) < 3 else 2.0) and P.prediction_info(tmp_path, "m")["v"] == old_or_new
    assert P.verify_predictions(tmp_path) == ["m"]
    assert run(3).returncode == 0 and P.load_predictions(tmp_path, "m")[1][0]["stsb"][0] == 3.0
    assert sorted(p.name for p in (tmp_path / "predictions").iterdir() if not p.name.endswith(".lock")) == \
        ["MANIFEST.json", "m.npz"]                                                   # nothing left behind


def test_a_second_writer_waits_then_is_refused_before_writing(tmp_path, monkeypatch, lock_holder):  # (d)
    P.save_predictions(tmp_path, "m", G, SEEDS)
    before = {p.name: p.read_bytes() for p in (tmp_path / "predictions").iterdir()}
    with lock_holder(_manifest(tmp_path)):
        real = P.exclusive
        monkeypatch.setattr(P, "exclusive", lambda path, wait=0: real(path, wait=0.5))
        with pytest.raises(LockedError, match="in use by another process"):
            P.save_predictions(tmp_path, "n", G, SEEDS)
        after = {p.name: p.read_bytes() for p in (tmp_path / "predictions").iterdir() if not p.name.endswith(".lock")}
        assert after == {k: v for k, v in before.items() if not k.endswith(".lock")}        # nothing written


@pytest.mark.parametrize("bad", [dict(info={"x": float("nan")}), dict(info=[1]), dict(info={"x": object()}),
                                 dict(seeds=[{"stsb": [1.0]}]), dict(name="../x"), dict(gold={})])
def test_a_save_checks_every_argument_before_touching_disk(tmp_path, bad):                      # (e)
    args = dict(run_dir=tmp_path / "r", name="m", gold=G, seeds=SEEDS, info={}) | bad
    with pytest.raises((TypeError, ValueError)):
        P.save_predictions(**args)
    assert not (tmp_path / "r").exists()
