"sentemb_lit.jtcse.train: bad inputs, exact resume of an interrupted twin run, non-finite losses, save/load/export."
import copy, hashlib, json, math
from pathlib import Path
import numpy as np, pytest, torch
from sentemb_lit.core.tiny_models import tiny_bert
from sentemb_lit.core.training import NonFiniteLossError, read_jsonl
from sentemb_lit.jtcse.twin import TwinTowerEncoder, export_sentence_transformer
from sentemb_lit.jtcse.step import JTCSEConfig, official_config, two_view_batch, positive_index, make_loss_fn
from sentemb_lit.jtcse.train import batch_sentences, make_batch_at, train, MemoEncoder, load_model
from sentemb_lit.bench import inference_macs, bert_macs, energy_sts_correlation

CORPUS = [f"this is training sentence number {i} about topic {i % 7}" for i in range(64)]


def twin(seed=0):
    (m1, tok), (m2, _) = tiny_bert(seed), tiny_bert(seed + 1)
    return TwinTowerEncoder(m1, m2, tok, max_length=32)


@pytest.fixture(scope="module")
def tok():
    return tiny_bert()[1]


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("kw, msg", [
    (dict(variant="sbert"), "Unknown variant"), (dict(terms=()), "terms"), (dict(terms=("nce", "x")), "terms"),
    (dict(terms="none"), "do not train"), (dict(cael_every=0), "cael_every"), (dict(cael_every=None), "tncse"),
    (dict(lr=0), "lr"), (dict(lr=float("inf")), "lr"), (dict(temperature=-1), "temperature"),
    (dict(batch_size=0), "batch_size"), (dict(n_steps=1.5), "n_steps"), (dict(max_length=1), "max_length"),
    (dict(eval_every=-1), "eval_every"), (dict(dropout=1.0), "dropout"), (dict(on_nonfinite="ignore"), "on_nonfinite"),
    (dict(nce_layout="bb"), "nce_layout"), (dict(distill_target_scale=0), "distill_target_scale"),
])
def test_config_rejects(kw, msg):
    with pytest.raises(ValueError, match=msg): JTCSEConfig(**kw)


def test_official_defaults():
    c = official_config("jtcse")
    assert ((c.lr, c.batch_size, c.max_length, c.temperature, c.cael_every, c.eval_every)
            == (1.3e-6, 64, 64, 0.05, 2, 100))
    assert official_config("tncse").cael_every is None and official_config("simcse").nce_layout == "b"
    with pytest.raises(ValueError, match="Unknown variant"): official_config("x")


def test_batch_inputs(tok):
    with pytest.raises(ValueError, match="empty"): two_view_batch(tok, ["fine", "  "])
    with pytest.raises(ValueError): two_view_batch(tok, [])
    with pytest.raises(TypeError): two_view_batch(tok, ["ok", 3])
    with pytest.raises(ValueError, match="max_length"): two_view_batch(tok, ["ok"], max_length=0)
    with pytest.raises(ValueError, match="even"): positive_index(5)
    with pytest.raises(ValueError, match="step"): batch_sentences(CORPUS, 4, 0)
    with pytest.raises(ValueError, match="fewer than one batch"): batch_sentences(CORPUS[:3], 4, 1)
    with pytest.raises(ValueError, match="empty"): make_batch_at(CORPUS + [""], tok, JTCSEConfig())


def test_twin_inputs(tok):
    t = twin()
    with pytest.raises(ValueError, match="same object"): TwinTowerEncoder(t.tower_1, t.tower_1, tok)
    with pytest.raises(TypeError, match="PreTrainedModel"): TwinTowerEncoder(t.tower_1, torch.nn.Linear(2, 2), tok)
    small = tiny_bert(0, hidden_size=16, num_attention_heads=2)[0]
    with pytest.raises(ValueError, match="hidden sizes"): TwinTowerEncoder(t.tower_1, small, tok)
    with pytest.raises(ValueError, match="empty"): t.encode(["a", ""])
    with pytest.raises(FileNotFoundError, match="twin_config"): TwinTowerEncoder.from_pretrained("/nonexistent")
    with pytest.raises(FileNotFoundError): load_model("/nonexistent")


