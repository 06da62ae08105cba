"""importer.py with bundles: every source kind, every refusal (store dumped before and after),
pins on the whole bundle, lockfiles old and new."""

from __future__ import annotations

import io
import os
import socket
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import card_text, dump_store, git, make_card, make_git_repo, make_skill

from chimera_cards._bundles import bundle as B
from chimera_cards._bundles.bundle import read_bundle_dir
from chimera_cards._importer.lockfile import write_lockfile
from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.verify import verify_store
from chimera_cards.errors import UsageError

FILES = {
    "scripts/extract.py": ("#!/usr/bin/env python3\nprint('extract')\n", True),
    "references/guide.md": "# Guide\n\nRead this first.\n",
    "assets/logo.bin": bytes(range(256)),
}


@pytest.fixture
def seeded(store, card_factory):
    """A store that already holds one active card, so "unchanged" is a real comparison."""
    [result] = import_source(store, card_factory("seed-card"))
    assert result.status == "active"
    return store


def refused_unchanged(store, source, kind: str, **kwargs):
    before = dump_store(store.path)
    results = import_source(store, source, **kwargs)
    assert [r.outcome for r in results] == ["refused"], results
    assert results[0].error_kind == kind, results[0].error
    assert results[0].error.strip() and "\n" not in results[0].error
    assert dump_store(store.path) == before
    return results[0]


