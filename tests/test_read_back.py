"""Issue #22, "trust nothing you read back", in data / models / evaluation / checks: inputs that make no sense are
refused (an empty corpus), and every error names the file or the argument (a folder where a file is expected, a
damaged JSON file, an encoder's wrong row count or NaN rows, a path with an empty name)."""
import gzip, json
import numpy as np, pytest, torch
import sentemb_lit.core.data as data
import sentemb_lit.core.model_cache as model_cache
import sentemb_lit.core.models as models
from sentemb_lit.core.checks import check_file, check_named_path, read_json
from sentemb_lit.core.evaluation import evaluate_sts
from sentemb_lit.core.io import CorruptFileError

EMPTY_CORPORA = {"empty gzip": gzip.compress(b"", mtime=0),
                 "only blank lines": gzip.compress(b"\n   \n\t\n\n", mtime=0),
                 "zero bytes": b""}


# ---------------------------------------------------------------- data: inputs that make no sense
@pytest.mark.parametrize("payload", EMPTY_CORPORA.values(), ids=EMPTY_CORPORA.keys())
def test_an_empty_corpus_is_refused_naming_the_file(tmp_path, payload):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "wiki1m_head.txt.gz").write_bytes(payload)
    with pytest.raises(CorruptFileError, match=r"wiki1m_head\.txt\.gz: the corpus 'wiki1m_head' is empty"):
        data.load_corpus("wiki1m_head", root=tmp_path)
    with pytest.raises(CorruptFileError, match="is empty"):
        data.training_corpus(["wiki1m_head"], root=tmp_path)


# ---------------------------------------------------------------- a folder where a file is expected
def test_a_folder_where_a_data_file_is_expected_says_so(tmp_path):
    (tmp_path / "sts" / "stsb_test.tsv").mkdir(parents=True)
    (tmp_path / "corpus" / "wiki1m_head.txt.gz").mkdir(parents=True)
    with pytest.raises(IsADirectoryError, match=r"stsb_test\.tsv' is a directory, expected a file"):
        data.load_sts("stsb", root=tmp_path)
    with pytest.raises(IsADirectoryError, match=r"wiki1m_head\.txt\.gz' is a directory, expected a file"):
        data.load_corpus("wiki1m_head", root=tmp_path)
    with pytest.raises(FileNotFoundError, match=r"sickr_test\.tsv' does not exist in the data root"):
        data.load_sts("sickr", root=tmp_path)


def test_a_folder_as_the_subset_table_says_so(tmp_path, data_root):
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts" / "sts13.tsv").write_bytes((data_root / "sts" / "sts13.tsv").read_bytes())
    (tmp_path / "sts_subsets.tsv").mkdir()
    with pytest.raises(IsADirectoryError, match=r"subset table '.*sts_subsets\.tsv' is a directory, expected a file"):
        data.load_sts("sts13", root=tmp_path)


def test_a_file_given_as_a_model_folder_says_so(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"not a model")
    with pytest.raises(ValueError, match=r"model\.bin is a file, expected a model folder"):
        models.load_encoder(str(tmp_path / "model.bin"))


# ---------------------------------------------------------------- JSON read back: the file is named
def test_a_damaged_fetch_manifest_is_named(tmp_path):
    (tmp_path / data.FETCH_MANIFEST).write_text('{"written": {}, "skipped": {\n')
    with pytest.raises(CorruptFileError, match=r"FETCHED\.json:2: not valid JSON"):
        data.fetch_data(tmp_path, ["stsb"], {"stsb": str(tmp_path / "nowhere")}, verbose=False)
    (tmp_path / "sts").mkdir()
    with pytest.raises(FileNotFoundError, match=r"stsb_test\.tsv' does not exist in the data root \(.*FETCHED\.json:2"):
        data.load_sts("stsb", root=tmp_path)
    (tmp_path / data.FETCH_MANIFEST).write_text('{"written": [], "skipped": {}}')
    with pytest.raises(CorruptFileError, match=r"FETCHED\.json: 'written' must map names to records, found list"):
        data.fetch_data(tmp_path, ["stsb"], {"stsb": str(tmp_path / "nowhere")}, verbose=False)
    (tmp_path / data.FETCH_MANIFEST).write_text("[]")
    with pytest.raises(CorruptFileError, match=r"FETCHED\.json: expected a JSON dict, found a list"):
        data.fetch_data(tmp_path, ["stsb"], {"stsb": str(tmp_path / "nowhere")}, verbose=False)


