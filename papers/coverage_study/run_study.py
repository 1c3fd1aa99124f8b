"""Compute, or resume, the record-spread coverage study of nbs/stats/93_coverage.ipynb (issue 42) into results/.

Usage: python papers/coverage_study/run_study.py LOGFILE [R]   (SENTEMB_DATA must point at the STS data: the sentence
ids come from the test files). Each block of replications is stored as soon as it is computed; a rerun skips what is
stored, and a larger R only adds blocks. Progress goes to LOGFILE, not to the results."""
import logging, sys
from pathlib import Path
from sentemb_lit.stats.coverage import run_record_study

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    if len(sys.argv) < 2: sys.exit(__doc__)
    logging.basicConfig(filename=sys.argv[1], level=logging.INFO, format="%(asctime)s %(message)s")
    R = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    run_record_study(HERE / "results", HERE.parent / "jtcse" / "runs" / "cpu", R=R)
    logging.info("done: R = %d per setting", R)
