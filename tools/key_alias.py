"""Alias the experiment keys of the current tree to those of an earlier commit, with the proof that no number moved
(nbs/core/05c_key_proofs: the proof form). For every entry-point set of `tools/key_snapshot.py` that names reached code:

    python tools/key_alias.py --from <commit> --why "what changed and why no number can move" [--rename old=new ...]
        [--moved old_module=new_module ...]       # modules that moved (roots are named in the new layout)
    python tools/key_alias.py --from <commit> --why "..." --write      # archive both trees, add the entries

prints, per set, whether the proof forms are equal, the definitions that changed, the guards the proof removed, and
the old code part and new hash. `--write` refuses unless every set is proven; it archives the old tree (from git) and
this tree in `keys/trees/`, and adds the entries to `CODE_ALIASES` in nbs/core/05b_code_keys.ipynb (then run
nbdev_export). `tests/test_code_aliases.py` proves every entry again from the archives."""
import argparse, json, re, subprocess, sys, tarfile, tempfile, io as _io
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from sentemb_lit.core.code_keys import CODE_ALIASES
from sentemb_lit.core.key_proofs import key_proof, save_tree
from key_snapshot import entry_points

def old_tree(commit: str, into: Path) -> Path:
    "The package folder of `commit`, extracted from git into `into` (nothing is imported or run from it)."
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "sentemb_lit"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=_io.BytesIO(blob)) as t: t.extractall(into, filter="data")
    return into / "sentemb_lit"

def write_entries(entries: dict, nb: Path = ROOT / "nbs" / "05b_code_keys.ipynb"):
    "Add `entries` to the CODE_ALIASES literal of the notebook's export cell (one entry per line)."
    book = json.loads(nb.read_text(encoding="utf-8"))
    cell = next(c for c in book["cells"] if "".join(c["source"]).startswith("#| export\nCODE_ALIASES = {"))
    src = "".join(cell["source"])
    table = {**CODE_ALIASES, **entries}
    body = "".join(f"    {k!r}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in table.items())
    src = re.sub(r"CODE_ALIASES = \{.*?\n\}|CODE_ALIASES = \{\}", "CODE_ALIASES = {\n" + body + "}", src, count=1, flags=re.S)
    cell["source"] = src.splitlines(keepends=True)
    nb.write_text(json.dumps(book, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="commit", required=True, help="the commit whose stored results keep their keys")
    ap.add_argument("--why", required=True, help="what changed, in a sentence or two")
    ap.add_argument("--rename", action="append", default=[], help="old=new, an identifier renamed since that commit")
    ap.add_argument("--moved", action="append", default=[],
                    help="old_module=new_module (dotted in the package): a module that moved since that commit")
    ap.add_argument("--write", action="store_true", help="archive both trees and add the proven entries")
    a = ap.parse_args(argv)
    renames = dict(r.split("=", 1) for r in a.rename)
    moved = {new: old for old, new in (m.split("=", 1) for m in a.moved)}         # new module -> its old name
    before = lambda r: f"{moved.get(r.rpartition('.')[0], r.rpartition('.')[0])}.{r.rpartition('.')[2]}"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", a.commit], check=True,
                            capture_output=True, text=True).stdout.strip()
    entries, ok = {}, True
    with tempfile.TemporaryDirectory() as d:
        old = old_tree(commit, Path(d))
        for what, roots in entry_points().items():
            p = key_proof(*roots, old=old, renames=renames, old_roots=tuple(map(before, roots)),
                          moved={o: n for n, o in moved.items()})
            ok &= p["equal"]
            print(f"{what}: {'proven' if p['equal'] else 'NOT proven, differ in ' + str(p['differ'])}; "
                  f"{p['code'][:12]} -> {p['key'][:12]}; changed {p['changed']}; guards removed in {sorted(p['guards'])}")
            if p["code"] != p["key"] and CODE_ALIASES.get(p["key"], {}).get("code") != p["code"]:   # else its entry stands
                entries[p["key"]] = {"code": p["code"], "roots": list(roots), "from": commit, "renames": renames,
                                     "why": a.why.strip()}
        if a.write:
            if not ok: sys.exit("not every set is proven: nothing written")
            trees = ROOT / "keys" / "trees"
            frm, to = save_tree(trees, old), save_tree(trees)
            for e in entries.values(): e |= {"from_tree": frm, "to_tree": to}
            write_entries(entries)
            print(f"wrote {len(entries)} entries; trees {frm} (from {commit}) and {to} (this tree) in keys/trees/")

if __name__ == "__main__":
    main()
