"""``verify``'s schema check: the store's tables, indexes, triggers and views must be exactly the
ones this code creates.

Every other check reads the store through its schema, so the schema is checked first-hand: an
extra trigger (one that flips a status back after each write, or copies rows elsewhere), a view
standing where a table belongs (answering reads with made-up rows), a dropped append-only trigger
or a constraint edited through ``writable_schema`` would each let the data lie while every row
still looked right. The expected schema is built by running ``MIGRATIONS`` on an empty in-memory
database with the same SQLite library, so it is what a fresh store of this release holds.
"""

from __future__ import annotations

import re
import sqlite3

from chimera_cards._store.schema import MIGRATIONS, _split_sql

# SQLite's own statistics tables (ANALYZE): they change no answer, only query plans.
_SQLITE_OWN = re.compile(r"sqlite_stat\d")
_SPACE = re.compile(r"\s+")

Schema = dict[tuple[str, str], tuple[str, str | None]]


def _normal(sql: str | None) -> str | None:
    return None if sql is None else _SPACE.sub(" ", sql).strip()


def schema_of(conn: sqlite3.Connection) -> Schema:
    """(type, name) -> (table it belongs to, its SQL with runs of white space made one space)."""
    return {
        (kind, name): (table, _normal(sql))
        for kind, name, table, sql in conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master"
        )
        if not _SQLITE_OWN.fullmatch(name)
    }


def expected_schema() -> Schema:
    """The schema a store created by this release holds (``MIGRATIONS`` run on an empty
    in-memory database)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("BEGIN")
        for migration in MIGRATIONS:
            if callable(migration):
                migration(conn)
            else:
                for statement in _split_sql(migration):
                    conn.execute(statement)
        return schema_of(conn)
    finally:
        conn.close()


def _shadow_tables(schema: Schema) -> set[str]:
    """Names of the tables a virtual table keeps its data in (FTS5's ``card_fts_data``, ...):
    their SQL is written by the SQLite library, which may differ from the one that made the
    store, so only their presence and kind are compared."""
    virtual = [
        name
        for (kind, name), (_, sql) in schema.items()
        if kind == "table" and sql and sql.upper().startswith("CREATE VIRTUAL TABLE")
    ]
    return {
        name
        for (kind, name) in schema
        if kind == "table" and any(name.startswith(f"{v}_") for v in virtual)
    }


def check_schema(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Compare the store's schema with the one this code creates.

    Args:
        conn: a connection (inside verify's read snapshot) to the store.
    Returns:
        (kind, message) per difference: ``schema-missing`` (an object the code creates is not
        there), ``schema-extra`` (an object the code never creates), ``schema-mismatch`` (same
        name, other kind or other SQL).
    """
    want, have = expected_schema(), schema_of(conn)
    shadows = _shadow_tables(want)
    problems: list[tuple[str, str]] = []
    kinds_have: dict[str, str] = {name: kind for kind, name in have}
    kinds_want: dict[str, str] = {name: kind for kind, name in want}
    for (kind, name), (table, sql) in sorted(want.items()):
        found = have.get((kind, name))
        if found is None:
            other = kinds_have.get(name)
            if other is not None:
                problems.append(
                    (
                        "schema-mismatch",
                        f"{name} is a {other} in the store, not the {kind} this code creates",
                    )
                )
            else:
                problems.append(("schema-missing", f"{kind} {name} (on {table}) is missing"))
            continue
        if name in shadows:
            continue
        if found != (table, sql):
            problems.append(
                (
                    "schema-mismatch",
                    f"{kind} {name} is not defined as this code defines it: {found[1]!r}",
                )
            )
    for (kind, name), (table, sql) in sorted(have.items()):
        if (kind, name) in want or kinds_want.get(name) not in (None, kind):
            continue  # reported above as a mismatch of kinds
        problems.append(
            (
                "schema-extra",
                f"{kind} {name} on {table} is not part of the schema this code creates "
                f"(added by hand?): {(sql or '')[:200]}",
            )
        )
    return problems
