"""Schema tampering: an extra trigger, a view standing in for a table, a dropped append-only
trigger or index, a constraint edited in place. ``verify`` compares the store's schema with the
one this code creates and names each difference; an honest store (fresh, or migrated from the
first schema) has none.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import make_card, run_cli, tamper

from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.facade import Store
from chimera_cards._store.schema import MIGRATIONS
from chimera_cards._store.verify import verify_store

run = run_cli


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "cards.db"
    with Store(path) as store:
        (res,) = import_source(store, make_card(tmp_path / "cards", "demo"))
        assert res.status == "active"
    return path


def kinds(db) -> dict[str, list[str]]:
    with Store(db) as store:
        report = verify_store(store, record=False)
    out: dict[str, list[str]] = {}
    for p in report.problems:
        out.setdefault(p.kind, []).append(p.message)
    return out


def test_an_honest_store_has_the_schema_the_code_creates(db):
    assert kinds(db) == {}


def test_a_store_migrated_from_the_first_schema_has_it_too(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("PRAGMA user_version = 1")
    conn.execute("PRAGMA application_id = 1128811843")
    conn.commit()
    conn.close()
    with Store(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        assert verify_store(store, record=False).problems == []


def test_schema_tampering_with_an_extra_trigger_that_reactivates_versions(db):
    tamper(
        db,
        "CREATE TRIGGER keep_active AFTER UPDATE OF status ON versions "
        "BEGIN UPDATE versions SET status = 'active' WHERE id = new.id; END",
    )
    found = kinds(db)
    assert list(found) == ["schema-extra"] and "keep_active" in found["schema-extra"][0]
    result = run("verify", "--store", db, "--json", ok=False)
    assert result.exit_code == 1
    assert [p["kind"] for p in json.loads(result.stdout)["problems"]] == ["schema-extra"]


def test_schema_tampering_with_a_view_standing_in_for_the_trust_table(db):
    conn = sqlite3.connect(db)
    conn.executescript(
        "ALTER TABLE trust RENAME TO trust_real;"
        "CREATE VIEW trust AS SELECT name, keyid, pubkey, added_at FROM trust_real "
        "UNION ALL SELECT 'mallory', 'ffffffffffffffff', 'ed25519 AAAA', 'now';"
    )
    conn.close()
    found = kinds(db)  # the planted row is no key: reported too, never a crash
    assert any("trust is a view" in m for m in found["schema-mismatch"])
    assert any("trust_real" in m for m in found["schema-extra"])
    assert "verify-check-failed" in found


def test_schema_tampering_by_dropping_the_append_only_trigger(db):
    tamper(db, "DROP TRIGGER audit_no_delete")
    assert kinds(db) == {"schema-missing": ["trigger audit_no_delete (on audit) is missing"]}


def test_schema_tampering_by_dropping_an_index(db):
    tamper(db, "DROP INDEX versions_one_active")
    found = kinds(db)
    assert list(found) == ["schema-missing"] and "versions_one_active" in found["schema-missing"][0]


def test_schema_tampering_by_editing_a_constraint_in_place(db):
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET sql = replace(sql, '''rejected'', ', '') WHERE name = 'versions'"
    )
    conn.commit()
    conn.close()
    found = kinds(db)
    assert list(found) == ["schema-mismatch"] and "versions" in found["schema-mismatch"][0]


def test_statistics_tables_from_analyze_are_not_tampering(db):
    tamper(db, "ANALYZE")
    assert kinds(db) == {}
