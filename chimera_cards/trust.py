"""Trust: which reviewers' signed statements count, and when there are enough of them.

A review statement is an in-toto Statement (v1) in a DSSE envelope (see ``keys``): its subject is
the card's name and the SHA-256 of its exact bytes, its predicate the decision (``approve`` or
``reject``), the reviewer's key id, the time and a note. The trust list is a set of named Ed25519
public keys kept in the store; the threshold K (default 1, a store setting) says how many
*distinct* trusted keys must approve one exact SHA-256 before the version is approved (TUF-style
k-of-n). ``evaluate`` is the whole policy as a pure function over plain data, so the gate, the
approve command, import and ``verify`` all decide the same way.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from chimera_cards.errors import UsageError
from chimera_cards.keys import (
    EnvelopeError,
    PublicKey,
    parse_envelope,
    parse_public_key,
    sign_envelope,
    verify_envelope,
)
from chimera_cards.store import THRESHOLD_SETTING, Store, utc_now

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://chimera-cards.dev/review/v1"
DECISIONS = ("approve", "reject")
DEFAULT_THRESHOLD = 1
MAX_NOTE_CHARS = 4000


# --- the statement ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    name: str
    sha256: str
    decision: str  # "approve" | "reject"
    reviewer: str  # key id of the signing key
    time: str  # ISO 8601 UTC
    note: str = ""
    accepted: tuple[str, ...] = ()  # finding ids the reviewer accepted as true positives

    def payload(self) -> bytes:
        predicate: dict = {
            "decision": self.decision,
            "reviewer": self.reviewer,
            "time": self.time,
            "note": self.note,
        }
        if self.accepted:
            predicate["accepted"] = list(self.accepted)
        body = {
            "_type": STATEMENT_TYPE,
            "subject": [{"name": self.name, "digest": {"sha256": self.sha256}}],
            "predicateType": PREDICATE_TYPE,
            "predicate": predicate,
        }
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def to_dict(self) -> dict:
        return asdict(self)


def make_statement(
    name: str,
    sha256: str,
    decision: str,
    reviewer: str,
    note: str = "",
    accepted: tuple[str, ...] = (),
) -> Statement:
    if decision not in DECISIONS:
        raise UsageError(f"decision must be one of {', '.join(DECISIONS)}")
    if len(note) > MAX_NOTE_CHARS:
        raise UsageError(f"note is longer than {MAX_NOTE_CHARS} characters")
    return Statement(
        name, sha256.lower(), decision, reviewer, utc_now(), note, tuple(sorted(set(accepted)))
    )


def sign_statement(private, statement: Statement) -> dict:
    return sign_envelope(private, PAYLOAD_TYPE, statement.payload())


def parse_payload(payload: bytes) -> Statement | None:
    """The statement in a payload, or None if it is not a well-formed chimera review statement."""
    try:
        body = json.loads(payload)
        subject = body["subject"]
        pred = body["predicate"]
        if body.get("_type") != STATEMENT_TYPE or body.get("predicateType") != PREDICATE_TYPE:
            return None
        if not isinstance(subject, list) or len(subject) != 1:
            return None  # one statement, one card: a list of subjects would approve them all
        name = subject[0]["name"]
        sha = subject[0]["digest"]["sha256"]
        st = Statement(
            name=name,
            sha256=sha,
            decision=pred["decision"],
            reviewer=pred["reviewer"],
            time=pred["time"],
            note=pred.get("note", ""),
            accepted=tuple(pred.get("accepted", ())),
        )
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    if not all(isinstance(a, str) for a in st.accepted):
        return None
    fields = (st.name, st.sha256, st.decision, st.reviewer, st.time, st.note)
    if not all(isinstance(f, str) for f in fields) or st.decision not in DECISIONS:
        return None
    return st


def peek_statement(envelope: dict | str) -> Statement | None:
    """The statement an envelope *claims*, unverified: for indexing and messages, never trust."""
    try:
        env = parse_envelope(envelope)
        return parse_payload(base64.b64decode(env["payload"], validate=True))
    except (EnvelopeError, binascii.Error, ValueError):
        return None


# --- the policy -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrustedKey:
    name: str
    public: PublicKey

    @property
    def keyid(self) -> str:
        return self.public.keyid

    def to_dict(self) -> dict:
        return {"name": self.name, "keyid": self.keyid, "public_key": self.public.text()}


@dataclass
class Verdict:
    """What the trusted statements say about one (name, sha256)."""

    threshold: int
    approvers: list[str] = field(default_factory=list)  # distinct trusted key ids that approved
    rejecters: list[str] = field(default_factory=list)  # distinct trusted key ids that rejected
    accepted: list[str] = field(default_factory=list)  # finding ids accepted by trusted approvals
    problems: list[str] = field(default_factory=list)  # statements that do not verify or do not fit

    @property
    def approved(self) -> bool:
        return not self.rejecters and len(self.approvers) >= self.threshold

    @property
    def rejected(self) -> bool:
        return bool(self.rejecters)

    def to_dict(self) -> dict:
        return {"approved": self.approved, "rejected": self.rejected, **asdict(self)}


def check_statement(
    envelope: dict | str,
    trusted: Iterable[TrustedKey],
    *,
    name: str,
    sha256: str,
    memo: dict[bytes, bool] | None = None,
) -> tuple[Statement | None, str | None]:
    """Verify one envelope for one card version: (statement, None) if it counts, else (None, why).

    It counts only if a trusted key signed it, the payload is a review statement, the reviewer in
    the payload is the key that signed (no signing for someone else), and the subject is exactly
    this name and these bytes' SHA-256.
    """
    keys = {k.keyid: k.public for k in trusted}
    try:
        env = parse_envelope(envelope)  # JSON parsed once; the dict is reused below
        verified = verify_envelope(env, keys, memo)
    except EnvelopeError as exc:
        return None, str(exc)
    if verified is None:
        claimed = peek_statement(env)
        who = claimed.reviewer if claimed else "?"
        return None, f"statement by {who}: no valid signature from a trusted key"
    who = ", ".join(verified.keyids)
    if verified.payload_type != PAYLOAD_TYPE:
        return None, f"statement by {who}: payloadType {verified.payload_type!r} is not a review"
    st = parse_payload(verified.payload)
    if st is None:
        return None, f"statement by {who}: payload is not a chimera review statement"
    if st.reviewer not in verified.keyids:
        return (
            None,
            f"statement names reviewer {st.reviewer} but is signed by {', '.join(verified.keyids)}",
        )
    if st.sha256.lower() != sha256.lower():
        return None, (
            f"signature by {st.reviewer} is over sha256 {st.sha256[:16]}…, "
            f"not these bytes ({sha256[:16]}…)"
        )
    if st.name != name:
        return None, f"statement by {st.reviewer} is for card {st.name!r}, not {name!r}"
    return st, None


def evaluate(
    envelopes: Iterable[dict | str],
    trusted: Iterable[TrustedKey],
    *,
    name: str,
    sha256: str,
    threshold: int,
    memo: dict[bytes, bool] | None = None,
) -> Verdict:
    trusted = list(trusted)
    verdict = Verdict(threshold=threshold)
    for env in envelopes:
        st, problem = check_statement(env, trusted, name=name, sha256=sha256, memo=memo)
        if st is None:
            verdict.problems.append(problem or "statement does not verify")
            continue
        bucket = verdict.approvers if st.decision == "approve" else verdict.rejecters
        if st.reviewer not in bucket:  # distinct keys: one reviewer approving twice is one approval
            bucket.append(st.reviewer)
        if st.decision == "approve":
            verdict.accepted = sorted({*verdict.accepted, *st.accepted})
    return verdict


# --- the trust list and threshold in the store ------------------------------------------------


def trusted_keys(store: Store) -> list[TrustedKey]:
    """The store's trust list, by name.

    Args:
        store: the open store (inside a snapshot or transaction for a consistent answer).

    Returns:
        Every trusted key with the name it is trusted under.
    """
    return [TrustedKey(name, parse_public_key(text)) for name, _, text in store.trust_rows()]


def get_threshold(store: Store) -> int:
    """How many distinct trusted approvals a version needs (the default when never set).

    Raises:
        UsageError: the stored setting is not a whole number of at least 1 (edited by hand).
    """
    text = store.get_setting(THRESHOLD_SETTING)
    if text is None:
        return DEFAULT_THRESHOLD
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = 0
    if value < 1 or str(value) != str(text).strip():
        raise UsageError(
            f"the store's {THRESHOLD_SETTING} setting is {text!r}, not a whole number of at "
            "least 1; fix it with `chimera-cards trust threshold K`"
        )
    return value
