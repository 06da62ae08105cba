"""Content hashes of cards: SHA-256 over the exact raw bytes, in hex and in SRI form.

Card pages, lockfiles and signed statements name a card by ``sha256(raw bytes)``; users may paste
either the hex digest or the Subresource-Integrity string (``sha256-<base64>``), so both are
normalised to lowercase hex before comparing.
"""

from __future__ import annotations

# base64's b64encode/b64decode(validate=True) are these binascii calls; base64 itself (and the
# struct it loads) would cost check's start-up.
import binascii
import sys

from chimera_cards.errors import ChimeraError, UsageError

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on this module
if TYPE_CHECKING:
    from hashlib import _Hash

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

# SHA-256 is SHA-256 whichever code computes it. OpenSSL's (hashlib) hashes ~5x faster per byte
# than CPython's own, but loading it costs about as much as hashing 1 MiB with CPython's own: a
# job hashes with CPython's own until it has hashed this much, then loads OpenSSL's, so it never
# spends more than twice what the better choice made up front would have.
OPENSSL_AFTER_BYTES = 1 << 20
try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256 as _own_sha256
    else:
        from _sha256 import sha256 as _own_sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # built without its own hashes: OpenSSL's from the start
    _own_sha256 = None


class IntegrityError(ChimeraError):
    """The bytes do not hash to what the user pinned: refuse them."""


class HashBudget:
    """What one job that hashes many things (check's scan of skill folders) may still hash with
    CPython's own SHA-256 before it loads OpenSSL's. The job owns it: one budget per scan, so
    nothing about earlier work in the process decides how the next job hashes."""

    __slots__ = ("left",)

    def __init__(self, left: int = OPENSSL_AFTER_BYTES) -> None:
        self.left = left


def sha256_of(data: bytes = b"", budget: HashBudget | None = None) -> _Hash:
    """A SHA-256 hash object of ``data`` (as ``hashlib.sha256``'s): OpenSSL's once the process
    has loaded it; before that CPython's own while ``data`` fits the job's ``budget`` (without
    one, while ``data`` alone is at most ``OPENSSL_AFTER_BYTES``), which it then draws down."""
    size = len(data)
    left = OPENSSL_AFTER_BYTES if budget is None else budget.left
    if _own_sha256 is not None and size <= left and "_hashlib" not in sys.modules:
        if budget is not None:
            budget.left = left - size
        return _own_sha256(data)
    if budget is not None:
        budget.left = 0
    import hashlib

    return hashlib.sha256(data)


def sha256_hex(data: bytes) -> str:
    """The lowercase hex SHA-256 of ``data``."""
    return sha256_of(data).hexdigest()


def is_hex(value: str, length: int | None = None) -> bool:
    """Whether ``value`` is non-empty hex digits (either case), of exactly ``length`` if given."""
    if not value or (length is not None and len(value) != length):
        return False
    return all(ch in _HEX_DIGITS for ch in value)


def parse_sha256(value: str, what: str = "--digest") -> str:
    """A full SHA-256 given as 64 hex digits (surrounding space and case ignored), lowercased.

    Raises:
        UsageError: it is not 64 hex digits.
    """
    digest = value.strip().lower()
    if not is_hex(digest, 64):
        raise UsageError(f"{what} must be 64 hex digits, got {value!r}")
    return digest


def sri(data: bytes) -> str:
    """The Subresource-Integrity form, ``sha256-<standard base64 of the digest>``."""
    digest = sha256_of(data).digest()
    return "sha256-" + binascii.b2a_base64(digest, newline=False).decode("ascii")


def _hex_from_sri(value: str) -> str:
    algo, _, encoded = value.strip().partition("-")
    if algo.lower() != "sha256" or not encoded:
        raise UsageError(f"integrity {value!r} is not of the form sha256-<base64>")
    try:
        digest = binascii.a2b_base64(encoded, strict_mode=True)
    except (binascii.Error, ValueError):
        raise UsageError(f"integrity {value!r} has invalid base64") from None
    if len(digest) != 32:
        raise UsageError(f"integrity {value!r} is not a 32-byte SHA-256 digest")
    return digest.hex()


def _hex_from_any(value: str) -> str:
    value = value.strip()
    bare = value[len("sha256:") :] if value.lower().startswith("sha256:") else value
    if is_hex(bare, 64):
        return bare.lower()
    if value.lower().startswith("sha256-"):
        return _hex_from_sri(value)
    raise UsageError(f"{value!r} is neither a 64-digit SHA-256 hex digest nor sha256-<base64>")


def expected_hex(sha256: str | None, integrity: str | None) -> str | None:
    """Normalise a pinned hash given as hex (``sha256``) and/or SRI (``integrity``) to lower hex.

    Both given and disagreeing is a usage error: one of them is a typo and guessing which would
    silently pin the wrong card.
    """
    from_hex = _hex_from_any(sha256) if sha256 else None
    from_sri = _hex_from_any(integrity) if integrity else None
    if from_hex and from_sri and from_hex != from_sri:
        raise UsageError(f"{from_hex} and {integrity} name different bytes")
    return from_hex or from_sri


def check_integrity(data: bytes, expected: str) -> None:
    """Raise IntegrityError unless ``data`` hashes to ``expected`` (hex or SRI form)."""
    import hmac  # only where bytes are checked: check's start-up loads this module

    want = _hex_from_any(expected)
    got = sha256_hex(data)
    if not hmac.compare_digest(want, got):
        raise IntegrityError(f"sha256 mismatch: expected {want}, got {got}")


def digest_keys(data: dict) -> dict:
    """``data`` with the names every ``--json`` output uses for a version's hashes: the bundle
    digest is ``digest`` (an old ``sha256`` key beside it held the same value, so it goes) and
    the SKILL.md file's own hash is ``skill_md_sha256``; the order of the keys is kept.
    """
    out: dict = {}
    for key, value in data.items():
        if key == "sha256":
            if "digest" not in data:
                out["digest"] = value
        elif key == "skill_sha256":
            out["skill_md_sha256"] = value
        else:
            out[key] = value
    return out