def test_loss_fn_inputs(tok):
    t, (single, _) = twin(), tiny_bert(7)
    with pytest.raises(TypeError, match="TwinTowerEncoder"): make_loss_fn(JTCSEConfig(), single)
    with pytest.raises(TypeError, match="single tower"): make_loss_fn(JTCSEConfig(variant="simcse", cael_every=None), t)
    with pytest.raises(TypeError, match="teacher"):
        make_loss_fn(JTCSEConfig(variant="distill", cael_every=None), single)
    with pytest.raises(ValueError, match="only used"): make_loss_fn(JTCSEConfig(), t, teacher=twin(3))
    with pytest.raises(ValueError, match="divide"): make_loss_fn(JTCSEConfig(cael_every=3), t)   # 2-layer towers


def test_macs_and_misc(tok):
    t = twin()
    assert inference_macs(t, 32) == 2 * inference_macs(t.tower_1, 32) == 2 * bert_macs(t.tower_1.config, 32)
    with pytest.raises(ValueError, match="seq_len"): inference_macs(t, -1)
    with pytest.raises(TypeError): inference_macs(torch.nn.Linear(2, 2), 8)
    with pytest.raises(ValueError, match="≥ 3"): energy_sts_correlation([1, 2], [3, 4])
    with pytest.raises(ValueError, match="finite"): energy_sts_correlation([1, 2, float("nan")], [3, 4, 5])
    with pytest.raises(TypeError): MemoEncoder(None)
    with pytest.raises(ValueError, match="pooling"):
        export_sentence_transformer(t.tower_1, tok, "export-never-written", pooling="max")


# ---------------------------------------------------------------- training hygiene
def _cfg(**kw):
    return JTCSEConfig(**(dict(variant="jtcse", cael_every=1, lr=1e-3, batch_size=4, max_length=16, n_steps=5,
                               eval_every=0, ckpt_every=2, seed=3, data_seed=4) | kw))


def test_resume_equals_uninterrupted(tmp_path, tok):
    "JTCSE with CAEL: stop after step 3 (last checkpoint at step 2), resume from a fresh model, same final weights."
    cfg = _cfg()
    full = twin()
    train(cfg, full, tok, CORPUS, tmp_path / "full", progress=False)
    cut = twin()
    r = train(cfg, cut, tok, CORPUS, tmp_path / "cut", progress=False, stop_after=3)
    assert r.stopped_early and r.last_step == 3
    resumed = twin()
    train(cfg, resumed, tok, CORPUS, tmp_path / "cut", progress=False)
    for (n, a), b in zip(full.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), n
    la = [r for r in read_jsonl(tmp_path / "full" / "log.jsonl") if "loss" in r]
    lb = [r for r in read_jsonl(tmp_path / "cut" / "log.jsonl") if "loss" in r]
    assert [r["step"] for r in lb] == [1, 2, 3, 4, 5] and [r["loss"] for r in la] == [r["loss"] for r in lb]
    assert {"nce", "icnce", "icnce_cross", "ictm"} <= set(la[0])


def test_resume_refuses_other_run(tmp_path, tok):
    train(_cfg(n_steps=2), twin(), tok, CORPUS, tmp_path, progress=False)
    with pytest.raises(ValueError, match="belongs to a run"):
        train(_cfg(n_steps=3), twin(), tok, CORPUS, tmp_path, progress=False)


def _poison(t):
    with torch.no_grad(): t.tower_2.encoder.layer[0].output.dense.weight.fill_(float("nan"))
    return t


def test_nonfinite_stops_with_step(tmp_path, tok):
    with pytest.raises(NonFiniteLossError, match="step 1"):
        train(_cfg(variant="tncse", cael_every=None), _poison(twin()), tok, CORPUS, tmp_path, progress=False)


def test_nonfinite_skip(tmp_path, tok):
    r = train(_cfg(variant="tncse", cael_every=None, on_nonfinite="skip", n_steps=2), _poison(twin()), tok, CORPUS,
              tmp_path, progress=False)
    assert r.skipped_steps == 2


