"""Behaviour of sentemb_lit.prompting.prompt_embedding: the reference's whole-prompt tokens with the prefix KV cache
kept (SmolLM2's tokenizer and a LLaMA-style SentencePiece tokenizer built offline), cached = uncached, batch
independence, the encoder protocol (MTEB / sentence-transformers calls), the [MASK]-prompt endings, and prompt embedding
split over two processes (the [MASK] prompts live in sentemb_lit.prompting.mask_prompting; their old path in prompting
still works, with a DeprecationWarning). Bad inputs are in test_bad_inputs_prompting.py."""
import io, json, os, subprocess, sys
import numpy as np
import pytest
import torch

from sentemb_lit.prompting.prompt_embedding import (TEMPLATES, PRESET_LAYERS, PromptEncoder, split_template,
                                   normalize_sentence, prompt_ids, shared_prefix_len, encode_distributed, ENCODE_CODE)
from sentemb_lit.prompting.mask_prompting import MaskPromptEncoder, normalize_for_eos
from sentemb_lit.cli import embed_main

torch.set_num_threads(1)

# the reference templates in their own (underscore) notation, transcribed independently of TEMPLATES
REF = {"eol": 'This_sentence_:_"*sent_0*"_means_in_one_word:"',
       "pcot": 'After_thinking_step_by_step_,_this_sentence_:_"*sent_0*"_means_in_one_word:"',
       "ke": ("The_essence_of_a_sentence_is_often_captured_by_its_main_subjects_and_actions,_while_descriptive_terms_"
              "provide_additional_but_less_central_details._With_this_in_mind_,_this_sentence_:_\"*sent_0*\"_means_in_"
              "one_word:\"")}


def reference_ids(tok, key, s):
    "The reference batcher: template clean-up, sentence rewrite, then one tokenizer call on the whole prompt."
    t = REF[key].replace("_", " ").replace("*sep+*", "").replace("*cls*", "")
    if len(s) > 0 and s[-1] not in ".?\"'":
        s += "."
    s = s.replace('"', "'")
    if len(s) > 0 and s[-1] == "?":
        s = s[:-1] + "."
    return tok(t.replace("*sent 0*", s).strip())["input_ids"]


def sentencepiece_tokenizer(texts, vocab_size=1000):
    "A tiny LLaMA-style tokenizer (SentencePiece-BPE pieces with ▁ word marks, byte fallback), trained offline."
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaTokenizerFast
    t = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    t.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"]))
    m = json.loads(t.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2} | {f"<0x{b:02X}>": 3 + b for b in range(256)}
    for piece in sorted(m["vocab"], key=m["vocab"].get):
        vocab.setdefault(piece, len(vocab))
    return LlamaTokenizerFast(vocab=vocab, merges=[tuple(x) for x in m["merges"]], add_bos_token=True)


@pytest.fixture(scope="module")
def stsb_sentences(data_root):
    from sentemb_lit.core.data import load_sts
    d = load_sts("stsb", "test", "senteval")
    return list(dict.fromkeys(d.sentences1 + d.sentences2))


@pytest.fixture(scope="module")
def sp_llama(data_root):
    "(tiny random LLaMA, SentencePiece byte-fallback tokenizer trained on the STS-B train sentences)."
    from transformers import LlamaForCausalLM
    from sentemb_lit.core.data import load_sts
    from sentemb_lit.core.tiny_models import tiny_llama_config
    tok = sentencepiece_tokenizer(load_sts("stsb", "train", "original").sentences1)
    torch.manual_seed(0)
    return LlamaForCausalLM(tiny_llama_config(vocab_size=len(tok), pad_token_id=0)).eval(), tok


def fed_prompts(enc, sentences, **kw):
    "Encode while recording each forward call; rebuild every row's full prompt ids (cached prefix slice + ids run)."
    enc.prefix_cache()
    calls = []
    enc._forward = lambda **f: calls.append(f) or PromptEncoder._forward(enc, **f)
    try:
        out = enc.encode(sentences, **kw)
    finally:
        del enc._forward
    rows = []
    for f in calls:
        k = int(f["position_ids"][0, 0])
        for ids, m in zip(f["input_ids"].tolist(), f["attention_mask"][:, k:].tolist()):
            rows.append(enc.prefix_ids[:k] + ids[:sum(m)])
    return out, rows


