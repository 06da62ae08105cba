"""archive.py: .skill/.zip/.tar.gz read into memory; every unsafe entry refused before inflating.

Archives are built for real with zipfile/tarfile, the way packers (skill-creator's
package_skill.py: ``zipf.write(file, file.relative_to(skill.parent))``) build them.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import make_card, make_skill

from chimera_cards._bundles.bundle import (
    BundleLimitError,
    LinkError,
    SpecialFileError,
    UnsafePathError,
    bundles_from_tree,
    read_bundle_dir,
)
from chimera_cards._sources import archive as A
from chimera_cards._sources.archive import ArchiveError, read_archive, read_archive_file

FILES = {
    "scripts/extract.py": ("#!/usr/bin/env python3\nprint('hi')\n", True),
    "references/guide.md": "# Guide\n",
    "assets/logo.bin": bytes(range(256)) * 8,
    "LICENSE.txt": "Apache-2.0\n",
}


def package_skill(skill: Path, out: Path) -> Path:
    """What skill-creator's package_skill.py does: every file, arcname relative to the parent."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipf:
        for file in sorted(skill.rglob("*")):
            if file.is_file():
                zipf.write(file, file.relative_to(skill.parent))
    return out


def tar_gz(folder: Path, out: Path) -> Path:
    with tarfile.open(out, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return out


def zip_bytes(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zipf:
        for info, data in entries:
            zipf.writestr(info, data)
    return buf.getvalue()


def tar_bytes(members: list[tuple[tarfile.TarInfo, bytes | None]], *, gz: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def unix_info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


SKILL = b"---\nname: x\ndescription: y\n---\nbody\n"


def test_a_skill_file_reads_as_the_same_bundle_as_its_folder(tmp_path):
    skill = make_skill(tmp_path / "src", "packed", FILES)
    archive = package_skill(skill, tmp_path / "packed.skill")
    tree = read_archive_file(str(archive))
    assert tree.kind == "zip"
    [(root, bundle)] = bundles_from_tree(tree.entries, where=str(archive))
    assert root == "packed"
    assert bundle.digest == read_bundle_dir(skill).digest
    assert bundle.file("scripts/extract.py").executable


def test_a_tar_gz_collection_reads_every_skill(tmp_path):
    col = tmp_path / "col"
    make_skill(col, "one", FILES)
    make_card(col, "two")
    (col / "README.md").write_text("not a skill")
    archive = tar_gz(col, tmp_path / "col.tar.gz")
    tree = read_archive_file(str(archive))
    found = bundles_from_tree(tree.entries)
    assert [root for root, _ in found] == ["col/one", "col/two"]
    assert found[0][1].digest == read_bundle_dir(col / "one").digest
    assert found[1][1].digest == read_bundle_dir(col / "two").digest


def test_kind_comes_from_the_suffix_then_the_magic_bytes(tmp_path):
    data = zip_bytes([("SKILL.md", SKILL)])
    assert read_archive(data, "https://example.org/download?id=3").kind == "zip"
    assert A.archive_kind("x.TGZ") == "tar.gz"
    with pytest.raises(ArchiveError, match=r"not a \.zip"):
        read_archive(b"just text", "notes.txt")


@pytest.mark.parametrize("name", ["../evil.md", "skill/../../evil.md", "/etc/cron.d/x", "a\\..\\b"])
def test_zip_slip_is_refused(name):
    data = zip_bytes([("skill/SKILL.md", SKILL), (name, b"pwned")])
    with pytest.raises(UnsafePathError):
        read_archive(data, "slip.zip")


def test_tar_slip_is_refused():
    data = tar_bytes([(tarfile.TarInfo("skill/SKILL.md"), SKILL), (tarfile.TarInfo("../x"), b"1")])
    with pytest.raises(UnsafePathError):
        read_archive(data, "slip.tar.gz")


def test_a_zip_symlink_entry_is_refused():
    data = zip_bytes(
        [
            ("skill/SKILL.md", SKILL),
            (unix_info("skill/passwd", stat.S_IFLNK | 0o777), b"/etc/passwd"),
        ]
    )
    with pytest.raises(LinkError, match="symlink"):
        read_archive(data, "link.skill")


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_tar_symlink_and_hard_link_entries_are_refused(kind):
    link = tarfile.TarInfo("skill/passwd")
    link.type = kind
    link.linkname = "/etc/passwd"
    data = tar_bytes([(tarfile.TarInfo("skill/SKILL.md"), SKILL), (link, None)])
    with pytest.raises(LinkError):
        read_archive(data, "link.tar.gz")


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_tar_device_and_fifo_entries_are_refused(kind):
    dev = tarfile.TarInfo("skill/dev")
    dev.type = kind
    data = tar_bytes([(tarfile.TarInfo("skill/SKILL.md"), SKILL), (dev, None)])
    with pytest.raises(SpecialFileError):
        read_archive(data, "dev.tar.gz")


def test_a_zip_device_entry_is_refused():
    data = zip_bytes(
        [("skill/SKILL.md", SKILL), (unix_info("skill/null", stat.S_IFCHR | 0o666), b"")]
    )
    with pytest.raises(SpecialFileError):
        read_archive(data, "dev.zip")


def test_a_zip_bomb_is_refused_by_its_ratio_before_inflating():
    bomb = b"\0" * (4 * 1024 * 1024)  # under the per-file limit, but ~1000:1
    data = zip_bytes([("skill/SKILL.md", SKILL), ("skill/bomb.bin", bomb)])
    assert len(data) < 64 * 1024
    with pytest.raises(BundleLimitError, match="zip bomb"):
        read_archive(data, "bomb.zip")


def test_a_gzip_bomb_is_refused():
    data = tar_bytes(
        [
            (tarfile.TarInfo("skill/SKILL.md"), SKILL),
            (tarfile.TarInfo("skill/z"), b"\0" * (4 << 20)),
        ]
    )
    with pytest.raises(BundleLimitError, match="gzip bomb"):
        read_archive(data, "bomb.tar.gz")


def test_an_entry_over_the_file_limit_is_refused_from_its_header():
    data = zip_bytes(
        [("skill/SKILL.md", SKILL), ("skill/big.bin", os.urandom(A.MAX_FILE_BYTES + 1))]
    )
    with pytest.raises(BundleLimitError, match=r"big\.bin"):
        read_archive(data, "big.zip")


@pytest.mark.slow
def test_too_many_entries_is_refused():
    entries = [("skill/SKILL.md", SKILL)] + [
        (f"skill/f{i}", b"") for i in range(A.MAX_ARCHIVE_MEMBERS)
    ]
    with pytest.raises(BundleLimitError, match="entries"):
        read_archive(zip_bytes(entries), "many.zip")


def test_too_many_bytes_in_total_is_refused(monkeypatch):
    monkeypatch.setattr(A, "MAX_ARCHIVE_BYTES", 1024 * 1024)
    chunk = os.urandom(600 * 1024)
    data = zip_bytes([("skill/SKILL.md", SKILL), ("skill/a", chunk), ("skill/b", chunk)])
    with pytest.raises(BundleLimitError, match="uncompressed"):
        read_archive(data, "total.zip")


def test_a_skill_over_the_bundle_limits_inside_an_archive_is_refused():
    entries = [("skill/SKILL.md", SKILL)] + [(f"skill/f{i}", b"") for i in range(1000)]
    tree = read_archive(zip_bytes(entries), "many.zip")
    with pytest.raises(BundleLimitError, match="more than 1000 files"):
        bundles_from_tree(tree.entries)


def test_a_duplicate_entry_is_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zipf:
        zipf.writestr("skill/SKILL.md", SKILL)
        with pytest.warns(UserWarning):
            zipf.writestr("skill/SKILL.md", b"the other copy")
    with pytest.raises(UnsafePathError, match="twice"):
        read_archive(buf.getvalue(), "dup.zip")


def test_a_non_utf8_zip_name_is_refused():
    data = zip_bytes([("skill/SKILL.md", SKILL), ("skill/cafX.md", b"x")])
    data = data.replace(b"skill/cafX.md", b"skill/caf\x82.md")  # cp437 e-acute, no UTF-8 flag
    with pytest.raises(UnsafePathError, match="UTF-8"):
        read_archive(data, "latin.zip")


def test_case_clash_inside_an_archive_is_refused():
    tree = read_archive(
        zip_bytes([("s/SKILL.md", SKILL), ("s/A.md", b"1"), ("s/a.md", b"2")]), "case.zip"
    )
    with pytest.raises(UnsafePathError, match="case"):
        bundles_from_tree(tree.entries)


def test_an_encrypted_entry_is_refused():
    data = zip_bytes([("skill/SKILL.md", SKILL), ("skill/secret", b"x")])
    # Set the "encrypted" flag bit in both headers of the second entry.
    i = data.index(b"PK\x03\x04", 4)
    data = data[: i + 6] + b"\x01" + data[i + 7 :]
    c = data.rindex(b"PK\x01\x02")
    data = data[: c + 8] + b"\x01" + data[c + 9 :]
    with pytest.raises(ArchiveError, match="encrypted"):
        read_archive(data, "enc.zip")


def test_a_corrupt_archive_is_an_archive_error(tmp_path):
    with pytest.raises(ArchiveError):
        read_archive(b"PK\x03\x04garbage", "bad.zip")
    with pytest.raises(ArchiveError):
        read_archive(b"\x1f\x8bgarbage", "bad.tar.gz")


def test_nothing_is_written_while_reading(tmp_path, monkeypatch):
    skill = make_skill(tmp_path / "src", "packed", FILES)
    archive = package_skill(skill, tmp_path / "packed.skill")
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    read_archive_file(str(archive))
    with pytest.raises(UnsafePathError):
        read_archive(zip_bytes([("../../evil", b"x")]), "slip.zip")
    assert list(work.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "packed.skill", "src"]
