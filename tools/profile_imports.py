"""What `import sentemb_lit.jtcse` spends its time on, against the floor set by what it must import (issue 24's
"jtcse ≤ 1.5 s" row).

    python tools/profile_imports.py [--repeats 3] [--module sentemb_lit.jtcse]

Each measure is a fresh interpreter (`python -X importtime -c "import …"`), best of `--repeats`: python alone, torch,
torch + transformers' `PreTrainedModel` (what a module that defines a transformers model class at import needs: the
twin's export class is registered with `AutoModel` when `sentemb_lit.jtcse` is imported), scipy.stats, and the module.
Then the module's own import tree: each package it pulls in first, with its cumulative time, largest first."""
import argparse, subprocess, sys


def importtime(stmt: str) -> tuple[float, list[tuple[int, str, float]]]:
    "Wall seconds of `python -X importtime -c stmt`'s imports (its root total) and the tree's (depth, name, cumulative s)."
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", stmt], capture_output=True, text=True, check=True).stderr
    rows = []
    for line in out.splitlines():
        if not line.startswith("import time:") or "cumulative" in line: continue
        _, cum, name = line[len("import time:"):].split("|")
        rows.append(((len(name) - len(name.lstrip())) // 2, name.strip(), int(cum) / 1e6))
    roots = [s for d, _, s in rows if d == 0]
    return sum(roots), rows


def best(stmt: str, repeats: int):
    runs = [importtime(stmt) for _ in range(repeats)]
    return min(runs, key=lambda r: r[0])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--module", default="sentemb_lit.jtcse")
    a = p.parse_args(argv)
    for label, stmt in (("torch", "import torch"),
                        ("torch + transformers.PreTrainedModel", "import torch; from transformers import PreTrainedModel"),
                        ("scipy.stats", "import scipy.stats"),
                        (a.module, f"import {a.module}")):
        total, rows = best(stmt, a.repeats)
        print(f"{label:40s} {total:6.2f} s")
    print(f"\n{a.module}: first imports by cumulative time (depth 1 of its tree)")
    for d, name, s in sorted((r for r in rows if r[0] == 1), key=lambda r: -r[2])[:12]:
        print(f"  {name:44s} {s:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