def test_templates_exact():
    assert TEMPLATES["eol"] == 'This sentence : "{sentence}" means in one word:"'
    assert TEMPLATES["pcot"] == 'After thinking step by step , this sentence : "{sentence}" means in one word:"'
    assert TEMPLATES["ke"].endswith('With this in mind , this sentence : "{sentence}" means in one word:"')
    assert PRESET_LAYERS == {"eol": -1, "pcot": -2, "ke": -2, "sth": -1, "sum": -1}
    for key, ref in REF.items():
        assert TEMPLATES[key].replace("{sentence}", "*sent 0*") == ref.replace("_", " ")


def test_user_template_with_braces(llama):
    tpl = 'JSON {"x": 1} then "{sentence}" in one word:"'
    assert split_template(tpl) == ('JSON {"x": 1} then "', '" in one word:"')
    assert PromptEncoder(*llama, template=tpl, layer=-1).encode(["a b"]).shape == (1, 32)


def test_normalisation():
    assert normalize_sentence("Why?") == "Why."
    assert normalize_sentence("Yes!") == "Yes!."
    assert normalize_sentence('x "y"') == "x 'y'"
    assert normalize_for_eos("Why?", ".") == "Why."
    assert normalize_for_eos("Go", "?") == "Go?"
    assert normalize_for_eos("Go.", "none") == "Go"


@pytest.mark.parametrize("sentence, eos, expected", [
    ('He said "hi"', "[SEP]", "He said 'hi'"),          # ends in a quote: the reference appends no [SEP]
    ("the dogs'", "[SEP]", "the dogs'"),
    ("A cat sits", "[SEP]", "A cat sits[SEP]"),
    ("Is it?", "[SEP]", "Is it[SEP]"),
    ('say "hi"', ".", "say 'hi'"),
    ('"Stop!"', "none", "'Stop!'"),
    ("Stop!", "none", "Stop"),
    ("Go!", "?", "Go?"),
])
def test_mask_endings_follow_reference(sentence, eos, expected):
    assert normalize_for_eos(sentence, eos) == expected


def test_mask_prompt_text(bert):
    mp = MaskPromptEncoder(*bert, n_masks=2, eos="[SEP]")
    assert mp.prompt('He said "hi"') == "This sentence : \"He said 'hi'\" means [MASK] [MASK] [SEP]"
    assert mp.prompt("a cat") == 'This sentence : "a cat[SEP]" means [MASK] [MASK] [SEP]'


def test_prompt_ids_and_prefix_len(llama):
    _, tok = llama
    assert prompt_ids(tok, "Hi there") == tok("Hi there")["input_ids"]
    assert prompt_ids(tok, "Hi", bos=7) == [7] + tok("Hi", add_special_tokens=False)["input_ids"]
    assert shared_prefix_len([1, 2, 3, 4], [1, 2, 3]) == 3
    assert shared_prefix_len([1, 2, 9, 4], [1, 2, 3]) == 2
    assert shared_prefix_len([1, 2, 3], [1, 2, 3]) == 2


@pytest.mark.parametrize("key", ["eol", "pcot", "ke"])
def test_ids_equal_reference_smollm2_every_stsb_sentence(llama, stsb_sentences, key):
    model, tok = llama
    enc = PromptEncoder(model, tok, template=key)
    parts = [enc.tokenize(s) for s in stsb_sentences]
    bad = [s for s, (p, r) in zip(stsb_sentences, parts) if p + r != reference_ids(tok, key, s)]
    assert not bad, f"{len(bad)} sentences differ, e.g. {bad[:3]}"
    full = sum(len(p) == len(enc.prefix_ids) for p, _ in parts)
    assert full > 0.95 * len(parts)                     # the cache still serves the whole prefix almost always
    assert all(len(p) >= len(enc.prefix_ids) - 1 for p, _ in parts)


@pytest.mark.parametrize("key", ["eol", "pcot", "ke"])
def test_ids_equal_reference_sentencepiece_every_stsb_sentence(sp_llama, stsb_sentences, key):
    model, tok = sp_llama
    enc = PromptEncoder(model, tok, template=key)
    assert enc.bos_ids == [1] and enc.prefix_ids[0] == 1
    parts = [enc.tokenize(s) for s in stsb_sentences]
    bad = [s for s, (p, r) in zip(stsb_sentences, parts) if p + r != reference_ids(tok, key, s)]
    assert not bad, f"{len(bad)} sentences differ, e.g. {bad[:3]}"
    assert sum(len(p) >= len(enc.prefix_ids) - 1 for p, _ in parts) > 0.95 * len(parts)


