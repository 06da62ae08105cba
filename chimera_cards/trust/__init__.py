"""Keys and the trust policy: signed review statements, trusted keys, verdicts.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
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
    from chimera_cards.trust.policy import (
        DECISIONS,
        DEFAULT_THRESHOLD,
        MAX_NOTE_CHARS,
        PAYLOAD_TYPE,
        PREDICATE_TYPE,
        STATEMENT_TYPE,
        VERDICT_RULES,
        Statement,
        TrustedKey,
        Verdict,
        check_remembered_verdicts,
        check_statement,
        evaluate,
        evaluate_remembered,
        get_threshold,
        is_clean_path,
        make_statement,
        parse_payload,
        peek_statement,
        sign_statement,
        trusted_keys,
        verdict_key,
    )

# public name -> the module that defines it
_EXPORTS = {
    "DECISIONS": "chimera_cards.trust.policy",
    "DEFAULT_THRESHOLD": "chimera_cards.trust.policy",
    "EnvelopeError": "chimera_cards.trust.keys",
    "GeneratedKey": "chimera_cards.trust.keys",
    "KEY_NAME_RE": "chimera_cards.trust.keys",
    "KeyFileError": "chimera_cards.trust.keys",
    "MAX_ENVELOPE_BYTES": "chimera_cards.trust.keys",
    "MAX_NOTE_CHARS": "chimera_cards.trust.policy",
    "MAX_PASSPHRASE_BYTES": "chimera_cards.trust.keys",
    "PAYLOAD_TYPE": "chimera_cards.trust.policy",
    "PREDICATE_TYPE": "chimera_cards.trust.policy",
    "PUBKEY_PREFIX": "chimera_cards.trust.keys",
    "PublicKey": "chimera_cards.trust.keys",
    "STATEMENT_TYPE": "chimera_cards.trust.policy",
    "Statement": "chimera_cards.trust.policy",
    "TYPE_CHECKING": "chimera_cards.trust.keys",
    "TrustedKey": "chimera_cards.trust.policy",
    "VERDICT_RULES": "chimera_cards.trust.policy",
    "Verdict": "chimera_cards.trust.policy",
    "VerifiedEnvelope": "chimera_cards.trust.keys",
    "check_key_name": "chimera_cards.trust.keys",
    "check_remembered_verdicts": "chimera_cards.trust.policy",
    "check_statement": "chimera_cards.trust.policy",
    "default_keyfile": "chimera_cards.trust.keys",
    "evaluate": "chimera_cards.trust.policy",
    "evaluate_remembered": "chimera_cards.trust.policy",
    "generate_key": "chimera_cards.trust.keys",
    "get_threshold": "chimera_cards.trust.policy",
    "is_clean_path": "chimera_cards.trust.policy",
    "load_private_key": "chimera_cards.trust.keys",
    "make_statement": "chimera_cards.trust.policy",
    "pae": "chimera_cards.trust.keys",
    "parse_envelope": "chimera_cards.trust.keys",
    "parse_payload": "chimera_cards.trust.policy",
    "parse_public_key": "chimera_cards.trust.keys",
    "peek_statement": "chimera_cards.trust.policy",
    "public_of": "chimera_cards.trust.keys",
    "read_passphrase_file": "chimera_cards.trust.keys",
    "read_public_key": "chimera_cards.trust.keys",
    "sign_envelope": "chimera_cards.trust.keys",
    "sign_statement": "chimera_cards.trust.policy",
    "trusted_keys": "chimera_cards.trust.policy",
    "verdict_key": "chimera_cards.trust.policy",
    "verify_envelope": "chimera_cards.trust.keys",
}

__all__ = [
    "DECISIONS",
    "DEFAULT_THRESHOLD",
    "KEY_NAME_RE",
    "MAX_ENVELOPE_BYTES",
    "MAX_NOTE_CHARS",
    "MAX_PASSPHRASE_BYTES",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "PUBKEY_PREFIX",
    "STATEMENT_TYPE",
    "TYPE_CHECKING",
    "VERDICT_RULES",
    "EnvelopeError",
    "GeneratedKey",
    "KeyFileError",
    "PublicKey",
    "Statement",
    "TrustedKey",
    "Verdict",
    "VerifiedEnvelope",
    "check_key_name",
    "check_remembered_verdicts",
    "check_statement",
    "default_keyfile",
    "evaluate",
    "evaluate_remembered",
    "generate_key",
    "get_threshold",
    "is_clean_path",
    "load_private_key",
    "make_statement",
    "pae",
    "parse_envelope",
    "parse_payload",
    "parse_public_key",
    "peek_statement",
    "public_of",
    "read_passphrase_file",
    "read_public_key",
    "sign_envelope",
    "sign_statement",
    "trusted_keys",
    "verdict_key",
    "verify_envelope",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
