"""nb23's cpu chain settings and tests/ranking_chain_record.py are one definition.

The chain stage of the ranking record runs ahead of nb23 in `tests/ranking_chain_record.py` (imported here) and is
served to the notebook by key (`chain_jobs.chain_key`: settings, sources, code). The key matches only when both spell
the same settings and the same source sample; this test reads both without running either (the notebook's cell is
parsed, its dict literals evaluated by `ast.literal_eval`)."""
import ast, inspect, json
from pathlib import Path
import ranking_chain_record                                   # tests/ranking_chain_record.py, beside this test

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "nbs" / "experiments" / "23_ranking_reproduction.ipynb"
SAMPLE = "random.Random(0).sample([s for s in prem if 5 <= len(s.split()) <= 25]"


def notebook_assignments() -> dict:
    "Name -> value node of every top-level assignment in nb23's code cells."
    out = {}
    for c in json.loads(NB.read_text(encoding="utf-8"))["cells"]:
        if c["cell_type"] != "code": continue
        for n in ast.parse("".join(c["source"])).body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                out[n.targets[0].id] = n.value
    return out


def literal(node):
    "The value of a literal, where `dict(a=1, …)` of literals counts as a literal (no code is run)."
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        return {k.arg: literal(k.value) for k in node.keywords}
    if isinstance(node, ast.Dict): return {literal(k): literal(v) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


def test_the_record_stage_decodes_nb23s_cpu_chains():
    a, t = notebook_assignments(), ranking_chain_record
    call = a["CHAINS"]                                       # profile_value(profile, {...})
    assert isinstance(call, ast.Call) and call.func.id == "profile_value"
    chains = literal(call.args[1])
    assert chains["cpu"] == t.RECORD
    assert literal(a["CHAIN_KINDS"]) == t.KINDS


def test_the_record_stage_samples_nb23s_sources():
    # the notebook samples from `prem`, the record stage from `prem` too: the same corpus, filter, seed and count
    source = inspect.getsource(ranking_chain_record)
    assert SAMPLE in NB.read_text(encoding="utf-8") and SAMPLE in source
    assert 'load_corpus("snli_premises")' in source


def test_the_record_stage_decodes_nb23s_list_baseline():
    a, t = notebook_assignments(), ranking_chain_record
    by_profile = a["SIZES"].args[1]                          # profile_value(profile, {"smoke": dict(...), "cpu": ...})
    cpu = next(v for k, v in zip(by_profile.keys, by_profile.values) if literal(k) == "cpu")
    assert {k.arg: literal(k.value) for k in cpu.keywords if k.arg in t.LIST} == t.LIST
    code = "".join("".join(c["source"]) for c in json.loads(NB.read_text(encoding="utf-8"))["cells"]
                   if c["cell_type"] == "code")
    # JOBS["list"] in the notebook: the list mode, 30 tokens per item, the chains' batch, no refusal, the first
    # list_sources sources -- the settings the record stage spells for `--kinds list`
    job = 'RankingSettings(model=CHAINS["generator"], mode="list", rounds=SIZES["list_n"],'
    assert job in code and 'max_new_tokens=30 * SIZES["list_n"], batch_size=CHAINS["batch_size"]),' in code
    assert 'sources[:SIZES["list_sources"]])' in code
