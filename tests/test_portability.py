"""The package imports where `fcntl` does not exist (Windows): the lock imports it only when a lock is taken."""
import subprocess, sys

MODULES = ("io", "models", "data", "evaluation", "training", "report", "predictions", "claims", "coverage")


def test_package_imports_without_fcntl():
    code = ("import sys; sys.modules['fcntl'] = None\n"        # `import fcntl` now raises ImportError, as on Windows
            + "".join(f"import sentemb_lit.{m}\n" for m in MODULES) + "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_the_lock_still_excludes_a_second_holder(tmp_path):
    from sentemb_lit.core.io import LockedError, exclusive
    with exclusive(tmp_path / "x"):
        code = ("from sentemb_lit.core.io import exclusive, LockedError\n"
                f"try:\n    with exclusive({str(tmp_path / 'x')!r}): print('taken')\n"
                "except LockedError as e: print('refused', e)")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.startswith("refused") and "pid" in r.stdout, r.stdout + r.stderr