def test_distill_and_export(tmp_path, tok):
    from sentence_transformers import SentenceTransformer
    teacher, (student, _) = twin(5), tiny_bert(9)
    before = copy.deepcopy(teacher.state_dict())
    train(JTCSEConfig(variant="distill", cael_every=None, lr=1e-3, batch_size=4, max_length=16, n_steps=2,
                      eval_every=0, ckpt_every=0), student, tok, CORPUS, tmp_path / "d", teacher=teacher,
          progress=False)
    assert all(torch.equal(before[k], v) for k, v in teacher.state_dict().items())       # teacher frozen
    export_sentence_transformer(student, tok, tmp_path / "st")
    st = SentenceTransformer(str(tmp_path / "st"), device="cpu")
    sents = ["a quick test", "another sentence here"]
    enc = tok(sents, padding=True, return_tensors="pt")
    student.eval()
    with torch.no_grad(): ours = student(**enc).last_hidden_state[:, 0].numpy()
    np.testing.assert_allclose(st.encode(sents, convert_to_numpy=True), ours, atol=1e-4)


# ---------------------------------------------------------------- MTEB protocol and sentence-transformers export
def test_twin_through_mteb_sts_evaluator():
    "MTEB's own STS evaluator (DataLoader input, its keywords) gives the Spearman of our evaluate_sts on STS-B test."
    import mteb
    from datasets import Dataset
    from mteb._evaluators.any_sts_evaluator import AnySTSEvaluator
    from mteb.timing import TimingStack
    from scipy.stats import spearmanr
    from sentemb_lit.core.data import load_sts
    from sentemb_lit.core.evaluation import evaluate_sts
    t = twin()
    assert isinstance(t, mteb.models.EncoderProtocol)
    d = load_sts("stsb", "test")
    ds = Dataset.from_dict({"sentence1": list(d.sentences1), "sentence2": list(d.sentences2)})
    ev = AnySTSEvaluator(ds, ("sentence1", "sentence2"), task_metadata=mteb.get_task("STSBenchmark").metadata,
                         hf_split="test", hf_subset="default", input1_prompt_type=None, input2_prompt_type=None,
                         timer=TimingStack())
    scores = ev(t, encode_kwargs={"batch_size": 32})
    e1, e2 = t.encode(list(d.sentences1)), t.encode(list(d.sentences2))
    cos = (e1 * e2).sum(1) / np.linalg.norm(e1, axis=1) / np.linalg.norm(e2, axis=1)
    np.testing.assert_allclose(scores["cosine_scores"], cos, atol=1e-5)
    ours = evaluate_sts(t.encode, tasks=("stsb",)).scores["stsb"]
    # float32 differences of another batch padding reorder a few near-tied cosines of this random model
    assert abs(100 * spearmanr(scores["cosine_scores"], d.scores)[0] - ours) < 0.05


# a twin export loaded in a fresh process (with and without sentemb_lit): tests/test_train_command.py


def test_the_shipped_model_module_imports_only_transformers_and_torch():
    "What transformers checks before it runs remote code: every import of the file, inside functions too."
    import ast, sentemb_lit.jtcse.twin_model
    tree = ast.parse(Path(sentemb_lit.jtcse.twin_model.__file__).read_text(encoding="utf-8"))
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] if n.level == 0 else "." for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert roots and roots <= {"transformers", "torch"}, roots


def test_simcse_head_is_dropped_at_inference(tmp_path, tok):
    "The stage-1 recipe trains through SimCSE's MLP; the saved model is the bare tower (CLS before the MLP)."
    from sentemb_lit.jtcse.train import save_model
    m = tiny_bert(2)[0]
    cfg = JTCSEConfig(variant="simcse", cael_every=None, lr=1e-3, batch_size=4, max_length=16, n_steps=2, eval_every=1,
                      ckpt_every=0)
    assert cfg.mlp_only_train
    r = train(cfg, m, tok, CORPUS, tmp_path / "run", dev_limit=20, progress=False)
    best, _ = load_model(r.best_dir)
    assert set(best.state_dict()) == set(m.state_dict())                        # no head weights in the model
    save_model(m, tok, tmp_path / "saved")
    assert not any("head" in p.name for p in (tmp_path / "saved").iterdir())


