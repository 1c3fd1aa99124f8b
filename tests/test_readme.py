"""The README runs as written. Every shell block of README.md runs verbatim, in order, with bash in a fresh copy of the
repository (offline, data from SENTEMB_DATA, the environment's own commands on PATH), or it carries a
`<!-- not run in CI: reason -->` marker on the line right above it (make targets, installs from an index, GPUs or
several machines). A run leaves no untracked file: what a block writes is git-ignored or removed by the block.
Each experiment notebook opens with where its executed copy and its report live, and both exist."""
import json, os, re, resource, shutil, subprocess, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHELL = {"bash", "sh", "shell", "console"}
MARKER = re.compile(r"<!--\s*not run in CI:\s*(\S.*?)\s*-->")
FENCE = re.compile(r"^```\s*([\w+-]*)")
NOT_COPIED = ("papers/", "keys/")             # large records no README block reads; widen when one does
BUDGET_S = 120          # the run blocks together (issue 45), in CPU seconds: wall time on a shared machine varies


def shell_blocks(text: str) -> list:
    "Fenced shell blocks of a Markdown text: {line (of the opening fence, from 1), source, skip (the marker's reason)}."
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("```")), None)
        if end is None: raise ValueError(f"README line {i + 1}: a code block is never closed")
        if m.group(1).lower() in SHELL:
            above = next((l for l in reversed(lines[:i]) if l.strip()), "")
            reason = MARKER.search(above)
            blocks.append({"line": i + 1, "source": "\n".join(lines[i + 1:end]) + "\n",
                           "skip": reason.group(1) if reason else None})
        i = end + 1
    return blocks


def test_shell_blocks_parsed():
    text = ("x\n\n```bash\necho a\n```\n\n<!-- not run in CI: an install -->\n```sh\npip install x\n```\n"
            "```python\nprint(1)\n```\n```\nplain\n```\n<!-- not run in CI: -->\n```console\nls\n```\n")
    got = shell_blocks(text)
    assert [(b["line"], b["source"], b["skip"]) for b in got] == [
        (3, "echo a\n", None), (8, "pip install x\n", "an install"), (18, "ls\n", None)]   # a marker needs a reason
    with pytest.raises(ValueError, match="line 2: a code block is never closed"): shell_blocks("a\n```bash\nls\n")


def test_every_block_runs_or_says_why_not():
    blocks = shell_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "README.md has no shell block"
    assert any(b["skip"] is None for b in blocks), "every README shell block is marked 'not run in CI'"
    for b in blocks:
        if b["skip"] is None:
            assert not re.search(r"^\s*(make|pip install|sudo)\b|--index-url", b["source"], re.M), (
                f"README line {b['line']}: make, installs and index URLs do not run in CI; mark the block "
                f"<!-- not run in CI: reason -->")


def _copy_checkout(dst: Path) -> set:
    "The tracked files of this checkout (as they are now, but NOT_COPIED) copied into `dst`, a new git repository."
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for f in filter(None, files.split("\0")):
        if f.startswith(NOT_COPIED) or not (ROOT / f).is_file(): continue
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst / f)
    subprocess.run(["git", "init", "-q"], cwd=dst, check=True)
    return _untracked(dst)


def _untracked(repo: Path) -> set:
    "Files git would list as untracked (not ignored) in `repo`; in a repository with no commit that is every file."
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=repo, capture_output=True,
                         text=True, check=True).stdout
    return set(filter(None, out.split("\0")))


def _child_cpu() -> float:
    "CPU seconds of every finished process this one waited for, and of theirs (papermill's kernel included)."
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def test_readme_runs_as_written(tmp_path, data_root):
    blocks = [b for b in shell_blocks((ROOT / "README.md").read_text(encoding="utf-8")) if b["skip"] is None]
    work = tmp_path / "clone"
    before = _copy_checkout(work)
    bin_dir = str(Path(sys.executable).parent)                   # sentemb-lit, papermill, python of this environment
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "SENTEMB_DATA": str(data_root),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    start, cpu0, timings = time.time(), _child_cpu(), []
    for b in blocks:
        t0 = time.time()
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b["source"]], cwd=work, env=env, capture_output=True,
                           text=True, timeout=600)
        timings.append(f"line {b['line']}: {time.time() - t0:.0f} s")
        assert r.returncode == 0, (f"README block at line {b['line']} failed ({r.returncode}):\n{b['source']}\n"
                                   f"stdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-3000:]}")
    used = _child_cpu() - cpu0                                        # every process the blocks started, waited for
    print(f"README blocks: {used:.0f} CPU s, {time.time() - start:.0f} s wall ({', '.join(timings)})")
    assert used <= BUDGET_S, f"README blocks took {used:.0f} CPU s > {BUDGET_S} s: {timings}"
    left = sorted(_untracked(work) - before)
    assert not left, f"README blocks left untracked files (write into a git-ignored folder): {left[:10]}"


def test_experiment_notebooks_open_with_their_record():
    from sentemb_lit.reproduce import PAPERS
    for paper, names in PAPERS.items():
        for name in names:
            nb = json.loads((ROOT / "nbs" / "experiments" / name).read_text(encoding="utf-8"))
            first = "".join(nb["cells"][0]["source"])
            for path in (f"papers/{paper}/runs/cpu/{name}", f"papers/{paper}/REPORT.md"):
                assert path in first, f"{name}: its first cell does not say where {path} is"
                assert (ROOT / path).is_file(), f"{name}: its first cell names {path}, which does not exist"


def test_install_prints_no_setuptools_box(tmp_path):
    "`pip install .` as the README says: the build declares its licence as setuptools asks (no deprecation box)."
    src = tmp_path / "src"
    shutil.copytree(ROOT / "sentemb_lit", src / "sentemb_lit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("setup.py", "settings.ini", "pyproject.toml", "README.md", "LICENSE"): shutil.copy2(ROOT / name, src)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                        str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    boxes = [l for l in r.stderr.splitlines() if "!!" in l or "Warning" in l]
    assert not boxes, "the build warns:\n" + r.stderr[-3000:]
