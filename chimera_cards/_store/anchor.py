"""Anchoring the audit log's end: a chain kept in one file cannot prove nothing was cut off it.

Removing the newest audit entries together with every row they recorded leaves a shorter chain
that verifies. What catches it is a copy of the head kept somewhere the cut did not reach:

- the **head file** beside the store (``cards.db.head``), rewritten after every commit that
  appended to the log. Opening the store compares it with the log; a log that no longer holds the
  entry the file names (fewer entries, or another entry at that place) is a rollback: every
  command warns, ``verify`` fails, and the file is no longer advanced, so the evidence stays
  until someone looks (``audit head --reset`` re-anchors and records that it did).
- an **expected head** given from outside (``verify --expect-head``: a CI log, a commit, the
  ``head`` line of a team's trust file), which must be an entry of the chain.

The file guards against the accidents and half-attacks (an old copy of the store restored, a sync
tool writing back yesterday's file, rows cut by hand); whoever can rewrite both files can forge
both, which is why the head also goes into the team's git history.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from chimera_cards._util.atomic import WriteError, write_atomic
from chimera_cards._util.integrity import is_hex
from chimera_cards._util.records import record

HEAD_SUFFIX = ".head"
_HEADER = "chimera-cards audit head"


@record(frozen=True)
class Anchor:
    """An entry of the audit log by its place and hash."""

    seq: int
    head: str

    def to_dict(self) -> dict:
        return {"seq": self.seq, "head": self.head}


def head_path(store_path: str | os.PathLike) -> Path:
    """Where the head file of the store at ``store_path`` lives (beside it)."""
    path = Path(store_path)
    return path.with_name(path.name + HEAD_SUFFIX)


def read_anchor(path: str | os.PathLike) -> Anchor | str | None:
    """The anchor the head file records: None when there is no file, the problem as text when
    it cannot be read or is not a head file (a broken witness is reported, never ignored)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: cannot read the head file ({exc})"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) == 2 and lines[0] == _HEADER:
        parts = lines[1].split()
        if len(parts) == 2 and parts[0].isdigit() and len(parts[1]) == 64 and is_hex(parts[1]):
            return Anchor(int(parts[0]), parts[1].lower())
    return f"{path}: not a chimera-cards head file"


def write_anchor(path: str | os.PathLike, anchor: Anchor) -> bool:
    """Write the head file (atomically: whole or absent). False when it cannot be written (a
    read-only folder): the log itself is unaffected, only the witness lags."""
    try:
        write_atomic(Path(path), f"{_HEADER}\n{anchor.seq} {anchor.head}\n".encode())
    except WriteError:
        return False
    return True


def entry_hash_at(conn: sqlite3.Connection, seq: int) -> str | None:
    """The hash of the audit entry at ``seq``, or None when the log holds no such entry."""
    row = conn.execute("SELECT hash FROM audit WHERE seq = ?", (seq,)).fetchone()
    return row[0] if row else None


def _last(conn: sqlite3.Connection) -> tuple[int, str]:
    row = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    return (row[0], row[1]) if row else (0, "0" * 64)


def anchor_problem(conn: sqlite3.Connection, anchor: Anchor) -> str | None:
    """Why the log does not hold the entry ``anchor`` names, or None when it does (a log that
    grew past the anchor is fine: only an end that moved back or was replaced is a problem)."""
    found = entry_hash_at(conn, anchor.seq)
    if found == anchor.head:
        return None
    last_seq, _ = _last(conn)
    if found is None:
        return (
            f"the audit log ends at entry {last_seq}, but its head was entry {anchor.seq} "
            f"({anchor.head[:12]}): {anchor.seq - last_seq} entr"
            f"{'y was' if anchor.seq - last_seq == 1 else 'ies were'} cut off its end"
        )
    return (
        f"audit entry {anchor.seq} is {found[:12]}, not the {anchor.head[:12]} recorded as the "
        "head: the log was replaced by another history"
    )


def expected_head_problem(conn: sqlite3.Connection, expected: str) -> str | None:
    """Why ``expected`` (a head kept elsewhere) is not an entry of this log, or None when it is.

    Args:
        conn: a read snapshot of the store.
        expected: the 64-hex hash of an audit entry.
    """
    wanted = expected.strip().lower()
    row = conn.execute("SELECT seq FROM audit WHERE hash = ? LIMIT 1", (wanted,)).fetchone()
    if row is not None:
        return None
    last_seq, last = _last(conn)
    return (
        f"the expected head {wanted[:12]} is not an entry of the audit log (it ends at entry "
        f"{last_seq}, {last[:12]}): entries were cut off its end, or this is another store"
    )