# ---------------------------------------------------------------- content-keyed stages and evaluations
from sentemb_lit.core.store import KeyedStore, Method
from sentemb_lit.jtcse.train import run_stage, run_sts, model_fingerprint, sts_fingerprint, STAGE_METHOD, STS_METHOD

_TINY_CFG = dict(variant="tncse", cael_every=None, lr=1e-3, batch_size=4, max_length=16, n_steps=2, eval_every=0,
                 ckpt_every=0, seed=1, data_seed=1)


def _twin_init():
    t = twin(2)
    return t, t.tokenizer


def _module_copy(tmp_path, name, extra=""):
    "A copy of a sentemb_lit module's source (a stand-in for another checkout's code), optionally edited."
    import importlib.util
    src = Path(importlib.util.find_spec(f"sentemb_lit.{name}").origin).read_text()
    # not hash(): salted
    p = tmp_path / f"{name.replace('.', '_')}_{hashlib.sha256(extra.encode()).hexdigest()[:12]}.py"
    p.write_text(src + extra)
    return p


def test_stage_retrains_on_edited_config_or_version(tmp_path):
    store = KeyedStore(tmp_path / "store")
    cfg = JTCSEConfig(**_TINY_CFG)
    _, _, a = run_stage(store, "s", cfg, _twin_init, CORPUS)
    _, _, b = run_stage(store, "s", cfg, _twin_init, CORPUS)
    assert a["trained"] and not b["trained"] and a["key"] == b["key"]
    rec = json.loads((store.path("s", a["key"]) / "record.json").read_text())
    assert rec["key"]["key"] == a["key"] and set(rec["key"]["parts"]) == {"method", "version", "config", "seed", "data"}
    assert rec["code"] == STAGE_METHOD.code() and rec["roots"] == list(STAGE_METHOD.roots)
    _, _, c = run_stage(store, "s", JTCSEConfig(**(_TINY_CFG | {"temperature": 0.1})), _twin_init, CORPUS)
    assert c["trained"] and c["key"] != a["key"]                              # an edited config retrains
    bumped = Method("jtcse.stage_v2_test", 2, STAGE_METHOD.roots)
    _, _, d = run_stage(store, "s", cfg, _twin_init, CORPUS, method=bumped)
    assert d["trained"] and d["key"] != a["key"]                              # another method version retrains
    _, _, e = run_stage(store, "s", cfg, _twin_init, CORPUS[:-4])
    assert e["trained"]                                                       # other training sentences


def test_two_versions_never_share_results(tmp_path):
    "Two versions of a method over one shared store: each trains its own stage and reads back only its own."
    shared = KeyedStore(tmp_path / "shared_cache")
    cfg = JTCSEConfig(**_TINY_CFG)
    v1, v2 = Method("jtcse.share_test", 1, STAGE_METHOD.roots), Method("jtcse.share_test2", 2, STAGE_METHOD.roots)
    ma, _, a = run_stage(shared, "s", cfg, _twin_init, CORPUS, method=v1)
    mb, _, b = run_stage(shared, "s", cfg, _twin_init, CORPUS, method=v2)
    assert a["trained"] and b["trained"] and a["key"] != b["key"]
    assert store_folders(shared, "s") == 2
    _, _, a2 = run_stage(shared, "s", cfg, _twin_init, CORPUS, method=v1)
    assert not a2["trained"] and a2["key"] == a["key"]
    fp = model_fingerprint(ma)
    s1, s2 = Method("jtcse.sts_test", 1, STS_METHOD.roots), Method("jtcse.sts_test2", 2, STS_METHOD.roots)
    ra = run_sts(shared, "e", lambda s: ma.encode(s), fp, limit=20, method=s1)
    rb = run_sts(shared, "e", lambda s: 1 / 0, fp, limit=20, method=s1)         # same version: read back
    assert ra["scores"] == rb["scores"]
    with pytest.raises(ZeroDivisionError):                                      # another version: recomputed
        run_sts(shared, "e", lambda s: 1 / 0, fp, limit=20, method=s2)


def store_folders(store, name):
    return sum(1 for p in (store.root / name).iterdir() if (p / "record.json").exists())


