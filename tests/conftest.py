import os
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
