"""Bad inputs to sentemb_lit.prompting.prompt_embedding and sentemb_lit.prompting.mask_prompting: each raises a clear
ValueError / TypeError (a ValueError for an unknown template key too) whose message names the offending argument or
value; tiny random models, seconds."""
import io
import re
import numpy as np
import pytest
import torch

from sentemb_lit.prompting.prompt_embedding import (PromptEncoder, resolve_template, split_template, normalize_sentence,
                                   fill_template, prompt_ids, shared_prefix_len, encode_distributed)
from sentemb_lit.prompting.mask_prompting import MaskPromptEncoder, normalize_for_eos, mask_template
from sentemb_lit.cli import embed_main

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def enc(llama):
    return PromptEncoder(*llama, template="pcot", batch_size=2)


@pytest.fixture(scope="module")
def mp(bert):
    return MaskPromptEncoder(*bert, n_masks=2, eos=".")


@pytest.mark.parametrize("bad, err, match", [
    ("Say it", ValueError, r"Template 'Say it' has no \{sentence\} slot"),
    ("{sentence} {sentence}", ValueError, r"has 2 \{sentence\} slots"),
    ("unknownkey", ValueError, r"Unknown template key 'unknownkey'"),
    (None, TypeError, r"template must be a string.*got NoneType"),
    (3, TypeError, r"template must be a string.*got int"),
])
def test_bad_template(bad, err, match):
    with pytest.raises(err, match=match):
        resolve_template(bad)


def test_split_and_fill_reject_bad_template():
    with pytest.raises(ValueError, match=r"Template 'no slot here' has no"):
        split_template("no slot here")
    with pytest.raises(ValueError, match=r"Unknown template key 'cot'"):
        fill_template("cot", "a dog")


@pytest.mark.parametrize("bad, match", [(3, r"sentence must be a str, got int"),
                                        (None, r"sentence must be a str, got NoneType"),
                                        (b"bytes", r"sentence must be a str, got bytes")])
def test_normalize_sentence_type(bad, match):
    with pytest.raises(TypeError, match=match):
        normalize_sentence(bad)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(layer=3), ValueError, r"layer=3 is out of range for a model with 2 layers"),
    (dict(layer=-4), ValueError, r"layer=-4 is out of range"),
    (dict(layer=1.5), TypeError, r"layer must be an int.*got float"),
    (dict(layer="last"), TypeError, r"layer must be an int.*got str"),
    (dict(layer=True), TypeError, r"layer must be an int.*got bool"),
    (dict(batch_size=0), ValueError, r"batch_size must be a positive int, got 0"),
    (dict(batch_size=2.5), ValueError, r"batch_size must be a positive int, got 2.5"),
    (dict(bos="yes"), ValueError, r"bos must be 'auto', True, False or a token id, got 'yes'"),
    (dict(max_length=0), ValueError, r"max_length must be a positive int, got 0"),
    (dict(device="nonsense-device"), ValueError, r"device must be a torch device.*'nonsense-device'"),
    (dict(template="nope"), ValueError, r"Unknown template key 'nope'"),
])
def test_prompt_encoder_bad_arguments(llama, kwargs, err, match):
    with pytest.raises(err, match=match):
        PromptEncoder(*llama, **kwargs)


def test_prompt_encoder_bad_model_and_tokenizer(llama):
    model, tok = llama
    with pytest.raises(TypeError, match=r"model must be a transformers model.*got str"):
        PromptEncoder("smollm2", tok)
    with pytest.raises(TypeError, match=r"tokenizer must be a Hugging Face tokenizer, got dict"):
        PromptEncoder(model, {"a": 1})


def test_bos_true_without_bos_token(llama):
    model, tok = llama
    saved = tok.bos_token
    tok.bos_token = None
    try:
        with pytest.raises(ValueError, match=r"bos=True but the tokenizer has no bos_token_id"):
            PromptEncoder(model, tok, bos=True)
    finally:
        tok.bos_token = saved


@pytest.mark.parametrize("bad, err, match", [
    ([], ValueError, r"sentences.*empty"),
    ([""], ValueError, r"sentences\[0\]"),
    (["ok", "   "], ValueError, r"sentences\[1\]"),
    (["ok", None], TypeError, r"sentences\[1\] is NoneType, not str"),
    ([3.5], TypeError, r"sentences\[0\] is float, not str"),
    ({"no_text": ["a"]}, TypeError, r"sentences: batch 0 has no 'text' entry"),
])
def test_prompt_encoder_bad_sentences(enc, bad, err, match):
    with pytest.raises(err, match=match):
        enc.encode(bad)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(layers=[-1, 9]), ValueError, r"layer=9 is out of range"),
    (dict(layers=[]), ValueError, r"layers is empty"),
    (dict(layers=["x"]), TypeError, r"layer must be an int.*got str"),
    (dict(batch_size=-1), ValueError, r"batch_size must be a positive int or None, got -1"),
    (dict(batch_size="8"), ValueError, r"batch_size must be a positive int or None, got '8'"),
])
def test_prompt_encoder_bad_encode_arguments(enc, kwargs, err, match):
    with pytest.raises(err, match=match):
        enc.encode(["a dog runs"], **kwargs)


