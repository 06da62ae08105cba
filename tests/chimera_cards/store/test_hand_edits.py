"""A store edited by hand (SQLite lets any column hold any type) crashes no command, and
``verify`` names every version row whose columns were changed: a value of the wrong type or
shape, or one that is not what its import (and the status changes since) recorded in the audit
log. Each column of ``versions`` gets each kind of bad value, and every reading command runs."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import make_skill

from chimera_cards._cli.app import main

pytestmark = pytest.mark.slow

BAD = [
    "[1]",  # a list of non-findings (show crashed on it)
    '[{"rule": 5, "severity": [], "message": null}]',
    "not json",
    b"\xff\xfe",  # a BLOB in a text column
    7,
    None,
]
COMMANDS = [
    ["show", "demo"],
    ["list"],
    ["list", "--json"],
    ["review", "demo"],
    ["match", "demo"],
    ["outdated"],
    ["lock", "-o", "{tmp}/cards.lock"],
    ["export", "demo", "-o", "{tmp}/out"],
    ["check", "{tmp}/installed"],
    ["verify"],
]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hand")
    skill = make_skill(tmp / "src", "demo", {"scripts/run.sh": ("echo hi\n", True)})
    env = {"CHIMERA_CARDS_HOME": str(tmp / "cc")}
    assert CliRunner().invoke(main, ["import", str(skill)], env=env).exit_code == 0
    done = CliRunner().invoke(main, ["install", "demo", "--to", str(tmp / "installed")], env=env)
    assert done.exit_code == 0, done.output
    assert CliRunner().invoke(main, ["verify"], env=env).exit_code == 0
    columns = [
        r[1]
        for r in sqlite3.connect(tmp / "cc" / "cards.db").execute("PRAGMA table_info(versions)")
    ]
    return tmp, [c for c in columns if c != "id"]


def _edited(pristine, tmp_path, column, value):
    base, _ = pristine
    home = tmp_path / "cc"
    shutil.copytree(base / "cc", home)
    with sqlite3.connect(home / "cards.db") as conn:
        before = conn.execute(f"SELECT {column} FROM versions").fetchone()[0]
        if before == value:
            pytest.skip("the same value")
        try:
            conn.execute(f"UPDATE versions SET {column} = ?", (value,))
        except sqlite3.IntegrityError:
            pytest.skip("the schema refuses it")
    return home


@pytest.mark.parametrize("value", BAD, ids=[repr(v)[:16] for v in BAD])
@pytest.mark.parametrize(
    "column",
    ["name", "sha256", "origin", "final_url", "imported_at", "provenance", "status", "reason",
     "findings", "digest", "skill_sha256", "source"],
)  # fmt: skip
def test_a_hand_edited_version_row_crashes_no_command_and_verify_names_it(
    pristine, tmp_path, column, value
):
    base, columns = pristine
    assert column in columns
    home = _edited(pristine, tmp_path, column, value)
    shutil.copytree(base / "installed", tmp_path / "installed")
    env = {"CHIMERA_CARDS_HOME": str(home)}
    for command in COMMANDS:
        args = [a.replace("{tmp}", str(tmp_path)) for a in command]
        result = CliRunner().invoke(main, args, env=env)
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        assert not crashed, (args, repr(result.exception))
        assert "Traceback" not in result.output
    verified = CliRunner().invoke(main, ["verify"], env=env)
    assert verified.exit_code == 1, verified.output
    assert "version" in verified.output


def test_a_retire_reason_rewritten_with_sqlite3_is_a_version_mismatch_and_stays_on_disk(tmp_path):
    """The reason is what users read as why a version may not be used ("retired: leaks
    tokens"). An edit of that text outside the tool, on a row whose status the log agrees with,
    is found: the import and each status change log the reason, and verify compares the row."""
    from chimera_cards._store.facade import Store
    from chimera_cards._store.verify import verify_store

    skill = make_skill(tmp_path / "src", "demo")
    env = {"CHIMERA_CARDS_HOME": str(tmp_path / "cc")}
    assert CliRunner().invoke(main, ["import", str(skill)], env=env).exit_code == 0
    retired = CliRunner().invoke(main, ["retire", "demo", "--reason", "leaks tokens"], env=env)
    assert retired.exit_code == 0, retired.output
    db = tmp_path / "cc" / "cards.db"
    with Store(db, create=False) as store:
        assert verify_store(store, record=False).ok  # the tool's own status change is no edit
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE versions SET reason = 'superseded by a newer release'")
    with Store(db, create=False) as store:
        report = verify_store(store, record=False)
    assert not report.ok
    kinds = [(p.kind, p.name) for p in report.problems]
    assert kinds == [("version-mismatch", "demo")], report.problems
    assert "'leaks tokens'" in report.problems[0].message
    with sqlite3.connect(db) as conn:  # verify reports; it writes nothing back into the row
        rows = conn.execute("SELECT status, reason FROM versions").fetchall()
    assert rows == [("retired", "superseded by a newer release")]
    done = CliRunner().invoke(main, ["verify"], env=env)
    assert done.exit_code == 1 and "reason is 'superseded by a newer release'" in done.output
