"""Transfer data and protocols against their references: the local transfer files load with SentEval's counts (empty
rows where the data README says), and `mteb_undersample` reproduces mteb 2.26's chained undersampling exactly."""
import numpy as np, pytest
from datasets import Dataset
from sentemb_lit.evals.mteb import mteb_undersample
from sentemb_lit.evals.transfer import TRANSFER_SIZES, load_transfer


def test_transfer_files_load_with_standard_counts(data_root):
    for (task, split), n in TRANSFER_SIZES.items():
        d = load_transfer(task, split)
        assert len(d) == n and len(d.sentences) == n, (task, split)
        assert (d.sentences2 is not None) == (task == "MRPC")
    empty = {t: [i + 2 for i, s in enumerate(load_transfer(t).sentences) if not s] for t in ("CR", "MPQA")}
    assert empty == {"CR": [2324, 2408, 3177, 3776], "MPQA": [3313, 9728, 10607]}     # file lines, as the README says
    trec = load_transfer("TREC", "train")
    assert np.bincount(trec.labels).tolist() == [86, 1162, 1250, 1223, 835, 896]
    assert load_transfer("MR").labels[:5331].all() and not load_transfer("MR").labels[5331:].any()
    assert len(load_transfer("Banking77", "test").label_names) == 77


@pytest.mark.parametrize("samples_per_label", [2, 8])
def test_mteb_undersample_equals_mteb(samples_per_label):
    from mteb.tasks.classification.eng.banking77_classification import Banking77Classification
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 5, 200).tolist()
    ds = Dataset.from_dict({"text": [f"t{i}" for i in range(200)], "label": labels})
    task = Banking77Classification()
    task.samples_per_label = samples_per_label
    idxs, theirs = None, []
    for i in range(task.n_experiments):
        _, idxs, sel = task._undersample_data(ds, i, idxs)
        theirs.append(list(sel))
    assert mteb_undersample(labels, samples_per_label, task.n_experiments, task.seed) == theirs