def test_sentencepiece_tokenizer_is_llama_like(sp_llama):
    _, tok = sp_llama
    pieces = tok.convert_ids_to_tokens(tok("naïve ☃ a man")["input_ids"])
    assert pieces[0] == "<s>" and any(p.startswith("<0x") for p in pieces) and "▁man" in pieces
    # separately tokenised, the sentence would start a word (▁); inside the prompt it follows the quote
    enc = PromptEncoder(sp_llama[0], tok, template="eol")
    sep = enc.prefix_ids + tok("a man.\" means in one word:\"", add_special_tokens=False)["input_ids"]
    assert sep != reference_ids(tok, "eol", "a man")


@pytest.mark.parametrize("which", ["smollm2", "sentencepiece"])
def test_fed_ids_cache_and_batch_independence(llama, sp_llama, stsb_sentences, which):
    model, tok = llama if which == "smollm2" else sp_llama
    tricky = [s for s in stsb_sentences if s[0] in "\"'(#"][:6] + stsb_sentences[:10]
    enc = PromptEncoder(model, tok, template="pcot", batch_size=4)
    cached, rows = fed_prompts(enc, tricky)
    assert sorted(rows) == sorted(reference_ids(tok, "pcot", s) for s in tricky)
    plain = enc.encode(tricky, use_cache=False)
    assert np.abs(cached - plain).max() < 1e-4
    solo = np.stack([enc.encode([s], batch_size=1)[0] for s in tricky[:5]])
    assert np.abs(cached[:5] - solo).max() < 1e-4
    shuffled = enc.encode(tricky[::-1], batch_size=3)[::-1]
    assert np.abs(cached - shuffled).max() < 1e-4


def test_layers_and_duplicates(llama):
    enc = PromptEncoder(*llama, template="ke", batch_size=2)
    sents = ["a b c", "x", "a b c", '"quoted" start']
    both = enc.encode(sents, layers=[-1, -2])
    assert set(both) == {-1, -2} and np.array_equal(both[-1][0], both[-1][2])
    assert np.abs(both[-2] - enc.encode(sents)).max() < 1e-6
    p, r = enc.tokenize("Hi")
    with torch.inference_mode():
        ref = llama[0].model(input_ids=torch.tensor([p + r])).last_hidden_state[0, -1].numpy()
    assert np.abs(enc.encode(["Hi"], layers=[-1])[-1][0] - ref).max() < 1e-4


def test_encoder_protocol_kwargs_and_dataloader(llama, bert):
    from torch.utils.data import DataLoader
    sents = ["a dog runs", "the cat sleeps", "a dog runs fast"]
    enc = PromptEncoder(*llama, template="eol")
    base = enc.encode(sents)
    kw = dict(task_name="STSBenchmark", prompt_type=None, show_progress_bar=False, convert_to_numpy=True)
    assert np.array_equal(enc.encode(sents, batch_size=2, **kw), enc.encode(sents, batch_size=2))
    assert np.abs(enc.encode(sents, batch_size=2, **kw) - base).max() < 1e-4
    loader = DataLoader([{"text": s} for s in sents], batch_size=2)
    assert np.array_equal(enc.encode(loader, task_metadata=None, hf_split="test", hf_subset="default"), base)
    unit = enc.encode(sents, normalize_embeddings=True)
    assert np.allclose(np.linalg.norm(unit, axis=1), 1, atol=1e-5)
    assert enc.similarity(base, base).shape == (3, 3)
    assert np.allclose(enc.similarity_pairwise(base, base), 1, atol=1e-5)
    one = enc.encode("a dog runs")                         # one string -> one vector, as sentence-transformers
    assert one.shape == (32,) and np.abs(one - base[0]).max() < 1e-4
    assert enc.mteb_model_meta.name == f"sentemb_lit/{enc.name}"
    mp = MaskPromptEncoder(*bert, n_masks=2)
    assert mp.encode(loader, task_name="STSBenchmark").shape == (3, 32)


def test_mask_encoder_shapes(bert):
    mp = MaskPromptEncoder(*bert, n_masks=3, eos="!", aggregation="cat", batch_size=2)
    sents = ["a cat", "a dog sits on the mat", "hi"]
    st = mp.mask_states(sents)
    assert st.shape == (3, 3, 32) and mp.encode(sents).shape == (3, 96)
    assert np.abs(mp.mask_states(["hi"])[0] - st[2]).max() < 1e-4


