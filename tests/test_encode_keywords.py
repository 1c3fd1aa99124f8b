"""Issue #22, keywords that were swallowed: every encoder of the library (`SentenceEncoder`, `PromptEncoder`,
`MaskPromptEncoder`, `TwinTowerEncoder`) reads `encode`'s keywords through one function,
`sentemb_lit.core.models.encode_options`: each keyword of sentence-transformers / MTEB means what it means there or is
refused by name; anything else is a TypeError naming it. Tiny random models (built in code), plus MTEB's own
evaluation on a local STS-B fixture task (no hub)."""
import inspect
import numpy as np, pytest, torch
import mteb
from mteb.types import PromptType
import sentemb_lit.core.models as M
from sentemb_lit.core.evaluation import evaluate_sts
from sentemb_lit.jtcse.twin import TwinTowerEncoder
from sentemb_lit.core.models import SentenceEncoder, encode_options
from sentemb_lit.core.tiny_models import tiny_bert, tiny_llama
from sentemb_lit.prompting.prompt_embedding import PromptEncoder
from sentemb_lit.prompting.mask_prompting import MaskPromptEncoder

SENTS = ["a man plays a guitar", "the weather is cold today", "two dogs run in the park"]
KINDS = ("sentence", "prompt", "mask", "twin")


def _make(kind: str):
    torch.manual_seed(0)
    if kind == "sentence":
        model, tok = tiny_bert(seed=0)
        return SentenceEncoder(model, tok, "mean", show_progress=False)
    if kind == "prompt":
        model, tok = tiny_llama(seed=0)
        return PromptEncoder(model, tok, batch_size=4)
    if kind == "mask":
        model, tok = tiny_bert(seed=0)
        return MaskPromptEncoder(model, tok)
    (m1, tok), (m2, _) = tiny_bert(seed=0), tiny_bert(seed=1)
    return TwinTowerEncoder(m1, m2, tok).eval()


@pytest.fixture(scope="module", params=KINDS)
def enc(request):
    return _make(request.param)


def test_one_reader_for_every_encoder():
    "No copies: each encoder's encode calls models.encode_options (and none keeps a private keyword reader)."
    import sentemb_lit.jtcse.twin as J, sentemb_lit.prompting.prompt_embedding as P
    import sentemb_lit.prompting.mask_prompting as MP
    for fn in (M.EncodeAPI.encode, P.PromptEncoder.encode, MP.MaskPromptEncoder.encode, J.TwinTowerEncoder.encode):
        assert "encode_options(self, kwargs)" in inspect.getsource(fn), fn.__qualname__
    assert P.encode_options is M.encode_options and MP.encode_options is M.encode_options


def test_prompt_is_the_prefixed_sentence(enc):
    prefixed = enc.encode(["query: " + s for s in SENTS])
    np.testing.assert_allclose(enc.encode(SENTS, prompt="query: "), prefixed, atol=1e-6)
    assert not np.allclose(enc.encode(SENTS), prefixed, atol=1e-4)                    # the prompt changed something


def test_prompt_name_and_prompt_type_use_the_prompts_dict(enc):
    prefixed = enc.encode(["query: " + s for s in SENTS])
    enc.prompts = {"query": "query: "}
    try:
        np.testing.assert_allclose(enc.encode(SENTS, prompt_name="query"), prefixed, atol=1e-6)
        np.testing.assert_allclose(enc.encode(SENTS, prompt_type=PromptType.query), prefixed, atol=1e-6)
        np.testing.assert_allclose(enc.encode(SENTS, prompt_type=PromptType.document), enc.encode(SENTS), atol=1e-6)
        with pytest.raises(ValueError, match=r"prompt_name='passage' is unknown: .* has only the prompts \['query'\]"):
            enc.encode(SENTS, prompt_name="passage")
        with pytest.raises(ValueError, match="not both"): enc.encode(SENTS, prompt="x: ", prompt_name="query")
    finally:
        enc.prompts = None
    with pytest.raises(ValueError, match="prompt_name='query' is unknown: .* has no prompts"):
        enc.encode(SENTS, prompt_name="query")
    np.testing.assert_allclose(enc.encode(SENTS, prompt_type="query"), enc.encode(SENTS), atol=1e-6)   # a no-op


@pytest.mark.parametrize("typo", ["normalise_embeddings", "batchsize", "promt", "show_progress", "task"])
def test_unknown_keyword_is_a_type_error_naming_it(enc, typo):
    with pytest.raises(TypeError, match=rf"encode\(\) got an unexpected keyword argument '{typo}'"):
        enc.encode(SENTS, **{typo: True})


def test_typo_suggests_the_keyword(enc):
    with pytest.raises(TypeError, match=r"did you mean 'normalize_embeddings'\?"):
        enc.encode(SENTS, normalise_embeddings=True)


