"Bad-input and edge-case tests of sentemb_lit.prompting (tiny random models; seconds)."
import io
import numpy as np
import pytest
import torch

from sentemb_lit.prompting import (TEMPLATES, PRESET_LAYERS, PromptEncoder, MaskPromptEncoder, resolve_template,
                                   split_template, normalize_sentence, normalize_for_eos, mask_template, embed_main)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def llama():
    from sentemb_lit.models import tiny_llama
    return tiny_llama(seed=0)


@pytest.fixture(scope="module")
def bert():
    from sentemb_lit.models import tiny_bert
    return tiny_bert(seed=0)


def test_templates_exact():
    assert TEMPLATES["eol"] == 'This sentence : "{sentence}" means in one word:"'
    assert TEMPLATES["pcot"] == 'After thinking step by step , this sentence : "{sentence}" means in one word:"'
    assert TEMPLATES["ke"].endswith('With this in mind , this sentence : "{sentence}" means in one word:"')
    assert PRESET_LAYERS == {"eol": -1, "pcot": -2, "ke": -2, "sth": -1, "sum": -1}


@pytest.mark.parametrize("bad, err, msg", [
    ("Say it", ValueError, "no {sentence} slot"),
    ("{sentence} {sentence}", ValueError, "2 {sentence} slots"),
    ("unknownkey", KeyError, "Unknown template key"),
    (None, TypeError, "must be a string"),
])
def test_bad_templates(bad, err, msg):
    with pytest.raises(err, match=msg.replace("{", r"\{").replace("}", r"\}")):
        resolve_template(bad)


def test_user_template_with_braces(llama):
    tpl = 'JSON {"x": 1} then "{sentence}" in one word:"'
    assert split_template(tpl) == ('JSON {"x": 1} then "', '" in one word:"')
    e = PromptEncoder(*llama, template=tpl, layer=-1).encode(["a b"])
    assert e.shape == (1, 32)


def test_normalisation():
    assert normalize_sentence("Why?") == "Why."
    assert normalize_sentence("Yes!") == "Yes!."
    assert normalize_sentence('x "y"') == "x 'y'"
    assert normalize_for_eos("Why?", ".") == "Why."
    assert normalize_for_eos("Go", "?") == "Go?"
    assert normalize_for_eos("Go.", "none") == "Go"
    with pytest.raises(TypeError): normalize_sentence(3)
    with pytest.raises(ValueError, match="Unknown EOS"): normalize_for_eos("x", ";")


@pytest.mark.parametrize("layer", [3, -4, 100])
def test_bad_layer(llama, layer):
    with pytest.raises(ValueError, match="out of range"):
        PromptEncoder(*llama, layer=layer)


def test_bad_layer_type_and_batch(llama):
    with pytest.raises(TypeError, match="must be an int"): PromptEncoder(*llama, layer="last")
    with pytest.raises(ValueError, match="batch_size"): PromptEncoder(*llama, batch_size=0)
    enc = PromptEncoder(*llama)
    with pytest.raises(ValueError, match="out of range"): enc.encode(["a"], layers=[-1, 9])


@pytest.mark.parametrize("bad", [[], [""], ["ok", "   "], ["ok", None], "just a string"])
def test_bad_sentences(llama, bad):
    with pytest.raises((ValueError, TypeError)):
        PromptEncoder(*llama).encode(bad)


def test_cache_batch_independence(llama):
    enc = PromptEncoder(*llama, template="pcot", batch_size=3)
    sents = ["short", "a much longer sentence that goes on and on about nothing in particular", "mid length one"]
    a, b = enc.encode(sents), enc.encode(sents, use_cache=False)
    assert np.abs(a - b).max() < 1e-4
    alone = enc.encode(["short"], batch_size=1)
    assert np.abs(alone[0] - a[0]).max() < 1e-4
    assert a.dtype == np.float32


def test_bos_options(llama):
    model, tok = llama
    assert PromptEncoder(model, tok, bos="auto").bos_ids == []        # SmolLM2's tokenizer adds no BOS
    assert PromptEncoder(model, tok, bos=True).bos_ids == [tok.bos_token_id]
    assert PromptEncoder(model, tok, bos=5).bos_ids == [5]
    with pytest.raises(ValueError, match="bos must be"): PromptEncoder(model, tok, bos="yes")


def test_mask_encoder_bad_inputs(bert):
    with pytest.raises(ValueError, match="n_masks"): mask_template(5 * 0)
    with pytest.raises(ValueError, match="Unknown EOS"): MaskPromptEncoder(*bert, eos="EOS")
    with pytest.raises(ValueError, match="Unknown aggregation"): MaskPromptEncoder(*bert, aggregation="sum")
    mp = MaskPromptEncoder(*bert, n_masks=2, eos="?")
    with pytest.raises(ValueError): mp.encode([""])
    with pytest.raises(ValueError, match="exactly 2 mask"): mp.encode(["has a [MASK] inside"])
    with pytest.raises(ValueError, match="states must be"): MaskPromptEncoder.aggregate(np.zeros((2, 3)), "avg")
    assert mp.encode(["a cat", "a dog sits"]).shape == (2, 32)


def test_embed_main_errors():
    with pytest.raises(KeyError, match="Unknown template key"):
        embed_main(["--method", "zzz"], stdin=io.StringIO("x\n"))
    with pytest.raises(ValueError, match="2 \\{sentence\\} slots"):
        embed_main(["--template", "{sentence} and {sentence}"], stdin=io.StringIO("x\n"))
    with pytest.raises(ValueError, match="line 1 is empty"):
        embed_main([], stdin=io.StringIO("\nx\n"))
    with pytest.raises(ValueError, match="no input"):
        embed_main([], stdin=io.StringIO(""))
