"""How tests/data/store-v3.db was made: with the code at `main` before bundles (schema 3).

    git archive main | tar -x -C /tmp/main-src
    python tests/data/make_store_v3.py /tmp/main-src tests/data/store-v3.db /tmp/store-v3-work

A clean local card (active), a tainted card approved by a trusted key (active, one signed
statement over its SKILL.md SHA-256) and a tainted card left pending. Not run by the tests.
"""

import shutil
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[1])

from chimera_cards._importer.pipeline import import_source
from chimera_cards._review.decisions import add_trust, approve
from chimera_cards._store.facade import Store
from chimera_cards._trust.keys import generate_key, load_private_key

out, work = Path(sys.argv[2]), Path(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
for stale in (out, Path(f"{out}-wal"), Path(f"{out}-shm")):
    stale.unlink(missing_ok=True)


def card(name: str, description: str) -> Path:
    folder = work / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\nlicense: Apache-2.0\n---\n\n"
        f"# {name}\n\nDo the thing carefully, then check it.\n"
    )
    return folder


with Store(out) as store:
    import_source(store, card("local-skill", "A clean local skill for migration tests."))
    (approved,) = import_source(
        store, card("reviewed-skill", "A tainted skill approved before bundles."), taint=True
    )
    key = generate_key("old-reviewer", work / "old.key")
    add_trust(store, "old-reviewer", key.public)
    approve(store, "reviewed-skill", approved.sha256, load_private_key(work / "old.key"))
    import_source(store, card("held-skill", "A tainted skill still pending."), taint=True)
conn = sqlite3.connect(out)
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.execute("PRAGMA journal_mode = DELETE")
conn.execute("PRAGMA page_size = 1024")  # a small fixture file
conn.execute("VACUUM")
conn.close()
