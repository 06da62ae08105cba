"""Read a skill archive (``.zip``, ``.skill``, ``.tar.gz``/``.tgz``/``.tar``) into memory, safely.

An archive is untrusted input and is never extracted to disk: this reader checks every entry's
header first, then inflates the regular files into memory with hard bounds, and the caller turns
the result into bundles (``bundle.bundles_from_tree``), which apply the folder rules again. So
nothing is written, anywhere, until the whole archive has passed. Refused, naming the entry:

- a path that is absolute, climbs out with ``..``, holds a backslash or control character, is not
  UTF-8, or appears twice (zip-slip and "which copy wins" tricks) -> ``UnsafePathError``;
- a symlink or hard-link entry -> ``LinkError``; a device or FIFO entry -> ``SpecialFileError``;
- more than ``MAX_ARCHIVE_MEMBERS`` entries, more than ``MAX_ARCHIVE_BYTES`` uncompressed, one
  file over ``bundle.MAX_FILE_BYTES``, or a compression ratio over ``MAX_RATIO`` (a zip bomb) ->
  ``BundleLimitError``; encrypted or otherwise unreadable entries -> ``ArchiveError``.

A ``.skill`` file is what skill-creator's ``package_skill.py`` writes: a zip whose entries are
``<skill-name>/<path>``, with Unix modes (so the executable bit survives) in the external
attributes.
"""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass

from chimera_cards._bundles.bundle import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    BundleError,
    BundleLimitError,
    LinkError,
    SpecialFileError,
    UnsafePathError,
    check_path,
)

# An archive may hold a collection of skills; each skill is then held to the bundle limits.
MAX_ARCHIVE_MEMBERS = 10 * MAX_FILES
MAX_ARCHIVE_BYTES = 5 * MAX_TOTAL_BYTES
# Deflate tops out near 1000:1 on runs of one byte; real text and code stay far below 100:1.
# Small entries are exempt (a few KiB of spaces can legitimately compress that well).
MAX_RATIO = 100
RATIO_FLOOR_BYTES = 1024 * 1024
ARCHIVE_SUFFIXES = (".zip", ".skill", ".tar.gz", ".tgz", ".tar")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP_MAGIC = b"\x1f\x8b"


class ArchiveError(BundleError):
    """An archive that cannot be read: corrupt, encrypted, or not an archive at all."""


@dataclass(frozen=True)
class ArchiveTree:
    """Every regular file of an archive: path -> (exact bytes, executable). Directories are
    implied by the paths; nothing else (links, devices) ever gets this far."""

    entries: dict[str, tuple[bytes, bool]]
    kind: str  # "zip" | "tar" | "tar.gz"


def archive_kind(name: str, head: bytes = b"") -> str | None:
    """What kind of archive ``name`` (a file name or URL path) is, by suffix, else by magic bytes.

    Args:
        name: the file name or URL.
        head: the first bytes, if known.
    Returns:
        "zip", "tar.gz" or "tar", or None when it is not an archive this reader takes.
    """
    lower = name.lower().split("?", 1)[0].split("#", 1)[0]
    if lower.endswith((".zip", ".skill")):
        return "zip"
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if lower.endswith(".tar"):
        return "tar"
    if head.startswith(_ZIP_MAGIC):
        return "zip"
    if head.startswith(_GZIP_MAGIC):
        return "tar.gz"
    return None


class _Budget:
    """Counts members and inflated bytes across a whole archive."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.members = 0
        self.bytes = 0

    def member(self) -> None:
        self.members += 1
        if self.members > MAX_ARCHIVE_MEMBERS:
            raise BundleLimitError(f"{self.where}: more than {MAX_ARCHIVE_MEMBERS} entries")

    def add(self, path: str, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise BundleLimitError(
                f"{self.where}: {path} is {size} bytes; one file may hold at most {MAX_FILE_BYTES}"
            )
        self.bytes += size
        if self.bytes > MAX_ARCHIVE_BYTES:
            raise BundleLimitError(
                f"{self.where}: more than {MAX_ARCHIVE_BYTES} bytes uncompressed"
            )


def _entry_path(name: str, where: str) -> str:
    """The entry's path with one trailing '/' (a folder entry) removed, checked as a bundle path."""
    path = name[:-1] if name.endswith("/") else name
    try:
        check_path(path)
    except UnsafePathError as exc:
        raise UnsafePathError(f"{where}: entry {exc}") from None
    return path


def _zip_name(info: zipfile.ZipInfo, where: str) -> str:
    # Without the UTF-8 flag zipfile decodes names as cp437; many packers write UTF-8 anyway, so
    # take the raw bytes back and require them to be UTF-8 (anything else is ambiguous).
    if info.flag_bits & 0x800:
        return info.filename
    try:
        raw = info.filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UnsafePathError(f"{where}: entry name {raw!r} is not valid UTF-8") from None


