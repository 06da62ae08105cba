"""The SQLite store: schema and migrations, one active version per name, the audit hash chain,
and verify catching each kind of tampering done directly to the SQLite file."""

from __future__ import annotations

import hashlib
import itertools
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import dump_store

from chimera_cards._review.decisions import add_trust, remove_trust, set_threshold
from chimera_cards._store import connection, verify
from chimera_cards._store.audit import GENESIS_HASH, audit_hash, canonical_json
from chimera_cards._store.connection import APPLICATION_ID
from chimera_cards._store.facade import Store
from chimera_cards._store.location import default_store_path
from chimera_cards._store.schema import MIGRATIONS
from chimera_cards._store.verify import Problem, check_audit_chain, verify_store
from chimera_cards.errors import StoreError, UnknownVersionError, UsageError


def _add(
    store: Store, name: str, data: bytes, *, status: str = "active", provenance: str = "clean"
):
    with store.transaction() as conn:
        sha = store.put_blob(conn, data)
        return store.add_version(
            conn,
            name=name,
            sha256=sha,
            origin=f"/cards/{name}/SKILL.md",
            final_url=None,
            provenance=provenance,
            status=status,
            findings=[{"rule": "r", "severity": "warning", "message": "m"}],
        )


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "cards.db"


@pytest.fixture
def filled(db) -> Path:
    with Store(db) as store:
        _add(store, "alpha", b"alpha one")
        _add(store, "alpha", b"alpha two", status="pending", provenance="tainted")
        _add(store, "beta", b"beta one")
    return db


class _Attacker(sqlite3.Connection):
    """A plain sqlite3 connection, as an attacker with the file would use: each statement runs
    with the append-only triggers dropped, and they are put back exactly as they were after it,
    so the schema shows nothing and only the other checks can catch the edit."""

    def execute(self, sql, parameters=(), /):  # type: ignore[override]
        triggers = (
            super()
            .execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit'")
            .fetchall()
        )
        super().execute("DROP TRIGGER IF EXISTS audit_no_update")
        super().execute("DROP TRIGGER IF EXISTS audit_no_delete")
        try:
            return super().execute(sql, parameters)
        finally:
            for (text,) in triggers:
                super().execute(text)


