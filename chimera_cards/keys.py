"""Moved to ``chimera_cards.trust.keys``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.trust.keys import (
    KEY_NAME_RE,
    MAX_ENVELOPE_BYTES,
    MAX_PASSPHRASE_BYTES,
    PUBKEY_PREFIX,
    TYPE_CHECKING,
    EnvelopeError,
    GeneratedKey,
    KeyFileError,
    PublicKey,
    VerifiedEnvelope,
    check_key_name,
    default_keyfile,
    generate_key,
    load_private_key,
    pae,
    parse_envelope,
    parse_public_key,
    public_of,
    read_passphrase_file,
    read_public_key,
    sign_envelope,
    verify_envelope,
)

__all__ = [
    "KEY_NAME_RE",
    "MAX_ENVELOPE_BYTES",
    "MAX_PASSPHRASE_BYTES",
    "PUBKEY_PREFIX",
    "TYPE_CHECKING",
    "EnvelopeError",
    "GeneratedKey",
    "KeyFileError",
    "PublicKey",
    "VerifiedEnvelope",
    "check_key_name",
    "default_keyfile",
    "generate_key",
    "load_private_key",
    "pae",
    "parse_envelope",
    "parse_public_key",
    "public_of",
    "read_passphrase_file",
    "read_public_key",
    "sign_envelope",
    "verify_envelope",
]