def test_encode_distributed_single_process(llama):
    enc = PromptEncoder(*llama, template="ke", batch_size=2)
    sents = ["a b", "c d e", "f"]
    assert np.array_equal(encode_distributed(enc, sents), enc.encode(sents))
    both = encode_distributed(enc, sents, layers=[-1, -2])
    assert set(both) == {-1, -2} and both[-1].shape == (3, 32)


SCRIPT = r'''
import json, sys
import numpy as np, torch
from accelerate import PartialState
from sentemb_lit.core.tiny_models import tiny_llama
from sentemb_lit.prompting.prompt_embedding import PromptEncoder, encode_distributed
from sentemb_lit.cli import embed_main
torch.set_num_threads(1)
args = json.loads(sys.argv[1])
state = PartialState(cpu=True)
model, tok = tiny_llama(seed=0)
enc = PromptEncoder(model, tok, template="pcot", batch_size=2)
emb = encode_distributed(enc, args["sentences"])
if state.is_main_process:
    np.save(args["out"], emb)
    with open(args["out"] + ".json", "w") as f:
        json.dump({"processes": state.num_processes}, f)
if args.get("model_dir"):
    embed_main(["--model", args["model_dir"], "--method", "pcot", "--batch-size", "2", "--input", args["lines"],
                "--out", args["cli_out"]])
from sentemb_lit.core.distributed import end_processes
end_processes()
'''


def _env():
    return os.environ | {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
                         "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}


def test_two_processes_equal_one(tmp_path, llama):
    "torchrun --nproc_per_node 2: each process encodes its shard; the gathered matrix equals one process's, in order."
    model, tok = llama
    model_dir = tmp_path / "tiny"
    model.save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    sents = [f"sentence number {i} " + "word " * (i % 5) for i in range(11)] + ['"quoted" one', "(paren) two"]
    lines = tmp_path / "lines.txt"
    lines.write_text("\n".join(sents) + "\n")
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    outs = {}
    for n in (1, 2):
        args = {"sentences": sents, "out": str(tmp_path / f"emb{n}.npy"), "model_dir": str(model_dir),
                "lines": str(lines), "cli_out": str(tmp_path / f"cli{n}.npy")}
        if n == 1:                                        # one process: the same script, in this one
            argv, sys.argv = sys.argv, ["run.py", json.dumps(args)]
            try: exec(compile(SCRIPT, "run.py", "exec"), {"__name__": "__main__"})
            finally: sys.argv = argv
        else:
            r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                                str(script), json.dumps(args)], env=_env(), capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-3000:]
        assert json.loads((tmp_path / f"emb{n}.npy.json").read_text()) == {"processes": n}
        outs[n] = (np.load(tmp_path / f"emb{n}.npy"), np.load(tmp_path / f"cli{n}.npy"))
    one, two = outs[1], outs[2]
    assert one[0].shape == two[0].shape == (len(sents), 32)
    print(f"1 vs 2 processes: max |diff| {np.abs(one[0] - two[0]).max():.2e} (function), "
          f"{np.abs(one[1] - two[1]).max():.2e} (sentemb-lit embed)")
    assert np.abs(one[0] - two[0]).max() < 1e-4          # same rows, same order
    assert np.abs(one[1] - two[1]).max() < 1e-4
    assert np.abs(one[0] - one[1]).max() < 1e-4          # the CLI gives the function's embeddings






def test_encode_code_keys_every_method_of_a_run():
    "The nb31 embedding key (code=ENCODE_CODE) reaches the constructor, every method encode runs, and their helpers."
    import inspect
    from sentemb_lit.core.code_keys import code_hash, reached_code
    reach = set(reached_code(*ENCODE_CODE))
    methods = {f.__name__ for f in vars(PromptEncoder).values() if inspect.isfunction(f)} - {"__repr__"}
    assert methods <= reach, methods - reach
    assert {"resolve_template", "fill_template", "normalize_sentence", "prompt_ids", "shared_prefix_len",
            "_token_batches", "_distinct", "encode_options"} <= reach
    assert "MaskPromptEncoder" not in reach and "encode_distributed" not in reach
    assert code_hash(*ENCODE_CODE) == code_hash(*reversed(ENCODE_CODE))
