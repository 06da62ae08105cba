"""The trust file: a team's reviewer keys and threshold as text kept in git beside the lockfile.

A store's trust list lives in its SQLite file, one per machine. A team that shares skills through
a git repository also shares who may approve them, so the list is written down as a file that is
reviewed like code::

    # chimera-cards trust file
    threshold 1
    alice ed25519 <base64 public key>

One ``threshold K`` line (default 1) and one ``NAME ed25519 BASE64`` line per reviewer, ``#``
comments and blank lines ignored. Optionally one ``expires DURATION`` line (``90d``): how long each
new approval holds unless the reviewer says otherwise (signed into the approval); and one ``head
SEQ HEX`` line, written by ``trust export``: the audit head of the store it was exported from, so
the team's git history anchors that log (``verify --expect-head HEX``). ``apply_trust_file`` makes
a store's trust list equal to the file (adding, then re-thresholding, then removing keys), so
removing a key from the file and applying it again withdraws that reviewer's approvals on that
machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards._trust.freshness import parse_duration
from chimera_cards._trust.keys import PublicKey, check_key_name, parse_public_key
from chimera_cards._trust.policy import TrustedKey
from chimera_cards._util.atomic import write_atomic
from chimera_cards._util.integrity import is_hex
from chimera_cards.errors import ChimeraError, UsageError

HEADER = (
    "# chimera-cards trust file: reviewers whose approvals count, and how many must approve.\n"
    "# One 'threshold K' line; one 'NAME ed25519 BASE64' line per reviewer.\n"
)
MAX_TRUST_FILE_BYTES = 1024 * 1024


class TrustFileError(UsageError):
    """A trust file that cannot be read or parsed (exit 2, naming the line)."""


@dataclass
class TrustFile:
    """A trust file's keys and how many of them must approve."""

    threshold: int = 1
    keys: dict[str, PublicKey] = field(default_factory=dict)
    expires: str | None = None  # default lifetime of a new approval ("90d"), None: no expiry
    head: tuple[int, str] | None = None  # (seq, hash) of the exporting store's newest audit entry

    def trusted_keys(self) -> list[TrustedKey]:
        return [TrustedKey(name, key) for name, key in self.keys.items()]

    def to_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "keys": [
                {"name": n, "keyid": k.keyid, "public_key": k.text()} for n, k in self.keys.items()
            ],
            "expires": self.expires,
            "head": {"seq": self.head[0], "head": self.head[1]} if self.head else None,
        }


def parse_trust_file(text: str, *, source: str = "trust file") -> TrustFile:
    """Parse trust-file text.

    Args:
        text: the file's text.
        source: what to name in error messages.
    Returns:
        The TrustFile.
    Raises:
        TrustFileError: a malformed line, a name or key listed twice, a bad threshold.
    """
    result = TrustFile()
    seen_threshold = False
    keyids: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split()
        where = f"{source}: line {number}"
        if parts[0] == "threshold":
            if seen_threshold or len(parts) != 2 or not parts[1].isdigit() or int(parts[1]) < 1:
                raise TrustFileError(f"{where}: expected one 'threshold K' with K >= 1")
            result.threshold, seen_threshold = int(parts[1]), True
            continue
        if parts[0] == "expires" and len(parts) == 2:
            if result.expires is not None:
                raise TrustFileError(f"{where}: 'expires' is given twice")
            try:
                parse_duration(parts[1])
            except UsageError as exc:
                raise TrustFileError(f"{where}: {exc}") from None
            result.expires = parts[1]
            continue
        if parts[0] == "head" and len(parts) == 3 and parts[1].isdigit():
            if result.head is not None or not is_hex(parts[2], 64):
                raise TrustFileError(f"{where}: expected one 'head SEQ HEX' (64 hex digits)")
            result.head = (int(parts[1]), parts[2].lower())
            continue
        if len(parts) != 3:
            raise TrustFileError(f"{where}: expected 'NAME ed25519 BASE64', got {stripped[:80]!r}")
        name = parts[0]
        try:
            check_key_name(name)
            key = parse_public_key(" ".join(parts[1:]))
        except ChimeraError as exc:  # a bad key is bad input here: exit 2 with the line
            raise TrustFileError(f"{where}: {exc}") from None
        if name in result.keys:
            raise TrustFileError(f"{where}: {name} is listed twice")
        if key.keyid in keyids:
            raise TrustFileError(f"{where}: the same key is already listed as {keyids[key.keyid]}")
        result.keys[name] = key
        keyids[key.keyid] = name
    return result


def read_trust_file(path: str | os.PathLike) -> TrustFile:
    """Read and parse a trust file; raises TrustFileError when it is missing or malformed."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TrustFileError(f"{path}: cannot read trust file ({exc.strerror})") from None
    if len(data) > MAX_TRUST_FILE_BYTES:
        raise TrustFileError(f"{path}: larger than {MAX_TRUST_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TrustFileError(f"{path}: not UTF-8 text") from None
    return parse_trust_file(text, source=str(path))


def format_trust_file(trust: TrustFile) -> str:
    """The file's text: threshold, default expiry, keys by name, then the anchored head."""
    lines = [HEADER, f"threshold {trust.threshold}\n"]
    if trust.expires:
        lines.append(f"expires {trust.expires}\n")
    lines += [f"{name} {trust.keys[name].text()}\n" for name in sorted(trust.keys)]
    if trust.head is not None:
        lines.append(
            "# The exporting store's audit head: `chimera-cards verify --expect-head HEX` there\n"
            "# fails if the log was later cut back past it.\n"
            f"head {trust.head[0]} {trust.head[1]}\n"
        )
    return "".join(lines)


def write_trust_file(path: str | os.PathLike, trust: TrustFile) -> None:
    """Write the trust file atomically."""
    write_atomic(Path(path), format_trust_file(trust).encode("utf-8"))


def store_trust_file(store) -> TrustFile:
    """The store's trust list, threshold, default expiry and audit head as a TrustFile (for
    ``trust export``)."""
    # Markdown, lint, codescan: not for reading a trust file
    from chimera_cards._review.decisions import default_expiry, trust_status

    with store.snapshot():
        keys, threshold = trust_status(store)
        anchor = store.audit_anchor()
        expires = default_expiry(store)
    head = (anchor.seq, anchor.head) if anchor.seq else None
    return TrustFile(threshold, {k.name: k.public for k in keys}, expires, head)


def apply_trust_file(store, trust: TrustFile) -> list:
    """Make the store's trust list, threshold and default expiry equal to ``trust``.

    Keys are added first and removed last, so a key that stays is never briefly missing (which
    would send the versions it approved back to pending and then forward again).

    Args:
        store: an open Store.
        trust: the parsed file.
    Returns:
        The status changes the new policy caused (``review.Change``).
    Raises:
        ChimeraError: a name in the file is trusted in the store with a different key.
    """
    from chimera_cards._review import decisions as review

    current = store_trust_file(store)
    changes: list = []
    for name, key in trust.keys.items():
        had = current.keys.get(name)
        if had is not None and had != key:
            _, more = review.remove_trust(store, name)
            changes += more
            had = None
        if had is None:
            _, more = review.add_trust(store, name, key)
            changes += more
    if current.threshold != trust.threshold:
        changes += review.set_threshold(store, trust.threshold)
    if current.expires != trust.expires:
        review.set_default_expiry(store, trust.expires)
    for name in current.keys:
        if name not in trust.keys:
            _, more = review.remove_trust(store, name)
            changes += more
    return changes
