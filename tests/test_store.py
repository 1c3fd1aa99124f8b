"""The one store (issue 43): results keyed by (method, version, configuration, seed, data), the code a run reaches
recorded and checked when read, and the planted attacks on a record refused."""
import json, os, shutil, subprocess, sys, textwrap
from pathlib import Path
import numpy as np
import pytest
import sentemb_lit
import sentemb_lit.core.store as S
from sentemb_lit.core.code_keys import reached_code
from sentemb_lit.core.io import IntegrityError, LockedError, exclusive, fingerprint
from sentemb_lit.core.store import KeyedStore, Method, StaleCodeError, cache_key, verify_store, ack_line
from sentemb_lit.core.tiny_models import tiny_bert
from sentemb_lit.jtcse.twin import TwinTowerEncoder
from sentemb_lit.jtcse.step import JTCSEConfig
from sentemb_lit.jtcse.train import run_stage, stage_key, STAGE_METHOD
import sentemb_lit.jtcse.losses as losses

PKG = Path(sentemb_lit.__file__).parent
CORPUS = [f"sentence number {i} about a topic" for i in range(16)]
CFG = dict(variant="tncse", cael_every=None, lr=1e-3, batch_size=4, max_length=16, n_steps=2, eval_every=0,
           ckpt_every=0, seed=1, data_seed=1)


def _twin():
    (m1, tok), (m2, _) = tiny_bert(0), tiny_bert(1)
    return TwinTowerEncoder(m1, m2, tok, max_length=32), tok


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    "One stored JTCSE stage (tiny twin, 2 steps) in a store of its own."
    root = tmp_path_factory.mktemp("store")
    _, _, info = run_stage(KeyedStore(root / "store"), "tncse_s0", JTCSEConfig(**CFG), _twin, CORPUS)
    return root, info


def _edited_package(dest: Path) -> Path:
    "A copy of the package whose loss math is edited (info_nce's logits doubled)."
    pkg = shutil.copytree(PKG, dest / "sentemb_lit", ignore=shutil.ignore_patterns("__pycache__"))
    src = (pkg / "jtcse" / "losses.py").read_text()
    anchor = "def info_nce("
    assert anchor in src
    body = src[src.index(anchor):]
    ret = body.index("    return ")
    edited = body[:ret] + "    scale_edit = 2.0\n" + body[ret:]
    (pkg / "jtcse" / "losses.py").write_text(src[:src.index(anchor)] + edited)
    return pkg


def test_a_loss_math_edit_refuses_the_stored_stage_and_names_the_ways_out(stage, tmp_path, monkeypatch):
    root, info = stage
    store = KeyedStore(root / "store")
    key = stage_key(JTCSEConfig(**CFG), CORPUS, _stage_init_id(), None, None)
    assert key["key"] == info["key"] and store.load("tncse_s0", key) is not None
    edited = _edited_package(tmp_path)
    assert "info_nce" in reached_code(*STAGE_METHOD.roots, package=edited)
    monkeypatch.setattr(S, "code_hash", lambda *r: fingerprint({"reached": reached_code(*r, package=edited)}))
    with pytest.raises(StaleCodeError) as e:
        store.load("tncse_s0", key)
    msg = str(e.value)
    assert "jtcse.stage" in msg and "raise the version" in msg and "keys/versions.json" in msg
    # way out 1: a version bump gives the stage a new key (recomputed, never confused with the old record)
    bumped = Method("jtcse.stage", 2, STAGE_METHOD.roots)
    try:
        new = stage_key(JTCSEConfig(**CFG), CORPUS, _stage_init_id(), None, None, method=bumped)
        assert new["key"] != key["key"] and store.load("tncse_s0", new) is None
    finally:
        Method("jtcse.stage", 1, STAGE_METHOD.roots)
    # way out 2: an acknowledgement serves it (the goldens then decide whether the claim holds)
    (root / "keys").mkdir(exist_ok=True)
    line = json.loads(ack_line(STAGE_METHOD, "test: an edit acknowledged"))
    assert line["code"] == S.code_hash(*STAGE_METHOD.roots)
    (root / "keys" / "versions.json").write_text("[\n" + json.dumps(line) + "\n]\n")
    try: assert store.load("tncse_s0", key)["key"] == info["key"]
    finally: (root / "keys" / "versions.json").unlink()


def _stage_init_id():
    from sentemb_lit.jtcse.train import model_fingerprint
    return model_fingerprint(_twin()[0])


def test_a_new_template_or_preset_leaves_every_key_alone(monkeypatch):
    from sentemb_lit.prompting import prompt_embedding as P
    before = stage_key(JTCSEConfig(**CFG), CORPUS, "0" * 64)
    monkeypatch.setitem(losses.TABLE_X_ABLATIONS, "a new preset", ("nce",))
    monkeypatch.setitem(P.TEMPLATES, "a-new-template", 'This sentence : "*sent 0*" means in one word:"')
    assert stage_key(JTCSEConfig(**CFG), CORPUS, "0" * 64) == before
    m = Method("prompting.key_test", 1, ("prompting.prompt_embedding.resolve_template",))
    k = cache_key(m, {"template": "x"}, data=("stsb",))
    monkeypatch.setitem(P.TEMPLATES, "another-template", "*sent 0*")
    assert cache_key(m, {"template": "x"}, data=("stsb",)) == k


