"""Reviewer keys and the signed envelope their statements travel in.

A reviewer holds an Ed25519 key pair. The private key lives in a PEM file only its owner can read
(created 0600, optionally passphrase-encrypted); the public key is one line of text,
``ed25519 <base64 raw key> <comment>``, that can be pasted into another store's trust list.
A key is named everywhere by its *key id*: the first 16 hex digits of SHA-256 over the 32 raw
public-key bytes.

Statements are signed as DSSE envelopes (the Dead Simple Signing Envelope used by in-toto and
Sigstore): the signature covers ``PAE(payloadType, payload)``, so a signature can never be moved
to a payload of another type or another length, and a verifier never parses the payload before the
signature over it has checked out. This module knows nothing of cards or stores: it signs and
verifies bytes.
"""

from __future__ import annotations

# base64's b64encode/b64decode(validate=True) are these binascii calls; base64 itself (and the
# struct it loads) would cost check's start-up.
import binascii
import functools
import json
import os
import re
from pathlib import Path

from chimera_cards._util.integrity import sha256_of
from chimera_cards._util.records import record
from chimera_cards.errors import ChimeraError, KeyExistsError, KeyWriteError, UsageError

PUBKEY_PREFIX = "ed25519"
# A pattern, compiled on first use (re keeps it): check loads this module and matches no name.
_KEY_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_ENVELOPE_BYTES = 64 * 1024

# ``cryptography`` is imported where a key is made, loaded or checked, not with this module: a
# command that only reads key text, or whose signature checks were remembered, never loads it.
# typing.TYPE_CHECKING, without importing typing on start-up (check and install load this).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )


class KeyFileError(ChimeraError):
    """A key file or key text that cannot be used (unreadable, wrong type, wrong passphrase)."""


def default_keyfile(name: str) -> Path:
    """``keys/NAME.key`` beside the default store.

    The store's home is ``$CHIMERA_CARDS_HOME``, else the XDG data dir.
    """
    from chimera_cards._store.location import default_store_path  # one definition of "home"

    return default_store_path().parent / "keys" / f"{name}.key"


def find_private_key(spec: str | os.PathLike, store_path: str | os.PathLike | None = None) -> Path:
    """The private key file ``--key`` names: a path, or the NAME ``keys generate NAME`` used.

    A NAME (no path separator, not an existing file) is looked up as ``keys/NAME.key`` beside
    the store in use, then beside the default store (where ``keys generate`` writes it).

    Args:
        spec: what was given to ``--key``.
        store_path: the store the command opens (``--store``), if given.
    Returns:
        The key file's path (whether it can be read is ``load_private_key``'s question).
    Raises:
        UsageError: a NAME with no key file in either place (the places are listed).
    """
    path = Path(spec).expanduser()
    text = str(spec)
    if path.exists() or os.sep in text or "/" in text or not re.match(_KEY_NAME, text):
        return path
    places = []
    if store_path is not None:
        places.append(Path(store_path).parent / "keys" / f"{text}.key")
    places.append(default_keyfile(text))
    places = list(dict.fromkeys(places))
    for place in places:
        if place.is_file():
            return place
    raise UsageError(
        f"no key file {text!r} and no key named {text!r} in "
        f"{' or '.join(str(p.parent) for p in places)} (`chimera-cards keys generate {text}` "
        "makes one)"
    )


@record(frozen=True)
class KeyFile:
    """A private key file ``--key NAME`` finds, with the public key written beside it."""

    name: str
    keyfile: Path
    public: PublicKey | None  # from NAME.key.pub; None when that file is missing or unreadable

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "keyid": self.public.keyid if self.public else None,
            "keyfile": str(self.keyfile),
            "public_key": self.public.text(self.name) if self.public else None,
        }


