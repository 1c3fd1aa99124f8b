"""`evaluate_reranking` (sentemb_lit.evals.mteb) equals mteb 2.26's own reranking evaluation — `mteb.evaluate` on a
local reranking task (a retrieval task with `top_ranked` candidates), no hub — to 1e-6 on MAP@1000 and MRR@10, on a
fixture with exactly tied scores (a negative with the same text as a positive) and a query without a positive."""
import numpy as np
import mteb
from datasets import Dataset
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata
from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores, mrr
from sentemb_lit.evals.mteb import RerankingData, evaluate_reranking, rerank_metrics, reranking_run

DATA = RerankingData(
    queries=["How do I install a package on Ubuntu?", "Which shell is the default?", "Where did the cat sit?",
             "How can I upgrade the kernel?"],
    positives=[["Installing software packages with apt on Ubuntu", "apt-get install usage"], [],
               ["The cat sat on the mat"], ["Upgrading the Linux kernel safely"]],
    negatives=[["apt-get install usage", "Best pizza in town", "Weather tomorrow in Paris"],   # ties a positive
               ["Bash is a shell", "Zsh configuration tips"],                                  # no positive at all
               ["The cat sat on the mat", "Dogs bark at night", "Stock markets fell"],        # ties the positive
               ["Kernel panic on boot", "How to bake bread", "Upgrading the Linux kernel safely"]])


class LocalReranking(AbsTaskRetrieval):
    "The fixture above as mteb 2.x holds a reranking task: corpus, queries, qrels (1 / 0) and top_ranked candidates."
    metadata = TaskMetadata(
        name="LocalReranking", dataset={"path": "local/reranking", "revision": "local"},
        description="Reranking fixture built by sentemb_lit.evals.mteb.reranking_run.", reference=None,
        type="Reranking",
        category="t2t", modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"], main_score="map_at_1000",
        date=None, domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None,
        sample_creation=None, bibtex_citation=None)


def _task(run: dict, qrels: dict) -> LocalReranking:
    texts = {}
    for i, (pos, neg) in enumerate(zip(DATA.positives, DATA.negatives)):
        qid = f"test_query{i}"
        texts |= {f"apositive_{qid}_{j:05d}": s for j, s in enumerate(pos)}
        texts |= {f"negative_{qid}_{j:05d}": s for j, s in enumerate(neg)}
    assert set(texts) == {d for q in run for d in run[q]}
    task = LocalReranking()
    task.dataset = {"default": {"test": {
        "corpus": Dataset.from_dict({"id": list(texts), "text": list(texts.values()), "title": [""] * len(texts)}),
        "queries": Dataset.from_dict({"id": list(run), "text": DATA.queries}),
        "relevant_docs": qrels, "top_ranked": {q: list(run[q]) for q in run}}}}
    task.data_loaded = True
    return task


def test_reranking_equals_mteb_evaluator(minilm_mean):
    encoder = minilm_mean
    run, qrels = reranking_run(DATA, encoder)
    ours = evaluate_reranking(encoder, DATA)
    # the fixture really has exact ties between a positive and a negative, and a query without a positive
    assert run["test_query0"]["apositive_test_query0_00001"] == run["test_query0"]["negative_test_query0_00000"]
    assert run["test_query2"]["apositive_test_query2_00000"] == run["test_query2"]["negative_test_query2_00000"]
    assert not any(qrels["test_query1"].values()) and ours["ap"][1] == 0 and ours["rr"][1] == 0
    res = mteb.evaluate(encoder, _task(run, qrels), cache=None, encode_kwargs={"batch_size": 16},
                        show_progress_bar=False, overwrite_strategy="always")
    assert not res.exceptions, res.exceptions
    s = res.task_results[0].scores["test"][0]
    print(f"\nmteb: map@1000 {s['map_at_1000']:.6f} mrr@10 {s['mrr_at_10']:.6f}; "
          f"evaluate_reranking: MAP {ours['map'] / 100:.6f} MRR@10 {ours['mrr@10'] / 100:.6f}")
    assert abs(round(ours["map"] / 100, 5) - s["map_at_1000"]) < 1e-6          # mteb rounds MAP to 5 decimals
    assert abs(ours["mrr@10"] / 100 - s["mrr_at_10"]) < 1e-6
    # per query, unrounded: pytrec_eval's map_cut_1000 and mteb's own MRR on the same run
    per = calculate_retrieval_scores(run, qrels, [10, 1000]).all_scores
    np.testing.assert_allclose(ours["ap"], [per[q]["map_cut_1000"] for q in run], atol=1e-6)
    np.testing.assert_allclose(ours["rr"], mrr(qrels, run, [10])["MRR@10"], atol=1e-6)


def test_reranking_mteb_tie_order_matters():
    "On the tied fixture a score-only stable sort (positives first) would give a different MAP than mteb's order."
    run = {"q": {"apositive_q_00000": 0.5, "negative_q_00000": 0.5}}
    qrels = {"q": {"apositive_q_00000": 1, "negative_q_00000": 0}}
    ours = rerank_metrics(run, qrels)
    per = calculate_retrieval_scores(run, qrels, [1000]).all_scores["q"]["map_cut_1000"]
    assert abs(ours["ap"][0] - per) < 1e-12 and ours["ap"][0] == 0.5