def test_prompt_too_long_is_an_error_not_silent(llama):
    e = PromptEncoder(*llama, template="eol")                    # tiny_llama: 512 positions
    long = "word " * 600
    with pytest.raises(ValueError, match=r"sentences: the prompt of 'word word.*has \d+ tokens, more than "
                                         r"max_length=512"):
        e.encode(["short one", long])
    short = PromptEncoder(*llama, template="eol", max_length=8)
    with pytest.raises(ValueError, match=r"more than max_length=8"):
        short.encode(["a sentence that is clearly longer than eight tokens in total"])


def test_dataloader_with_wrong_batches(enc):
    from torch.utils.data import DataLoader
    with pytest.raises(TypeError, match=r"sentences\[0\] is list, not str"):
        enc.encode(DataLoader([("a",), ("b",)], batch_size=2))


@pytest.mark.parametrize("args, err, match", [
    (("not a tokenizer", "Hi"), TypeError, r"tokenizer must be a Hugging Face tokenizer, got str"),
    ((None, 5), TypeError, r"prompt must be a str, got int"),
])
def test_prompt_ids_bad(llama, args, err, match):
    tok = llama[1] if args[0] is None else args[0]
    with pytest.raises(err, match=match):
        prompt_ids(tok, args[1])


def test_prompt_ids_bad_bos(llama):
    with pytest.raises(ValueError, match=r"bos must be .* got 'first'"):
        prompt_ids(llama[1], "Hi", bos="first")


@pytest.mark.parametrize("ids, prefix, err, match", [
    ([], [1, 2], ValueError, r"ids is empty"),
    ("abc", [1], TypeError, r"ids must be a sequence of token ids"),
    ([1, 2], [1.5], TypeError, r"prefix_ids must be a sequence of token ids"),
    ([1, "x"], [1], TypeError, r"ids must be a sequence of token ids"),
])
def test_shared_prefix_len_bad(ids, prefix, err, match):
    with pytest.raises(err, match=match):
        shared_prefix_len(ids, prefix)


@pytest.mark.parametrize("n, eos, err, match", [
    (0, ".", ValueError, r"n_masks must be an int in 1..16, got 0"),
    (17, ".", ValueError, r"n_masks must be an int in 1..16, got 17"),
    (2.0, ".", ValueError, r"n_masks must be an int in 1..16, got 2.0"),
    (True, ".", ValueError, r"n_masks must be an int in 1..16, got True"),
    (2, ";", ValueError, r"Unknown EOS ';'"),
    (2, "SEP", ValueError, r"Unknown EOS 'SEP'"),
])
def test_mask_template_bad(n, eos, err, match):
    with pytest.raises(err, match=match):
        mask_template(n, eos)


def test_mask_template_bad_mask_token():
    with pytest.raises(TypeError, match=r"mask_token must be a str, got int: 103"):
        mask_template(2, ".", mask_token=103)
    with pytest.raises(ValueError, match=r"mask_token must be a non-empty string \(not only whitespace\), got ' '"):
        mask_template(2, ".", mask_token=" ")


@pytest.mark.parametrize("sentence, eos, err, match", [
    (3, ".", TypeError, r"sentence must be a str, got int"),
    ("a cat", "!!", ValueError, r"Unknown EOS '!!'"),
])
def test_normalize_for_eos_bad(sentence, eos, err, match):
    with pytest.raises(err, match=match):
        normalize_for_eos(sentence, eos)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(aggregation="sum"), ValueError, r"Unknown aggregation 'sum'"),
    (dict(eos="EOS"), ValueError, r"Unknown EOS 'EOS'"),
    (dict(n_masks=0), ValueError, r"n_masks must be an int in 1..16, got 0"),
    (dict(batch_size=0), ValueError, r"batch_size must be a positive int, got 0"),
    (dict(device=3.5), ValueError, r"device must be a torch device.*3.5"),
])
def test_mask_encoder_bad_arguments(bert, kwargs, err, match):
    with pytest.raises(err, match=match):
        MaskPromptEncoder(*bert, **kwargs)


