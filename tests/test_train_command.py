"""`sentemb-lit train` (issue 45) on tiny models: the folders load with sentence-transformers in a fresh interpreter in
which `import sentemb_lit` fails, embeddings equal to the library's; the model card parses; the command writes nothing
on stderr but tqdm bars; `train ranking --corpus` decodes its chains with a tiny Llama; a resume continues an
interrupted run; every bad argument is a one-line error naming it."""
import contextlib, io, json, os, re, subprocess, sys
from pathlib import Path
import numpy as np
import pytest
import yaml
from sentemb_lit.cli import main
from sentemb_lit.core.data import load_sts
from sentemb_lit.core.tiny_models import tiny_bert, tiny_llama

SENTS = ["a man plays a guitar", "two dogs run on the beach", "a much longer sentence so that the padding shows here"]
BAR = re.compile(r"[^\n\r]*\d+%\|[^\n\r]*\| *\d+/\d+ \[[^\n\r]*\]")         # one tqdm bar state


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    "A folder with a tiny BERT, a tiny Llama (both with their tokenizers), a 40-sentence corpus and a dev file."
    d = tmp_path_factory.mktemp("train")
    for name, (m, t) in (("bert", tiny_bert(0)), ("llama", tiny_llama(0, tie_word_embeddings=False))):
        m.save_pretrained(d / name)
        t.save_pretrained(d / name)
    dev = load_sts("stsb", "dev")
    (d / "corpus.txt").write_text("\n".join(list(dict.fromkeys(dev.sentences1))[:40]) + "\n")
    rows = [f"{s}\t{a}\t{b}" for a, b, s in list(zip(dev.sentences1, dev.sentences2, dev.scores))[:30]]
    (d / "dev.tsv").write_text("score\tsentence1\tsentence2\n" + "\n".join(rows) + "\n")
    return d


def run_cli(*args) -> subprocess.CompletedProcess:
    "`sentemb-lit ARGS` in a fresh process (one torch thread): its stdout and stderr as a user sees them."
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", "import sys; from sentemb_lit.cli import main; sys.exit(main())",
                           *map(str, args)], capture_output=True, text=True, timeout=600, env=env)


def run_here(*args) -> tuple[int, str]:
    "`sentemb-lit ARGS` in this process (no second interpreter start): (exit code, stdout)."
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in args])
    return code, out.getvalue()


def only_bars(stderr: str) -> str:
    "What stderr holds besides tqdm bars (empty when nothing else)."
    return BAR.sub("", stderr).replace("\r", "").strip()


@pytest.fixture(scope="module")
def trained(work):
    "`train simcse` (dev: a file of scored pairs) in a fresh process, `train jtcse` (dev none) in this one."
    simcse = run_cli("train", "simcse", "--model", work / "bert", "--corpus", work / "corpus.txt", "--out",
                     work / "simcse", "--steps", 3, "--batch-size", 4, "--dev", work / "dev.tsv")
    assert simcse.returncode == 0, simcse.stdout[-2000:] + simcse.stderr[-3000:]
    code, jtcse = run_here("train", "jtcse", "--model", work / "bert", "--corpus", work / "corpus.txt", "--out",
                           work / "jtcse", "--steps", 2, "--batch-size", 4, "--dev", "none")
    assert code == 0, jtcse[-3000:]
    return {"simcse": simcse, "jtcse": jtcse}


def test_the_command_prints_the_settings_and_writes_nothing_but_bars_on_stderr(trained):
    r = trained["simcse"]
    assert "official_config('simcse', n_layers=2)" in r.stdout
    assert "set by this run: {'n_steps': 3, 'batch_size': 4}" in r.stdout
    assert re.search(r"lr +3e-05 +AdamW", r.stdout) and "dev: your scored pairs `dev.tsv`" in r.stdout
    assert "the last (dev none" in trained["jtcse"] and "cael_every" in trained["jtcse"]
    assert re.search(r"simcse: +100%\|", r.stderr), "no training bar on stderr"
    assert only_bars(r.stderr) == "", f"stderr holds more than tqdm bars: {only_bars(r.stderr)[:1000]!r}"


