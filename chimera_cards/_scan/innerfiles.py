"""Files a bundle carries inside other files: the members of a zip, tar or gzip archive (an agent
told to unpack one and run what is inside runs those bytes) and the text a unified diff writes
(``git apply`` makes a patch's added lines part of a file the agent then runs). Each is handed to
the scan as a file of its own, named ``CARRIER/INNER``, so every rule reads it as it would read
the file shipped loose.

Reading is bounded: members past a count, a size or a total are left unread (an archive that
unpacks to gigabytes is refused by its size, never inflated), and an archive inside an archive
is opened to one more level only.
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


@dataclass(frozen=True)
class InnerFile:
    """One file carried inside another: its path (``CARRIER/INNER``), bytes and mode bit."""

    path: str
    data: bytes
    executable: bool


def inner_files(path: str, data: bytes, depth: int = 1) -> list[InnerFile]:
    """The files carried inside one file of a bundle, if it is an archive or a patch.

    Args:
        path: the carrier's path in the bundle.
        data: its bytes.
        depth: how deep this carrier sits (1 for a file of the bundle itself).
    Returns:
        Each inner file (an inner archive's own members after it), or [] for any other file.
    """
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

    try:
        found = _zip_members(path, data) if is_zip else _tar_members(path, data)
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, tarfile.TarError, RuntimeError):
        return []  # a damaged archive carries nothing a reader could run either
    out = list(found)
    if depth < MAX_DEPTH:
        for inner in found:
            out += inner_files(inner.path, inner.data, depth + 1)
    return out


def _zip_members(path: str, data: bytes) -> list[InnerFile]:
    import zipfile

    out: list[InnerFile] = []
    total = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist()[:MAX_MEMBERS]:
            # encrypted members are unreadable here and to an agent without the password
            if info.is_dir() or info.flag_bits & 0x1 or info.file_size > MAX_MEMBER_BYTES:
                continue
            with archive.open(info) as fh:
                body = fh.read(MAX_MEMBER_BYTES + 1)
            total += len(body)
            if len(body) > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
                break
            mode = info.external_attr >> 16
            out.append(InnerFile(f"{path}/{info.filename}", body, bool(mode & 0o111)))
    return out


def _tar_members(path: str, data: bytes) -> list[InnerFile]:
    import gzip
    import tarfile

    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            return _read_tar(path, archive)
    except tarfile.ReadError:
        if data[:2] != b"\x1f\x8b":
            raise
    # a gzip of one file, no tar inside: the file it holds
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
        body = fh.read(MAX_MEMBER_BYTES + 1)
    if len(body) > MAX_MEMBER_BYTES:
        return []
    name = path.rsplit("/", 1)[-1]
    return [InnerFile(f"{path}/{name[:-3] if name.endswith('.gz') else name}", body, False)]


def _read_tar(path: str, archive: tarfile.TarFile) -> list[InnerFile]:
    out: list[InnerFile] = []
    total = 0
    for count, member in enumerate(archive):
        if count >= MAX_MEMBERS:
            break
        if not member.isfile() or member.size > MAX_MEMBER_BYTES:
            continue
        fh = archive.extractfile(member)
        if fh is None:
            continue
        body = fh.read(MAX_MEMBER_BYTES + 1)
        total += len(body)
        if total > MAX_TOTAL_BYTES:
            break
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
