"""Literate-style figures of the notebooks and the package: exported lines and definitions per cell, argument-check
lines, lines over 120 characters, `;`-joined statements, notebooks committed with outputs; and per paper-component
notebook the figures and worked examples it commits and the test beat (the longest run of exported cells with no test
cell between them; issue 23 asks for at most 4), and the longest such run over every notebook.

    python tools/literate_metrics.py [REPO_DIR]
"""
import ast, io, json, re, sys, tokenize
from pathlib import Path


def exported_cells(nb: dict) -> list[str]:
    out = []
    for c in nb["cells"]:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] == "code" and re.match(r"\s*#\|\s*export", src):
            out.append("\n".join(l for l in src.splitlines() if not l.startswith("#|")))
    return out


def definitions(src: str) -> int:
    try: tree = ast.parse(src)
    except SyntaxError: return 0
    return sum(isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")
               for n in tree.body)


def semicolon_lines(src: str) -> int:
    "Lines holding a statement-separating `;` (found by the tokenizer, so never inside a string)."
    try: toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError): return 0
    return len({t.start[0] for t in toks if t.type == tokenize.OP and t.string == ";"})


def check_lines(src: str) -> int:
    "Lines that only validate arguments: `if ...: raise ...` one-liners and bare raise statements of Value/TypeError."
    return sum(bool(re.match(r"\s*(if .*:\s*)?raise (ValueError|TypeError)", l)) for l in src.splitlines())


PAPER_COMPONENTS = ("10", "11", "12", "20", "21", "22", "30", "34")      # a component's parts too: 11b_…, 11c_…


def is_component(name: str) -> bool:
    "`11_cross_attention.ipynb`, `11b_twin_model.ipynb`: a paper-component notebook (its number, an optional letter)."
    m = re.match(r"(\d+)[a-z]?_", name)
    return bool(m) and m.group(1) in PAPER_COMPONENTS


def _is_export(c: dict) -> bool:
    src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
    return c["cell_type"] == "code" and bool(re.match(r"\s*#\|\s*export", src))


def test_beat(nb: dict) -> int:
    "The longest run of exported cells with no non-exported code cell (a test or example) between them."
    longest = run = 0
    for c in nb["cells"]:
        if c["cell_type"] != "code": continue
        run = run + 1 if _is_export(c) else 0
        longest = max(longest, run)
    return longest


def shows(nb: dict) -> dict:
    "Committed figures (image outputs) and cells tagged worked-example."
    figs = sum("image/png" in o.get("data", {}) for c in nb["cells"] if c["cell_type"] == "code"
               for o in c.get("outputs", []))
    worked = sum("worked-example" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
    return {"figures": figs, "worked examples": worked}


def per_notebook(repo: Path) -> dict:
    "name -> {figures, worked examples, longest exported run} for the paper-component notebooks."
    out = {}
    for p in sorted((repo / "nbs").glob("*.ipynb")):
        if is_component(p.name):
            nb = json.loads(p.read_text(encoding="utf-8"))
            out[p.stem] = shows(nb) | {"longest exported run": test_beat(nb)}
    return out


def worst_test_beat(repo: Path) -> tuple[int, list[str]]:
    "The longest test-beat run over every notebook, and the notebooks that have it (in name order)."
    nbs = sorted((repo / "nbs").glob("*.ipynb"))
    runs = {p.stem: test_beat(json.loads(p.read_text(encoding="utf-8"))) for p in nbs}
    worst = max(runs.values(), default=0)
    return worst, [name for name, run in runs.items() if run == worst]


def main(repo: Path) -> dict:
    nbs = sorted((repo / "nbs").glob("*.ipynb"))
    cell_lines, cell_defs, with_outputs = [], [], []
    for p in nbs:
        nb = json.loads(p.read_text(encoding="utf-8"))
        for src in exported_cells(nb):
            cell_lines.append(len([l for l in src.splitlines() if l.strip()]))
            cell_defs.append(definitions(src))
        if any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"): with_outputs.append(p.name)
    pkg = [p for p in (repo / "sentemb_lit").glob("*.py") if p.name != "_modidx.py"]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pkg)
    code_lines = [l for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
    semis = sum(semicolon_lines(p.read_text(encoding="utf-8")) for p in pkg)
    res = {"notebooks": len(nbs), "exported cells": len(cell_lines), "max exported lines/cell": max(cell_lines),
           "mean exported lines/cell": round(sum(cell_lines) / len(cell_lines), 1),
           "cells over 40 lines": sum(n > 40 for n in cell_lines),
           "mean public definitions/cell": round(sum(cell_defs) / len(cell_defs), 2),
           "cells with > 1 public definition": sum(d > 1 for d in cell_defs),
           "package code lines": len(code_lines), "argument-check lines": check_lines(text),
           "lines over 120 chars (package)": sum(len(l) > 120 for l in text.splitlines()),
           "';'-joined lines (package)": semis, "notebooks with outputs": len(with_outputs)}
    return res


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    for k, v in main(root).items(): print(f"{k:>36}: {v}")
    print("\npaper-component notebooks: figures, worked examples, longest run of exported cells without a test")
    for name, r in per_notebook(root).items():
        print(f"  {name:<28} {r['figures']:>2} fig  {r['worked examples']:>2} worked  {r['longest exported run']:>2} run")
    worst, names = worst_test_beat(root)
    others = f" and {len(names) - 1} more at {worst}" if len(names) > 1 else ""
    first = names[0] if names else "-"
    print(f"\nall notebooks: longest run of exported cells without a test {worst} ({first}{others}; at most 4)")
