"""Which stored version a reviewer means by the number they typed.

One hash story: a version's identity is its **bundle digest** (``review`` prints it as
``sha256:``, ``list`` shows its first 12 digits, statements and the lockfile bind it). A reviewer
may give it whole, or as a unique prefix of at least ``MIN_PREFIX`` hex digits. A version whose
bundle is exactly one ``SKILL.md`` may also be named by that file's SHA-256 — the number card
pages publish — while the signed statement still binds the bundle digest. For a larger bundle
that file hash is refused with a line saying what the number is and what to pass instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from chimera_cards._util.integrity import is_hex
from chimera_cards.errors import UnknownCardError, UnknownVersionError, UsageError

MIN_PREFIX = 12  # the short form import, list and install print
SKILL_FILE = "SKILL.md"


class AmbiguousDigestError(UsageError):
    """A prefix that more than one stored version starts with."""


class FileHashNotBundleError(UnknownVersionError):
    """The SHA-256 of a SKILL.md in a bundle of several files, given where the bundle is meant."""


@dataclass(frozen=True)
class VersionRef:
    """The version a typed number names, and how it named it."""

    sha256: str  # the version's identity (its bundle digest), 64 hex digits
    matched: str  # "digest" (whole or prefix) or "skill-sha256" (a one-file bundle's SKILL.md)

    def to_dict(self) -> dict:
        return {"sha256": self.sha256, "matched": self.matched}


def _clean(value: str, option: str) -> str:
    text = value.strip().lower()
    for label in ("sha256:", "digest:"):
        if text.startswith(label):
            text = text[len(label) :]
    text = text.rstrip("…").rstrip(".")
    if not text or not is_hex(text) or len(text) > 64:
        raise UsageError(f"{option} must be hex digits (a digest or its first {MIN_PREFIX}+)")
    if len(text) < MIN_PREFIX:
        raise UsageError(
            f"{option} {text}: give at least {MIN_PREFIX} hex digits (as `chimera-cards list` "
            "prints them) or the whole digest"
        )
    return text


def resolve_version(
    store, name: str, value: str, *, option: str = "--digest", verb: str = "approve"
):
    """The version of ``name`` that ``value`` names.

    Args:
        store: the open store (read inside the caller's transaction or snapshot).
        name: the card's name.
        value: a bundle digest, a unique prefix of one (>= 12 hex digits), or the SHA-256 of
            the SKILL.md of a one-file bundle; ``sha256:``/``digest:`` labels are allowed.
        option: the option's name, for messages.
        verb: what the caller does with it ("approve", "reject", "review"), for messages.
    Returns:
        A VersionRef.
    Raises:
        UsageError: not hex, or fewer than 12 digits.
        UnknownCardError: no card of that name.
        AmbiguousDigestError: the prefix fits several versions (they are listed).
        FileHashNotBundleError: it is the SKILL.md hash of a bundle of several files.
        UnknownVersionError: no version fits.
    """
    text = _clean(value, option)
    versions = store.versions(name=name)
    if not versions:
        raise UnknownCardError(f"no card named {name!r} in the store")
    by_digest = [v for v in versions if v.sha256.startswith(text)]
    if len(by_digest) == 1:
        return VersionRef(by_digest[0].sha256, "digest")
    if len(by_digest) > 1:
        listed = ", ".join(f"{v.sha256[:16]} ({v.status})" for v in by_digest)
        raise AmbiguousDigestError(
            f"{option} {text} fits {len(by_digest)} versions of {name!r}: {listed}; "
            "give more digits"
        )
    by_file = [v for v in versions if v.skill_sha256 and v.skill_sha256.startswith(text)]
    single: list[tuple] = []
    several: list[tuple] = []
    for v in by_file:
        files = store.bundle_files(v.digest)
        (single if [f.path for f in files] in ([SKILL_FILE], []) else several).append((v, files))
    if len(single) == 1 and not several:
        return VersionRef(single[0][0].sha256, "skill-sha256")
    if len(single) + len(several) > 1:
        listed = ", ".join(f"{v.sha256[:16]} ({v.status})" for v, _ in single + several)
        raise AmbiguousDigestError(
            f"{option} {text} is the SKILL.md hash of several versions of {name!r}: {listed}; "
            "give the bundle digest"
        )
    if several:
        v, files = several[0]
        raise FileHashNotBundleError(
            f"{text[:8]}… is the SHA-256 of {SKILL_FILE} in version {v.sha256[:8]}… "
            f"({len(files)} files); {verb} the bundle with --digest {v.sha256}"
        )
    raise UnknownVersionError(
        f"no version of {name!r} has digest {text[:16]}… (nor a one-file bundle whose "
        f"{SKILL_FILE} hashes to it); `chimera-cards review {name}` prints the digest to give"
    )
