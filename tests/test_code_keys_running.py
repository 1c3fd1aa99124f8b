"""A process keys only the code it runs (nbs/core/05b_code_keys): once a package file changes under a running process,
its `code_hash` refuses instead of naming the new files' code for results the old in-memory code computes."""
import shutil, subprocess, sys
from pathlib import Path
import sentemb_lit

SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
import sentemb_lit.core.code_keys as ck, sentemb_lit.jtcse.train as J
assert Path(ck.__file__).parents[1] == Path({root!r}) / "sentemb_lit", ck.__file__
before = ck.code_hash(*J.STAGE_METHOD.roots)
print("keyed", before[:12])
path = Path({root!r}) / "sentemb_lit" / "jtcse" / "losses.py"
path.write_text(path.read_text() + "\\n# an edit while this process runs\\n")
try:
    ck.code_hash(*J.STAGE_METHOD.roots)
    print("not refused")
except ck.CodeChangedError as e:
    print("refused:", e)
"""


def test_a_running_process_refuses_to_key_files_changed_under_it(tmp_path):
    shutil.copytree(Path(sentemb_lit.__file__).parent, tmp_path / "sentemb_lit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(tmp_path))], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert ("keyed" in out.stdout
            and "refused: jtcse/losses.py changed since this process imported" in out.stdout), out.stdout