def list_private_keys(store_path: str | os.PathLike | None = None) -> list[KeyFile]:
    """Every private key ``find_private_key`` finds by NAME: ``keys/NAME.key`` beside the store
    in use, then beside the default store (a NAME found in both is the first one's), by name.

    The private key itself is not read (it may need a passphrase): its ``.pub`` is.
    """
    folders = [Path(store_path).parent / "keys"] if store_path is not None else []
    folders.append(default_keyfile("x").parent)
    found: dict[str, KeyFile] = {}
    for folder in dict.fromkeys(folders):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in names:
            name = entry[: -len(".key")]
            path = folder / entry
            if not entry.endswith(".key") or name in found or not re.match(_KEY_NAME, name):
                continue
            if not path.is_file():
                continue
            try:
                public: PublicKey | None = read_public_key(str(path) + ".pub")
            except (ChimeraError, OSError):
                public = None
            found[name] = KeyFile(name, path, public)
    return [found[n] for n in sorted(found)]


def check_key_name(name: str) -> str:
    # The name becomes a file name and a trust-list entry: keep it to a safe, printable alphabet.
    if not re.match(_KEY_NAME, name):
        raise UsageError(
            f"bad key name {name!r}: use letters, digits, '.', '_' or '-' "
            "(at most 64, not starting with a dot)"
        )
    return name


@record(frozen=True)
class PublicKey:
    """A reviewer's Ed25519 public key."""

    raw: bytes  # the 32 raw Ed25519 public-key bytes

    @functools.cached_property  # read per statement on every match; the key never changes
    def keyid(self) -> str:
        return sha256_of(self.raw).hexdigest()[:16]

    def text(self, comment: str = "") -> str:
        line = f"{PUBKEY_PREFIX} {binascii.b2a_base64(self.raw, newline=False).decode('ascii')}"
        return f"{line} {comment}" if comment else line

    @functools.cached_property
    def _key(self) -> Ed25519PublicKey:
        # Loaded once per PublicKey: the gate verifies on every read.
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        return Ed25519PublicKey.from_public_bytes(self.raw)

    def verify(self, signature: bytes, data: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self._key.verify(signature, data)
        except (InvalidSignature, ValueError):
            return False
        return True


@record(frozen=True)
class GeneratedKey:
    """A key pair just written: its files and public key."""

    name: str
    keyfile: Path
    pubfile: Path
    public: PublicKey

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "keyid": self.public.keyid,
            "keyfile": str(self.keyfile),
            "pubfile": str(self.pubfile),
            "public_key": self.public.text(self.name),
        }


def public_of(private: Ed25519PrivateKey) -> PublicKey:
    from cryptography.hazmat.primitives import serialization

    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return PublicKey(raw)


