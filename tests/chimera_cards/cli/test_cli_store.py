"""The store commands end to end through click: output lines, JSON, exit codes 0/1/2, one error
line on stderr, and the store untouched after a refusal."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from click.testing import CliRunner
from conftest import card_text, dump_store, make_card

from chimera_cards._bundles.bundle import read_bundle_dir
from chimera_cards._cli.app import main


@pytest.fixture
def db(tmp_path):
    return tmp_path / "store" / "cards.db"


def run(*args, env=None):
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def sha_of(card_dir) -> str:
    """A version's hash: its bundle digest (a card alone is a one-file bundle)."""
    return read_bundle_dir(card_dir).digest


def test_import_by_path_prints_one_line_and_exits_0(db, card_factory):
    card = card_factory("tidy-card")
    result = run("import", card, "--store", db)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"imported tidy-card {sha_of(card)[:12]} active (clean)\n"


def test_import_json_has_the_documented_fields(db, card_factory):
    result = run("import", card_factory("tidy-card"), "--store", db, "--json")
    data = json.loads(result.stdout)
    assert {
        "name",
        "digest",
        "skill_md_sha256",
        "provenance",
        "status",
        "origin",
        "findings",
    } <= set(data)
    assert (data["name"], data["status"], data["provenance"]) == ("tidy-card", "active", "clean")


def test_importing_the_same_card_again_says_already_present(db, card_factory):
    card = card_factory("tidy-card")
    run("import", card, "--store", db)
    result = run("import", card, "--store", db)
    assert result.exit_code == 0
    assert result.stdout.startswith("already present tidy-card")


def test_url_import_is_pending_and_says_why(db, card_server):
    url = card_server.serve(
        "/c/SKILL.md", card_text("net-card", frontmatter={"provenance": "clean"})
    )
    result = run("import", url, "--store", db)
    assert result.exit_code == 0
    assert (
        "net-card" in result.stdout
        and "pending (tainted): tainted (imported from a URL" in result.stdout
    )


def test_hash_mismatch_exits_1_with_one_line_and_stores_nothing(db, card_factory):
    run("import", card_factory("seed-card"), "--store", db)
    before = dump_store(db)
    result = run(
        "import", card_factory("pinned"), "--store", db, "--digest", "skill_md:" + "0" * 64
    )
    assert result.exit_code == 1
    assert "sha256 mismatch" in one_error_line(result)
    assert result.stdout == ""
    assert dump_store(db) == before


def test_folder_with_a_bad_card_imports_the_rest_and_exits_1(db, card_factory):
    card_factory("a-good")
    card_factory("b-bad", raw=b"not a card\n")
    folder = card_factory("c-good").parent
    result = run("import", folder, "--store", db)
    assert result.exit_code == 1
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["a-good", "c-good"]
    assert "b-bad" in one_error_line(result)


def test_folder_json_is_a_list_including_the_refusal(db, card_factory):
    card_factory("a-good")
    folder = card_factory("b-bad", raw=b"not a card\n").parent
    result = run("import", folder, "--store", db, "--json")
    data = json.loads(result.stdout)
    assert [d["result"] for d in data] == ["imported", "refused"]
    assert data[1]["error"]


@pytest.mark.parametrize(
    "extra", [["--digest", "skill_md:xyz"], ["--digest", "skill_md:sha256-!!"]]
)
def test_malformed_pins_are_usage_errors(db, card_factory, extra):
    result = run("import", card_factory("x-card"), "--store", db, *extra)
    assert result.exit_code == 2
    one_error_line(result)


def test_missing_source_is_exit_2(db, tmp_path):
    result = run("import", tmp_path / "nope", "--store", db)
    assert result.exit_code == 2
    assert "no such file" in one_error_line(result)
    assert not db.exists() or dump_store(db)["versions"] == []


@pytest.mark.parametrize("extra", [["--digest", "skill_md:xyz"], ["--lockfile", "missing.lock"]])
def test_a_usage_error_does_not_create_a_store(db, card_factory, extra):
    result = run("import", card_factory("x-card"), "--store", db, *extra)
    assert result.exit_code == 2
    one_error_line(result)
    assert not db.exists()


def test_a_store_that_is_not_a_database_is_exit_2_and_untouched(tmp_path, card_factory):
    bogus = tmp_path / "cards.db"
    bogus.write_text("hello\n")
    result = run("import", card_factory("x-card"), "--store", bogus)
    assert result.exit_code == 2
    assert "not an SQLite database" in one_error_line(result)
    assert bogus.read_text() == "hello\n"


