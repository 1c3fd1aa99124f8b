"""Bad inputs to the public API of sentemb_lit.core.data, models, model_cache and tiny_models: each gives a clear error
naming the input."""
import numpy as np
import pytest
import torch
from sentemb_lit.core.data import (STSData, check_sentences, data_root, fetch_data, load_corpus, load_sts,
                                   training_corpus)
from sentemb_lit.core.io import CorruptFileError
from sentemb_lit.core.models import SentenceEncoder, check_max_length, encode, load_causal_lm, load_encoder, pool
from sentemb_lit.core.model_cache import cached_build, clear_cache, file_sha256, model_path
from sentemb_lit.core.tiny_models import tiny_bert

# ---- data ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, err, msg", [
    (dict(task="sts99"), ValueError, "Unknown STS task 'sts99'"),
    (dict(task=["stsb"]), TypeError, r"task must be a str, got list: \['stsb'\]"),
    (dict(task=None), TypeError, "task must be a str, got NoneType"),
    (dict(task="stsb", split="validation"), ValueError, "stsb has no split 'validation'"),
    (dict(task="sts12", split="train"), ValueError, "sts12 has no split 'train'"),
    (dict(task="stsb", split=1), TypeError, "split must be a str, got int: 1"),
    (dict(task="stsb", variant="moses"), ValueError, "Unknown variant 'moses'"),
    (dict(task="stsb", variant=None), TypeError, "variant must be a str, got NoneType"),
    (dict(task="stsb", root=123), TypeError, "root must be a path .*int: 123"),
    (dict(task="stsb", root=""), ValueError, "root '' is an empty path"),
    (dict(task="stsb", root="/no/such/data/root"), FileNotFoundError, "'/no/such/data/root' .* not an existing folder"),
])
def test_load_sts_arguments(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        load_sts(**kwargs)


@pytest.mark.parametrize("body, msg", [
    (b"s1\ts2\n", r":1: the header must be .* found 's1\\ts2'"),
    (b"", r":1: the header must be .* found ''"),
    (b"score\tsentence1\tsentence2\n4.0\tonly two\n", r"sickr_dev\.tsv:2: expected 3 tab-separated fields, found 2"),
    (b"score\tsentence1\tsentence2\nabc\ta\tb\n", r":2: score 'abc' is not a number"),
    (b"score\tsentence1\tsentence2\n-1\ta\tb\n", r":2: score '-1' is not a finite value in \[0, 5\]"),
    (b"score\tsentence1\tsentence2\ninf\ta\tb\n", r":2: score 'inf' is not a finite value"),
    (b"score\tsentence1\tsentence2\n1.0\ta\t \n", r":2: empty sentence2"),
    (b"score\tsentence1\tsentence2\n1.0\ta\tb\n2.0\t\x93quoted\x94\tb\n", r"sickr_dev\.tsv:3: byte 0x93 is not UTF-8"),
    (b"score\tsentence1\tsentence2\n1.0\ta\tb\n", r"sickr_dev\.tsv: 1 rows, but the standard size of sickr/dev is 500"),
])
def test_malformed_sts_files_name_file_and_line(tmp_path, body, msg):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sickr_dev.tsv").write_bytes(body)
    with pytest.raises(CorruptFileError, match=msg):
        load_sts("sickr", "dev", root=tmp_path)


@pytest.mark.parametrize("call, err, msg", [
    (lambda: load_corpus("wiki2m"), ValueError, "Unknown corpus 'wiki2m'"),
    (lambda: load_corpus(None), ValueError, "Unknown corpus None"),
    (lambda: load_corpus(["wiki1m_head"]), ValueError, r"Unknown corpus \['wiki1m_head'\]"),
    (lambda: training_corpus(5), TypeError, "names must be a list of corpus names, got int"),
    (lambda: training_corpus([]), ValueError, "names is empty"),
    (lambda: training_corpus(["wiki1m_head", "nope"], root="/no/such/root"), ValueError, "Unknown corpus 'nope'"),
    (lambda: data_root(3.5), TypeError, r"root must be a path .*float: 3\.5"),
    (lambda: check_sentences("abc"), TypeError, "not a single str"),
    (lambda: check_sentences([]), ValueError, "sentences is empty"),
    (lambda: check_sentences(["a", 3]), TypeError, r"sentences\[1\] is int"),
    (lambda: check_sentences(["a", b"b"]), TypeError, r"sentences\[1\] is bytes"),
    (lambda: check_sentences(["a", " \t"]), ValueError, r"sentences\[1\] is an empty or whitespace-only"),
    (lambda: check_sentences(None), TypeError, "got NoneType"),
])
def test_corpus_and_sentence_arguments(call, err, msg):
    with pytest.raises(err, match=msg):
        call()


@pytest.mark.parametrize("kwargs, err, msg", [
    (dict(out_dir=None), TypeError, "out_dir must be a folder path, got None"),
    (dict(out_dir=""), TypeError, "out_dir must be a folder path, got ''"),
    (dict(tasks=[]), ValueError, "tasks is empty"),
    (dict(tasks=["stsb", "sts99"]), ValueError, r"Unknown STS task\(s\) \['sts99'\]"),
    (dict(tasks=5), TypeError, "tasks must be a list of task names, got 5"),
    (dict(sources=["mteb/sts12-sts"]), TypeError, "sources must map task names .* got list"),
    (dict(sources={"sts99": "x"}), ValueError, "sources names an unknown task 'sts99'"),
    (dict(sources={"stsb": ""}), ValueError, r"sources\['stsb'\] must be a hub id or a folder, got ''"),
    (dict(sources={"stsb": 7}), ValueError, r"sources\['stsb'\] must be a hub id or a folder, got 7"),
])
def test_fetch_data_arguments(tmp_path, kwargs, err, msg):
    kwargs = {"out_dir": tmp_path, **kwargs}
    with pytest.raises(err, match=msg):
        fetch_data(verbose=False, **kwargs)

# ---- models --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny():
    return tiny_bert()          # 128 positions, MiniLM's tokenizer ([CLS] … [SEP])


SENTS = ["a man plays a guitar", "a cat sleeps"]


@pytest.mark.parametrize("kwargs, err, msg", [
    (dict(pooling="max"), ValueError, "Unknown pooling 'max'"),
    (dict(pooling=None), ValueError, "Unknown pooling None"),
    (dict(batch_size=0), ValueError, "batch_size must be a positive int, got 0"),
    (dict(batch_size=True), ValueError, "batch_size must be a positive int, got True"),
    (dict(batch_size=2.5), ValueError, r"batch_size must be a positive int, got 2\.5"),
    (dict(max_length=0), ValueError, "max_length=0 is too small: the tokenizer adds 2 special"),
    (dict(max_length=1), ValueError, "max_length=1 is too small"),
    (dict(max_length=2), ValueError, "max_length=2 is too small"),
    (dict(max_length=-3), ValueError, "max_length=-3 is too small"),
    (dict(max_length=129), ValueError, "max_length=129 exceeds the 128 positions BertModel can embed"),
    (dict(max_length=20_000), ValueError, "max_length=20000 exceeds the 128 positions"),
    (dict(max_length="64"), TypeError, "max_length must be a positive int, got str: '64'"),
    (dict(max_length=None), TypeError, "max_length must be a positive int, got NoneType"),
    (dict(max_length=64.0), TypeError, r"max_length must be a positive int, got float: 64\.0"),
    (dict(show_progress="yes"), TypeError, "show_progress must be True or False, got 'yes'"),
])
def test_encode_and_encoder_arguments(tiny, kwargs, err, msg):
    model, tok = tiny
    with pytest.raises(err, match=msg):
        encode(model, tok, SENTS, **kwargs)
    with pytest.raises(err, match=msg):
        SentenceEncoder(model, tok, **kwargs)


@pytest.mark.parametrize("call, err, msg", [
    (lambda m, t: encode("bert", t, SENTS), TypeError, "model must be a torch module with parameters, got str"),
    (lambda m, t: encode(m, None, SENTS), TypeError, "tokenizer must be a transformers tokenizer, got NoneType"),
    (lambda m, t: encode(m, t, "one sentence"), TypeError, "not a single str"),
    (lambda m, t: SentenceEncoder(m, t).encode(42), TypeError, "sentences must be a list of strings, got int"),
    (lambda m, t: SentenceEncoder(m, t).encode([{"sentence": "x"}]), TypeError, r"batch 0 has no 'text' entry"),
    (lambda m, t: SentenceEncoder(m, t).encode(["ok", None]), TypeError, r"sentences\[1\] is NoneType"),
    (lambda m, t: SentenceEncoder(m, t).encode(SENTS, batch_size=-1), ValueError, "batch_size must be .* got -1"),
    (lambda m, t: SentenceEncoder(m, t).encode(SENTS, normalize_embeddings="yes"), TypeError,
     "normalize_embeddings must be True or False, got 'yes'"),
    (lambda m, t: SentenceEncoder(m, t).encode(SENTS, show_progress_bar=1), TypeError,
     "show_progress_bar must be True, False or None, got 1"),
    (lambda m, t: SentenceEncoder(m, t).similarity(np.ones((2, 3)), np.ones((2, 4))), ValueError,
     "embeddings1 has 3 dimensions, embeddings2 4"),
    (lambda m, t: SentenceEncoder(m, t).similarity_pairwise(np.ones((2, 3)), np.ones((3, 3))), ValueError,
     r"embeddings1 \(2, 3\) and embeddings2 \(3, 3\) differ in shape"),
    (lambda m, t: SentenceEncoder(m, t).similarity_pairwise(["a"], ["b"]), TypeError,
     "embeddings1 must be a numeric array, got list"),
    (lambda m, t: SentenceEncoder(m, t).similarity_pairwise(np.array([[np.nan, 1.0]]), np.ones((1, 2))),
     ValueError, r"embeddings1 must be a finite \[N, d\] array"),
    (lambda m, t: check_max_length(0.5, m, t, what="--max-length"), TypeError, "--max-length must be a positive int"),
])
def test_encoder_protocol_arguments(tiny, call, err, msg):
    model, tok = tiny
    with pytest.raises(err, match=msg):
        call(model, tok)


def test_nan_weights_are_caught_by_encode(tiny):
    model, tok = tiny_bert(seed=1)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight[:] = float("nan")
    with pytest.raises(ValueError, match=r"the embedding of sentences\[0\] holds NaN or inf \(2 such sentences\)"):
        encode(model, tok, SENTS, show_progress=False)


NO_CUDA = [] if torch.cuda.is_available() else [(dict(device="cuda"), ValueError, "'cuda': CUDA is not available")]


@pytest.mark.parametrize("kwargs, err, msg", [
    (dict(name=""), ValueError, "Model name must be a non-empty string .* got ''"),
    (dict(name=None), ValueError, "Model name must be a non-empty string .* got None"),
    (dict(name=42), ValueError, "Model name must be a non-empty string .* got 42"),
    (dict(name="smollm2-135m-instruct"), ValueError, "'smollm2-135m-instruct' is a registry causal lm model"),
    (dict(name="/no/such/model-dir"), ValueError, "Could not load '/no/such/model-dir': it is not a registry name"),
    (dict(name="minilm-l6", device="tpu9"), ValueError, "device 'tpu9' is not a torch device"),
    (dict(name="minilm-l6", dtype="float32"), TypeError, "dtype must be a torch.dtype .* got 'float32'"),
] + NO_CUDA)
def test_load_encoder_arguments(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        load_encoder(**kwargs)


@pytest.mark.parametrize("kwargs, err, msg", [
    (dict(name="minilm-l6"), ValueError, "'minilm-l6' is a registry encoder model, not a causal lm"),
    (dict(name="smollm2-135m-instruct", dtype=torch.float16, device="cpu:x"), ValueError, "device 'cpu:x'"),
    (dict(name="smollm2-135m-instruct", dtype=16), TypeError, "dtype must be a torch.dtype .* got 16"),
])
def test_load_causal_lm_arguments(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        load_causal_lm(**kwargs)


def test_local_model_folders_with_damage_are_named(tiny, tmp_path):
    model, tok = tiny_bert(seed=2)
    with torch.no_grad():
        model.pooler.dense.weight[0, 0] = float("inf")
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    with pytest.raises(CorruptFileError, match=rf"{tmp_path}.*weight pooler\.dense\.weight holds NaN or inf"):
        load_encoder(str(tmp_path))
    (tmp_path / "config.json").unlink()
    with pytest.raises(ValueError, match=rf"Could not load '{tmp_path}': that local folder is not a loadable"):
        load_encoder(str(tmp_path))


@pytest.mark.parametrize("name, msg", [("nope", "'nope' is not a registry model"), (3, "3 is not a registry model")])
def test_clear_cache_arguments(name, msg):
    with pytest.raises(ValueError, match=msg):
        clear_cache(name)


def _outputs(b=2, l=3, d=4):
    from types import SimpleNamespace
    return SimpleNamespace(last_hidden_state=torch.zeros(b, l, d), pooler_output=None, hidden_states=None)


@pytest.mark.parametrize("call, err, msg", [
    (lambda: pool(_outputs(), torch.ones(2, 5), "mean"), ValueError,
     r"attention_mask must be a \[B, L\] = \(2, 3\) tensor, got \(2, 5\)"),
    (lambda: pool(_outputs(), [[1, 1, 1]], "cls"), ValueError,
     "attention_mask must be .* got list"),
    (lambda: pool("states", torch.ones(2, 3), "cls"), TypeError,
     r"outputs must carry last_hidden_state \[B, L, d\], got str"),
    (lambda: pool(_outputs(), torch.ones(2, 3), "pooler"), ValueError,
     "pooling='pooler' needs a model with a pooler"),
    (lambda: pool(_outputs(), torch.ones(2, 3), ["cls"]), ValueError,
     r"Unknown pooling \['cls'\]"),
    (lambda: tiny_bert(seed=-1), ValueError, "seed must be a non-negative int, got -1"),
    (lambda: tiny_bert(seed="0"), ValueError, "seed must be a non-negative int, got '0'"),
    (lambda: file_sha256("model.gguf"), TypeError,
     "paths must be a list of files, not one path: 'model.gguf'"),
    (lambda: model_path(None), ValueError, "got None"),
    (lambda: cached_build("never-built", None, "demo"), TypeError,
     "build must be a function of the temporary folder, got None"),
    (lambda: STSData("stsb", "test", "original", ["a"], ["b", "c"], [1.0]),
     ValueError, r"sentences1 \(1\), sentences2 \(2\) and scores \(1,\) must have one length"),
])
def test_helpers_of_the_foundation(call, err, msg):
    with pytest.raises(err, match=msg):
        call()


def test_a_tokenizer_without_pad_token_is_named(tiny):
    import copy
    model, tok = tiny
    bare = copy.deepcopy(tok)
    bare.pad_token = None
    with pytest.raises(ValueError, match="tokenizer BertTokenizer.* has no pad token to batch with"):
        encode(model, bare, SENTS)


def test_a_causal_lm_is_not_an_encoder():
    from sentemb_lit.core.tiny_models import tiny_llama
    lm, tok = tiny_llama()
    with pytest.raises(TypeError,
                       match=r"outputs must carry last_hidden_state \[B, L, d\], got CausalLMOutputWithPast"):
        encode(lm, tok, SENTS, max_length=16, show_progress=False)


# ---- sentemb_lit.core.checks (the generic validators) and their use in data ---------------------------------------

import sentemb_lit.core.checks as checks


def test_data_reexports_the_one_check_sentences():
    import sentemb_lit.core.data as data
    assert data.check_sentences is checks.check_sentences
    assert "check_sentences" in data.__all__


@pytest.mark.parametrize("call, err, msg", [
    (lambda: checks.check_type(3, "text", str), TypeError, "text must be a str, got int: 3"),
    (lambda: checks.check_flag("no", "verbose"), TypeError, "verbose must be True or False, got 'no'"),
    (lambda: checks.check_flag(0, "x", optional=True), TypeError, "x must be True, False or None, got 0"),
    (lambda: checks.check_positive_int(0, "batch_size"), ValueError, "batch_size must be a positive int, got 0"),
    (lambda: checks.check_positive_int(True, "n"), ValueError, "n must be a positive int, got True"),
    (lambda: checks.check_positive_int(99, "n_boot", minimum=100), ValueError, "n_boot must be an int >= 100, got 99"),
    (lambda: checks.check_positive_int(17, "n_masks", maximum=16), ValueError, r"n_masks must be an int in 1\.\.16"),
    (lambda: checks.check_number(float("nan"), "tau", gt=0), ValueError, "tau must be a finite number > 0, got nan"),
    (lambda: checks.check_number(1, "level", gt=0, lt=1), ValueError, r"level must be a finite number in \(0, 1\)"),
    (lambda: checks.check_number("1", "omega", ge=0), ValueError, "omega must be a finite number >= 0, got '1'"),
    (lambda: checks.check_choice("max", "reduction", ("mean", "sum")), ValueError,
     r"Unknown reduction 'max'; choose one of \('mean', 'sum'\)"),
    (lambda: checks.check_choice(["a"], "corpus", {"a": 1}), ValueError, r"Unknown corpus \['a'\]"),
    (lambda: checks.check_all_finite([1.0, float("inf")], "gold"), ValueError, "gold contains NaN or inf"),
    (lambda: checks.check_type("x" * 500, "record", dict), TypeError, r"record must be a dict, got str: 'x+\.\.\.x+'$"),
])
def test_generic_checks(call, err, msg):
    with pytest.raises(err, match=msg):
        call()


@pytest.mark.parametrize("call, err, msg", [
    (lambda: training_corpus(["wiki1m_head"], verbose="yes"), TypeError, "verbose must be True or False, got 'yes'"),
    (lambda: load_corpus(5), ValueError, "Unknown corpus 5; choose one of"),
    (lambda: fetch_data("out_never_written", tasks=["stsb"], verbose=1), TypeError, "verbose must be True or False"),
    (lambda: load_sts({"task": "stsb"}), TypeError, r"task must be a str, got dict: \{'task': 'stsb'\}"),
])
def test_data_flags_and_names(call, err, msg):
    with pytest.raises(err, match=msg):
        call()
