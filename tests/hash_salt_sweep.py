"""Run tests under many hash salts: no result may depend on `PYTHONHASHSEED`.

Python salts `hash()` of str and bytes per process, so the iteration order of a set of strings (and anything built
from it: batch composition, padding, file order) can change from one run to the next. CI draws one salt per run; this
sweep draws them all, in order, and prints one line per salt.

    python tests/hash_salt_sweep.py                      # salts 0..39 on the tests that touch hashing or sets
    python tests/hash_salt_sweep.py --salts 0-9 tests    # the whole suite under salts 0..9

Each salt runs pytest once on two xdist workers (both workers inherit the salt, so they collect the same tests).
Exit status 1 if any salt fails; the failing salts and their first failures are printed at the end.
"""
import argparse, os, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the tests whose code paths hash strings or iterate sets of them: keys and stores, the evaluation's batching,
# the data loaders, the report and the claims, the encoders, the properties walk (derandomized draws)
DEFAULT = ["tests/test_bad_inputs_core.py", "tests/test_models_eval.py", "tests/test_data.py",
           "tests/test_trust_readback.py", "tests/test_read_back.py", "tests/test_jtcse.py",
           "tests/test_committed_records.py", "tests/test_prompting.py", "tests/test_chains_job.py",
           "tests/test_claims_status.py", "tests/test_encode_keywords.py", "tests/test_import_graph.py"]


def salts(spec: str) -> list[int]:
    "'0-39' or '0,3,7' -> the salts."
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        if not lo.strip().isdigit() or (hi and not hi.strip().isdigit()):
            raise argparse.ArgumentTypeError(f"--salts needs e.g. 0-39 or 0,3,7, got {spec!r}")
        out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--salts", type=salts, default=list(range(40)))
    p.add_argument("tests", nargs="*", default=DEFAULT)
    a = p.parse_args(argv)
    exe = Path(sys.executable).parent / "pytest"
    failed = {}
    for s in a.salts:
        env = os.environ | {"PYTHONHASHSEED": str(s), "OMP_NUM_THREADS": "1"}
        t0 = time.time()
        r = subprocess.run([str(exe), "-q", "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider", *a.tests],
                           cwd=ROOT, env=env, capture_output=True, text=True)
        last = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"PYTHONHASHSEED={s:>3}: rc {r.returncode}  {last}  ({time.time() - t0:.0f} s)", flush=True)
        if r.returncode: failed[s] = [l for l in r.stdout.splitlines() if l.startswith(("FAILED", "ERROR"))][:5]
    for s, lines in failed.items(): print(f"salt {s}:", *lines, sep="\n  ")
    print(f"{len(a.salts) - len(failed)} of {len(a.salts)} salts green")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