def test_a_store_from_a_newer_schema_is_exit_2_and_untouched(db, card_factory):
    run("import", card_factory("x-card"), "--store", db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    before = dump_store(db)
    for args in (["import", card_factory("y-card")], ["list"], ["verify"]):
        result = run(*args, "--store", db)
        assert result.exit_code == 2
        assert "newer than this chimera-cards" in one_error_line(result)
    assert dump_store(db) == before


def test_readers_do_not_create_a_missing_store(db):
    for args in (["list"], ["verify"], ["audit"], ["show", "x"], ["lock", "-o", db.parent / "l"]):
        result = run(*args, "--store", db)
        assert result.exit_code == 2, args
        assert not db.exists(), args
        assert "no store here" in one_error_line(result)
    assert not db.exists()


def test_store_defaults_to_chimera_cards_home(tmp_path, card_factory):
    home = tmp_path / "home"
    result = run("import", card_factory("x-card"), env={"CHIMERA_CARDS_HOME": str(home)})
    assert result.exit_code == 0
    assert (home / "cards.db").exists()
    assert "x-card" in run("list", env={"CHIMERA_CARDS_HOME": str(home)}).stdout


def test_lock_then_import_with_the_lockfile(db, tmp_path, card_factory):
    card = card_factory("locked")
    run("import", card, "--store", db)
    lock = tmp_path / "cards.lock"
    result = run("lock", "-o", lock, "--store", db)
    assert result.exit_code == 0 and "wrote 1 card" in result.stdout
    assert lock.read_text().splitlines()[-1] == f"locked digest:{sha_of(card)}"
    other = tmp_path / "other.db"
    assert run("import", card, "--store", other, "--lockfile", lock).exit_code == 0
    changed = make_card(tmp_path / "edited", "locked", description="Edited after locking.")
    result = run("import", changed, "--store", other, "--lockfile", lock)
    assert result.exit_code == 1
    assert "does not match" in one_error_line(result)


def test_list_filters_by_status_and_prints_json(db, card_factory):
    run("import", card_factory("clean-one"), "--store", db)
    run("import", card_factory("held-one"), "--store", db, "--taint")
    text = run("list", "--store", db).stdout.splitlines()
    assert [line.split()[:2] for line in text] == [["clean-one", "active"], ["held-one", "pending"]]
    data = json.loads(run("list", "--status", "pending", "--json", "--store", db).stdout)
    assert [d["name"] for d in data] == ["held-one"]
    assert run("list", "--status", "bogus", "--store", db).exit_code == 2


def test_show_gives_metadata_findings_and_history(db, card_factory):
    first = card_factory("shown", frontmatter={"x-extra": 1})
    run("import", first, "--store", db)
    old_sha = sha_of(first)
    second = card_factory("shown", description="Second edition.", frontmatter={"x-extra": 1})
    run("import", second, "--store", db, "--taint")
    text = run("show", "shown", "--store", db).stdout
    assert f"digest:     {old_sha}" in text  # the active version by default
    assert "frontmatter-unknown-key" in text
    assert "history:    2 versions" in text
    data = json.loads(
        run("show", "shown", "--digest", sha_of(second)[:8], "--json", "--store", db).stdout
    )
    assert data["status"] == "pending" and data["digest"] == sha_of(second)
    assert [h["status"] for h in data["history"]] == ["active", "pending"]
    assert data["findings"] and data["origin"].endswith("SKILL.md")


def test_show_of_an_unknown_card_exits_1(db, card_factory):
    run("import", card_factory("x-card"), "--store", db)
    result = run("show", "nope", "--store", db)
    assert result.exit_code == 1 and "no card named" in one_error_line(result)


def test_export_writes_the_byte_identical_card(db, tmp_path, card_factory):
    card = card_factory("exported")
    run("import", card, "--store", db)
    result = run("export", "exported", "-o", tmp_path / "out", "--store", db)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out/exported/SKILL.md").read_bytes() == (card / "SKILL.md").read_bytes()


def test_export_refuses_a_card_with_no_active_version_unless_asked(db, tmp_path, card_factory):
    card = card_factory("held")
    run("import", card, "--store", db, "--taint")
    result = run("export", "held", "-o", tmp_path / "out", "--store", db)
    assert result.exit_code == 1 and "no active version" in one_error_line(result)
    assert not (tmp_path / "out").exists()
    # A pending version is not approved: exporting it needs --unapproved as well.
    refused = run("export", "held", "-o", tmp_path / "out", "--digest", sha_of(card), "--store", db)
    assert refused.exit_code == 1 and "not approved" in one_error_line(refused)
    assert not (tmp_path / "out" / "held").exists()
    ok = run(
        "export",
        "held",
        "-o",
        tmp_path / "out",
        "--digest",
        sha_of(card),
        "--unapproved",
        "--store",
        db,
    )
    assert ok.exit_code == 0


def test_export_refuses_tampered_bytes(db, tmp_path, card_factory):
    run("import", card_factory("victim"), "--store", db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE blobs SET data = CAST('---\nname: victim\n---\nevil' AS BLOB)")
    conn.commit()
    conn.close()
    result = run("export", "victim", "-o", tmp_path / "out", "--store", db)
    assert result.exit_code == 1 and "do not match their hash" in one_error_line(result)
    assert not (tmp_path / "out/victim/SKILL.md").exists()


def test_audit_lists_every_change_as_a_chain(db, card_factory):
    run("import", card_factory("one-card"), "--store", db)
    run("import", card_factory("two-card"), "--store", db)
    entries = json.loads(run("audit", "--json", "--store", db).stdout)
    assert [e["event"] for e in entries] == ["import", "import"]
    assert entries[1]["prev_hash"] == entries[0]["hash"]
    assert "import one-card" in run("audit", "--store", db).stdout


def test_verify_ok_then_tampering_exits_1_naming_the_problem(db, card_factory):
    run("import", card_factory("victim"), "--store", db)
    result = run("verify", "--store", db)
    # The card's bytes and its bundle manifest: 2 blobs.
    assert result.exit_code == 0 and result.stdout.startswith("ok: 2 blobs")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE blobs SET data = CAST('tampered' AS BLOB)")
    conn.commit()
    conn.close()
    result = run("verify", "--store", db)
    assert result.exit_code == 1
    assert "FAIL blob-hash" in result.stdout
    data = json.loads(run("verify", "--json", "--store", db).stdout)
    assert data["ok"] is False and data["problems"][0]["kind"] == "blob-hash"


def test_a_corrupted_store_is_one_error_line_not_a_traceback(db, card_factory):
    run("import", card_factory("x-card"), "--store", db)
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # keep the header, wreck the schema page
    db.write_bytes(bytes(data))
    for path in (db.parent / "cards.db-wal", db.parent / "cards.db-shm"):
        path.unlink(missing_ok=True)
    for args in (["list"], ["verify"], ["import", card_factory("y-card")]):
        result = run(*args, "--store", db)
        assert result.exit_code in (1, 2), result.output
        one_error_line(result)


@pytest.mark.slow
def test_import_from_a_header_trickling_server_stops_at_the_timeout_and_stores_nothing(
    db, drip_server
):
    import chimera_cards._importer.pipeline  # noqa: F401  (its scanners' first import is no fetch)

    drip_server.drip(interval=1.0)  # one header byte a second
    start = time.monotonic()
    result = run("import", drip_server.url(), "--store", db, "--timeout", "2")
    # A deadline per read would wait out the whole 47-byte header (47 s). Under load 13-30 the
    # command took 6-8 s wall for 0.5 s CPU (failed 2 of 3 at the old 5 s bound): 2 s the
    # deadline, the rest mostly waiting for a CPU to import the scanners, now imported first.
    assert time.monotonic() - start < 20
    assert result.exit_code == 1
    assert "timed out after 2s (waiting for the response headers)" in one_error_line(result)
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM versions").fetchone()[0]
    assert rows == 0


def test_import_resumes_the_cycle_collector_after_it_imports_and_after_it_refuses(db, tmp_path):
    # The collector is paused only while the import runs (a big import would rescan its own
    # objects again and again); whatever happens, the process gets it back.
    import gc

    assert gc.isenabled()
    good = make_card(tmp_path / "cards", "good-card")
    assert run("import", good, "--store", db).exit_code == 0
    assert gc.isenabled()
    bad = make_card(tmp_path / "bad", "bad-card", raw=b"no frontmatter\n")
    result = run("import", bad, "--store", db)
    assert result.exit_code == 1 and "frontmatter" in one_error_line(result)
    assert gc.isenabled()
