"""Property-based walk of the public surface: every function and class in `__all__` of every module is called with
generated bad and edge inputs (wrong types, empty, NaN/inf, huge, negative, unicode, wrong shapes, damaged files), and
each outcome is classified:

* good  — an exception raised from inside sentemb_lit whose message names an argument, a file or what was expected;
* bad   — an exception raised from inside torch / numpy / transformers / the standard library (it names nothing the
          caller passed), or an internal error type (AttributeError, IndexError, ZeroDivisionError, ...);
* bad   — a returned number, array or tensor that is not finite.

CI runs a fixed, derandomized example budget (`SENTEMB_FUZZ_EXAMPLES`, default 12 per name), so every run draws the
same inputs; `make fuzz` runs 200 per name. Each name runs in its own test, in a temporary working directory.
"""
import importlib, inspect, math, os, pkgutil, re, tempfile, traceback
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import sentemb_lit
import sentemb_lit.core.evaluation as evaluation

EXAMPLES = int(os.environ.get("SENTEMB_FUZZ_EXAMPLES", "12"))
PKG = Path(sentemb_lit.__file__).resolve().parent

# Names the walk does not call, each with its reason.
SKIP = {
    **{f"cli.{n}": "an argv parser of the command layer (an argparse exit, not an exception): every error is one line, "
                   "tested in tests/test_cli_papermill.py and tests/test_reproduce_safety.py"
       for n in ("eval_sts_main", "reproduce_main", "compare_main", "report_main", "generate_ranking_main",
                 "embed_main", "fetch_data_main", "main")},
    "reproduce.reproduce": "no required argument: called with none it runs every notebook of every paper; its "
                           "argument checks are tested in tests/test_reproduce_safety.py",
    "reproduce.write_reports": "the reproduce runner's lazy alias of report.write_reports, walked there",
    "ranking.chain_jobs.parse_job_args": "an argv parser: a bad argv is argparse's one-line exit (tests/test_decoding.py); the "
                             "library path (cached_chains) raises a ValueError naming the job",
}
# The benchmarks of `bench` time real models for minutes (nbs/91_bench tests each on tiny models); its measures of a
# model (`bert_macs`, `inference_macs`, `model_cls_energy`, `energy_sts_correlation`, moved there from `jtcse`) are
# walked like every other public name.
BENCHMARKS = ("matmul_flops_per_s", "bench_twin_step", "bench_decoding", "bench_prompting", "senteval_sts_encoding",
              "bench_sts_eval", "bench_imports", "bench_meta", "bench_main")
SKIP |= {f"bench.{n}": "a benchmark: it times real models for minutes; nbs/91_bench tests it on tiny models"
         for n in BENCHMARKS}
SKIP["jtcse.cross_attention.extended_attention_mask"] = (
    "a building block inside every layer's forward: it checks the mask's type and shape only, never its values, so it "
    "costs no device synchronisation per layer; the values (0/1) are checked once per forward by lockstep_forward "
    "(nbs/11 §4), which is walked")
INTERNAL = (AttributeError, IndexError, ZeroDivisionError, UnboundLocalError, NameError, RecursionError,
            AssertionError, StopIteration, UnicodeDecodeError)


def _damaged_file(kind: str) -> Path:
    "A file a reader might be handed: empty, binary garbage, truncated JSON, a directory."
    root = Path(os.environ.get("SENTEMB_FUZZ_DIR", "."))
    p = root / f"fuzz_{kind}"
    if kind == "dir": p.mkdir(exist_ok=True)
    elif kind == "empty": p.write_bytes(b"")
    elif kind == "binary": p.write_bytes(bytes(range(256)) * 4)
    elif kind == "json": p.write_text('{"a": [1, 2', encoding="utf-8")
    return p