def test_reversed_gold_changes_the_numbers(tmp_path, data_root):
    "A data root whose STS-B test gold scores are reversed (5 − s): a new key, and the STS-B Spearman flips sign."
    import os
    root = tmp_path / "data"
    root.mkdir()
    for p in data_root.iterdir():
        if p.name != "sts_senteval": os.symlink(p, root / p.name)
    (root / "sts_senteval").mkdir()
    for p in (data_root / "sts_senteval").iterdir():
        if p.name != "stsb_test.tsv": os.symlink(p, root / "sts_senteval" / p.name)
    lines = (data_root / "sts_senteval" / "stsb_test.tsv").read_text().rstrip("\n").split("\n")
    rev = [lines[0]] + [f"{5 - float(l.split(chr(9))[0]):g}\t" + l.split("\t", 1)[1] for l in lines[1:]]
    (root / "sts_senteval" / "stsb_test.tsv").write_text("\n".join(rev) + "\n")
    assert sts_fingerprint(root=root) != sts_fingerprint(root=data_root)
    t = twin(3)
    store, fp = KeyedStore(tmp_path / "store"), model_fingerprint(t)
    enc = MemoEncoder(lambda s: t.encode(s, batch_size=512))      # all pairs: the strided subset depends on the gold
    real = run_sts(store, "e", enc, fp, root=data_root)
    rev_r = run_sts(store, "e", enc, fp, root=root)
    assert rev_r["key"] != real["key"]
    assert rev_r["scores"]["stsb"] == pytest.approx(-real["scores"]["stsb"], abs=1e-6)
    assert rev_r["scores"]["sts12"] == pytest.approx(real["scores"]["sts12"], abs=1e-9)


# ---------------------------------------------------------------- issue #22: trust nothing read back
TRAINERS = {
    "jtcse": lambda: (_cfg(n_steps=3, ckpt_every=1), twin(), None),
    "tncse": lambda: (_cfg(variant="tncse", cael_every=None, n_steps=3, ckpt_every=1), twin(), None),
    "simcse": lambda: (_cfg(variant="simcse", cael_every=None, n_steps=3, ckpt_every=1), tiny_bert(2)[0], None),
    "distill": lambda: (_cfg(variant="distill", cael_every=None, n_steps=3, ckpt_every=1), tiny_bert(9)[0], twin(5)),
}


@pytest.mark.parametrize("trainer", list(TRAINERS))
def test_every_trainer_refuses_a_resume_with_another_config(tmp_path, tok, trainer):
    "temperature, terms, max_length, batch_size, lr: each refused by name, config.json untouched; override continues"
    from sentemb_lit.core.checkpoint import ConfigMismatchError
    cfg, model, teacher = TRAINERS[trainer]()
    train(cfg, model, tok, CORPUS, tmp_path, teacher=teacher, progress=False, stop_after=2)
    written = (tmp_path / "config.json").read_text()
    assert json.loads(written)["temperature"] == cfg.temperature and "ckpt_every" not in json.loads(written)
    for change in ({"temperature": 0.1}, {"terms": ("nce",)}, {"max_length": 12}, {"batch_size": 2}, {"lr": 5e-4}):
        key = next(iter(change))
        new, model, teacher = TRAINERS[trainer]()
        with pytest.raises(ConfigMismatchError, match=rf"config\.{key}"):
            train(JTCSEConfig(**(new.to_dict() | change)), model, tok, CORPUS, tmp_path, teacher=teacher,
                  progress=False)
        assert (tmp_path / "config.json").read_text() == written                # a refused run writes nothing
    new, model, teacher = TRAINERS[trainer]()
    r = train(JTCSEConfig(**(new.to_dict() | {"lr": 5e-4})), model, tok, CORPUS, tmp_path, teacher=teacher,
              progress=False, resume="override")
    assert r.last_step == 3 and json.loads((tmp_path / "config.json").read_text())["lr"] == 5e-4