FRESH = """import json, sys
import numpy as np, torch
sys.modules['sentemb_lit'] = None                                     # `import sentemb_lit...` raises now
try:
    import sentemb_lit
except ImportError: pass
else: raise SystemExit('sentemb_lit imported')
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer
work, tmp, sents = {work!r}, {tmp!r}, {sents!r}
ours = lambda name: np.load(tmp + '/' + name + '.npy')
maxdiff = lambda e, name: float(np.abs(e - ours(name)).max())
d = {{}}
for name, trust in (('simcse', False), ('jtcse', True)):             # the folders of `sentemb-lit train`
    d[name] = maxdiff(SentenceTransformer(work + '/' + name, device='cpu', trust_remote_code=trust).encode(sents), name)
AutoTokenizer.from_pretrained(work + '/jtcse', trust_remote_code=True)
t = AutoTokenizer.from_pretrained(work + '/jtcse', tokenizer_type='bert')         # the card's way, never asking
assert t('a b')['input_ids'][0] == t.cls_token_id
path = tmp + '/remote'                                                # a twin export, its code trusted
kw = dict(trust_remote_code=True)                 # the tokenizer reads config.json (auto_map) too
m, tok = AutoModel.from_pretrained(path, **kw), AutoTokenizer.from_pretrained(path, **kw)
with torch.no_grad(): hf = m(**tok(sents, padding=True, return_tensors='pt')).last_hidden_state[:, 0].numpy()
assert type(m).__module__.endswith('twin_model'), type(m).__module__
d['remote_hf'] = maxdiff(hf, 'remote')
d['remote_st'] = maxdiff(SentenceTransformer(path, device='cpu', **kw).encode(sents), 'remote')
try:                                                                  # not trusted: its code does not run
    SentenceTransformer(tmp + '/plain', device='cpu')
    d['untrusted'] = 'loaded'
except Exception as e:
    d['untrusted'] = 'refused, naming trust_remote_code=True' if 'trust_remote_code=True' in str(e) else repr(e)[:500]
d['imported'] = sorted(k for k, v in sys.modules.items() if v and (k == 'sentemb_lit' or k.startswith('sentemb_lit.')))
del sys.modules['sentemb_lit']                                        # now the library may be imported
import sentemb_lit.jtcse.twin
d['plain'] = maxdiff(SentenceTransformer(tmp + '/plain', device='cpu').encode(sents), 'plain')   # no flag
print(json.dumps(d))
"""


def test_the_folders_load_where_sentemb_lit_cannot_be_imported(work, trained, tmp_path):
    """One `python -I` with sentemb_lit blocked: sentence-transformers gives the library's embeddings (within 1e-5) for
    the trained folders (simcse without the trust flag, the jtcse twin with it) and for a twin export (with
    trust_remote_code=True, which carries its model code `twin_model.py`, loaded through transformers' AutoModel and
    AutoTokenizer too), nothing asks whether to trust the code, the card's tokenizer way loads, an export loaded
    without the flag is refused naming it; then, after `import sentemb_lit.jtcse.twin`, SentenceTransformer(export)
    with no flag gives TwinTowerEncoder.encode."""
    import sentemb_lit.jtcse.twin_model
    from sentemb_lit.core.models import SentenceEncoder, load_encoder
    from sentemb_lit.jtcse.twin import TwinTowerEncoder, export_sentence_transformer
    from sentemb_lit.recipes import load_twin
    np.save(tmp_path / "simcse.npy", SentenceEncoder(*load_encoder(str(work / "simcse")), "cls",
                                                    show_progress=False)(SENTS))
    np.save(tmp_path / "jtcse.npy", load_twin(work / "jtcse").encode(SENTS))
    for name, seed in (("plain", 4), ("remote", 5)):                  # two exports: no load reuses another's code
        (m1, tok), (m2, _) = tiny_bert(seed), tiny_bert(seed + 1)
        t = TwinTowerEncoder(m1, m2, tok, max_length=32)
        np.save(tmp_path / f"{name}.npy", t.encode(SENTS))
        out = export_sentence_transformer(t, None, tmp_path / name)
        assert (out / "twin_model.py").read_bytes() == Path(sentemb_lit.jtcse.twin_model.__file__).read_bytes()
    env = os.environ | {"HF_MODULES_CACHE": str(tmp_path / "modules"), "OMP_NUM_THREADS": "1"}
    code = FRESH.format(work=str(work), tmp=str(tmp_path), sents=SENTS)
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=300, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout[-1000:] + r.stderr[-3000:]
    assert "custom code" not in r.stdout + r.stderr                       # nothing asked whether to trust the code
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d.pop("untrusted") == "refused, naming trust_remote_code=True"
    assert d.pop("imported") == []                                         # no module of sentemb_lit was imported
    assert set(d) == {"simcse", "jtcse", "remote_hf", "remote_st", "plain"} and all(v < 1e-5 for v in d.values()), d


