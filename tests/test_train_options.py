"""Options of `sentemb-lit train` (issue 45): AdamW's fused kernel as an opt-in (a default run's config and key are
those of before; the flag reaches the optimizer; a fused run trains, close to the unfused one, and says it was fused),
the output folder's mode (`mkdir`'s, not the temporary's 0700), no path of this machine in a shared folder, and the
corpus read once."""
import json, os
from pathlib import Path
import pytest
import torch
from sentemb_lit.core.tiny_models import tiny_bert

SENTS = [f"sentence number {i} about {w}" for i, w in enumerate(["cats", "dogs", "rain", "music", "trains", "tea",
                                                                   "bread", "snow", "rivers", "chess", "maps", "salt"])]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    "A tiny BERT saved in a folder (a base model given by its local path) and a 12-sentence corpus."
    d = tmp_path_factory.mktemp("options")
    m, t = tiny_bert(0)
    m.save_pretrained(d / "my-bert")
    t.save_pretrained(d / "my-bert")
    (d / "corpus.txt").write_text("\n".join(SENTS) + "\n")
    return d


@pytest.fixture
def adamw_calls(monkeypatch):
    "The keyword arguments of every torch.optim.AdamW built while the test runs."
    calls, real = [], torch.optim.AdamW
    class Spy(real):
        def __init__(self, params, *a, **kw):
            calls.append(kw)
            super().__init__(params, *a, **kw)
    monkeypatch.setattr(torch.optim, "AdamW", Spy)
    return calls


def _train(work, out, method="simcse", **kw):
    from sentemb_lit.recipes import train
    return train(method, str(work / "my-bert"), work / "corpus.txt", out, steps=3, batch_size=4, dev="none",
                 progress=False, **kw)


def test_a_default_run_has_the_config_of_before(work, tmp_path, adamw_calls):
    "No fused key anywhere a default run records its config; AdamW built with torch's default kernel."
    from sentemb_lit.jtcse.step import JTCSEConfig
    from sentemb_lit.jtcse.train import _run_config, train
    cfg = JTCSEConfig(variant="simcse", cael_every=None, batch_size=4, n_steps=2, eval_every=0, ckpt_every=0)
    m, t = tiny_bert(0)
    train(cfg, m, t, SENTS, tmp_path / "run", progress=False)
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == \
        json.loads(json.dumps(_run_config(cfg, SENTS, None, None, "original")))     # computed without the field
    assert adamw_calls and all("fused" not in kw for kw in adamw_calls)
    from sentemb_lit.ranking.runs import posttrain_config
    chains = [["a b", "a c", "d"]]
    assert posttrain_config(chains, fused_adamw=False) == posttrain_config(chains)
    assert "fused_adamw" not in posttrain_config(chains) and posttrain_config(chains, fused_adamw=True)["fused_adamw"]


def test_fused_trains_close_to_unfused_and_is_recorded(work, tmp_path, adamw_calls):
    from safetensors.torch import load_file
    plain = _train(work, tmp_path / "plain")
    assert not plain.fused_adamw and not json.loads((tmp_path / "plain" / "run" / "train.json").read_text())[
        "fused_adamw"]
    n = len(adamw_calls)
    fused = _train(work, tmp_path / "fused", fused_adamw=True)
    assert [kw.get("fused") for kw in adamw_calls[n:]] == [True]                  # the flag reached the optimizer
    run = tmp_path / "fused" / "run"
    assert json.loads((run / "train.json").read_text())["fused_adamw"] is True
    assert json.loads((run / "config.json").read_text())["fused_adamw"] is True
    assert "| `fused_adamw` | True |" in (tmp_path / "fused" / "README.md").read_text()
    assert "- Optimizer: AdamW, the fused kernel" in (tmp_path / "fused" / "README.md").read_text()
    assert "| `fused_adamw` | False |" in (tmp_path / "plain" / "README.md").read_text()
    a, b = (load_file(tmp_path / k / "model.safetensors") for k in ("plain", "fused"))
    assert a.keys() == b.keys()
    diff = max(float((a[k].float() - b[k].float()).abs().max()) for k in a)
    assert diff < 1e-4, diff                                                     # the same training, last digits
    assert fused.steps == plain.steps == 3


def test_the_flag_reaches_ranking_posttrainings_optimizer(tmp_path, adamw_calls):
    from sentemb_lit.ranking.runs import posttrain
    chains = [["a cat sits", "a cat sits down", "a dog runs"], ["rain falls", "rain falls hard", "tea is hot"]]
    r = posttrain(chains, tmp_path / "r", student=tiny_bert(0), n_steps=2, eval_every=None, dev="none",
                  progress=False, fused_adamw=True)
    assert [kw.get("fused") for kw in adamw_calls] == [True]
    assert r["fit"].last_step == 2
    with pytest.raises(TypeError, match="fused_adamw"):
        posttrain(chains, tmp_path / "r2", student=tiny_bert(0), fused_adamw="yes")


def test_the_command_takes_the_flag(work, tmp_path, adamw_calls, capsys):
    from sentemb_lit.cli import main
    code = main(["train", "simcse", "--model", str(work / "my-bert"), "--corpus", str(work / "corpus.txt"), "--out",
                 str(tmp_path / "o"), "--steps", "2", "--batch-size", "4", "--dev", "none", "--quiet",
                 "--fused-adamw"])
    assert code == 0 and [kw.get("fused") for kw in adamw_calls] == [True]
    out = capsys.readouterr().out
    assert "set by this run: {'n_steps': 2, 'batch_size': 4, 'eval_every': 0, 'fused_adamw': True}" in out, out
    assert "fused_adamw" in out and "not in the papers" in out


def test_the_output_folder_gets_mkdirs_mode(work, tmp_path):
    was = os.umask(0o022)
    try:
        _train(work, tmp_path / "o")
        assert (tmp_path / "o").stat().st_mode & 0o777 == 0o755
    finally: os.umask(was)


def test_a_twins_folder_names_no_path_of_this_machine(work, tmp_path):
    "Every text file of a trained twin's folder (its config, card, run log) names the base model by folder name."
    _train(work, tmp_path / "twin", method="tncse")
    folder, found = tmp_path / "twin", {}
    for f in folder.rglob("*"):
        if not f.is_file() or f.suffix in (".safetensors", ".png", ".pt"): continue
        text = f.read_bytes().decode("utf-8", "replace")
        for p in {str(work), str(tmp_path), str(Path.home()), os.getcwd()}:
            if p in text: found.setdefault(str(f.relative_to(folder)), []).append(p)
    assert found == {}, found
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["tower"]["_name_or_path"] == "my-bert"
    assert "base_model: my-bert" in (folder / "README.md").read_text()


def test_the_corpus_is_read_once(work, tmp_path, monkeypatch):
    import sentemb_lit.recipes as R
    reads, real = [], R.read_corpus
    monkeypatch.setattr(R, "read_corpus", lambda path: reads.append(path) or real(path))
    r = _train(work, tmp_path / "o")
    assert r.steps == 3 and len(reads) == 1, reads