def test_a_resume_on_another_corpus_or_teacher_is_refused(tmp_path, tok):
    from sentemb_lit.core.checkpoint import ConfigMismatchError
    cfg, model, teacher = TRAINERS["distill"]()
    train(cfg, model, tok, CORPUS, tmp_path, teacher=teacher, progress=False, stop_after=2)
    with pytest.raises(ConfigMismatchError, match=r"config\.corpus"):
        train(cfg, tiny_bert(9)[0], tok, CORPUS[::-1], tmp_path, teacher=teacher, progress=False)
    with pytest.raises(ConfigMismatchError, match=r"config\.teacher"):
        train(cfg, tiny_bert(9)[0], tok, CORPUS, tmp_path, teacher=twin(6), progress=False)


def test_save_pretrained_never_deletes_files_it_did_not_write(tmp_path):
    t, target = twin(), tmp_path / "twin"
    target.mkdir()
    (target / "notes.txt").write_text("my notes")
    with pytest.raises(FileExistsError, match=r"twin is not empty \(notes\.txt\) and is not a TwinTowerEncoder"):
        t.save_pretrained(target)
    t.save_pretrained(target, overwrite=True)
    assert (target / "notes.txt").read_text() == "my notes"
    (target / "tower_1" / "extra.txt").write_text("also mine")
    t.save_pretrained(target)                                               # a save of ours: replaced in place
    assert (target / "notes.txt").read_text() == "my notes" and (target / "tower_1" / "extra.txt").exists()
    assert not list(tmp_path.glob("twin.*"))                                   # no temporary or .old left
    assert TwinTowerEncoder.from_pretrained(target).max_length == 32


def test_export_never_deletes_files_it_did_not_write(tmp_path, tok):
    t, target = twin(), tmp_path / "st"
    target.mkdir()
    (target / "results.csv").write_text("a,b")
    with pytest.raises(FileExistsError, match="is not a sentence-transformers export written by sentemb_lit"):
        export_sentence_transformer(t, None, target)
    export_sentence_transformer(t, None, target, overwrite=True)
    export_sentence_transformer(t.tower_1, tok, target)                     # ours now: no flag needed
    assert (target / "results.csv").read_text() == "a,b"
    assert not (target / "README.md").exists()                             # the twin export's own file is gone
    with pytest.raises(FileExistsError, match="is not a TwinTowerEncoder"):
        t.save_pretrained(target)                                         # an export is not a twin save


@pytest.mark.parametrize("edit, msg", [
    ({"pooling": "mean"}, "pooling 'mean' is not supported"),
    ({"combine": "concat"}, "combine 'concat' is not supported"),
    ({"version": 2}, "version 2 is not supported"),
    ({"format": "other.Format"}, "format 'other.Format' is not supported"),
    ({"towers": ["tower_1", "../elsewhere"]}, "tower folder '../elsewhere' leaves the saved folder"),
    ({"towers": ["/abs/x", "tower_2"]}, "tower folder '/abs/x' leaves the saved folder"),
    ({"towers": ["tower_1", "tower_1"]}, "name one folder"),
    ({"max_length": 0}, "max_length must be an int >= 2"),
    ({"cael": {"every": 2}}, "is not a CAELConfig"),
])
def test_twin_config_fields_are_checked(tmp_path, edit, msg):
    from sentemb_lit.jtcse.twin import TWIN_CONFIG
    twin().save_pretrained(tmp_path / "t")
    f = tmp_path / "t" / TWIN_CONFIG
    f.write_text(json.dumps(json.loads(f.read_text()) | edit))
    with pytest.raises(ValueError, match=rf"twin_config\.json.*{msg}"):
        TwinTowerEncoder.from_pretrained(tmp_path / "t")


def test_loading_an_export_as_a_twin_says_to_import_twin(tmp_path):
    export_sentence_transformer(twin(), None, tmp_path / "st")
    with pytest.raises(FileNotFoundError, match=r"`import sentemb_lit\.jtcse\.twin` first"):
        TwinTowerEncoder.from_pretrained(tmp_path / "st")
    assert "import sentemb_lit.jtcse.twin" in (tmp_path / "st" / "README.md").read_text()






def test_names_that_stayed_in_jtcse_do_not_warn():
    import warnings, sentemb_lit.jtcse.train as J
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert J.run_stage and J.train and J.TowerPoolings and J.STAGE_METHOD.roots == ("jtcse.train.run_stage",)
    assert "TwinTowerEncoder" not in J.__all__ and "run_sts" in J.__all__
