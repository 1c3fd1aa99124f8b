"""`mteb_classify` (sentemb_lit.evals.mteb) equals mteb 2.26's own classification evaluation — `mteb.evaluate` on a
local classification task (no hub): the same accuracy and macro F1, experiment by experiment, on real rows of the
local Emotion (6 classes) and AmazonCounterfactual (2 classes) files embedded by minilm-l6. Both sides read one table
of embeddings, so the comparison is of the protocol (undersampling, classifier, metrics), not of batching noise."""
import numpy as np, pytest
import mteb
from datasets import Dataset, DatasetDict
from mteb.abstasks.classification import AbsTaskClassification
from mteb.abstasks.task_metadata import TaskMetadata
from sentemb_lit.core.models import EncodeAPI
from sentemb_lit.evals.mteb import MTEB_SAMPLES_PER_LABEL, mteb_classify
from sentemb_lit.evals.transfer import load_transfer


class _Lookup(EncodeAPI):
    "An encoder that returns stored rows: what mteb and mteb_classify both see."
    name = "lookup-minilm-l6"
    def __init__(self, table: dict): self.table = table
    def embed(self, texts, batch_size=None, show_progress=None): return np.stack([self.table[t] for t in texts])


def _task(name: str, spl: int, train, test):
    meta = TaskMetadata(
        name=f"Local{name}", dataset={"path": f"local/{name}", "revision": "local"},
        description="Classification fixture: rows of the local data root.", reference=None, type="Classification",
        category="t2c", modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"], main_score="accuracy",
        date=None, domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None,
        sample_creation=None, bibtex_citation=None)
    cls = type(f"Local{name}", (AbsTaskClassification,), {"metadata": meta, "samples_per_label": spl})
    task = cls()
    task.dataset = {"default": DatasetDict({
        "train": Dataset.from_dict({"text": train.sentences, "label": train.labels.tolist()}),
        "test": Dataset.from_dict({"text": test.sentences, "label": test.labels.tolist()})})}
    task.data_loaded = True
    return task


@pytest.mark.parametrize("name,n_train,n_test", [("Emotion", 400, 150), ("AmazonCounterfactualEN", 300, 120)])
def test_mteb_classification_equals_mteb_evaluator(minilm_mean, name, n_train, n_test):
    full_train, full_test = load_transfer(name, "train"), load_transfer(name, "test")
    train, test = (type(d)(d.task, d.split, d.sentences[:n], d.labels[:n], None, d.label_names)
                   for d, n in ((full_train, n_train), (full_test, n_test)))
    texts = list(dict.fromkeys(train.sentences + test.sentences))
    table = dict(zip(texts, minilm_mean.encode(texts, batch_size=64)))
    X, Xt = np.stack([table[s] for s in train.sentences]), np.stack([table[s] for s in test.sentences])
    spl = MTEB_SAMPLES_PER_LABEL[name]
    ours = mteb_classify(X, train.labels, Xt, test.labels, spl)
    res = mteb.evaluate(_Lookup(table), _task(name, spl, train, test), cache=None, show_progress_bar=False,
                        overwrite_strategy="always")
    assert not res.exceptions, res.exceptions
    s = res.task_results[0].scores["test"][0]
    per = s["scores_per_experiment"]
    print(f"\n{name}: mteb acc {s['accuracy']:.6f} f1 {s['f1']:.6f}; "
          f"mteb_classify acc {ours['accuracy'] / 100:.6f} f1 {ours['f1'] / 100:.6f}")
    assert len(per) == 10 and len(np.unique(train.labels)) >= 2
    np.testing.assert_allclose(ours["items"].mean(axis=1), [p["accuracy"] for p in per], atol=1e-9)
    assert abs(ours["accuracy"] / 100 - s["accuracy"]) < 1e-6 and abs(ours["f1"] / 100 - s["f1"]) < 1e-6
    assert 0.2 < s["accuracy"] < 0.99                                 # a real, imperfect classifier