DEMO = Method("demo.store_test", 1, ("core.similarity.cos_matrix",))


def test_a_swapped_record_is_refused(tmp_path):                                           # (a)
    store = KeyedStore(tmp_path)
    k1, k2 = cache_key(DEMO, {"lr": 1}), cache_key(DEMO, {"lr": 2})
    store.save("r", k1, {"score": 1.0})
    store.save("r", k2, {"score": 2.0})
    (store.path("r", k1) / "record.json").write_bytes((store.path("r", k2) / "record.json").read_bytes())
    with pytest.raises(IntegrityError, match="another key"):
        store.load("r", k1)
    with pytest.raises(IntegrityError):
        verify_store(tmp_path)


def test_an_edited_file_beside_a_record_is_refused(tmp_path):
    store = KeyedStore(tmp_path)
    k = cache_key(DEMO, {"lr": 1})
    f = store.path("r", k) / "pairs.npz"
    f.parent.mkdir(parents=True)
    np.savez(f, pred=np.arange(4.0))
    store.save("r", k, {"score": 1.0}, files=[f])
    np.savez(f, pred=np.arange(4.0) + 1)
    with pytest.raises(IntegrityError, match="changed after it was stored"):
        store.load("r", k)


_KILL = textwrap.dedent("""
    import sys
    from sentemb_lit.core.store import KeyedStore, Method, cache_key
    m = Method("demo.store_test", 1, ("core.similarity.cos_matrix",))
    KeyedStore(sys.argv[1]).save("r", cache_key(m, {"lr": 1}), {"score": float(sys.argv[2])})
""")


@pytest.mark.parametrize("step", ["written:record.json", "replaced:record.json"])
def test_a_kill_after_each_write_step_leaves_a_readable_store(tmp_path, step):              # (c)
    env = os.environ | {"SENTEMB_KILL_AT": step}
    r = subprocess.run([sys.executable, "-c", _KILL, str(tmp_path), "1.0"], env=env, capture_output=True, text=True)
    assert r.returncode == 137, r.stderr[-500:]
    got = KeyedStore(tmp_path).load("r", cache_key(DEMO, {"lr": 1}))
    assert got == ({"score": 1.0} if step.startswith("replaced") else None)       # the new record, or none (the old)
    r = subprocess.run([sys.executable, "-c", _KILL, str(tmp_path), "1.0"], capture_output=True, text=True)
    assert r.returncode == 0 and KeyedStore(tmp_path).load("r", cache_key(DEMO, {"lr": 1})) == {"score": 1.0}
    assert verify_store(tmp_path)["records"] == 1                                   # no stray temporary left


def test_a_second_writer_waits_and_writes_nothing_while_the_first_holds_the_record(tmp_path, monkeypatch,  # (d)
                                                                                    lock_holder):
    store, k = KeyedStore(tmp_path), cache_key(DEMO, {"lr": 1})
    with lock_holder(store.path("r", k)):
        real = S.exclusive
        monkeypatch.setattr(S, "exclusive", lambda path, wait=0: real(path, wait=0.5))
        with pytest.raises(LockedError, match="in use by another process"):
            store.save("r", k, {"score": 1.0})
        assert not (store.path("r", k) / "record.json").exists()                    # refused before writing
    assert store.save("r", k, {"score": 1.0}) == {"score": 1.0}


@pytest.mark.parametrize("bad", [
    dict(result={"x": float("nan")}), dict(result=[1]), dict(files="pairs.npz"), dict(files=["/elsewhere.npz"]),
    dict(files=["missing.npz"]), dict(key={"key": "0" * 64, "parts": {}})])
def test_a_save_checks_every_argument_before_touching_disk(tmp_path, bad):                 # (e)
    store = KeyedStore(tmp_path / "s")
    args = dict(name="r", key=cache_key(DEMO, {"lr": 1}), result={"score": 1.0}, files=[]) | bad
    with pytest.raises((TypeError, ValueError, FileNotFoundError)):
        store.save(**args)
    assert not (tmp_path / "s").exists()


def test_verify_reads_back_every_committed_record():
    "`sentemb-lit verify` on this project: every record's digest covers its key, every file and predictions entry."
    cli = "import sys; from sentemb_lit.cli import main; sys.exit(main(sys.argv[1:]))"
    r = subprocess.run([sys.executable, "-c", cli, "verify", "--project", str(PKG.parent)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-800:]
    lines = r.stdout.splitlines()
    stores = [l for l in lines if "/store/" in l]
    assert len(stores) >= 7 and all(" records, " in l for l in stores), r.stdout
    assert sum(int(l.split(": ")[1].split()[0]) for l in stores) >= 530
