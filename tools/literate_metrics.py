"""Literate-style figures of the notebooks and the package: exported lines and definitions per cell, argument-check
lines, lines over 120 characters, `;`-joined statements, notebooks committed with outputs.

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
    for k, v in main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")).items(): print(f"{k:>36}: {v}")
