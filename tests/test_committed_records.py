"""Every record committed under papers/ verifies on a clean clone.

A stored result is trusted only through the content hash written with it, and an evaluation's per-pair predictions
only through the SHA-256 its record holds. A record whose companion file is not in the repository cannot be
re-verified by anyone who clones it, so it must not be committed: these tests read the files git tracks (a clean
clone holds exactly those), not whatever lies in this checkout. papers/ holds records, not an archive: superseded runs
leave the tree (git tag records-archive-2026-11-29 keeps those before 2026-11-29; each paper's NOTES.md names it).
"""
import json, subprocess
from pathlib import Path

import numpy as np
import pytest

from sentemb_lit.core.io import file_digest, read_json_verified
from sentemb_lit.stats.predictions import verify_predictions

ROOT = Path(__file__).resolve().parents[1]


def _tracked(*patterns: str) -> list[Path]:
    "The files git tracks under papers/ that match `patterns` (the checkout's files when it is not a git clone)."
    if (ROOT / ".git").exists():
        r = subprocess.run(["git", "ls-files", "-z", "--", *patterns], cwd=ROOT, capture_output=True, check=True)
        return sorted(ROOT / p for p in r.stdout.decode().split("\0") if p)
    return sorted(p for pat in patterns for p in ROOT.glob(pat))


FILES = _tracked("papers")                 # sorted: parametrize ids in one order in every xdist worker (not a set's)
TRACKED = set(FILES)                       # membership only
RECORDS = [p for p in FILES if p.name == "record.json" and "/store/" in p.as_posix()]        # the one store's records
POSTTRAIN = [p for p in FILES
             if p.name == "result.json" and "/store/" in p.as_posix() and "/posttrain/" in p.as_posix()]
RUN_RESULTS = [p for p in FILES if p.name.endswith(".results.json")]


def test_there_are_records_to_check():
    assert len(RECORDS) >= 530 and len(RUN_RESULTS) >= 4, (len(RECORDS), len(RUN_RESULTS))


def test_no_archive_folder_under_papers():
    "Superseded runs are reached through a git tag, not kept in the tree (issue 43)."
    assert FILES, "no file tracked under papers/"
    archived = [p.relative_to(ROOT).as_posix() for p in FILES if "archive" in p.relative_to(ROOT / "papers").parts]
    assert not archived, f"archive folders under papers/: {archived[:5]}"


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_store_record_verifies_with_its_files(path):
    "A record of the one store: its hash covers its key, its key is its folder's, every file it lists is committed."
    from sentemb_lit.core.io import fingerprint
    rec = read_json_verified(path)                            # IntegrityError on a hand edit
    assert fingerprint(rec["key"]["parts"]) == rec["key"]["key"] and path.parent.name == rec["key"]["key"][:16]
    root = path.parents[2]
    for rel, digest in rec["files"].items():
        f = root / rel
        assert f in TRACKED, f"{path}: its file {rel} is not committed"
        assert file_digest(f) == digest, f"{f}: SHA-256 differs from its record"
    res = rec["result"]
    if "pairs_sha256" in res:                                 # a 7-STS evaluation's per-pair predictions
        with np.load(path.parent / "pairs.npz", allow_pickle=False) as z:
            for t in res["pairs_tasks"]:
                gold, pred = z[f"{t}.gold"], z[f"{t}.pred"]
                assert gold.shape == pred.shape and np.isfinite(pred).all(), f"{path}: task {t}"


@pytest.mark.parametrize("path", RUN_RESULTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_run_results_verify(path):
    read_json_verified(path)


@pytest.mark.parametrize("run_dir", sorted({p.parent.parent for p in FILES if p.name == "MANIFEST.json"
                                            and p.parent.name == "predictions"}),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_predictions_manifest_verifies_and_is_committed(run_dir):
    names = verify_predictions(run_dir)
    assert names, f"{run_dir}: an empty manifest"
    for n in names:
        assert run_dir / "predictions" / f"{n}.npz" in TRACKED, f"{run_dir}: predictions/{n}.npz is not committed"


from sentemb_lit.ranking.chain_jobs import manifest_path, read_chains

CHAIN_FILES = [p for p in FILES if p.suffix == ".jsonl" and manifest_path(p) in TRACKED]


@pytest.mark.parametrize("path", CHAIN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_chain_file_verifies_against_its_manifest(path):
    recs = read_chains(path)                                  # size, SHA-256 and record count of the manifest; fields
    assert recs, f"{path}: no chain"


def test_chain_pilot_summary_names_its_committed_chain_files():
    summaries = [p for p in FILES if p.name == "chain_pilot.json"]
    assert summaries, "the chain pilot's summary is not committed"
    for s in summaries:
        res = read_json_verified(s)                           # IntegrityError on a hand edit
        for name, c in res["configs"].items():
            f = s.parent / c["file"]
            assert f in TRACKED, f"{s}: {name}'s chains {c['file']} are not committed"
            assert file_digest(f) == c["sha256"], f"{f}: SHA-256 differs from {s.name}"


def test_gpu_memory_record_verifies_and_its_readme_is_generated_from_it():
    "PretCoT Table 1 on a GPU (tools/gpu_memory.py): the record's hash holds and its README is the rendering of it."
    from sentemb_lit.memory import readme, record
    path = ROOT / "papers/pretcot_ke/gpu/table1_h100.json"
    assert path in TRACKED, "the GPU memory record is not committed"
    rec = read_json_verified(path)                           # IntegrityError on a hand edit
    assert rec == json.loads(json.dumps(record(rec["raw"]))), "findings or table differ from the raw runs"
    assert (path.parent / "README.md").read_text(encoding="utf-8") == readme(rec)


@pytest.mark.parametrize("path", POSTTRAIN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_posttrain_run_record_verifies_and_its_pairs_are_committed(path):
    "A post-training run folder (nb23) is not a ledger entry: its result.json carries its own hash, pairs beside it."
    read_json_verified(path)                                  # IntegrityError on a hand edit
    for name in ("pairs_best.npz", "pairs_last.npz"):
        assert path.parent / name in TRACKED, f"{path.parent}: {name} is not committed"


TRANSFER_RECORDS = [p for p in RECORDS if "/transfer/" in p.as_posix()]


@pytest.mark.parametrize("path", TRANSFER_RECORDS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_transfer_record_labels_give_its_accuracies(path):
    "A Table 8 row: its per-item labels give its accuracies (exactly on the fixed splits; 10-fold tasks: fold means)."
    from sentemb_lit.evals.transfer import transfer_from_record
    res = transfer_from_record(read_json_verified(path)["result"], str(path))   # checks every task within 0.5
    for t in ("SST2", "TREC", "MRPC"):
        if t in res.scores: assert round(100 * float(res.items[t].mean()), 2) == res.scores[t], (path, t)