def test_mask_encoder_needs_mask_token(bert, llama):
    with pytest.raises(ValueError, match=r"tokenizer has no mask token"):
        MaskPromptEncoder(bert[0], llama[1])
    with pytest.raises(TypeError, match=r"model must be a transformers model.*got NoneType"):
        MaskPromptEncoder(None, bert[1])


@pytest.mark.parametrize("bad, match", [
    ([""], r"sentences\[0\]"),
    (["has a [MASK] inside"], r"sentences: 'has a \[MASK\] inside' does not give exactly 2 mask tokens"),
    (["word " * 200], r"sentences: the prompt of 'word word.*more than max_length=128"),
    ([None], r"sentences\[0\] is NoneType, not str"),
])
def test_mask_encoder_bad_sentences(mp, bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        mp.encode(bad)


@pytest.mark.parametrize("states, agg, match", [
    (np.zeros((2, 3)), "avg", r"states must be \[N, n_masks, H\], got shape \(2, 3\)"),
    (np.zeros((2, 3, 4)), "max", r"Unknown aggregation 'max'"),
])
def test_mask_aggregate_bad(states, agg, match):
    with pytest.raises(ValueError, match=match):
        MaskPromptEncoder.aggregate(states, agg)


def test_mask_encode_bad_batch_size(mp):
    with pytest.raises(ValueError, match=r"batch_size must be a positive int or None, got 0"):
        mp.encode(["a cat"], batch_size=0)


def test_encode_distributed_bad(enc):
    with pytest.raises(TypeError, match=r"encoder must have an encode method.*got object"):
        encode_distributed(object(), ["a"])
    with pytest.raises(ValueError, match=r"sentences.*empty"):
        encode_distributed(enc, [])


@pytest.mark.parametrize("argv, text, err, match", [
    (["--method", "zzz"], "x\n", ValueError, r"Unknown template key 'zzz'"),
    (["--template", "{sentence} and {sentence}"], "x\n", ValueError, r"2 \{sentence\} slots"),
    (["--template", "no slot"], "x\n", ValueError, r"no \{sentence\} slot"),
    ([], "\nx\n", ValueError, r"line 1 is empty"),
    ([], "x\n\ny\n", ValueError, r"line 2 is empty"),
    ([], "", ValueError, r"no input sentences"),
    (["--batch-size", "0"], "x\n", ValueError, r"--batch-size must be a positive int, got 0"),
])
def test_embed_main_bad(argv, text, err, match):
    with pytest.raises(err, match=match):
        embed_main(argv, stdin=io.StringIO(text))


def test_embed_main_unknown_option():
    with pytest.raises(SystemExit):
        embed_main(["--no-such-option"], stdin=io.StringIO("x\n"))


# ---- flags, counts and input files (sentemb_lit.core.checks) ------------------------------------------------------

@pytest.mark.parametrize("kwargs, err, match", [
    (dict(use_cache="no"), TypeError, r"use_cache must be True or False, got 'no'"),
    (dict(normalize=1), TypeError, r"normalize must be True or False, got 1"),
    (dict(show_progress=None), TypeError, r"show_progress must be True or False, got None"),
    (dict(batch_size=np.int64(0)), ValueError, r"batch_size must be a positive int"),
])
def test_prompt_encoder_flags(llama, kwargs, err, match):
    with pytest.raises(err, match=match):
        PromptEncoder(*llama, **kwargs)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(use_cache="yes"), TypeError, r"use_cache must be True, False or None, got 'yes'"),
    (dict(normalize_embeddings=None), TypeError, r"normalize_embeddings must be True or False, got None"),
    (dict(show_progress_bar=1), TypeError, r"show_progress_bar must be True, False or None, got 1"),
])
def test_prompt_encoder_encode_flags(enc, kwargs, err, match):
    with pytest.raises(err, match=match):
        enc.encode(["a dog runs"], **kwargs)


def test_mask_encoder_flags(bert, mp):
    with pytest.raises(TypeError, match=r"show_progress must be True or False, got 'yes'"):
        MaskPromptEncoder(*bert, show_progress="yes")
    with pytest.raises(TypeError, match=r"normalize_embeddings must be True or False, got 'yes'"):
        mp.encode(["a cat"], normalize_embeddings="yes")


def test_embed_main_names_a_non_utf8_input_file(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("A dog.\nA caf\xe9 au lait.\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt:2: byte 0xe9 is not UTF-8"):
        embed_main(["--input", str(bad)])
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        embed_main(["--input", str(tmp_path / "missing.txt")])
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"A dog.\r\n\r\nA cat.\r\n")                       # Windows endings read like plain ones
    with pytest.raises(ValueError, match=r"line 2 is empty"):
        embed_main(["--input", str(crlf)])
