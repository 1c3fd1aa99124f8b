"""The code part of every experiment key, for proving that a refactoring leaves the long runs' keys unchanged.

    python tools/key_snapshot.py > before.json    # on the old tree
    python tools/key_snapshot.py > after.json     # on the new tree
    diff before.json after.json                   # no output: no record is re-keyed

Entry-point keys (`jtcse.TRAIN_CODE`, `jtcse.EVAL_CODE`, `ranking_runs.RUN_CODE`, the chain code) follow only the code a run reaches, by bare
name, so moving a definition to another module keeps them (so does nb31's `prompting.ENCODE_CODE`); module-text keys
(`code=("evaluation", "models")`) change with any edit of the named modules and are listed so a diff shows which
records such an edit re-keys."""
import json, sys
from sentemb_lit.core.io import fingerprint
from sentemb_lit.core.code_keys import code_hash

def entry_points() -> dict:
    "Each keyed run's entry points (the sets whose reached code is a key's code part), by what they key."
    import sentemb_lit.jtcse.train as jtcse
    from sentemb_lit.prompting.prompt_embedding import ENCODE_CODE
    from sentemb_lit.ranking.runs import RUN_CODE
    return {"jtcse.TRAIN_CODE": tuple(jtcse.TRAIN_CODE), "jtcse.EVAL_CODE": tuple(jtcse.EVAL_CODE),
            "nb13 cls energy": ("bench.model_cls_energy",),
            "nb23 base": ("core.evaluation.evaluate_sts", "core.evaluation.evaluate_dev", "core.models.SentenceEncoder",
                          "core.models.load_encoder", "core.tiny_models.tiny_bert"),
            "nb31 prompting": tuple(ENCODE_CODE), "ranking RUN_CODE": tuple(RUN_CODE),
            "nb23 T_CODE": ("evals.transfer.evaluate_transfer", "ranking.transfer.retrain_last_step",
                            "core.models.SentenceEncoder", "core.models.load_encoder", "core.tiny_models.tiny_bert"),
            "nb23 M_CODE": ("evals.mteb.evaluate_mteb_classification", "ranking.transfer.retrain_last_step",
                            "core.models.SentenceEncoder", "core.models.load_encoder", "core.tiny_models.tiny_bert")}

def snapshot() -> dict:
    import sentemb_lit.ranking.chains as chains
    out = {}
    for what, code in entry_points().items():
        try: out[what] = code_hash(*code)
        except (ValueError, FileNotFoundError, ModuleNotFoundError) as e: out[what] = f"unresolved: {e}"
    out["chains.chain_code"] = fingerprint(chains.chain_code())
    return out

if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, indent=1); print()
