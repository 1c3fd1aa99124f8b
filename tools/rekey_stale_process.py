"""One-off (2026-11-27): put back under its declared key a JTCSE stage that a process keyed with files newer than its
code. Worker A started at 14:34 (code and alias table of 527f654); a merge at 14:58 changed the files on disk by
renames only, proven key-neutral by the alias `df700079…` -> `c0d5db2d…` of `CODE_ALIASES`. A's next stage
(`simcse_s4`) hashed the new files (`df700079…`) without that alias, so its record landed under a key with code part
`df700079…` instead of `c0d5db2d…`: the code that ran is 527f654's, whose code part is `c0d5db2d…`.

    python tools/rekey_stale_process.py simcse_s4 <old key hex>

Checks before it moves anything: the old key's code part has an alias in CODE_ALIASES whose target is TRAIN's code
part now; config, seed and data parts are unchanged; the new key is the one nb14 declares for the stage (printed)."""
import json, sys
from sentemb_lit.code_keys import CODE_ALIASES, code_hash
from sentemb_lit.io import KeyedStore, fingerprint
from sentemb_lit.jtcse import TRAIN_CODE

def main(name: str, old_hex: str, root: str = "papers/jtcse/store/cpu"):
    store = KeyedStore(root)
    old = json.loads((store.path(name, old_hex) / "key.json").read_text())
    code = code_hash(*TRAIN_CODE)
    assert old["key"] == old_hex and CODE_ALIASES.get(old["parts"]["code"], {}).get("code") == code, "no alias to TRAIN"
    parts = old["parts"] | {"code": code}
    new = {"key": fingerprint(parts), "parts": parts, "config": old["config"]}
    how = (f"keyed by a process (started 14:34 on 527f654) with files merged at 14:58: its code part "
           f"{old['parts']['code'][:16]}… is the hash of the renamed files, which CODE_ALIASES proves equal to "
           f"{code[:16]}… (renames only); the code that ran was 527f654's, whose code part is {code[:16]}…; config, seed "
           f"and data parts unchanged. Checked by tools/rekey_stale_process.py.")
    dst = store.rekey(name, old_hex, new, how)
    print(f"{name}: {old_hex[:16]} -> {new['key'][:16]} ({dst})")

if __name__ == "__main__":
    main(*sys.argv[1:])