BAD = st.one_of(
    st.none(), st.just(""), st.just(" "), st.just([]), st.just({}), st.just(()), st.just(True),
    st.integers(-3, 3), st.sampled_from([-(2 ** 63), 2 ** 63, 10 ** 5]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([math.nan, math.inf, -math.inf, -1e308]),
    st.text(max_size=12), st.sampled_from(["..", "../x", "/", "\x00", "é" * 3, "a" * 300]),
    st.lists(st.text(max_size=6), max_size=3), st.lists(st.floats(allow_nan=True), max_size=4),
    st.sampled_from(["nan-array", "empty-array", "ragged", "nan-tensor", "3d-tensor", "int-tensor"]).map(
        lambda k: {"nan-array": np.array([np.nan, 1.0]), "empty-array": np.zeros((2, 0)), "ragged": [[1.0], [1.0, 2.0]],
                   "nan-tensor": torch.tensor([[float("nan"), 1.0]]), "3d-tensor": torch.zeros(2, 3, 4),
                   "int-tensor": torch.arange(6).reshape(2, 3)}[k]),
    st.sampled_from(["empty", "binary", "json", "dir", "missing"]).map(
        lambda k: Path("no_such_file.json") if k == "missing" else _damaged_file(k)),
)


def _public():
    out = []
    for m in sorted(x.name for x in pkgutil.iter_modules(sentemb_lit.__path__) if not x.name.startswith("_")):
        if m in SKIP: continue
        mod = importlib.import_module(f"sentemb_lit.{m}")
        for n in getattr(mod, "__all__", []):
            obj = getattr(mod, n, None)
            if f"{m}.{n}" in SKIP or not (inspect.isfunction(obj) or inspect.isclass(obj)): continue
            if inspect.isclass(obj) and issubclass(obj, BaseException): continue
            out.append((m, n, obj))
    return out


def _required(obj) -> list[str]:
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): return []
    return [p.name for p in sig.parameters.values() if p.default is p.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]


def _from_library(exc: BaseException) -> bool:
    "The frame that raised is in sentemb_lit (not torch, numpy, transformers or the standard library)."
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve().is_relative_to(PKG)


def _non_finite(x) -> bool:
    if isinstance(x, bool) or x is None: return False
    if isinstance(x, float): return not math.isfinite(x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc": return x.size > 0 and not np.isfinite(x).all()
    if isinstance(x, torch.Tensor) and x.is_floating_point(): return x.numel() > 0 and not torch.isfinite(x).all()
    return False


def _names_something(msg: str, kwargs: dict) -> bool:
    "Whether an error message names an argument passed, a path or a file:line (what a caller can act on)."
    if not kwargs: return True
    named = any(re.search(rf"\b{re.escape(k)}\b", msg) for k in kwargs)
    shown = any(isinstance(v, (str, Path)) and (repr(str(v)) in msg or len(str(v)) > 2 and str(v) in msg)
                for v in kwargs.values())
    labelled = "name" in kwargs and str(kwargs["name"]) in msg     # a check's `name` is the label its message shows
    a_file = re.search(r"/|\b[\w-]+\.(json|jsonl|npz|txt|tsv|gz|ipynb|safetensors|pt|csv|ini|md|py)\b", msg)
    return named or shown or labelled or bool(a_file)


def classify(call, kwargs: dict | None = None) -> str | None:
    "None when the outcome is good; else what went wrong, in one line."
    kwargs = kwargs or {}
    try: out = call()
    except (MemoryError, KeyboardInterrupt): raise
    except Exception as e:
        if isinstance(e, INTERNAL) or (isinstance(e, KeyError) and " " not in str(e)):   # a bare KeyError('x')
            return f"internal {type(e).__name__}: {e}"[:300]
        if not _from_library(e):
            where = traceback.extract_tb(e.__traceback__)[-1]
            return f"deep {type(e).__name__} at {Path(where.filename).name}:{where.lineno}: {e}"[:300]
        if not str(e).strip(): return f"{type(e).__name__} with an empty message"
        if not _names_something(str(e), kwargs): return f"{type(e).__name__} names no argument or file: {e}"[:300]
        return None
    if _non_finite(out): return "returned a non-finite value"
    return None


PUBLIC = _public()


@pytest.mark.parametrize("module,name,obj", PUBLIC, ids=[f"{m}.{n}" for m, n, _ in PUBLIC])
def test_bad_inputs_are_named(module, name, obj, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))         # temporary folders a call makes stay in tmp_path
    monkeypatch.setenv("SENTEMB_FUZZ_DIR", str(tmp_path))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path / "data"))          # no data: loaders must say so
    evaluation._cached_sts.cache_clear()     # a set loaded under root=None by an earlier test must not answer here
    required = _required(obj)
    problems = []

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.fixed_dictionaries({p: BAD for p in required}))
    def walk(kwargs):
        bad = classify(lambda: obj(**kwargs), kwargs)
        if bad: problems.append(f"{module}.{name}({', '.join(f'{k}={v!r}'[:60] for k, v in kwargs.items())}): {bad}")

    walk()
    assert not problems, "\n".join(dict.fromkeys(problems))
