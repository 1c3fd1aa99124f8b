import contextlib, os, socket, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope="session")
def data_root():
    root = os.environ.get("SENTEMB_DATA") or str(ROOT.parent / "shared" / "data")
    if not Path(root, "sts").is_dir():
        pytest.fail(f"STS data not found at {root}: set SENTEMB_DATA (the test command does)")
    os.environ["SENTEMB_DATA"] = root
    return Path(root)


# tiny random models shared by the prompting tests (built once per module that uses them)
@pytest.fixture(scope="module")
def llama():
    from sentemb_lit.core.tiny_models import tiny_llama
    return tiny_llama(seed=0)


@pytest.fixture(scope="module")
def bert():
    from sentemb_lit.core.tiny_models import tiny_bert
    return tiny_bert(seed=0)


@pytest.fixture
def no_network(monkeypatch):
    "Any socket use or `datasets` call fails the test: proves an offline path opens no connection."
    import datasets
    calls = []
    def refuse(*a, **k):
        calls.append(a)
        raise AssertionError("network or datasets used")
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(datasets, "load_dataset", refuse)
    return calls


@pytest.fixture(scope="session")
def minilm_mean(data_root):
    "all-MiniLM-L6-v2 with mean pooling (the reference encoder), loaded once for the tests that compare with mteb."
    from sentemb_lit.core.models import SentenceEncoder, load_encoder
    model, tok = load_encoder("minilm-l6")
    return SentenceEncoder(model, tok, "mean", show_progress=False)


_HOLD = """
import sys, time
from sentemb_lit.core.io import exclusive
with exclusive(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def lock_holder():
    """`with lock_holder(path):` another process holds `core.io.exclusive(path)` for the block (it has taken the lock
    when the block starts, and is killed when it ends), so a test sees what a second writer meets."""
    @contextlib.contextmanager
    def hold(path):
        proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline().strip()
            assert line == "held", f"the lock-holding process did not take the lock of {path} (said {line!r})"
            yield proc
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
    return hold
