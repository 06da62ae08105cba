"""import with other scanners: their findings are stored with the version, hold it by severity,
fail closed, show in review under the scanner's name, are accepted like ours, and are audited."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import dump_store, make_skill, sarif_scanner_command, skill_archive

from chimera_cards._importer.pipeline import import_source
from chimera_cards._review.decisions import add_trust, approve
from chimera_cards._review.view import format_view, review_view
from chimera_cards._scan.external import ScannerConfigError, parse_scanner, save_scanner
from chimera_cards._store.facade import Store
from chimera_cards._store.schema import MIGRATIONS
from chimera_cards._store.verify import verify_store
from chimera_cards._trust.keys import generate_key, load_private_key
from chimera_cards.errors import LintBlockedError

DEMO = parse_scanner("demo", sarif_scanner_command())


@pytest.fixture
def alice(store, tmp_path):
    gen = generate_key("alice", tmp_path / "alice.key")
    add_trust(store, "alice", gen.public)
    return load_private_key(tmp_path / "alice.key")


def rows(store, version_id):
    return store.scanner_results(version_id)


def test_a_scanner_error_holds_a_clean_path_import_and_is_stored_and_audited(store, tmp_path):
    skill = make_skill(tmp_path, "sender", {"scripts/send.py": "# EXFIL the token\n"})
    (res,) = import_source(store, skill, scanners=[DEMO])
    assert res.outcome == "imported" and res.provenance == "clean"
    assert res.status == "pending"
    assert "scanner demo errors: demo-exfil (scripts/send.py:1)" in res.reason
    version = store.version("sender", res.sha256)
    (run,) = rows(store, version.id)
    assert (run["scanner"], run["tool"], run["status"]) == ("demo", "demo-scanner", "ok")
    (finding,) = run["findings"]
    assert finding["rule"] == "demo/demo-exfil" and finding["severity"] == "error"
    assert finding["path"] == "scripts/send.py" and finding["line"] == 1
    assert res.scanners[0]["findings"][0]["id"] == finding["id"]
    scan = [e for e in store.audit_entries() if e.event == "scan"]
    assert [(e.name, e.sha256, e.detail["scanner"], e.detail["errors"]) for e in scan] == [
        ("sender", res.sha256, "demo", 1)
    ]
    assert scan[0].detail["findings"] == [finding["id"]]
    assert verify_store(store).ok


def test_a_warning_from_a_scanner_is_shown_but_does_not_hold(store, tmp_path):
    skill = make_skill(tmp_path, "careful", {"notes.md": "SUSPECT but fine\n"})
    (res,) = import_source(store, skill, scanners=[DEMO])
    assert res.status == "active"
    (run,) = rows(store, store.version("careful", res.sha256).id)
    assert [f["severity"] for f in run["findings"]] == ["warning"]


def test_levels_configured_to_hold_warnings_hold_them(store, tmp_path):
    strict = parse_scanner(
        "strict", {"command": sarif_scanner_command(), "levels": {"warning": "error"}}
    )
    skill = make_skill(tmp_path, "careful", {"notes.md": "SUSPECT\n"})
    (res,) = import_source(store, skill, scanners=[strict])
    assert res.status == "pending" and "scanner strict errors: demo-suspect" in res.reason


def test_a_failing_scanner_holds_the_version_and_records_why(store, tmp_path):
    broken = parse_scanner("broken", sarif_scanner_command("--garbage"))
    slow = parse_scanner("slow", {"command": sarif_scanner_command("--sleep", "30"), "timeout": 1})
    skill = make_skill(tmp_path, "plain")
    (res,) = import_source(store, skill, scanners=[broken, slow])
    assert res.status == "pending"
    assert "scanner broken failed: exited 0; unreadable SARIF" in res.reason
    assert "scanner slow failed: timed out after 1 s" in res.reason
    runs = {r["scanner"]: r for r in rows(store, store.version("plain", res.sha256).id)}
    assert runs["slow"]["status"] == "failed" and "timed out" in runs["slow"]["reason"]
    assert [f["rule"] for f in runs["broken"]["findings"]] == ["broken/scanner-failed"]
    failed = [e.detail for e in store.audit_entries() if e.event == "scan"]
    assert {d["scanner"]: d["status"] for d in failed} == {"broken": "failed", "slow": "failed"}


def test_the_scanner_sees_exactly_the_bundle_under_the_skills_name(store, tmp_path):
    # It records what it was given: the folder's name and every file in it.
    record = tmp_path / "seen.json"
    lister = parse_scanner(
        "lister",
        [
            __import__("sys").executable,
            "-c",
            "import json,os,sys; d=sys.argv[1]; "
            "json.dump([os.path.basename(d), sorted(os.path.relpath(os.path.join(r, f), d) "
            "for r, _, fs in os.walk(d) for f in fs)], open(sys.argv[2], 'w')); "
            "print(json.dumps({'version': '2.1.0', 'runs': [{'tool': {'driver': {'name': 'l'}}, "
            "'results': []}]}))",
            "{dir}",
            str(record),
        ],
    )
    skill = make_skill(tmp_path / "src", "listed", {"a/b.txt": "x", ".git/config": "ignored"})
    (res,) = import_source(store, skill, scanners=[lister])
    stored = [f.path for f in store.get_bundle(store.version("listed", res.sha256)).files]
    name, seen = json.loads(record.read_text())
    assert name == "listed" and seen == sorted(stored)


def test_the_same_bytes_again_are_not_scanned_again(store, tmp_path):
    skill = make_skill(tmp_path, "twice", {"notes.md": "SUSPECT\n"})
    import_source(store, skill, scanners=[DEMO])
    before = dump_store(store.path)
    (res,) = import_source(store, skill, scanners=[parse_scanner("broken", ["nope-xyz", "{dir}"])])
    assert res.outcome == "present" and res.scanners == []
    assert dump_store(store.path) == before


def test_review_shows_each_scanners_findings_under_its_name_errors_first(store, tmp_path):
    skill = make_skill(tmp_path, "shown", {"run.sh": "SUSPECT\nEXFIL \u202e\n"})
    (res,) = import_source(store, skill, scanners=[DEMO])
    view = review_view(store, "shown", res.sha256)
    (run,) = view.scanners
    assert run["scanner"] == "demo" and run["tool"] == "demo-scanner"
    text = format_view(view)
    section = text.split(
        "== scanner demo (demo-scanner 0.1): 2 error/warning finding(s), 0 info =="
    )[1]
    lines = section.strip().splitlines()
    assert lines[0].startswith("error demo/demo-exfil-") and "run.sh:2" in lines[0]
    assert lines[1].startswith("warning demo/demo-suspect-")
    assert "hold" not in section.split("\n\n")[0]


def test_a_scanner_error_blocks_approval_until_accepted_by_its_id(store, tmp_path, alice):
    skill = make_skill(tmp_path, "exfil", {"send.py": "EXFIL\n"})
    (res,) = import_source(store, skill, scanners=[DEMO])
    (finding,) = res.scanners[0]["findings"]
    before = dump_store(store.path)
    with pytest.raises(LintBlockedError, match=finding["id"]):
        approve(store, "exfil", res.sha256, alice)
    assert dump_store(store.path) == before
    decision = approve(store, "exfil", res.sha256, alice, accept=[finding["id"]])
    assert decision.status == "active"
    assert finding["id"] in review_view(store, "exfil", res.sha256).accepted


def test_a_failed_scan_blocks_approval_until_the_reviewer_accepts_running_without_it(
    store, tmp_path, alice
):
    skill = make_skill(tmp_path, "unscanned")
    (res,) = import_source(store, skill, scanners=[parse_scanner("gone", ["gone-xyz", "{dir}"])])
    (failed,) = res.scanners[0]["findings"]
    assert failed["rule"] == "gone/scanner-failed"
    with pytest.raises(LintBlockedError):
        approve(store, "unscanned", res.sha256, alice)
    assert approve(store, "unscanned", res.sha256, alice, accept=[failed["id"]]).status == "active"


def test_unreadable_stored_scanner_findings_count_as_an_error(store, tmp_path):
    skill = make_skill(tmp_path, "tampered", {"notes.md": "SUSPECT\n"})
    (res,) = import_source(store, skill, scanners=[DEMO])
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE scanner_results SET findings = 'not json'")
    conn.commit()
    conn.close()
    with Store(store.path) as again:
        (f,) = again.scanner_findings(again.version("tampered", res.sha256).id)
    assert f["severity"] == "error" and f["rule"] == "demo/unreadable-findings"


def test_a_store_from_before_scanners_gains_the_table_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.db"
    with Store(path) as fresh:
        import_source(fresh, make_skill(tmp_path, "old-card"))
    # The store as it was before the scanners' migration: every object that migration and
    # the ones after it made is dropped, and the schema version set back to match.
    at = next(i for i, m in enumerate(MIGRATIONS) if "scanner_results" in str(m))
    earlier = sqlite3.connect(":memory:")
    for migration in MIGRATIONS[:at]:
        if callable(migration):
            migration(earlier)
        else:
            earlier.executescript(migration)
    kept = {row[0] for row in earlier.execute("SELECT name FROM sqlite_master")}
    earlier.close()
    conn = sqlite3.connect(path)
    later = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT NULL"
    ).fetchall()
    for kind, name in later:
        if name not in kept:
            conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
    conn.execute(f"PRAGMA user_version = {at}")
    conn.commit()
    conn.close()
    before = dump_store(path)
    with Store(path) as upgraded:
        assert upgraded.schema_version == len(MIGRATIONS)
        (res,) = import_source(
            upgraded, make_skill(tmp_path, "new-card", {"x.md": "EXFIL\n"}), scanners=[DEMO]
        )
        assert res.status == "pending"
        assert verify_store(upgraded).ok
    after = dump_store(path)
    assert after["versions"][: len(before["versions"])] == before["versions"]


def test_verify_names_a_scanner_run_edited_deleted_or_planted_by_hand(store, tmp_path):
    (res,) = import_source(
        store, make_skill(tmp_path, "watched", {"a.md": "EXFIL\n"}), scanners=[DEMO]
    )
    assert verify_store(store, record=False).ok
    conn = sqlite3.connect(store.path)
    # Unblock the approval by emptying the findings: the log still says what was found.
    conn.execute("UPDATE scanner_results SET findings = '[]'")
    conn.commit()
    kinds = [p.kind for p in verify_store(store, record=False).problems]
    assert kinds == ["scanner-mismatch"]
    conn.execute("DELETE FROM scanner_results")
    conn.commit()
    kinds = [p.kind for p in verify_store(store, record=False).problems]
    assert kinds == ["scanner-missing"]
    version_id = store.version("watched", res.sha256).id
    conn.execute(
        "INSERT INTO scanner_results VALUES (?, 'other', NULL, NULL, 'ok', '', '[]', 'now')",
        (version_id,),
    )
    conn.commit()
    conn.close()
    kinds = sorted(p.kind for p in verify_store(store, record=False).problems)
    assert kinds == ["scanner-missing", "scanner-unrecorded"]


def test_a_skill_from_an_archive_is_scanned_as_the_store_keeps_it(store, tmp_path):
    # Whatever the source, the scanner reads the bundle the store keeps, not the source.
    src = make_skill(tmp_path / "src", "packed", {"bin/run.sh": ("curl EXFIL\n", True)})
    archive = tmp_path / "packed.skill"
    archive.write_bytes(skill_archive(src))
    (res,) = import_source(store, archive, scanners=[DEMO])
    assert res.outcome == "imported" and res.status == "pending"
    (run,) = store.scanner_results(store.version("packed", res.sha256).id)
    assert [(f["rule"], f["path"]) for f in run["findings"]] == [("demo/demo-exfil", "bin/run.sh")]
    assert "scanner demo errors" in res.reason


def test_a_scanner_the_store_runs_on_import_vets_every_import_without_being_named(store, tmp_path):
    save_scanner(
        store, parse_scanner("team", {"command": sarif_scanner_command(), "on_import": True})
    )
    save_scanner(store, parse_scanner("only-named", ["gone-xyz", "{dir}"]))
    (res,) = import_source(store, make_skill(tmp_path, "plain-import", {"a.md": "EXFIL\n"}))
    assert res.status == "pending" and "scanner team errors: demo-exfil" in res.reason
    assert [r["scanner"] for r in res.scanners] == ["team"]
    # Named as well: it runs once, as named.
    (again,) = import_source(
        store, make_skill(tmp_path, "named-too", {"a.md": "x\n"}), scanners=[DEMO, DEMO]
    )
    assert sorted(r["scanner"] for r in again.scanners) == ["demo", "team"]


def test_an_unusable_stored_scanner_setting_stops_imports_before_anything_is_stored(
    store, tmp_path
):
    with store.transaction():
        store.set_setting("scanner:broken", '{"command": "no dir placeholder", "on_import": true}')
    before = dump_store(store.path)
    with pytest.raises(ScannerConfigError, match="must name the folder"):
        import_source(store, make_skill(tmp_path, "unvetted"))
    assert dump_store(store.path) == before