def package(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipf:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                zipf.write(file, file.relative_to(folder.parent))
    return out


def raw_zip(out: Path, entries) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipf:
        zipf.writestr("evil-skill/SKILL.md", card_text("evil-skill"))
        for info, data in entries:
            zipf.writestr(info, data)
    return out


def raw_tar(out: Path, member: tarfile.TarInfo) -> Path:
    body = card_text("evil-skill").encode()
    with tarfile.open(out, "w:gz") as tar:
        info = tarfile.TarInfo("evil-skill/SKILL.md")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        tar.addfile(member)
    return out


# --- every refusal: one error, nothing stored -----------------------------------------------


def test_refused_a_symlink_in_the_folder(seeded, tmp_path):
    skill = make_skill(tmp_path, "linked-skill", FILES)
    (skill / "references" / "passwd.md").symlink_to("/etc/passwd")
    refused_unchanged(seeded, skill, "LinkError")


def test_refused_a_hard_link(seeded, tmp_path):
    skill = make_skill(tmp_path, "hard-skill", FILES)
    os.link(skill / "references" / "guide.md", tmp_path / "elsewhere.md")
    refused_unchanged(seeded, skill, "LinkError")


def test_refused_a_fifo(seeded, tmp_path):
    skill = make_skill(tmp_path, "fifo-skill", FILES)
    os.mkfifo(skill / "assets" / "pipe")
    refused_unchanged(seeded, skill, "SpecialFileError")


def test_refused_a_socket(seeded, tmp_path, monkeypatch):
    skill = make_skill(tmp_path, "sock-skill", FILES)
    monkeypatch.chdir(skill)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("sock")
    try:
        refused_unchanged(seeded, skill, "SpecialFileError")
    finally:
        sock.close()


def test_refused_a_non_utf8_name(seeded, tmp_path):
    skill = make_skill(tmp_path, "latin-skill", FILES)
    with open(os.path.join(os.fsencode(skill), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"x")
    refused_unchanged(seeded, skill, "UnsafePathError")


def test_refused_names_differing_only_by_case(seeded, tmp_path):
    skill = make_skill(tmp_path, "case-skill", {"Notes.md": "a", "notes.md": "b"})
    refused_unchanged(seeded, skill, "UnsafePathError")


def test_refused_nesting_deeper_than_16(seeded, tmp_path):
    deep = "/".join(["d"] * (B.MAX_DEPTH + 1)) + "/f.md"
    refused_unchanged(seeded, make_skill(tmp_path, "deep-skill", {deep: "x"}), "UnsafePathError")


def test_refused_more_than_1000_files(seeded, tmp_path):
    skill = make_skill(tmp_path, "many-skill", {f"f/{i}.md": "x" for i in range(B.MAX_FILES)})
    refused_unchanged(seeded, skill, "BundleLimitError")


def test_refused_a_file_over_5_mib(seeded, tmp_path):
    skill = make_skill(tmp_path, "big-skill", {"a.bin": b"\0" * (B.MAX_FILE_BYTES + 1)})
    refused_unchanged(seeded, skill, "BundleLimitError")


def test_refused_over_20_mib_in_total(seeded, tmp_path):
    chunk = b"\1" * B.MAX_FILE_BYTES
    skill = make_skill(tmp_path, "total-skill", {f"p{i}.bin": chunk for i in range(4)} | {"x": "y"})
    refused_unchanged(seeded, skill, "BundleLimitError")


@pytest.mark.parametrize("name", ["../evil.md", "evil-skill/../../evil.md", "/etc/cron.d/x"])
def test_refused_zip_slip_and_absolute_archive_entries(seeded, tmp_path, name):
    archive = raw_zip(tmp_path / "slip.skill", [(name, b"pwned")])
    refused_unchanged(seeded, archive, "UnsafePathError")
    assert not (tmp_path.parent / "evil.md").exists()


def test_refused_a_symlink_entry_in_an_archive(seeded, tmp_path):
    info = zipfile.ZipInfo("evil-skill/passwd")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    refused_unchanged(seeded, raw_zip(tmp_path / "l.zip", [(info, b"/etc/passwd")]), "LinkError")


def test_refused_a_hard_link_entry_in_a_tar(seeded, tmp_path):
    link = tarfile.TarInfo("evil-skill/passwd")
    link.type, link.linkname = tarfile.LNKTYPE, "/etc/passwd"
    refused_unchanged(seeded, raw_tar(tmp_path / "l.tar.gz", link), "LinkError")


def test_refused_a_device_entry_in_a_tar(seeded, tmp_path):
    dev = tarfile.TarInfo("evil-skill/null")
    dev.type = tarfile.CHRTYPE
    refused_unchanged(seeded, raw_tar(tmp_path / "d.tar.gz", dev), "SpecialFileError")


def test_refused_a_zip_bomb(seeded, tmp_path):
    archive = raw_zip(tmp_path / "bomb.zip", [("evil-skill/z.bin", b"\0" * (4 << 20))])
    refused_unchanged(seeded, archive, "BundleLimitError")


def _linked_skill(root: Path, name: str, target: str) -> Path:
    skill = make_skill(root, name, {"AGENTS.md": "# Agents\nRun the tests first.\n"})
    (skill / "CLAUDE.md").symlink_to(target)
    return skill


@pytest.mark.parametrize("via_git", [False, True])
def test_a_symlink_to_a_file_of_the_skill_is_stored_as_a_copy_and_reported(
    store, tmp_path, via_git
):
    skill = _linked_skill(tmp_path / "repo", "linked-docs", "AGENTS.md")
    source = make_git_repo(tmp_path / "repo") if via_git else skill
    [result] = import_source(store, source)
    assert result.status == "active", result
    version = store.version("linked-docs", result.sha256)
    stored = store.get_bundle(version)
    assert (
        stored.contents["CLAUDE.md"]
        == stored.contents["AGENTS.md"]
        == b"# Agents\nRun the tests first.\n"
    )
    assert [
        (f["rule"], f["severity"], f["path"])
        for f in version.findings
        if f["rule"] == "bundle-symlink"
    ] == [("bundle-symlink", "info", "CLAUDE.md")]


@pytest.mark.parametrize("via_git", [False, True])
@pytest.mark.parametrize(
    "target", ["../../outside.md", "/etc/passwd", "references", "LINK.md", "missing.md", "."]
)
def test_refused_a_symlink_leading_out_of_the_skill_or_to_no_file_of_it(
    seeded, tmp_path, via_git, target
):
    (tmp_path / "outside.md").write_text("the user's notes\n")
    skill = _linked_skill(tmp_path / "repo", "linked-out", target)
    (skill / "references").mkdir()
    (skill / "references" / "a.md").write_text("a\n")
    (skill / "LINK.md").symlink_to("CLAUDE.md")  # a link to a link
    refused_unchanged(seeded, make_git_repo(tmp_path / "repo") if via_git else skill, "LinkError")


def test_refused_a_symlink_in_a_git_repository(seeded, tmp_path):
    skill = make_skill(tmp_path / "repo", "git-linked", FILES)
    (skill / "passwd").symlink_to("/etc/passwd")
    refused_unchanged(seeded, make_git_repo(tmp_path / "repo"), "LinkError")


def test_cli_refusal_is_one_error_line_exit_1(tmp_path):
    from click.testing import CliRunner

    from chimera_cards._cli.app import main

    skill = make_skill(tmp_path, "linked-skill", FILES)
    (skill / "x").symlink_to("/etc/passwd")
    db = tmp_path / "cards.db"
    result = CliRunner().invoke(main, ["import", str(skill), "--store", str(db)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "symlink" in lines[0]


# --- sources --------------------------------------------------------------------------------


def test_a_local_skill_archive_is_a_path_import(store, tmp_path):
    skill = make_skill(tmp_path / "src", "packed-skill", FILES)
    archive = package(skill, tmp_path / "packed-skill.skill")
    (res,) = import_source(store, archive)
    assert (res.outcome, res.status, res.provenance) == ("imported", "active", "clean")
    assert res.sha256 == read_bundle_dir(skill).digest and res.files == 4
    assert res.origin == f"{archive.resolve()}#packed-skill"
    assert store.active("packed-skill").source["kind"] == "archive"


def test_an_archive_by_url_is_tainted_and_pending(store, tmp_path, card_server):
    skill = make_skill(tmp_path / "src", "remote-skill", FILES)
    data = package(skill, tmp_path / "remote-skill.skill").read_bytes()
    url = card_server.serve("/dl/remote-skill.skill", data, content_type="application/zip")
    (res,) = import_source(store, url)
    assert (res.status, res.provenance) == ("pending", "tainted")
    assert res.sha256 == read_bundle_dir(skill).digest
    assert res.final_url == url


def test_a_tar_gz_collection_by_url_imports_every_skill_or_one_with_skill(
    store, tmp_path, card_server
):
    col = tmp_path / "col"
    make_skill(col, "one-skill", FILES)
    make_card(col, "two-skill")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(col, arcname="col")
    url = card_server.serve("/col.tar.gz", buf.getvalue(), content_type="application/gzip")
    (only,) = import_source(store, url, skill="two-skill")
    assert only.name == "two-skill" and only.status == "pending"
    both = import_source(store, url)
    assert [(r.name, r.outcome) for r in both] == [
        ("one-skill", "imported"),
        ("two-skill", "present"),
    ]


def test_skill_names_a_missing_skill_is_a_usage_error_and_stores_nothing(seeded, tmp_path):
    col = tmp_path / "col"
    make_card(col, "one-skill")
    before = dump_store(seeded.path)
    with pytest.raises(UsageError, match="no skill named 'nope'"):
        import_source(seeded, col, skill="nope")
    assert dump_store(seeded.path) == before


def test_a_local_git_repository_is_a_path_import_at_its_commit(store, tmp_path):
    make_skill(tmp_path / "repo" / "skills", "git-skill", FILES)
    repo = make_git_repo(tmp_path / "repo")
    commit = git(repo, "rev-parse", "HEAD")
    (res,) = import_source(store, repo, ref="main")
    assert (res.status, res.provenance) == ("active", "clean")
    assert res.origin == f"{repo.resolve()}@{commit}#skills/git-skill"
    source = store.active("git-skill").source
    assert (source["kind"], source["commit"], source["ref"]) == ("git", commit, "main")


def test_a_remote_git_repository_is_tainted_with_the_commit_recorded(store, tmp_path, git_server):
    make_skill(git_server.root / "skills.git" / "skills", "net-skill", FILES)
    repo = make_git_repo(git_server.root / "skills.git")
    git(repo, "tag", "v1")
    commit = git(repo, "rev-parse", "HEAD")
    (res,) = import_source(store, git_server.url("skills.git"), ref="v1", skill="net-skill")
    assert (res.status, res.provenance) == ("pending", "tainted")
    assert commit in res.origin
    assert store.version("net-skill", res.sha256).source["commit"] == commit


def test_digest_pins_the_whole_bundle(seeded, tmp_path):
    skill = make_skill(tmp_path, "pinned-skill", FILES)
    good = read_bundle_dir(skill).digest
    (skill / "references" / "guide.md").write_text("changed after pinning\n")
    refused_unchanged(seeded, skill, "IntegrityError", digest=good)
    (skill / "references" / "guide.md").write_text(FILES["references/guide.md"])
    (res,) = import_source(seeded, skill, digest=good)
    assert res.outcome == "imported"


def test_sha256_still_pins_skill_md_alone(store):
    from conftest import corpus_dir

    corpus = corpus_dir()
    if corpus is None:
        pytest.skip("../shared/corpus not present")
    card = corpus / "chimera-skills" / "chimera-carry-the-failure-forward"
    published = "62dcc2aa830e5eb35c554bebf2c1a24454a054bf17bf152ccd59f3497b5e043d"
    (res,) = import_source(store, card, sha256=published)
    assert res.ok and res.skill_sha256 == published


def test_lockfile_refuses_drift_in_any_file(store, tmp_path):
    skill = make_skill(tmp_path / "src", "locked-skill", FILES)
    lock = tmp_path / "cards.lock"
    write_lockfile(lock, {"locked-skill": read_bundle_dir(skill).digest})
    other = store
    before = dump_store(other.path)
    for rel in FILES:
        target = skill / rel
        original = target.read_bytes()
        target.write_bytes(original + b"#")
        refused_unchanged(other, skill, "LockfileError", lockfile=lock)
        target.write_bytes(original)
        target.chmod(target.stat().st_mode ^ 0o100)
        refused_unchanged(other, skill, "LockfileError", lockfile=lock)
        target.chmod(target.stat().st_mode ^ 0o100)
    (skill / "extra.md").write_text("added\n")
    refused_unchanged(other, skill, "LockfileError", lockfile=lock)
    (skill / "extra.md").unlink()
    assert dump_store(other.path) == before
    (res,) = import_source(other, skill, lockfile=lock)
    assert res.outcome == "imported"


def test_an_old_lockfile_pinning_skill_md_still_reads_for_a_one_file_bundle(store, tmp_path):
    import hashlib

    card = make_card(tmp_path / "src", "old-pin")
    multi = make_skill(tmp_path / "src", "old-multi", FILES)
    lock = tmp_path / "old.lock"
    lock.write_text(
        "# chimera-cards lockfile: one card per line, `name sha256` of its exact SKILL.md bytes\n"
        f"old-multi {hashlib.sha256((multi / 'SKILL.md').read_bytes()).hexdigest()}\n"
        f"old-pin {hashlib.sha256((card / 'SKILL.md').read_bytes()).hexdigest()}\n"
    )
    (res,) = import_source(store, card, lockfile=lock)
    assert res.outcome == "imported"
    # SKILL.md matches the old pin, but the files beside it were never pinned: drift.
    refused_unchanged(store, multi, "LockfileError", lockfile=lock)


def test_lock_records_bundle_digests(store, tmp_path):
    from click.testing import CliRunner

    from chimera_cards._cli.app import main

    skill = make_skill(tmp_path / "src", "lock-me", FILES)
    import_source(store, skill)
    lock = tmp_path / "cards.lock"
    r = CliRunner().invoke(main, ["lock", "-o", str(lock), "--store", str(store.path)])
    assert r.exit_code == 0
    # The pin carries the prefix `hash` prints, so it reads as a bundle digest and nothing else.
    assert f"lock-me digest:{read_bundle_dir(skill).digest}" in lock.read_text().splitlines()
    (res,) = import_source(store, skill, lockfile=lock)
    assert res.outcome == "present"


def test_a_bare_bundle_digest_pin_from_an_older_lockfile_still_reads(store, tmp_path):
    skill = make_skill(tmp_path / "src", "bare-pin", FILES)
    lock = tmp_path / "bare.lock"
    lock.write_text(f"bare-pin {read_bundle_dir(skill).digest}\n")
    (res,) = import_source(store, skill, lockfile=lock)
    assert res.outcome == "imported"


def test_a_digest_pin_never_matches_a_skill_md_hash(store, tmp_path):
    # Bare, a SKILL.md hash still pins its one-file bundle (older lockfiles); with the prefix the
    # pin says "bundle digest", so the same hash is drift.
    import hashlib

    card = make_card(tmp_path / "src", "prefixed")
    lock = tmp_path / "new.lock"
    skill_md = hashlib.sha256((card / "SKILL.md").read_bytes()).hexdigest()
    lock.write_text(f"prefixed digest:{skill_md}\n")
    refused_unchanged(store, card, "LockfileError", lockfile=lock)
    lock.write_text(f"prefixed {skill_md}\n")
    (res,) = import_source(store, card, lockfile=lock)
    assert res.outcome == "imported"


def test_a_collection_folder_imports_each_skill_and_refuses_only_the_bad_one(store, tmp_path):
    col = tmp_path / "col"
    make_skill(col, "good-skill", FILES)
    bad = make_skill(col, "bad-skill", FILES)
    (bad / "link").symlink_to("/etc/passwd")
    results = import_source(store, col)
    assert sorted((r.outcome, r.error_kind) for r in results) == [
        ("imported", None),
        ("refused", "LinkError"),
    ]
    assert store.active("good-skill") is not None and store.versions(name="bad-skill") == []
    assert verify_store(store).ok