def _raw(db: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, as an attacker with the file would use (``_Attacker``)."""
    return sqlite3.connect(db, isolation_level=None, factory=_Attacker)


def _sql(db: Path, statement: str) -> None:
    conn = sqlite3.connect(db)
    conn.execute(statement)
    conn.commit()
    conn.close()


def _kinds(db: Path) -> list[str]:
    with Store(db) as store:
        report = verify_store(store, record=False)
    assert report.ok is (not report.problems)
    return sorted({problem.kind for problem in report.problems})


def test_new_store_is_wal_and_at_the_latest_schema(db):
    with Store(db) as store:
        assert store.schema_version == len(MIGRATIONS)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_default_store_path_prefers_chimera_home_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "home"))
    assert default_store_path() == tmp_path / "home" / "cards.db"
    monkeypatch.delenv("CHIMERA_CARDS_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "xdg" / "chimera-cards" / "cards.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert default_store_path() == tmp_path / "user" / ".local/share/chimera-cards/cards.db"


def test_a_file_that_is_not_a_database_is_refused_and_left_alone(db):
    db.write_bytes(b"name alpha\nthis is a text file\n")
    with pytest.raises(StoreError, match="not an SQLite database"):
        Store(db)
    assert db.read_bytes() == b"name alpha\nthis is a text file\n"


def test_someone_elses_sqlite_database_is_not_migrated(db):
    _sql(db, "CREATE TABLE payroll (who TEXT)")
    before = dump_store(db)
    with pytest.raises(StoreError, match="not a chimera-cards store"):
        Store(db)
    assert dump_store(db) == before


def test_a_store_from_a_newer_schema_is_refused_and_left_alone(filled):
    _sql(filled, f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    before = dump_store(filled)
    with pytest.raises(StoreError, match="newer than this chimera-cards understands"):
        Store(filled)
    assert dump_store(filled) == before


def test_missing_store_is_not_created_for_readers(db):
    with pytest.raises(StoreError, match="no store here"):
        Store(db, create=False)
    assert not db.exists()


def test_a_new_migration_upgrades_an_existing_store_in_place(filled, monkeypatch):
    monkeypatch.setattr(
        connection,
        "MIGRATIONS",
        [
            *MIGRATIONS,
            "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT);\n"
            "INSERT INTO settings VALUES ('threshold', '1');",
        ],
    )
    with Store(filled) as store:
        assert store.schema_version == len(MIGRATIONS) + 1
        assert [v.name for v in store.versions()] == ["alpha", "alpha", "beta"]
    conn = sqlite3.connect(filled)
    assert conn.execute("SELECT value FROM settings").fetchone() == ("1",)


def test_only_one_active_version_per_name_even_by_raw_sql(filled):
    conn = sqlite3.connect(filled)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE versions SET status = 'active' WHERE name = 'alpha'")


def test_activating_a_version_retires_the_previous_active_one_as_history(filled):
    with Store(filled) as store:
        two = hashlib.sha256(b"alpha two").hexdigest()
        with store.transaction() as conn:
            store.set_status(conn, "alpha", two, "active", "approved")
        statuses = {v.sha256: (v.status, v.reason) for v in store.versions(name="alpha")}
        one = hashlib.sha256(b"alpha one").hexdigest()
        assert statuses[two] == ("active", "approved")
        assert statuses[one] == ("retired", f"superseded by {two[:12]}")
        assert [e.event for e in store.audit_entries()][-2:] == ["status", "status"]
        assert verify_store(store).ok


def test_a_failed_transaction_leaves_nothing(filled):
    before = dump_store(filled)
    with Store(filled) as store, pytest.raises(RuntimeError), store.transaction() as conn:
        _sha = store.put_blob(conn, b"gamma")
        store.add_version(
            conn,
            name="gamma",
            sha256=_sha,
            origin="/x",
            final_url=None,
            provenance="clean",
            status="active",
        )
        raise RuntimeError("boom")
    assert dump_store(filled) == before


def test_blobs_are_content_addressed_and_shared(db):
    with Store(db) as store:
        a = _add(store, "alpha", b"same bytes")
        assert store.get_blob(a.sha256) == b"same bytes"
        assert a.sha256 == hashlib.sha256(b"same bytes").hexdigest()
        assert store.get_blob("0" * 64) is None


def test_audit_log_chains_every_entry_to_the_previous_one(filled):
    with Store(filled) as store:
        entries = store.audit_entries()
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].prev_hash == "0" * 64
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(entries))
    assert [e.event for e in entries] == ["import", "import", "import"]


def test_the_audit_log_refuses_update_and_delete_through_sqlite(filled):
    conn = sqlite3.connect(filled)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit WHERE seq = 1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET event = 'x'")


def test_verify_is_clean_on_an_untouched_store_and_records_itself(filled):
    with Store(filled) as store:
        report = verify_store(store)
        assert report.ok and report.problems == []
        # Each version's bundle manifest is a blob too: 3 card blobs + 3 manifests.
        assert (report.blobs, report.versions, report.audit_entries) == (6, 3, 3)
        assert report.recorded
        last = store.audit_entries()[-1]
        assert last.event == "verify" and last.detail["ok"] is True
        assert verify_store(store).ok  # its own entry chains correctly


def test_verify_catches_an_edited_blob(filled):
    conn = _raw(filled)
    conn.execute("UPDATE blobs SET data = ? WHERE data = ?", (b"beta 0ne", b"beta one"))
    assert _kinds(filled) == ["blob-hash"]


def test_verify_catches_a_wrong_blob_size(filled):
    _raw(filled).execute("UPDATE blobs SET size = 1 WHERE data = ?", (b"beta one",))
    # The bundle's file row still records the real size, so the bundle check sees it too.
    assert _kinds(filled) == ["blob-size", "bundle-size"]


def test_verify_catches_a_deleted_blob(filled):
    _raw(filled).execute("DELETE FROM blobs WHERE data = ?", (b"beta one",))
    assert _kinds(filled) == ["blob-missing"]


def test_verify_catches_a_version_repointed_at_another_blob(filled):
    other = hashlib.sha256(b"alpha one").hexdigest()
    _raw(filled).execute("UPDATE versions SET sha256 = ? WHERE name = 'beta'", (other,))
    assert _kinds(filled) == ["version-missing", "version-unrecorded"]


def test_verify_catches_a_status_flipped_by_hand(filled):
    conn = _raw(filled)
    conn.execute(
        "UPDATE versions SET status = 'retired' WHERE name = 'alpha' AND status = 'active'"
    )
    conn.execute(
        "UPDATE versions SET status = 'active', provenance = 'clean' "
        "WHERE name = 'alpha' AND status = 'pending'"
    )
    assert _kinds(filled) == ["version-mismatch"]


def test_verify_catches_a_version_inserted_by_hand(filled):
    conn = _raw(filled)
    sha = hashlib.sha256(b"gamma").hexdigest()
    conn.execute("INSERT INTO blobs VALUES (?, ?, 5)", (sha, b"gamma"))
    conn.execute(
        "INSERT INTO versions (name, sha256, origin, imported_at, provenance, status) "
        "VALUES ('gamma', ?, '/x', 'now', 'clean', 'active')",
        (sha,),
    )
    # Inserted without its bundle rows either: verify names both.
    assert _kinds(filled) == ["bundle-missing", "version-unrecorded"]


def test_verify_catches_a_deleted_version(filled):
    _raw(filled).execute("DELETE FROM versions WHERE name = 'beta'")
    assert _kinds(filled) == ["version-missing"]


def test_verify_catches_an_edited_audit_entry(filled):
    _raw(filled).execute(
        "UPDATE audit SET detail = replace(detail, 'clean', 'cleen') WHERE seq = 1"
    )
    assert "audit-hash" in _kinds(filled)


def test_verify_catches_an_audit_entry_edited_and_rehashed(filled):
    """Rewriting one entry and its hash breaks the next entry's prev_hash."""
    conn = _raw(filled)
    seq, ts, event, name, sha, detail, prev, _ = conn.execute(
        "SELECT * FROM audit WHERE seq = 2"
    ).fetchone()
    detail = detail.replace('"pending"', '"active"')
    digest = audit_hash(seq, ts, event, name, sha, detail, prev)
    conn.execute("UPDATE audit SET detail = ?, hash = ? WHERE seq = 2", (detail, digest))
    assert "audit-chain" in _kinds(filled)


def test_verify_catches_a_deleted_audit_entry(filled):
    _raw(filled).execute("DELETE FROM audit WHERE seq = 2")
    kinds = _kinds(filled)
    assert "audit-gap" in kinds and "audit-chain" in kinds


def test_verify_names_each_problem(filled):
    conn = _raw(filled)
    conn.execute("UPDATE blobs SET data = ? WHERE data = ?", (b"x", b"beta one"))
    conn.execute("DELETE FROM audit WHERE seq = 2")
    with Store(filled) as store:
        report = verify_store(store)
    assert not report.ok
    messages = " | ".join(p.message for p in report.problems)
    assert "do not hash to its key" in messages and "missing (deleted?)" in messages


def test_extra_verify_checks_run_and_their_problems_fail_verify(filled):
    calls = []

    def signatures(store, conn):
        calls.append(conn.execute("SELECT count(*) FROM versions").fetchone()[0])
        return [Problem("signature", "alpha: approval signature does not match", name="alpha")]

    with Store(filled) as store:
        report = verify_store(store, extra_checks=[signatures], record=False)
    assert calls == [3]
    assert not report.ok and report.problems[0].kind == "signature"


def test_extra_verify_checks_by_dotted_name(filled, monkeypatch):
    monkeypatch.setattr(verify, "EXTRA_VERIFY_CHECKS", ("tests_store_extra_check:check",))
    import sys
    import types

    module = types.ModuleType("tests_store_extra_check")
    module.check = lambda store, conn: [Problem("extra", "extra check ran")]
    monkeypatch.setitem(sys.modules, "tests_store_extra_check", module)
    with Store(filled) as store:
        assert [p.kind for p in verify_store(store, record=False).problems] == ["extra"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a 0444 file")
def test_verify_of_a_read_only_store_still_reports(filled):
    with Store(filled) as store:
        verify_store(store)  # leave the WAL checkpointed state consistent
    filled.chmod(0o444)
    try:
        with Store(filled) as store:
            report = verify_store(store)
        assert report.ok and not report.recorded
    finally:
        filled.chmod(0o644)


def test_find_version_by_prefix(filled):
    with Store(filled) as store:
        sha = hashlib.sha256(b"alpha two").hexdigest()
        assert store.find_version("alpha", sha[:8]).sha256 == sha
        with pytest.raises(UsageError):
            store.find_version("alpha", "ab")
        with pytest.raises(UsageError):
            store.find_version("alpha", "not-hex-at-all")
        with pytest.raises(UnknownVersionError):
            store.find_version("alpha", "ffffffff" if not sha.startswith("ff") else "00000000")


@pytest.mark.parametrize(
    "name,sha,detail,ts",
    [
        ("alpha", "a" * 64, '{"k":"v"}', "2026-01-01T00:00:00.000000Z"),
        (None, None, '{"note":"caf\\u00e9 \\"quoted\\" \\u202e"}', "t"),
        (
            "naïve-名前\u202e",
            "b" * 64,
            "{}",
            12345,
        ),  # a non-text ts, as a hand-edited row could hold
    ],
)
def test_audit_hash_is_sha256_of_the_canonical_json_of_the_entry(name, sha, detail, ts):
    entry = {
        "seq": 7,
        "ts": ts,
        "event": "import",
        "name": name,
        "sha256": sha,
        "detail": detail,
        "prev_hash": "0" * 64,
    }
    expected = hashlib.sha256(canonical_json(entry).encode("utf-8")).hexdigest()
    assert audit_hash(7, ts, "import", name, sha, detail, "0" * 64) == expected


def test_verify_catches_an_audit_detail_replaced_by_non_json_even_if_rehashed(filled):
    conn = _raw(filled)
    seq, ts, event, name, sha, _detail, prev, _ = conn.execute(
        "SELECT * FROM audit WHERE seq = 3"
    ).fetchone()
    digest = audit_hash(seq, ts, event, name, sha, "not json", prev)
    conn.execute("UPDATE audit SET detail = 'not json', hash = ? WHERE seq = 3", (digest,))
    # Entry 3 is the newest: the head file beside the store still names its old hash.
    assert _kinds(filled) == ["audit-detail", "audit-truncated", "version-unrecorded"]


def test_a_newer_store_is_refused_before_anything_about_it_changes(filled):
    conn = sqlite3.connect(filled)
    conn.execute("PRAGMA journal_mode = DELETE")  # a future version might not use WAL
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.commit()
    conn.close()
    before = filled.read_bytes()
    with pytest.raises(StoreError, match="newer"):
        Store(filled)
    assert filled.read_bytes() == before
    assert not Path(f"{filled}-wal").exists()


def _reference_replay(conn: sqlite3.Connection) -> tuple[list[tuple], dict]:
    """The chain check and replay written plainly (audit_hash and json.loads on every entry):
    what verify's fast path must agree with."""
    import json

    problems, state, prev, expected = [], {}, GENESIS_HASH, 1
    for seq, ts, event, name, sha, detail, prev_hash, digest in conn.execute(
        "SELECT seq, ts, event, name, sha256, detail, prev_hash, hash FROM audit ORDER BY seq"
    ):
        if seq != expected:
            problems.append(("audit-gap", seq))
        if prev_hash != prev:
            problems.append(("audit-chain", seq))
        if audit_hash(seq, ts, event, name, sha, detail, prev_hash) != digest:
            problems.append(("audit-hash", seq))
        prev, expected = digest, seq + 1
        if event not in ("import", "status"):
            continue
        try:
            info = json.loads(detail)
        except (ValueError, TypeError):
            info = None
        if not isinstance(info, dict):
            problems.append(("audit-detail", seq))
        elif event == "import":
            state[(name, sha)] = [
                info.get("id"),
                info.get("status"),
                info.get("provenance"),
                seq,
                info.get("reason"),
            ]
        elif (name, sha) in state:
            state[(name, sha)][1] = info.get("to")
            state[(name, sha)][4] = info.get("reason")
        else:
            problems.append(("audit-orphan", seq))
    return problems, state


def test_verify_replays_hand_written_audit_entries_exactly_like_a_plain_json_replay(filled):
    """Verify hashes and decodes entries on a fast path; entries an attacker could write by hand
    (non-canonical JSON, duplicate keys, trailing data, odd text, NULLs, a re-chained log) must
    give the same problems and the same replayed state as audit_hash + json.loads."""
    conn = _raw(filled)
    details = [
        ("import", "gamma", "c" * 64, ' {"id": 9, "status": "active", "provenance": "clean"} '),
        ("import", "delta", "d" * 64, '{"id":10,"status":"active","status":"pending"}'),
        ("status", "delta", "d" * 64, '{"to":"retired"}  '),
        ("status", "delta", "d" * 64, '{"to":"active"} trailing'),
        (
            "import",
            'eps"il\\on\n\u202e名',
            "e" * 64,
            '{"id":11,"status":"pending","provenance":"tainted","reason":"a \\"q\\" \\u00e9"}',
        ),
        ("import", "zeta", "f" * 64, "[1, 2]"),
        ("import", "eta", "0" * 64, '{"id":12,"status":"active"'),
        ("status", None, None, '{"to":"active"}'),
        ("status", "theta", "1" * 64, '{"to":"active"}'),
        ("note", "iota", None, "not json at all"),
        ("import", "kappa", "2" * 64, '{"id":13,"status":"active","provenance":"clean"}'),
    ]
    seq, prev = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    for event, name, sha, detail in details:
        seq += 1
        ts = f"2026-01-01T00:00:{seq:02d}.000000Z"
        digest = audit_hash(seq, ts, event, name, sha, detail, prev)
        conn.execute(
            "INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, ts, event, name, sha, detail, prev, digest),
        )
        prev = digest
    # A wrong stored hash mid-chain (so the next prev_hash breaks too), and a non-text timestamp
    # (hashed the slow way; its hash no longer matches).
    conn.execute("UPDATE audit SET hash = ? WHERE seq = ?", ("f" * 64, seq - 3))
    conn.execute("UPDATE audit SET ts = 12345 WHERE seq = 2")
    reference_problems, reference_state = _reference_replay(conn)
    with Store(filled) as store, store.snapshot() as snap:
        problems, count, state = check_audit_chain(store, snap)
    assert [(p.kind, p.seq) for p in problems] == reference_problems
    assert state == reference_state
    assert count == seq
    assert {"audit-detail", "audit-hash", "audit-chain", "audit-orphan"} <= {
        k for k, _ in reference_problems
    }


def test_verify_reports_an_audit_detail_stored_as_a_blob_instead_of_crashing(filled):
    conn = _raw(filled)
    conn.execute("UPDATE audit SET detail = CAST(detail AS BLOB) WHERE seq = 2")
    assert conn.execute("SELECT typeof(detail) FROM audit WHERE seq = 2").fetchone() == ("blob",)
    assert "audit-hash" in _kinds(filled)


# --- edge cases: full disk, busy or empty files, hand-edited settings and trust ---------------


def _cli(*args: str, limit: int | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, optionally with every file it writes capped at ``limit``
    bytes (RLIMIT_FSIZE): writes past it fail as they would on a full disk."""

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-c", "from chimera_cards._cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=cap if limit is not None else None,
        check=False,
    )


@pytest.mark.slow
def test_a_full_disk_mid_import_is_one_clean_error_and_stores_nothing_of_the_batch(
    tmp_path, card_factory
):
    db = tmp_path / "cards.db"
    assert _cli("import", str(card_factory("first-card")), "--store", str(db)).returncode == 0
    before = dump_store(db)
    words = " ".join(f"word{j}" for j in range(1500))  # ~12 KB cards: the batch spills to disk
    for i in range(250):
        card_factory(f"bulk-{i:03d}", description=f"Bulk card {i}: {words}")
    result = _cli(
        "import", str(tmp_path / "cards"), "--store", str(db), limit=db.stat().st_size + 512_000
    )
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "savepoint" not in result.stderr and "Traceback" not in result.stderr
    assert dump_store(db) == before
    verified = _cli("verify", "--store", str(db))
    assert verified.returncode == 0 and verified.stdout.startswith("ok:"), verified.stderr


def test_verify_still_reports_when_it_cannot_record_its_outcome(filled):
    writer = sqlite3.connect(filled, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the store cannot be written now (locked, disk full, ...)
    try:
        with Store(filled, timeout=0.2) as store:
            report = verify_store(store)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert report.ok and not report.recorded and report.versions == 3


@pytest.mark.slow
def test_verify_of_an_empty_file_is_an_error_not_ok(tmp_path):
    empty = tmp_path / "cards.db"
    empty.touch()
    with pytest.raises(StoreError):
        Store(empty, create=False)
    result = _cli("verify", "--store", str(empty))
    assert result.returncode == 2 and result.stderr.startswith("error: ")
    assert "empty" in result.stderr and result.stderr.count("\n") == 1
    assert empty.stat().st_size == 0


@pytest.mark.slow
@pytest.mark.parametrize("value", ["abc", "1.5", "0", "-2", "", "2x"])
def test_a_threshold_setting_that_is_not_a_whole_number_is_a_usage_error(filled, value):
    from chimera_cards._retrieve.matching import match

    with Store(filled) as store:
        assert [m.name for m in match(store, "alpha")] == []  # builds the index
    _sql_params(
        filled, "INSERT INTO review_settings(key, value) VALUES ('trust.threshold', ?)", value
    )
    with Store(filled) as store, pytest.raises(UsageError, match=r"trust\.threshold"):
        match(store, "alpha")
    result = _cli("match", "alpha", "--store", str(filled))
    assert result.returncode == 2 and result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def _sql_params(db: Path, statement: str, *params) -> None:
    conn = sqlite3.connect(db)
    conn.execute(statement, params)
    conn.commit()
    conn.close()


def _trusted(store: Store, tmp_path: Path, name: str):
    from chimera_cards._trust.keys import generate_key

    gen = generate_key(name, tmp_path / f"{name}.key")
    add_trust(store, name, gen.public)
    return gen


def test_trust_changes_are_in_the_audit_chain_and_replay_cleanly(filled, tmp_path):

    with Store(filled) as store:
        _trusted(store, tmp_path, "alice")
        _trusted(store, tmp_path, "bob")
        remove_trust(store, "bob")
        set_threshold(store, 2)
        events = [e.event for e in store.audit_entries()]
        assert events.count("trust-add") == 2 and "trust-remove" in events
        assert "trust-threshold" in events
        assert verify_store(store).ok


def test_a_trust_row_inserted_by_hand_is_reported_by_verify(filled, tmp_path):
    from chimera_cards._trust.keys import generate_key

    mallory = generate_key("mallory", tmp_path / "m.key").public
    _sql_params(
        filled,
        "INSERT INTO trust(name, keyid, pubkey, added_at) VALUES ('mallory', ?, ?, 't')",
        mallory.keyid,
        mallory.text(),
    )
    with Store(filled) as store:
        report = verify_store(store)
    assert not report.ok and [p.kind for p in report.problems] == ["trust-unrecorded"]


def test_trust_list_and_threshold_edited_by_hand_are_reported_by_verify(filled, tmp_path):
    from chimera_cards._trust.keys import generate_key

    with Store(filled) as store:
        _trusted(store, tmp_path, "alice")
        _trusted(store, tmp_path, "bob")
    other = generate_key("other", tmp_path / "o.key").public
    _sql_params(filled, "DELETE FROM trust WHERE name = 'bob'")
    _sql_params(
        filled,
        "UPDATE trust SET keyid = ?, pubkey = ? WHERE name = 'alice'",
        other.keyid,
        other.text(),
    )
    _sql_params(filled, "INSERT INTO review_settings(key, value) VALUES ('trust.threshold', '1')")
    with Store(filled) as store:
        kinds = sorted(p.kind for p in verify_store(store).problems)
    assert kinds == ["threshold-mismatch", "trust-mismatch", "trust-missing"]


def test_versions_matching_reads_each_matching_version_once_with_or_without_details(filled):
    with Store(filled) as store:
        every = store.versions(order="id")
        beta_digest = next(v.digest for v in every if v.name == "beta")
        full = store.versions_matching(["alpha"], [beta_digest, "0" * 64])
        bare = store.versions_matching(["alpha"], [beta_digest], details=False)
        both = store.versions_matching(["beta"], [beta_digest])  # one version, both ways
    assert [v.id for v in full] == [v.id for v in every]
    assert full[0].findings == [{"rule": "r", "severity": "warning", "message": "m"}]
    assert [(v.findings, v.source) for v in bare] == [([], {})] * 3
    blank = {"findings": [], "source": {}}
    assert [v.to_dict() | blank for v in bare] == [v.to_dict() | blank for v in full]
    assert [v.name for v in both] == ["beta"]


def test_the_audit_chain_hash_has_one_implementation():
    """Writing the chain and verifying it hash with the same function: two copies that drifted
    apart would let verify accept what the store never wrote, or refuse what it did."""
    import inspect

    from chimera_cards._store import audit, verify

    package = Path(audit.__file__).parent.parent
    spelled = [
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if "_CHAIN_TEXT" in p.read_text(encoding="utf-8")
    ]
    assert spelled == ["_store/audit.py"]
    assert "audit_hash(" in inspect.getsource(verify.check_audit_chain)


class _Text(str):
    """A str that is not exactly str: audit_hash takes its general path for it."""


@pytest.mark.parametrize("name", [None, "alpha", 'q"uote\\ é\u202e\n'])
def test_audit_hashs_fast_path_and_general_path_agree(name):
    args = (41, "2026-01-01T00:00:00.000000Z", "import", name, "ab" * 32, '{"id":1}', "0" * 64)
    general = tuple(_Text(a) if isinstance(a, str) else a for a in args)
    assert audit_hash(*args) == audit_hash(*general)
    with pytest.raises(TypeError):
        audit_hash(41, "ts", "import", name, b"\x00", "{}", "0" * 64)