def _write_new_file(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` with ``mode`` from the first byte (O_EXCL: never over an existing file).

    The mode is given to open() rather than chmod-ed afterwards, so the secret is never readable by
    others, not even for an instant. A failed write removes the partial file.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def generate_key(
    name: str, keyfile: str | os.PathLike | None = None, *, passphrase: bytes | None = None
) -> GeneratedKey:
    """Make a new Ed25519 key pair: KEYFILE (0600 PEM) and KEYFILE.pub (one line of text)."""
    check_key_name(name)
    path = Path(keyfile) if keyfile is not None else default_keyfile(name)
    pubpath = Path(str(path) + ".pub")
    for existing in (path, pubpath):
        if existing.exists() or existing.is_symlink():
            raise KeyExistsError(f"{existing} already exists; refusing to overwrite a key")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise KeyWriteError(f"cannot write {path}: {exc.strerror or exc}", exit_code=2) from None
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.generate()
    encryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    public = public_of(private)
    try:
        _write_new_file(path, pem, 0o600)
    except FileExistsError:
        raise KeyExistsError(f"{path} already exists; refusing to overwrite a key") from None
    except OSError as exc:
        raise KeyWriteError(f"cannot write {path}: {exc.strerror}") from None
    try:
        _write_new_file(pubpath, (public.text(name) + "\n").encode("ascii"), 0o644)
    except OSError as exc:
        path.unlink(missing_ok=True)  # leave nothing half-written: no private key without its .pub
        raise KeyWriteError(f"cannot write {pubpath}: {exc.strerror or exc}") from None
    return GeneratedKey(name=name, keyfile=path, pubfile=pubpath, public=public)


MAX_PASSPHRASE_BYTES = 1023


def read_passphrase_file(path: str | os.PathLike) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read passphrase file {path}: {exc.strerror}") from None
    # A trailing newline is how editors save files, not part of the secret.
    data = data.rstrip(b"\r\n")
    if not data:
        raise UsageError(f"passphrase file {path} is empty")
    if len(data) > MAX_PASSPHRASE_BYTES:  # what the key encryption accepts
        raise UsageError(
            f"passphrase file {path} holds {len(data)} bytes; the limit is {MAX_PASSPHRASE_BYTES}"
        )
    return data


def load_private_key(
    path: str | os.PathLike, *, passphrase: bytes | None = None
) -> Ed25519PrivateKey:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read key file {path}: {exc.strerror}") from None
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(data, password=passphrase)
    except TypeError:
        # cryptography says TypeError both for "encrypted, no passphrase" and the reverse.
        if passphrase is None:
            raise KeyFileError(
                f"key file {path} is passphrase-protected; give --passphrase-file"
            ) from None
        raise KeyFileError(f"key file {path} is not encrypted; drop --passphrase-file") from None
    except (ValueError, UnsupportedAlgorithm):
        msg = "wrong passphrase or not a PEM private key" if passphrase else "not a PEM private key"
        raise KeyFileError(f"key file {path}: {msg}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"key file {path} is not an Ed25519 key")
    return key


def parse_public_key(text: str) -> PublicKey:
    """Accept ``ed25519 <base64> [comment]``, OpenSSH ``ssh-ed25519`` or a PEM public key."""
    stripped = text.strip()
    if stripped.startswith("-----BEGIN"):
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            key = serialization.load_pem_public_key(stripped.encode("ascii"))
        except (ValueError, UnsupportedAlgorithm, UnicodeEncodeError):
            raise KeyFileError("not a valid PEM public key") from None
        if not isinstance(key, Ed25519PublicKey):
            raise KeyFileError("PEM public key is not Ed25519")
        return PublicKey(
            key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )
    parts = stripped.split()
    if len(parts) >= 2 and parts[0] == "ssh-ed25519":
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives import serialization

        try:
            key = serialization.load_ssh_public_key(" ".join(parts[:2]).encode("ascii"))
        except (ValueError, UnsupportedAlgorithm, UnicodeEncodeError):
            raise KeyFileError("not a valid ssh-ed25519 public key") from None
        return PublicKey(
            key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )
    if len(parts) >= 2 and parts[0] == PUBKEY_PREFIX:
        b64 = parts[1]
    elif len(parts) == 1:
        b64 = parts[0]
    else:
        raise KeyFileError("not a public key: expected 'ed25519 <base64>' (a .pub file's text)")
    try:
        raw = binascii.a2b_base64(b64, strict_mode=True)
    except (binascii.Error, ValueError):
        raise KeyFileError("public key is not valid base64") from None
    if len(raw) != 32:
        raise KeyFileError(f"an Ed25519 public key is 32 bytes, this one is {len(raw)}")
    return PublicKey(raw)


def read_public_key(arg: str) -> PublicKey:
    """A ``.pub`` file's path or the key text itself."""
    path = Path(arg)
    looks_like_key = arg.strip().startswith((PUBKEY_PREFIX + " ", "ssh-ed25519 ", "-----BEGIN"))
    if not looks_like_key and path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read public key file {arg}: {exc}") from None
        return parse_public_key(text)
    if not looks_like_key and ("/" in arg or arg.endswith(".pub")):  # a path, not key text
        raise UsageError(
            f"{arg}: no such public key file (give a .pub file, or the key text "
            f"'{PUBKEY_PREFIX} BASE64' as `keys generate` prints it)"
        )
    return parse_public_key(arg)


# --- DSSE envelopes ---------------------------------------------------------------------------


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE pre-authentication encoding: what is actually signed."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def sign_envelope(private: Ed25519PrivateKey, payload_type: str, payload: bytes) -> dict:
    sig = private.sign(pae(payload_type, payload))
    return {
        "payloadType": payload_type,
        "payload": binascii.b2a_base64(payload, newline=False).decode("ascii"),
        "signatures": [
            {
                "keyid": public_of(private).keyid,
                "sig": binascii.b2a_base64(sig, newline=False).decode("ascii"),
            }
        ],
    }


@record(frozen=True)
class VerifiedEnvelope:
    """A signed statement whose signature a trusted key verified."""

    payload_type: str
    payload: bytes  # only ever handed out after a trusted signature over it checked out
    keyids: tuple[str, ...]  # trusted keys whose signatures verified


class EnvelopeError(ChimeraError):
    """An envelope that is not well-formed DSSE JSON."""


def parse_envelope(data: str | bytes | dict) -> dict:
    """Shape-check an envelope (JSON text or dict); never trusts its contents."""
    if isinstance(data, (str, bytes)):
        if len(data) > MAX_ENVELOPE_BYTES:
            raise EnvelopeError("statement envelope is larger than 64 KiB")
        try:
            env = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise EnvelopeError("statement envelope is not JSON") from None
    else:
        env = data
    if not isinstance(env, dict):
        raise EnvelopeError("statement envelope is not a JSON object")
    if not isinstance(env.get("payloadType"), str) or not isinstance(env.get("payload"), str):
        raise EnvelopeError("statement envelope lacks payloadType/payload strings")
    sigs = env.get("signatures")
    if not isinstance(sigs, list) or not sigs:
        raise EnvelopeError("statement envelope has no signatures")
    for s in sigs:
        if not isinstance(s, dict) or not isinstance(s.get("sig"), str):
            raise EnvelopeError("statement envelope has a malformed signature entry")
    return env


def verify_envelope(
    env: dict, trusted: dict[str, PublicKey], memo: dict[bytes, bool] | None = None
) -> VerifiedEnvelope | None:
    """Check each signature against the trusted keys (keyid -> key); None if none verifies.

    The keyid in a signature entry is only a hint: every trusted key is tried against a
    signature whose hint is missing or unknown, so relabelling a signature cannot make it count
    for another key, and a valid signature is not lost to a wrong hint.

    ``memo`` (optional) remembers the outcome of each Ed25519 check by SHA-256 of
    (public key, signature, signed message): the same three inputs always give the same answer,
    so a long-lived caller skips repeating the arithmetic, never the check of what is trusted.
    """
    env = parse_envelope(env)
    try:
        payload = binascii.a2b_base64(env["payload"], strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    message = pae(env["payloadType"], payload)
    ok: list[str] = []
    for s in env["signatures"]:
        try:
            sig = binascii.a2b_base64(s["sig"], strict_mode=True)
        except (binascii.Error, ValueError):
            continue
        hint = s.get("keyid")
        candidates = (
            [trusted[hint]] if isinstance(hint, str) and hint in trusted else list(trusted.values())
        )
        for key in candidates:
            if key.keyid not in ok and _verify(key, sig, message, memo):
                ok.append(key.keyid)
                break
    if not ok:
        return None
    return VerifiedEnvelope(env["payloadType"], payload, tuple(ok))


def _verify(key: PublicKey, sig: bytes, message: bytes, memo: dict[bytes, bool] | None) -> bool:
    if memo is None:
        return key.verify(sig, message)
    ident = sha256_of(key.raw + b"\0" + sig + b"\0" + message).digest()
    found = memo.get(ident)
    if found is None:
        found = memo[ident] = key.verify(sig, message)
    return found
