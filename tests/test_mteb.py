"""Every encoder of the library goes through MTEB's own STS evaluation (mteb 2.x: `EncoderProtocol` check, DataLoader
inputs, `AbsTaskSTS` scoring) on a local STS-B split built from `load_sts` — no hub — and MTEB's cosine Spearman
equals `evaluate_sts` on the same pairs."""
import copy
import numpy as np, pytest
import mteb
from datasets import Dataset, DatasetDict
from mteb.abstasks.sts import AbsTaskSTS
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.models import EncoderProtocol
from sentemb_lit.core.data import load_sts
from sentemb_lit.core.evaluation import _strided, evaluate_sts
from sentemb_lit.core.models import SentenceEncoder, load_encoder
from sentemb_lit.core.tiny_models import tiny_llama
from sentemb_lit.jtcse.twin import TwinTowerEncoder
from sentemb_lit.prompting.prompt_embedding import PromptEncoder
from sentemb_lit.prompting.mask_prompting import MaskPromptEncoder

class LocalSTSBenchmark(AbsTaskSTS):
    "STS-B test pairs given in memory (MTEB's STSBenchmark task reads the same pairs from the hub)."
    min_score, max_score = 0, 5
    metadata = TaskMetadata(
        name="LocalSTSBenchmark", dataset={"path": "local/stsbenchmark", "revision": "local"},
        description="STS-B test pairs read by sentemb_lit.core.data.load_sts.", reference=None, type="STS",
        category="t2t",
        modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"], main_score="cosine_spearman", date=None,
        domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None, sample_creation=None,
        bibtex_citation=None)


def _task(limit: int) -> LocalSTSBenchmark:
    d = _strided(load_sts("stsb", "test"), limit)                   # exactly the pairs evaluate_sts(limit=…) scores
    task = LocalSTSBenchmark()
    task.dataset = {"default": DatasetDict({"test": Dataset.from_dict(
        {"sentence1": d.sentences1, "sentence2": d.sentences2, "score": d.scores.astype(float).tolist()})})}
    task.data_loaded = True
    return task


def _check(name: str, encoder, limit: int, batch_size: int = 16):
    missing = [a for a in ("encode", "similarity", "similarity_pairwise", "mteb_model_meta") if not hasattr(encoder, a)]
    assert isinstance(encoder, EncoderProtocol), f"{type(encoder).__name__} lacks {missing} of MTEB's EncoderProtocol"
    res = mteb.evaluate(encoder, _task(limit), cache=None, encode_kwargs={"batch_size": batch_size},
                        show_progress_bar=False, overwrite_strategy="always")
    assert not res.exceptions, res.exceptions
    scores = res.task_results[0].scores["test"][0]
    ours = evaluate_sts(encoder, tasks=("stsb",), limit=limit).scores["stsb"]
    print(f"\n{name}: MTEB STS-B cosine Spearman×100 {100 * scores['cosine_spearman']:.4f} "
          f"(model similarity {100 * scores['spearman']:.4f}), evaluate_sts {ours:.4f} on {limit} pairs")
    assert 100 * scores["cosine_spearman"] == pytest.approx(ours, abs=1e-3)
    assert 100 * scores["spearman"] == pytest.approx(ours, abs=1e-3)       # the encoder's own similarity is cosine
    return scores


@pytest.fixture(scope="module")
def minilm(data_root):
    return load_encoder("minilm-l6")


def test_sentence_encoder(minilm):
    model, tok = minilm
    _check("SentenceEncoder(minilm-l6, mean)", SentenceEncoder(model, tok, "mean", show_progress=False), 200)


def test_twin_tower_encoder(minilm):
    model, tok = minilm
    _check("TwinTowerEncoder(minilm-l6 ×2)", TwinTowerEncoder(model, copy.deepcopy(model), tok).eval(), 100)


def test_mask_prompt_encoder(minilm):
    model, tok = minilm
    _check("MaskPromptEncoder(minilm-l6)", MaskPromptEncoder(model, tok), 100)


def test_prompt_encoder(data_root):
    model, tok = tiny_llama()
    _check("PromptEncoder(tiny llama, pcot)", PromptEncoder(model, tok), 16, batch_size=4)


def test_prompt_encoder_smollm2(data_root):
    "the real offline causal LM, on a few pairs (prompt embeddings cost a forward pass of a 135M model per sentence)"
    encoder = PromptEncoder.from_name("smollm2-135m-instruct")
    _check("PromptEncoder(smollm2-135m-instruct, pcot)", encoder, 16, batch_size=8)