def test_normalize_gives_unit_rows_and_tensor_a_tensor(enc):
    e = enc.encode(SENTS)
    unit = enc.encode(SENTS, normalize_embeddings=True)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), np.ones(3), atol=1e-5)
    np.testing.assert_allclose(unit, e / np.linalg.norm(e, axis=1, keepdims=True), atol=1e-5)
    t = enc.encode(SENTS, convert_to_tensor=True, convert_to_numpy=False)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), e, atol=1e-6)
    assert enc.encode(SENTS[0], convert_to_tensor=True).shape == (e.shape[1],)
    np.testing.assert_allclose(enc.encode(SENTS, truncate_dim=4), e[:, :4], atol=1e-6)


def test_mteb_and_sentence_transformers_keywords_are_accepted(enc):
    e = enc.encode(SENTS)
    got = enc.encode(SENTS, task_metadata=None, hf_split="test", hf_subset="default", prompt_type=None,
                     batch_size=1, show_progress_bar=False, convert_to_numpy=True, precision="float32",
                     output_value="sentence_embedding", device="cpu", task_name="STSB", pool=None, chunk_size=None)
    np.testing.assert_allclose(got, e, atol=1e-5)


@pytest.mark.parametrize("kw, match", [
    ({"precision": "int8"}, "precision='int8' is not supported"),
    ({"precision": "binary"}, "precision='binary' is not supported"),
    ({"output_value": "token_embeddings"}, "output_value='token_embeddings' is not supported"),
    ({"output_value": None}, "output_value=None is not supported"),
    ({"device": "meta"}, "encode does not move weights"),
    ({"device": "cuda:7"}, "encode does not move weights"),
    ({"device": ["cpu", "cpu"]}, "multi-process"),
    ({"device": "tpu-please"}, "not a torch device"),
    ({"convert_to_numpy": False}, "list of tensors"),
    ({"pool": {"processes": []}}, "multi-process"),
    ({"truncate_dim": 10_000}, "truncate_dim=10000 exceeds"),
    ({"batch_size": 0}, "batch_size must be"),
    ({"normalize_embeddings": "yes"}, "normalize_embeddings must be True or False"),
    ({"prompt": 3}, "prompt must be a str"),
    ({"prompt_type": "questions"}, "prompt_type must be"),
    ({"hf_split": 1}, "hf_split must be a str"),
])
def test_unsupported_values_are_refused_by_name(enc, kw, match):
    with pytest.raises((ValueError, TypeError), match=match): enc.encode(SENTS, **kw)


def test_nan_embeddings_are_named():
    class Broken(M.EncodeAPI):
        def embed(self, sentences, batch_size=None, show_progress=None):
            out = np.ones((len(sentences), 4), dtype=np.float32)
            out[1, 2] = np.nan
            return out
    with pytest.raises(ValueError, match=r"sentences\[1\] holds NaN or inf"): Broken().encode(SENTS)


def test_encode_options_is_pure():
    "Reading the keywords changes nothing: the same dict gives the same options."
    kw = {"prompt": "q: ", "batch_size": 2}
    assert encode_options(object(), kw) == encode_options(object(), kw) and kw == {"prompt": "q: ", "batch_size": 2}


# --------------------------------------------------------------- through MTEB's own evaluation (mteb 2.x)
def _mteb_score(enc, task, **encode_kwargs) -> float:
    res = mteb.evaluate(enc, task, cache=None, encode_kwargs={"batch_size": 4, **encode_kwargs},
                        show_progress_bar=False, overwrite_strategy="always")
    assert not res.exceptions, res.exceptions
    return 100 * res.task_results[0].scores["test"][0]["cosine_spearman"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_encoder_through_mteb_evaluate_with_keywords(data_root, kind):
    """MTEB passes its encode_kwargs to encode: with prompt="query: " the score is the one of the same task whose
    sentences carry the prefix (same batches, so equal to float precision); a misspelt keyword raises."""
    from datasets import DatasetDict
    from test_mteb import _task
    enc, limit = _make(kind), 16
    prefixed = _task(limit)
    pairs = prefixed.dataset["default"]["test"]
    prefixed.dataset = {"default": DatasetDict({"test": pairs.map(
        lambda r: {"sentence1": "query: " + r["sentence1"], "sentence2": "query: " + r["sentence2"]})})}
    with_prompt, plain = _mteb_score(enc, _task(limit), prompt="query: "), _mteb_score(enc, _task(limit))
    assert with_prompt == pytest.approx(_mteb_score(enc, prefixed), abs=1e-6)
    assert with_prompt != pytest.approx(plain, abs=1e-6)                           # the prompt was not swallowed
    assert np.isfinite(evaluate_sts(enc, tasks=("stsb",), limit=limit).scores["stsb"])
    with pytest.raises(TypeError, match="'normalise_embeddings'"):
        _mteb_score(enc, _task(limit), normalise_embeddings=True)