def _read_zip(data: bytes, where: str) -> dict[str, tuple[bytes, bool]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise ArchiveError(f"{where}: not a readable zip archive ({exc})") from None
    budget = _Budget(where)
    seen: set[str] = set()
    plan: list[tuple[zipfile.ZipInfo, str, bool]] = []
    # Pass 1, headers only: every refusal is decided before any entry is inflated.
    for info in infos:
        budget.member()
        name = _zip_name(info, where)
        path = _entry_path(name, where)
        if path in seen:
            raise UnsafePathError(f"{where}: entry {path!r} appears twice")
        seen.add(path)
        mode = (info.external_attr >> 16) & 0xFFFF if info.create_system == 3 else 0
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise LinkError(f"{where}: entry {path!r} is a symlink")
        if kind in (stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK):
            raise SpecialFileError(f"{where}: entry {path!r} is a device, FIFO or socket")
        if info.is_dir() or kind == stat.S_IFDIR:
            continue
        if info.flag_bits & 0x1:
            raise ArchiveError(f"{where}: entry {path!r} is encrypted")
        budget.add(path, info.file_size)
        if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(
            info.compress_size, 1
        ):
            raise BundleLimitError(
                f"{where}: entry {path!r} inflates {info.compress_size} bytes to "
                f"{info.file_size} (over {MAX_RATIO}:1; a zip bomb?)"
            )
        plan.append((info, path, bool(mode & stat.S_IXUSR)))
    entries: dict[str, tuple[bytes, bool]] = {}
    for info, path, executable in plan:
        try:
            with archive.open(info) as handle:
                # zipfile stops at the declared size and checks the CRC: a header that lies
                # about the size cannot inflate more than what the budget above allowed.
                content = handle.read(info.file_size + 1)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError) as exc:
            raise ArchiveError(f"{where}: entry {path!r} cannot be read ({exc})") from None
        if len(content) != info.file_size:
            raise ArchiveError(f"{where}: entry {path!r} is not the size its header says")
        entries[path] = (content, executable)
    return entries


def _gunzip(data: bytes, where: str) -> bytes:
    """Inflate a gzip stream, refusing more than the archive budget or an absurd ratio."""
    limit = MAX_ARCHIVE_BYTES + MAX_ARCHIVE_MEMBERS * 2048  # room for tar headers and padding
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
            out = handle.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ArchiveError(f"{where}: not a readable gzip stream ({exc})") from None
    if len(out) > limit:
        raise BundleLimitError(f"{where}: inflates to more than {limit} bytes")
    if len(out) > RATIO_FLOOR_BYTES and len(out) > MAX_RATIO * max(len(data), 1):
        raise BundleLimitError(
            f"{where}: inflates {len(data)} bytes to {len(out)} (over {MAX_RATIO}:1; a gzip bomb?)"
        )
    return out


def _read_tar(data: bytes, where: str) -> dict[str, tuple[bytes, bool]]:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            budget = _Budget(where)
            members = []
            for member in archive:
                budget.member()
                members.append(member)
            plan = _plan_tar(members, budget, where)
            entries: dict[str, tuple[bytes, bool]] = {}
            for member, path, executable in plan:
                handle = archive.extractfile(member)
                content = handle.read() if handle is not None else b""
                if len(content) != member.size:
                    raise ArchiveError(f"{where}: entry {path!r} is truncated")
                entries[path] = (content, executable)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"{where}: not a readable tar archive ({exc})") from None
    return entries


def _plan_tar(
    members: list[tarfile.TarInfo], budget: _Budget, where: str
) -> list[tuple[tarfile.TarInfo, str, bool]]:
    """Headers only: every refusal is decided before any member's bytes are read."""
    seen: set[str] = set()
    plan: list[tuple[tarfile.TarInfo, str, bool]] = []
    for member in members:
        path = _entry_path(member.name, where)
        if path in seen:
            raise UnsafePathError(f"{where}: entry {path!r} appears twice")
        seen.add(path)
        if member.issym() or member.islnk():
            raise LinkError(f"{where}: entry {path!r} is a link (to {member.linkname!r})")
        if member.isdev():
            raise SpecialFileError(f"{where}: entry {path!r} is a device or FIFO")
        if member.isdir():
            continue
        if not member.isreg():
            raise ArchiveError(f"{where}: entry {path!r} is not a regular file")
        budget.add(path, member.size)
        plan.append((member, path, bool(member.mode & stat.S_IXUSR)))
    return plan


def read_archive(data: bytes, name: str, *, where: str | None = None) -> ArchiveTree:
    """Read an archive's bytes into an ArchiveTree, refusing anything unsafe before inflating.

    Args:
        data: the archive's bytes.
        name: its file name or URL (the suffix decides the kind; magic bytes if there is none).
        where: what to call it in error messages (default ``name``).
    Returns:
        The archive's regular files, in memory.
    Raises:
        UnsafePathError, LinkError, SpecialFileError, BundleLimitError, ArchiveError.
    """
    where = where or name
    kind = archive_kind(name, data[:4])
    if kind == "zip":
        return ArchiveTree(_read_zip(data, where), kind)
    if kind == "tar.gz":
        return ArchiveTree(_read_tar(_gunzip(data, where), where), kind)
    if kind == "tar":
        return ArchiveTree(_read_tar(data, where), kind)
    raise ArchiveError(f"{where}: not a .zip, .skill, .tar.gz or .tar archive")


def read_archive_file(path: str) -> ArchiveTree:
    """``read_archive`` on a file, refusing a compressed file larger than the archive budget.

    Args:
        path: the archive on disk.
    Returns:
        The archive's regular files, in memory.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_ARCHIVE_BYTES + 1)
    except OSError as exc:
        raise ArchiveError(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_ARCHIVE_BYTES:
        raise BundleLimitError(f"{path}: archive is larger than {MAX_ARCHIVE_BYTES} bytes")
    return read_archive(data, path)
