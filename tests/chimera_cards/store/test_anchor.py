"""Tail truncation: cutting the newest entries off the audit log (with every row they changed put
back) leaves a chain that verifies. The head file beside the store and a head kept elsewhere
(``verify --expect-head``, the ``head`` line of ``trust export``) are what catch it.

The attacker works on the SQLite file with a plain ``sqlite3`` connection, as in conftest.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager

import pytest
from conftest import card_text, run_cli

from chimera_cards._store.anchor import head_path, read_anchor
from chimera_cards._store.facade import Store

run = run_cli


def head(db) -> str:
    return run("audit", "head", "--store", db).stdout.strip()


@pytest.fixture
def approved(tmp_path, card_server):
    """A store with alice trusted and one URL card approved by her: (db, sha, key)."""
    db = tmp_path / "cards.db"
    url = card_server.serve("/flaky/SKILL.md", card_text("flaky-tests"))
    res = json.loads(run("import", url, "--json", "--store", db).stdout)
    run("keys", "generate", "alice", "-o", tmp_path / "alice.key", "--store", db)
    run(
        "approve",
        "flaky-tests",
        "--key",
        tmp_path / "alice.key",
        "--digest",
        res["digest"],
        "--store",
        db,
    )
    return db, res["digest"], tmp_path / "alice.key"


def cut_the_tail(db, keep_seq: int, trust_row: tuple, sha: str, version_row: tuple) -> None:
    """Remove every audit entry after ``keep_seq`` and put back what they changed: the trust row
    and the version's status and reason as they were read before (``version_row``), the
    append-only triggers dropped and re-created as they were."""
    with past_the_triggers(db) as conn:
        conn.execute("DELETE FROM audit WHERE seq > ?", (keep_seq,))
        conn.execute(
            "INSERT INTO trust (name, keyid, pubkey, added_at) VALUES (?, ?, ?, ?)", trust_row
        )
        conn.execute(
            "UPDATE versions SET status = ?, reason = ? WHERE sha256 = ?", (*version_row, sha)
        )
        conn.execute("DELETE FROM verdict_memo")


@contextmanager
def past_the_triggers(db):
    """A plain connection with the audit log's append-only triggers dropped, put back exactly as
    they were (and committed) when the block ends: what an attacker holding the file does."""
    conn = sqlite3.connect(db)
    try:
        triggers = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit'"
        ).fetchall()
        conn.execute("DROP TRIGGER audit_no_delete")
        conn.execute("DROP TRIGGER audit_no_update")
        yield conn
        for (sql,) in triggers:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def test_tail_truncation_of_a_trust_change_is_caught_by_the_head_file(approved):
    db, sha, _ = approved
    before = head(db)
    keep = json.loads(run("audit", "head", "--json", "--store", db).stdout)["seq"]
    with Store(db) as store:
        (trust_row,) = store._conn.execute("SELECT name, keyid, pubkey, added_at FROM trust")
        (version_row,) = store._conn.execute("SELECT status, reason FROM versions")
    run("trust", "remove", "alice", "--store", db)
    assert run("match", "flaky", "--store", db, ok=False).stdout == ""
    after = head(db)
    assert read_anchor(head_path(db)).head == after != before

    cut_the_tail(db, keep, trust_row, sha, version_row)
    assert head(db) == before  # the log alone looks like an older, honest store
    served = run("match", "flaky", "--store", db)  # the card is back, but not silently
    assert "flaky-tests" in served.stdout
    assert "warning:" in served.stderr and "cut off" in served.stderr
    result = run("verify", "--store", db, "--json", ok=False)
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and "audit-truncated" in {p["kind"] for p in report["problems"]}
    # verify appended its own outcome, yet the witness did not move: it still names the cut head.
    assert read_anchor(head_path(db)).head == after
    again = run("verify", "--store", db, ok=False)
    assert again.exit_code == 1 and "audit-truncated" in again.stdout


def test_tail_truncation_with_the_head_file_also_rolled_back_is_caught_by_an_expected_head(
    approved,
):
    db, sha, _ = approved
    keep = json.loads(run("audit", "head", "--json", "--store", db).stdout)["seq"]
    old_witness = head_path(db).read_bytes()
    with Store(db) as store:
        (trust_row,) = store._conn.execute("SELECT name, keyid, pubkey, added_at FROM trust")
        (version_row,) = store._conn.execute("SELECT status, reason FROM versions")
    run("trust", "remove", "alice", "--store", db)
    kept_elsewhere = head(db)  # what CI logged, or the trust file committed to git

    cut_the_tail(db, keep, trust_row, sha, version_row)
    head_path(db).write_bytes(old_witness)  # the attacker rolls the witness back too
    assert run("verify", "--store", db).exit_code == 0  # the limit of a chain in one file
    result = run("verify", "--expect-head", kept_elsewhere, "--store", db, "--json", ok=False)
    kinds = {p["kind"] for p in json.loads(result.stdout)["problems"]}
    assert result.exit_code == 1 and kinds == {"audit-head-unknown"}
    # A head that is in the chain (the log grew past it) is fine.
    assert run("verify", "--expect-head", head(db), "--store", db).exit_code == 0


def test_a_history_replaced_to_the_same_length_is_caught(approved, tmp_path):
    """Cut the tail and append other entries until the log is as long again: the entry at the
    recorded place is not the recorded one."""
    db, _, _ = approved
    recorded = read_anchor(head_path(db))
    with past_the_triggers(db) as conn:
        conn.execute("DELETE FROM audit WHERE seq = ?", (recorded.seq,))
    with Store(db) as store:  # an honest append re-chains the shortened log to its length
        assert any("cut off" in w for w in store.warnings)
        with store.transaction() as c:
            store.append_audit(c, "verify", None, None, {"ok": True})
    result = run("verify", "--store", db, "--json", ok=False)
    problems = json.loads(result.stdout)["problems"]
    assert any(p["kind"] == "audit-truncated" and "replaced" in p["message"] for p in problems)


def test_the_head_file_follows_every_append_and_a_reset_is_recorded(approved):
    db, _, _ = approved
    anchor = read_anchor(head_path(db))
    assert anchor.head == head(db)
    run("retire", "flaky-tests", "--store", db)
    assert read_anchor(head_path(db)).head == head(db) != anchor.head
    # A store rolled back on purpose (a backup restored): reset re-anchors and says so in the log.
    path = head_path(db)
    path.write_text(f"chimera-cards audit head\n{anchor.seq + 50} {'a' * 64}\n")
    assert run("verify", "--store", db, ok=False).exit_code == 1
    run("audit", "head", "--reset", "--store", db)
    assert run("verify", "--store", db).exit_code == 0
    entries = json.loads(run("audit", "--json", "--store", db).stdout)
    reset = [e for e in entries if e["event"] == "head-reset"]
    assert len(reset) == 1 and reset[0]["detail"]["previous"]["seq"] == anchor.seq + 50


def test_a_broken_head_file_is_reported_not_ignored(approved):
    db, _, _ = approved
    head_path(db).write_text("nonsense\n")
    assert "warning:" in run("list", "--store", db).stderr
    result = run("verify", "--store", db, "--json", ok=False)
    assert "audit-head-file" in {p["kind"] for p in json.loads(result.stdout)["problems"]}


def test_trust_export_carries_the_head_and_the_file_still_syncs(approved, tmp_path):
    db, _, _ = approved
    trust_file = tmp_path / "team.trust"
    run("trust", "export", trust_file, "--store", db)
    lines = trust_file.read_text().splitlines()
    (line,) = [ln for ln in lines if ln.startswith("head ")]
    seq, hexhead = line.split()[1:]
    assert hexhead == json.loads(run("audit", "head", "--json", "--store", db).stdout)["head"]
    assert int(seq) >= 1
    other = tmp_path / "other.db"
    run("trust", "sync", trust_file, "--store", other)
    assert [
        k["name"]
        for k in json.loads(run("trust", "list", "--json", "--store", other).stdout)["keys"]
    ] == ["alice"]
    assert run("verify", "--expect-head", hexhead, "--store", db).exit_code == 0


def test_an_expected_head_that_is_not_hex_is_a_usage_error(approved):
    db, _, _ = approved
    result = run("verify", "--expect-head", "xyz", "--store", db, ok=False)
    assert result.exit_code == 2 and result.stderr.startswith("error:")