def test_read_json_names_the_file(tmp_path):
    f = tmp_path / "cfg.json"
    f.write_text('{"a": 1,\n "b": }')
    with pytest.raises(CorruptFileError, match=r"cfg\.json:2: not valid JSON"): read_json(f)
    with pytest.raises(IsADirectoryError, match="is a directory, expected a file"): read_json(tmp_path, "config")
    with pytest.raises(FileNotFoundError, match=r"config '.*nope\.json' does not exist"):
        read_json(tmp_path / "nope.json", "config")
    assert isinstance(check_file(f), type(tmp_path))


@pytest.mark.parametrize("marker", [
    '{"files": {"a.txt": {"sha256": "00"}}}',          # an entry without its size: was a bare KeyError 'size'
    '{"files": {"a.txt": 5}}',                           # an entry that is not a record: was a TypeError
    '{"files": []}',                                     # files not a mapping: was an AttributeError
    '{"files": ',                                        # cut short
])
def test_a_damaged_cache_marker_is_a_reason_not_a_crash(tmp_path, marker):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / model_cache.CACHE_MARKER).write_text(marker)
    why = model_cache.verify_cache(tmp_path)
    assert why.startswith(f"{model_cache.CACHE_MARKER} is unreadable ("), why


@pytest.mark.parametrize("target", [".", "/", "..", "a/.."])
def test_a_cache_target_without_a_name_is_refused(target):
    with pytest.raises(ValueError, match="names no file or folder"):
        model_cache.cached_build(target, lambda tmp: None, "x")
    with pytest.raises(ValueError, match="names no file or folder"): check_named_path(target, "target")


# ---------------------------------------------------------------- evaluation: the encoder's output is checked
@pytest.mark.parametrize("encode, exc, match", [
    (lambda s: np.ones((len(s) - 1, 4)), ValueError, r"encoder returned \d+ rows for \d+ sentences"),
    (lambda s: np.ones((len(s) + 3, 4)), ValueError, r"encoder returned \d+ rows for \d+ sentences"),
    (lambda s: np.ones((len(s), 0)), ValueError, r"rows for \d+ sentences: .* d >= 1"),
    (lambda s: np.ones(len(s)), ValueError, r"encoder returned \d+ rows .* got shape \(\d+,\)"),
    (lambda s: np.float64(1.0), ValueError, r"encoder returned 0 rows"),
    (lambda s: np.array([], dtype=object), TypeError, r"dtype object \(no values\)"),
    (lambda s: np.where(np.arange(len(s))[:, None] == 2, np.nan, np.ones((len(s), 4))), ValueError,
     r"encoder returned NaN or inf for sentence 2 \('.*'\) and 0 more"),
])
def test_evaluation_checks_the_encoders_output(data_root, encode, exc, match):
    with pytest.raises(exc, match=match): evaluate_sts(encode, tasks="stsb", limit=20)


def test_a_bfloat16_tensor_from_the_encoder_is_read(data_root):
    rng = np.random.default_rng(0)
    table = {}
    def enc(s):
        rows = [table.setdefault(x, rng.normal(size=8)) for x in s]
        return torch.tensor(np.stack(rows), dtype=torch.bfloat16)
    assert np.isfinite(evaluate_sts(enc, tasks="stsb", limit=20).scores["stsb"])
