"""The hook's memory of skill folders it found ok, so a repeated call needs no store.

A session loads the same few skills again and again; each call otherwise imports the store,
the trust policy and ``check`` (about three Python start-ups of CPU). After ``check`` calls a
folder ok, the hook writes one line here: the folder, its name and its bundle digest, under a
*fingerprint* of everything the answer depended on — the store file and its write-ahead log
(device, inode, size, modification time), the trust file given (the same), and the clock
(an entry is trusted for ``TTL`` seconds, so an approval that expires is looked at again).
The SessionStart hook writes the folders its check calls ok the same way, so the first skill
call of a session finds them.

A later call re-hashes the folder (always: the bytes are judged on every call) and passes
without the store only when the folder's digest, name and problems-free scan match an entry
under the current fingerprint. Anything else — a new digest, any write to the store (an
approval revoked, a key removed), another trust file, an expired entry, an unreadable memo —
goes to ``check``. Only "ok" is remembered, never a refusal, so the memo can only spare work,
never let through what ``check`` would refuse now. The memo sits beside the store, in the same
folder and trust domain: whoever can write it can write the store.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping

from chimera_cards._bundles.folderscan import hash_folder, records_digest

TTL = 300.0
_SUFFIX = ".hook-memo.json"
_MAX_ENTRIES = 512


def memo_path(store_file: str | os.PathLike) -> str:
    """The memo beside the store (``cards.db`` -> ``cards.db.hook-memo.json``)."""
    return os.fspath(store_file) + _SUFFIX


def _stamp(path: str | os.PathLike | None) -> list:
    if path is None:
        return [None]
    try:
        st = os.stat(path)
    except OSError:
        return [os.fspath(path), None]
    return [os.fspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def fingerprint(store_file: str | os.PathLike, trust_file: str | os.PathLike | None) -> str:
    """What a remembered answer depended on, besides the folder's own bytes."""
    store = os.fspath(store_file)
    return json.dumps([_stamp(store), _stamp(store + "-wal"), _stamp(trust_file)])


def digest_of(folder: str | os.PathLike) -> str | None:
    """The folder's bundle digest now, or None when it is no plain folder of plain files (a
    link, a problem of any kind: only ``check`` may judge those)."""
    if os.path.islink(folder) or not os.path.isdir(folder):
        return None
    files, problems, receipt = hash_folder(folder)
    if problems:
        return None
    digest = records_digest(files)
    if receipt is not None and f'"digest": "{digest}"' not in receipt.decode("utf-8", "replace"):
        return None  # installed as another bundle: check says how it differs
    return digest


def _load(path: str) -> dict:
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(1 << 20))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recall(
    folders: list[tuple[str, str]],
    store_file: str | os.PathLike,
    trust_file: str | os.PathLike | None,
) -> list[str] | None:
    """The digests of ``folders`` when every one is remembered ok now, else None.

    Args:
        folders: (folder path, skill name) of each folder the call reads.
        store_file, trust_file: what the answer must still be based on.
    Returns:
        Their digests (hashed now), or None: ``check`` must answer.
    """
    memo = _load(memo_path(store_file))
    if memo.get("fingerprint") != fingerprint(store_file, trust_file):
        return None
    entries = memo.get("ok")
    if not isinstance(entries, dict):
        return None
    now = time.time()
    digests = []
    for folder, name in folders:
        digest = digest_of(folder)
        if digest is None:
            return None
        until = entries.get(f"{os.path.abspath(folder)}\0{name}\0{digest}")
        if not isinstance(until, (int, float)) or not now < until <= now + TTL:
            return None
        digests.append(digest)
    return digests


def remember_folders(
    folders: list[tuple[str, str]],
    judged: Mapping[str, str | None],
    store_file: str | os.PathLike,
    trust_file: str | os.PathLike | None,
    fingerprint_before: str,
) -> None:
    """``remember`` each (folder, name) that ``check`` just called ok (``judged``: absolute
    folder -> the digest check read), when the folder hashes now to that same digest: bytes
    changed between check's read and this one are never remembered as ok."""
    ok = []
    for folder, name in folders:
        digest = digest_of(folder)
        if digest is not None and digest == judged.get(os.path.abspath(folder)):
            ok.append((folder, name, digest))
    remember(ok, store_file, trust_file, fingerprint_before)


def remember(
    folders: list[tuple[str, str, str]],
    store_file: str | os.PathLike,
    trust_file: str | os.PathLike | None,
    fingerprint_before: str,
) -> None:
    """Record ``folders`` (path, name, digest) as ok, when the store did not change while
    ``check`` read it (``fingerprint_before``); a failure to write is silent (the memo only
    spares work)."""
    if not folders or fingerprint(store_file, trust_file) != fingerprint_before:
        return
    path = memo_path(store_file)
    memo = _load(path)
    entries = memo.get("ok") if memo.get("fingerprint") == fingerprint_before else None
    kept = dict(entries) if isinstance(entries, dict) else {}
    until = time.time() + TTL
    for folder, name, digest in folders:
        kept[f"{os.path.abspath(folder)}\0{name}\0{digest}"] = until
    if len(kept) > _MAX_ENTRIES:
        kept = dict(sorted(kept.items(), key=lambda item: item[1])[-_MAX_ENTRIES:])
    data = json.dumps({"fingerprint": fingerprint_before, "ok": kept}).encode()
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
