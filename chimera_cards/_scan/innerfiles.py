"""Files a bundle carries inside other files: the members of a zip, tar or gzip archive (an agent
told to unpack one and run what is inside runs those bytes) and the text a unified diff writes
(``git apply`` makes a patch's added lines part of a file the agent then runs). Each is handed to
the scan as a file of its own, named ``CARRIER/INNER``, so every rule reads it as it would read
the file shipped loose.

Reading is bounded: members past a count, a size or a total are left unread, and so is what
lies past ``MAX_INFLATED_BYTES`` of a compressed stream (skipping a member of a compressed tar
still inflates it: a 600 KB xz holding a 4 GiB member took 9 s of CPU). What is left unread is
reported (``Carried.unread``), so the scan can say a reviewer has not seen all of it; an archive
inside an archive is opened to one more level only.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tarfile

MAX_MEMBERS = 500
MAX_MEMBER_BYTES = 2 * 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 2
MAX_INFLATED_BYTES = 64 * 1024 * 1024


class _Unread(Exception):
    """Reading stopped at a limit: what is past it was not read."""


@dataclass(frozen=True)
class InnerFile:
    """One file carried inside another: its path (``CARRIER/INNER``), bytes and mode bit."""

    path: str
    data: bytes
    executable: bool


@dataclass(frozen=True)
class Carried:
    """What one file carries: the files read, and why any rest was not read."""

    files: list[InnerFile]
    unread: tuple[str, ...] = ()


def carried_files(path: str, data: bytes, depth: int = 1) -> Carried:
    """``inner_files`` and what a limit left unread, each with why (empty: all read)."""
    unread: list[str] = []
    files = _inner(path, data, depth, unread)
    return Carried(files, tuple(unread))


def inner_files(path: str, data: bytes, depth: int = 1) -> list[InnerFile]:
    """The files carried inside one file of a bundle, if it is an archive or a patch.

    Args:
        path: the carrier's path in the bundle.
        data: its bytes.
        depth: how deep this carrier sits (1 for a file of the bundle itself).
    Returns:
        Each inner file (an inner archive's own members after it), or [] for any other file.
    """
    return _inner(path, data, depth, [])


def _inner(path: str, data: bytes, depth: int, unread: list[str]) -> list[InnerFile]:
    is_zip = data[:4] == b"PK\x03\x04"
    is_tar = (
        data[:2] == b"\x1f\x8b"
        or data[257:262] == b"ustar"
        or data[:3] == b"BZh"
        or (data[:6] == b"\xfd7zXZ\x00")
    )
    if not (is_zip or is_tar):
        return _patched_files(path, data)
    # Imported here: most bundles carry no archive, and a folder import loads no archive code.
    import tarfile
    import zipfile

    found: list[InnerFile] = []
    try:
        if is_zip:
            _zip_members(path, data, found, unread)
        else:
            _tar_members(path, data, found, unread)
    except _Unread as stop:
        unread.append(f"{path}: {stop}")
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, tarfile.TarError, RuntimeError):
        # damaged past what was read: a reader could not run the rest either
        pass
    out = list(found)
    for inner in found:
        if depth < MAX_DEPTH:
            out += _inner(inner.path, inner.data, depth + 1, unread)
        elif _is_archive(inner.data):
            unread.append(f"{inner.path}: an archive nested deeper than {MAX_DEPTH} levels")
    return out


def _is_archive(data: bytes) -> bool:
    return data[:4] == b"PK\x03\x04" or data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar"


def _zip_members(path: str, data: bytes, out: list[InnerFile], notes: list[str]) -> list[InnerFile]:
    import zipfile

    total = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        for info in infos[:MAX_MEMBERS]:
            if info.is_dir():
                continue
            if info.flag_bits & 0x1:
                # unreadable here, and to an agent without the password
                notes.append(f"{path}: an encrypted member ({info.filename})")
                continue
            if info.file_size > MAX_MEMBER_BYTES:
                notes.append(f"{path}: a member over {MAX_MEMBER_BYTES} bytes ({info.filename})")
                continue
            with archive.open(info) as fh:
                body = fh.read(MAX_MEMBER_BYTES + 1)
            total += len(body)
            if len(body) > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
                raise _Unread(f"members past {MAX_TOTAL_BYTES} bytes in all")
            mode = info.external_attr >> 16
            out.append(InnerFile(f"{path}/{info.filename}", body, bool(mode & 0o111)))
        if len(infos) > MAX_MEMBERS:
            raise _Unread(f"more than {MAX_MEMBERS} members")
    return out


class _Inflated(io.RawIOBase):
    """A compressed stream's bytes, read through once, refused past ``MAX_INFLATED_BYTES``."""

    def __init__(self, source: io.BufferedIOBase) -> None:
        self._source = source
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        chunk = self._source.read(len(buffer))
        self._read += len(chunk)
        if self._read > MAX_INFLATED_BYTES:
            raise _Unread(f"inflates past {MAX_INFLATED_BYTES} bytes")
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _decompressed(data: bytes) -> io.BufferedIOBase:
    raw = io.BytesIO(data)
    if data[:2] == b"\x1f\x8b":
        import gzip

        return gzip.GzipFile(fileobj=raw)
    if data[:3] == b"BZh":
        import bz2

        return bz2.BZ2File(raw)
    if data[:6] == b"\xfd7zXZ\x00":
        import lzma

        return lzma.LZMAFile(raw)
    return raw


def _tar_members(path: str, data: bytes, out: list[InnerFile], notes: list[str]) -> list[InnerFile]:
    import tarfile

    stream = io.BufferedReader(_Inflated(_decompressed(data)))
    try:
        # Streamed: each member is inflated once, in order, and never more than the limit.
        with tarfile.open(fileobj=stream, mode="r|") as archive:
            return _read_tar(path, archive, out, notes)
    except tarfile.ReadError:
        if data[:2] != b"\x1f\x8b" or out:
            raise
    # a gzip of one file, no tar inside: the file it holds
    stream = io.BufferedReader(_Inflated(_decompressed(data)))
    body = stream.read(MAX_MEMBER_BYTES + 1)
    if len(body) > MAX_MEMBER_BYTES:
        raise _Unread(f"holds more than {MAX_MEMBER_BYTES} bytes")
    name = path.rsplit("/", 1)[-1]
    out.append(InnerFile(f"{path}/{name[:-3] if name.endswith('.gz') else name}", body, False))
    return out


def _read_tar(
    path: str, archive: tarfile.TarFile, out: list[InnerFile], notes: list[str]
) -> list[InnerFile]:
    total = 0
    for count, member in enumerate(archive):
        if count >= MAX_MEMBERS:
            raise _Unread(f"more than {MAX_MEMBERS} members")
        if not member.isfile():
            continue
        if member.size > MAX_MEMBER_BYTES:
            # skipped, still inflated on the way past it (bounded by MAX_INFLATED_BYTES)
            notes.append(f"{path}: a member over {MAX_MEMBER_BYTES} bytes ({member.name})")
            continue
        fh = archive.extractfile(member)
        if fh is None:
            continue
        body = fh.read(MAX_MEMBER_BYTES + 1)
        total += len(body)
        if total > MAX_TOTAL_BYTES:
            raise _Unread(f"members past {MAX_TOTAL_BYTES} bytes in all")
        out.append(InnerFile(f"{path}/{member.name}", body, bool(member.mode & 0o111)))
    return out


_TARGET_RE = re.compile(r"^\+\+\+ (?:[ab]/)?(\S+)")
_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _patched_files(path: str, data: bytes) -> list[InnerFile]:
    """A unified diff's files as the patch leaves them: each hunk's context and added lines
    (removed lines gone), one inner file per target."""
    if b"\n+++ " not in data or b"\n@@ " not in data:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    targets: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_hunk = False
    for line in text.split("\n"):
        target = _TARGET_RE.match(line)
        if target:
            current = None if target.group(1) == "/dev/null" else []
            if current is not None:
                current = targets.setdefault(target.group(1), [])
            in_hunk = False
        elif _HUNK_RE.match(line):
            in_hunk = current is not None
        elif in_hunk and current is not None and line[:1] in (" ", "+"):
            current.append(line[1:])
        elif in_hunk and not line.startswith(("-", "\\")):
            in_hunk = False
    return [
        InnerFile(f"{path}/{target}", "\n".join(lines).encode("utf-8") + b"\n", False)
        for target, lines in targets.items()
        if lines
    ]