def test_the_model_card_parses_and_names_every_setting(work, trained):
    from sentemb_lit.jtcse.step import JTCSEConfig
    for name in ("simcse", "jtcse"):
        text = (work / name / "README.md").read_text()
        front = yaml.safe_load(text.split("---")[1])
        assert front["library_name"] == "sentence-transformers" and front["pipeline_tag"] == "sentence-similarity"
        assert {"base_model", "tags", "datasets", "metrics"} <= set(front) and name in front["tags"]
        assert all(f"| `{k}` |" in text for k in JTCSEConfig.__dataclass_fields__)
        assert "## Usage" in text and "## Training details" in text and "## Evaluation" in text
    assert front["metrics"] == [] and "trust_remote_code=True" in text                     # jtcse: dev none, a twin
    assert 'tokenizer_type="bert"' in text                 # the twin's tokenizer, without the trust question
    summary = json.loads((work / "simcse" / "run" / "train.json").read_text())
    assert summary["finished"] and summary["steps"] == 3 and [s for s, _ in summary["dev_curve"]] == [0, 3]
    assert (work / "simcse" / "run" / "log.jsonl").is_file() and not (work / "simcse" / "run" / "best").exists()


def test_distillation_and_ranking_from_a_chains_file(work, trained, tmp_path):
    "jtcse-d distils the trained twin; ranking post-trains on a file of chains (Python calls: one process)."
    from sentemb_lit.recipes import train
    r = train("jtcse-d", str(work / "bert"), work / "corpus.txt", tmp_path / "d", teacher=work / "jtcse", steps=2,
              batch_size=4, dev="none", progress=False)
    assert r.config.variant == "distill" and (tmp_path / "d" / "modules.json").is_file()
    from sentemb_lit.core.models import SentenceEncoder, load_encoder
    folder = SentenceEncoder(*load_encoder(str(tmp_path / "d")), "cls", show_progress=False)(SENTS)
    assert np.abs(r.encoder(SENTS) - folder).max() < 1e-5             # the returned model is the folder's, eval mode
    chains = [[f"{s}", f"{s} today", f"{s} today , maybe", "nothing like it"] for s in SENTS]
    (tmp_path / "chains.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chains))
    r = train("ranking", str(work / "bert"), None, tmp_path / "r", chains=tmp_path / "chains.jsonl", steps=3,
              dev=work / "dev.tsv", progress=False)
    assert r.steps == 3 and r.config.lr == 3e-6 and len(r.dev_curve) == 2
    assert r.encoder(SENTS).shape == (3, 32)


def test_ranking_from_a_corpus_decodes_with_a_tiny_llama(work):
    code, out = run_here("train", "ranking", "--model", work / "bert", "--corpus", work / "corpus.txt", "--out",
                         work / "ranking", "--decoder", work / "llama", "--rounds", 2, "--max-new-tokens", 6,
                         "--filters", "none", "--steps", 2, "--dev", "none", "--quiet")
    assert code == 0, out[-3000:]
    assert re.search(r"decoding 40 chains with .*: [\d.]+ s per chain, measured on the first 16", out), out
    assert (work / "ranking" / "run" / "chains.jsonl").is_file() and (work / "ranking" / "modules.json").is_file()


def test_a_resume_continues_an_interrupted_run(work, tmp_path, monkeypatch):
    import sentemb_lit.recipes as R
    real = R.jtcse_train                          # the JTCSE family's training call, stopped after step 2
    def interrupted(config, *a, **kw):
        real(type(config)(**(config.to_dict() | {"ckpt_every": 1})), *a, **kw | {"stop_after": 2})
        raise KeyboardInterrupt
    monkeypatch.setattr(R, "jtcse_train", interrupted)
    args = ("simcse", str(work / "bert"), work / "corpus.txt", tmp_path / "out")
    with pytest.raises(KeyboardInterrupt): R.train(*args, steps=4, batch_size=4, dev="none", progress=False)
    monkeypatch.setattr(R, "jtcse_train", real)
    with pytest.raises(FileExistsError, match="pass resume=True"): R.train(*args, steps=4, batch_size=4, dev="none")
    r = R.train(*args, steps=4, batch_size=4, dev="none", resume=True, progress=False)
    fit_json = json.loads((tmp_path / "out" / "run" / "fit.json").read_text())
    assert r.steps == 4 and [s["from_step"] for s in fit_json["segments"]] == [0, 2]
    steps = [e["step"] for e in map(json.loads, (tmp_path / "out" / "run" / "log.jsonl").read_text().splitlines())]
    assert steps == [1, 2, 3, 4]


BAD = {   # argv after `train` -> what the one error line must name
    "method": (["diffcse", "--out", "o"], "argument method: invalid choice"),
    "steps": (["simcse", "--out", "o", "--steps", "0"], "--steps must be >= 1"),
    "lr": (["simcse", "--out", "o", "--lr", "-1"], "--lr must be > 0"),
    "out": (["simcse"], "the following arguments are required: --out"),
    "corpus missing": (["simcse", "--out", "{o}", "--corpus", "{d}/nope.txt"], "corpus '"),
    "corpus absent": (["simcse", "--out", "{o}"], "corpus (--corpus)"),
    "dev": (["simcse", "--out", "{o}", "--corpus", "{d}/corpus.txt", "--dev", "{d}/nope.tsv"], "dev '"),
    "teacher": (["jtcse-d", "--out", "{o}", "--corpus", "{d}/corpus.txt"], "teacher (--teacher)"),
    "chains": (["ranking", "--out", "{o}"], "chains (--chains FILE) or a corpus"),
    "batch-size": (["ranking", "--out", "{o}", "--chains", "{d}/dev.tsv", "--batch-size", "4"], "--batch-size"),
    "three models": (["jtcse", "--out", "{o}", "--corpus", "{d}/corpus.txt", "--model", "a", "b", "c"], "model must"),
    "resume": (["simcse", "--out", "{o}", "--corpus", "{d}/corpus.txt", "--resume"], "resume (--resume)"),
    "finished": (["simcse", "--out", "{f}", "--corpus", "{d}/corpus.txt"], "already holds a trained model"),
    "rounds": (["simcse", "--out", "{o}", "--corpus", "{d}/corpus.txt", "--rounds", "3"], "--rounds"),
    "filters": (["ranking", "--out", "{o}", "--corpus", "{d}/corpus.txt", "--filters", "bogus"], "decoding: unknown"),
}


@pytest.mark.parametrize("case", BAD)
def test_every_bad_argument_is_a_one_line_error_naming_it(case, work, tmp_path, capsys):
    argv, names = BAD[case]
    (tmp_path / "done" / "run").mkdir(parents=True)
    (tmp_path / "done" / "run" / "train.json").write_text("{}")           # what a finished run leaves
    code = main(["train"] + [a.format(o=tmp_path / "new", d=work, f=tmp_path / "done") for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and err and names in err[-1], (code, err)
    assert len([l for l in err if not l.startswith(("usage:", " ")) and not BAR.search(l)]) == 1, err   # one error
    assert "Loading weights" not in "".join(err)                          # refused before a model is loaded
