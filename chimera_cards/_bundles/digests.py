"""The digests other tools give one skill folder, beside ours, and how a pin names which it is.

Three digests are in use for a skill's files (docs/bundles.md defines each, with a stand-alone
script per digest):

``bundle`` (ours)
    SHA-256 hex of the bundle manifest (``bundle.bundle_digest``): mode, size and SHA-256 of every
    file, VCS metadata and OS litter left out.
``npx`` (the ``computedHash`` that ``npx skills`` writes into ``skills-lock.json``)
    SHA-256 hex over each regular file's relative path followed by its bytes, no separators,
    files ordered as JavaScript's ``localeCompare`` orders their paths (ICU root collation);
    folders named ``.git`` or ``node_modules`` are skipped at any depth, nothing else is.
``skill_digest`` (proposed for the Agent Skills specification)
    ``sha256-`` + unpadded base64url of SHA-256 over, per regular file in path-byte order,
    ``path, 0x00, SHA-256(bytes) (32 raw bytes), 0x0A``; ``SKILL.sig`` and ``.git/`` at the top
    are left out.

A digest is written with the prefix of its kind (``bundle:``, ``npx:``, ``skill_digest:``); a
bare 64-hex value is ours, a bare ``sha256-...`` value is a ``skill_digest`` (its own spelling).
The functions here are pure over ``(path, bytes)`` pairs, plus one folder walker per tool that
reads what that tool would read, so a folder can be checked against the tool's own record.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from chimera_cards.errors import UsageError

BUNDLE = "bundle"
NPX = "npx"
SKILL_DIGEST = "skill_digest"
DIGEST_KINDS = (BUNDLE, NPX, SKILL_DIGEST)

# npx skips these folders wherever they are when it hashes a skill (and nothing else).
_NPX_SKIPPED_DIRS = frozenset({".git", "node_modules"})
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SKILL_DIGEST = re.compile(r"sha256-[A-Za-z0-9_-]{43}")

# The printable ASCII characters in the order ICU's root collation gives them (what Node's
# String.prototype.localeCompare uses whatever the locale variables say): punctuation and symbols
# first, then digits, then letters with each lower case letter just before its capital. Read off
# Node 24 once (sorting every printable ASCII character with localeCompare).
_ROOT_ORDER = (
    " ", "_", "-", ",", ";", ":", "!", "?", ".", "'", '"', "(", ")", "[", "]", "{", "}", "@",
    "*", "/", "\\", "&", "#", "%", "`", "^", "+", "<", "=", ">", "|", "~", "$",
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
)  # fmt: skip
_PRIMARY = {ch: i for i, ch in enumerate(_ROOT_ORDER)}
for _i, _letter in enumerate("abcdefghijklmnopqrstuvwxyz"):
    _PRIMARY[_letter] = _PRIMARY[_letter.upper()] = len(_ROOT_ORDER) + _i
_LETTERS_END = len(_ROOT_ORDER) + 26


class UnknownDigestError(UsageError):
    """A digest whose kind cannot be told from its prefix or shape (exit 2)."""


@dataclass(frozen=True)
class DigestPin:
    """A digest as given on the command line: its kind and its value (without the prefix)."""

    kind: str  # one of DIGEST_KINDS
    value: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"


def parse_digest(text: str, option: str = "--digest") -> DigestPin:
    """Tell which digest ``text`` is.

    Args:
        text: ``digest:HEX`` (or ``bundle:HEX``), ``npx:HEX``, ``skill_digest:sha256-B64`` or a
            bare ``HEX`` (ours)
            or bare ``sha256-B64`` (a skill_digest); hex is case-insensitive.
        option: the option's name, for the error.
    Returns:
        The pin.
    Raises:
        UnknownDigestError: an unknown prefix or a value of the wrong shape.
    """
    raw = text.strip()
    kind, sep, value = raw.partition(":")
    if not sep:
        kind, value = (SKILL_DIGEST if raw.startswith("sha256-") else BUNDLE), raw
    kind = kind.lower()
    if kind in ("sha256", "digest"):  # "sha256:HEX" is how several tools spell a SHA-256;
        # "digest:HEX" is how `hash` and `lock` print ours
        kind = BUNDLE
    if kind not in DIGEST_KINDS:
        raise UnknownDigestError(
            f"{option}: unknown digest kind {kind!r}; name one of: "
            + ", ".join(f"{k}:" for k in DIGEST_KINDS)
        )
    if kind == SKILL_DIGEST:
        if not _SKILL_DIGEST.fullmatch(value):
            raise UnknownDigestError(f"{option}: a skill_digest is sha256- and 43 base64url chars")
        return DigestPin(kind, value)
    value = value.lower()
    if not _HEX64.fullmatch(value):
        raise UnknownDigestError(f"{option}: a {kind} digest is 64 hex digits")
    return DigestPin(kind, value)


def collation_key(path: str) -> tuple:
    """A sort key ordering paths as Node's ``localeCompare`` does (ICU root collation).

    Exact for printable ASCII (every skill path we have met); other characters are ordered
    after the letters by their accent-stripped form, an approximation of the full collation.

    Args:
        path: a relative POSIX path.
    Returns:
        (primary weights, accent weights, case weights): compared level by level, as ICU does.
    """
    primary, secondary, tertiary = [], [], []
    for ch in path:
        weight = _PRIMARY.get(ch)
        if weight is not None:
            primary.append(weight)
            secondary.append(0)
            tertiary.append(1 if ch.isupper() else 0)
            continue
        base = unicodedata.normalize("NFD", ch)
        letter = base[0].lower()
        primary.append(_PRIMARY.get(letter, _LETTERS_END + ord(letter)))
        secondary.append(len(base) - 1)
        tertiary.append(1 if ch.isupper() else 0)
    return tuple(primary), tuple(secondary), tuple(tertiary), path


def npx_hash(files: Iterable[tuple[str, bytes]]) -> str:
    """npx's ``computedHash`` of a skill's files.

    Args:
        files: (relative POSIX path, bytes) of every file npx would read (see
            ``npx_folder_files``; a bundle's files are those of its folder less what we ignore).
    Returns:
        64 lowercase hex digits.
    """
    digest = hashlib.sha256()
    for path, data in sorted(files, key=lambda item: collation_key(item[0])):
        digest.update(path.encode("utf-8"))
        digest.update(data)
    return digest.hexdigest()


def skill_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """The proposed Agent Skills ``skill_digest`` of a skill's files.

    Args:
        files: (relative POSIX path, bytes) of the skill's regular files (``SKILL.sig`` and
            anything under ``.git/`` at the top are left out here).
    Returns:
        ``sha256-`` and 43 base64url characters.
    """
    kept = [
        (path.encode("utf-8"), data)
        for path, data in files
        if path != "SKILL.sig" and not (path == ".git" or path.startswith(".git/"))
    ]
    digest = hashlib.sha256()
    for path, data in sorted(kept):
        digest.update(path + b"\x00" + hashlib.sha256(data).digest() + b"\n")
    return "sha256-" + base64.urlsafe_b64encode(digest.digest()).decode("ascii").rstrip("=")


def _walk_regular(folder: str | os.PathLike, skip_dir) -> list[tuple[str, bytes]]:
    """(path, bytes) of every regular file under ``folder``, never following a link; folders
    for which ``skip_dir(name, rel)`` is true are not entered."""
    found: list[tuple[str, bytes]] = []
    stack = [(os.fspath(folder), "")]
    while stack:
        directory, prefix = stack.pop()
        with os.scandir(directory) as it:
            entries = list(it)
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if not skip_dir(entry.name, rel):
                    stack.append((entry.path, rel + "/"))
            elif entry.is_file(follow_symlinks=False):
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        continue
                    with os.fdopen(os.dup(fd), "rb") as handle:
                        found.append((rel, handle.read()))
                finally:
                    os.close(fd)
    return found


def npx_folder_files(folder: str | os.PathLike) -> list[tuple[str, bytes]]:
    """The files npx hashes in a skill folder: every regular file (links are not files to it),
    folders named ``.git`` or ``node_modules`` skipped at any depth.

    Raises:
        OSError: the folder cannot be read.
    """
    return _walk_regular(folder, lambda name, _rel: name in _NPX_SKIPPED_DIRS)


def spec_folder_files(folder: str | os.PathLike) -> list[tuple[str, bytes]]:
    """The files the proposed ``skill_digest`` covers in a folder (``.git/`` at the top is not
    entered; ``skill_digest`` drops ``SKILL.sig``).

    Raises:
        OSError: the folder cannot be read.
    """
    return _walk_regular(folder, lambda _name, rel: rel == ".git")


# What npx skills 1.7.4 leaves out when it copies a skill into an agent's folder, though its
# computedHash covered the source with them (vercel-labs/skills#806): files of this name at any
# depth, and folders of these names.
NPX_COPY_SKIPPED_FILES = frozenset({"metadata.json"})
NPX_COPY_SKIPPED_DIRS = frozenset({".git", "__pycache__", "__pypackages__"})


def npx_copied(files: Iterable[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The files of a skill's source that ``npx skills add`` writes into the installed copy.

    Args:
        files: (relative POSIX path, bytes) of the source folder, as npx hashes it.
    Returns:
        Those npx copies: a ``metadata.json`` anywhere and anything under ``.git``,
        ``__pycache__`` or ``__pypackages__`` is left out.
    """
    out = []
    for path, data in files:
        parts = path.split("/")
        if parts[-1] in NPX_COPY_SKIPPED_FILES or any(
            p in NPX_COPY_SKIPPED_DIRS for p in parts[:-1]
        ):
            continue
        out.append((path, data))
    return out


def npx_hash_folder(folder: str | os.PathLike, *, leave_out: Iterable[str] = ()) -> str:
    """``npx_hash`` of a folder as npx reads it (``npx_folder_files``), less the top-level
    files named in ``leave_out`` (install's receipt, which npx never saw)."""
    skip = frozenset(leave_out)
    return npx_hash(f for f in npx_folder_files(folder) if f[0] not in skip)


def skill_digest_folder(folder: str | os.PathLike) -> str:
    """``skill_digest`` of a folder (``spec_folder_files``)."""
    return skill_digest(spec_folder_files(folder))
