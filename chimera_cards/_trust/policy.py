"""Trust: which reviewers' signed statements count, and when there are enough of them.

A review statement is an in-toto Statement (v1) in a DSSE envelope (see ``keys``): its subject is
the card's name and the SHA-256 of its exact bytes, its predicate the decision (``approve`` or
``reject``), the reviewer's key id, the time and a note; an approval also carries where it stands
in the name's history (``sequence``, ``supersedes``, ``downgrade``: see ``review.supersession``)
and may carry an ``expires`` time past which it counts for nothing (``trust.freshness``). The trust
list is a set of named Ed25519 public keys kept in the store; the threshold K (default 1, a store
setting) says how many *distinct* trusted keys must approve one exact SHA-256 before the version is
approved (TUF-style k-of-n). ``evaluate`` is the whole policy as a pure function over plain data,
so the gate, the approve command, import and ``verify`` all decide the same way.
"""

from __future__ import annotations

# base64's b64encode/b64decode(validate=True) are these binascii calls; base64 itself (and the
# struct it loads) would cost check's start-up.
import binascii
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from chimera_cards._store.connection import utc_now
from chimera_cards._store.facade import Store
from chimera_cards._store.statements import THRESHOLD_SETTING
from chimera_cards._trust.freshness import MAX_SEQUENCE, parse_time, rank_of
from chimera_cards._trust.keys import (
    EnvelopeError,
    PublicKey,
    parse_envelope,
    parse_public_key,
    sign_envelope,
    verify_envelope,
)
from chimera_cards._util.integrity import sha256_of
from chimera_cards._util.records import asdict, field, record
from chimera_cards._util.urls import is_url
from chimera_cards.errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on this module
if TYPE_CHECKING:
    from chimera_cards._store.verify import Problem

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://chimera-cards.dev/review/v1"
DECISIONS = ("approve", "reject")
DEFAULT_THRESHOLD = 1
MAX_NOTE_CHARS = 4000


# --- the statement ----------------------------------------------------------------------------


@record(frozen=True)
class Statement:
    """One reviewer's decision about one card's exact bytes (an in-toto Statement v1)."""

    name: str
    sha256: str
    decision: str  # "approve" | "reject"
    reviewer: str  # key id of the signing key
    time: str  # ISO 8601 UTC
    note: str = ""
    accepted: tuple[str, ...] = ()  # finding ids the reviewer accepted as true positives
    sequence: int = 0  # per-name order of approvals; 0: made before sequences (absent)
    supersedes: str = ""  # the digest that was the name's approved version when this was signed
    downgrade: bool = False  # this approval knowingly moves the name back
    expires: str = ""  # ISO 8601 UTC; "" never

    def payload(self) -> bytes:
        """The canonical JSON bytes that get signed (sorted keys, no spaces, UTF-8)."""
        predicate: dict = {
            "decision": self.decision,
            "reviewer": self.reviewer,
            "time": self.time,
            "note": self.note,
        }
        if self.accepted:
            predicate["accepted"] = list(self.accepted)
        # Only what is set: a statement without them is byte for byte what older releases signed.
        if self.sequence:
            predicate["sequence"] = self.sequence
        if self.supersedes:
            predicate["supersedes"] = self.supersedes
        if self.downgrade:
            predicate["downgrade"] = True
        if self.expires:
            predicate["expires"] = self.expires
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
    *,
    sequence: int = 0,
    supersedes: str = "",
    downgrade: bool = False,
    expires: str = "",
) -> Statement:
    """Build an unsigned review statement, stamped with the current time.

    Args:
        name: the card's name.
        sha256: the SHA-256 of the exact bytes reviewed (hex; lower-cased here).
        decision: ``approve`` or ``reject``.
        reviewer: the reviewer's key id.
        note: free text, at most ``MAX_NOTE_CHARS``.
        accepted: ids of findings the reviewer accepts with this approval.
        sequence: the approval's place in the name's history (``supersession.next_sequence``).
        supersedes: the digest of the name's approved version this one follows.
        downgrade: the approval moves the name back, and says so.
        expires: when the approval stops counting (ISO 8601 UTC), "" for never.

    Returns:
        The statement. Raises ``UsageError`` for an unknown decision, a too-long note, or a
        sequence or expiry that no reader would accept.
    """
    if decision not in DECISIONS:
        raise UsageError(f"decision must be one of {', '.join(DECISIONS)}")
    if len(note) > MAX_NOTE_CHARS:
        raise UsageError(f"note is longer than {MAX_NOTE_CHARS} characters")
    if not 0 <= sequence <= MAX_SEQUENCE:
        raise UsageError(f"sequence {sequence} is out of range")
    if expires and parse_time(expires) is None:
        raise UsageError(f"expiry {expires!r} is not an ISO 8601 UTC time")
    return Statement(
        name,
        sha256.lower(),
        decision,
        reviewer,
        utc_now(),
        note,
        tuple(sorted(set(accepted))),
        sequence,
        supersedes.lower(),
        downgrade,
        expires,
    )


def sign_statement(private, statement: Statement) -> dict:
    """Sign a statement with a reviewer's private key.

    Args:
        private: the reviewer's Ed25519 private key (``keys.load_private_key``).
        statement: what is being signed.

    Returns:
        The DSSE envelope as a dict, ready to store or write to ``approvals.jsonl``.
    """
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
            sequence=pred.get("sequence", 0),
            supersedes=pred.get("supersedes", ""),
            downgrade=pred.get("downgrade", False),
            expires=pred.get("expires", ""),
        )
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    if not all(isinstance(a, str) for a in st.accepted):
        return None
    fields = (st.name, st.sha256, st.decision, st.reviewer, st.time, st.note)
    if not all(isinstance(f, str) for f in fields) or st.decision not in DECISIONS:
        return None
    if not _history_fields_ok(st, pred):
        return None  # a field no one could have meant: the statement counts for nothing
    return st


def _history_fields_ok(st: Statement, pred: dict) -> bool:
    if "sequence" in pred and (
        type(st.sequence) is not int or not 1 <= st.sequence <= MAX_SEQUENCE
    ):
        return False
    if "supersedes" in pred and (
        not isinstance(st.supersedes, str)
        or len(st.supersedes) != 64
        or st.supersedes.strip("0123456789abcdef")
    ):
        return False
    if "downgrade" in pred and st.downgrade is not True:
        return False
    return "expires" not in pred or parse_time(st.expires) is not None


def peek_statement(envelope: dict | str) -> Statement | None:
    """The statement an envelope *claims*, unverified: for indexing and messages, never trust."""
    try:
        env = parse_envelope(envelope)
        return parse_payload(binascii.a2b_base64(env["payload"], strict_mode=True))
    except (EnvelopeError, binascii.Error, ValueError):
        return None


# --- the policy -------------------------------------------------------------------------------


@record(frozen=True)
class TrustedKey:
    """A reviewer's public key under the name it has in this store's trust list."""

    name: str
    public: PublicKey

    @property
    def keyid(self) -> str:
        return self.public.keyid

    def to_dict(self) -> dict:
        return {"name": self.name, "keyid": self.keyid, "public_key": self.public.text()}


_APPROVAL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "keyid": str,
    "sequence": int,
    "time": str,
    "supersedes": str,
    "downgrade": bool,
    "expires": str,
    "accepted": list,
}


def _approval(st: Statement) -> dict:
    """What a verdict keeps of one verifying approval (plain JSON, so it can be remembered)."""
    return {
        "keyid": st.reviewer,
        "sequence": st.sequence,
        "time": st.time,
        "supersedes": st.supersedes,
        "downgrade": st.downgrade,
        "expires": st.expires,
        "accepted": list(st.accepted),
    }


def _expired(approval: dict, now: datetime) -> bool:
    when = parse_time(approval["expires"]) if approval["expires"] else None
    return when is not None and when <= now


@record
class Verdict:
    """What the trusted statements say about one (name, sha256), at one moment.

    ``approvals`` keeps every verifying trusted approval (each key's newest), expired or not:
    the name's history is ordered by all of them, while only the unexpired ones count as
    ``approvers`` now. ``at`` re-reads the clock, so a remembered verdict never outlives an
    expiry.
    """

    threshold: int
    approvers: list[str] = field(
        default_factory=list
    )  # distinct trusted keys whose approval counts
    rejecters: list[str] = field(default_factory=list)  # distinct trusted key ids that rejected
    accepted: list[str] = field(default_factory=list)  # finding ids accepted by counting approvals
    problems: list[str] = field(default_factory=list)  # statements that do not verify or do not fit
    approvals: list[dict] = field(default_factory=list)  # every verifying trusted approval
    expired: list[str] = field(default_factory=list)  # key ids whose approval has expired
    valid_until: str | None = None  # when the counting approvals drop below the threshold

    @property
    def approved(self) -> bool:
        """Enough distinct trusted, unexpired approvals, and no trusted rejection."""
        return not self.rejecters and len(self.approvers) >= self.threshold

    @property
    def rejected(self) -> bool:
        """Any trusted rejection: it outweighs every approval."""
        return bool(self.rejecters)

    def at(self, now: datetime) -> Verdict:
        """This verdict as it stands at ``now``: expired approvals stop counting.

        Returns:
            A new Verdict (its lists are the caller's to change).
        """
        live = [a for a in self.approvals if not _expired(a, now)]
        ends = []
        for a in live:
            when = parse_time(a["expires"]) if a["expires"] else None
            ends.append((when is None, when or now, a["expires"]))
        valid_until = None
        if len(live) >= self.threshold:
            ends.sort(reverse=True)
            forever, _, text = ends[self.threshold - 1]
            valid_until = None if forever else text
        return Verdict(
            threshold=self.threshold,
            approvers=[a["keyid"] for a in live],
            rejecters=[*self.rejecters],
            accepted=sorted({x for a in live for x in a["accepted"]}),
            problems=[*self.problems],
            approvals=[dict(a) for a in self.approvals],
            expired=[a["keyid"] for a in self.approvals if _expired(a, now)],
            valid_until=valid_until,
        )

    def to_dict(self) -> dict:
        return {"approved": self.approved, "rejected": self.rejected, **asdict(self)}

    def to_json(self) -> str:
        """The verdict as it is remembered (``evaluate_remembered``)."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Verdict | None:
        """A remembered verdict, or None when the text is not one (then it is evaluated anew).
        Read it with ``at(now)``: what was remembered may have expired since."""
        try:
            value = json.loads(text)
            verdict = cls(
                threshold=value["threshold"],
                approvers=value["approvers"],
                rejecters=value["rejecters"],
                accepted=value["accepted"],
                problems=value["problems"],
                approvals=value["approvals"],
                expired=value["expired"],
                valid_until=value["valid_until"],
            )
        except (ValueError, KeyError, TypeError):
            return None
        lists = (
            verdict.approvers,
            verdict.rejecters,
            verdict.accepted,
            verdict.problems,
            verdict.expired,
        )
        if type(verdict.threshold) is not int or not all(
            isinstance(items, list) and all(isinstance(x, str) for x in items) for items in lists
        ):
            return None
        if not isinstance(verdict.approvals, list) or not all(
            isinstance(a, dict)
            and set(a) == set(_APPROVAL_FIELDS)
            and all(type(a[k]) is t for k, t in _APPROVAL_FIELDS.items())
            and all(isinstance(x, str) for x in a["accepted"])
            for a in verdict.approvals
        ):
            return None
        if verdict.valid_until is not None and not isinstance(verdict.valid_until, str):
            return None
        return verdict


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
    now: datetime | None = None,
) -> Verdict:
    """The whole trust policy, as a pure function of the statements, the trust list and the time.

    Args:
        envelopes: stored DSSE envelopes (dicts or their JSON text) about any version.
        trusted: the store's trusted keys.
        name: the card name the statements must be about.
        sha256: the exact bytes' SHA-256 the statements must be about.
        threshold: how many distinct trusted approvals make the version approved.
        memo: optional cache of signature checks, shared across calls.
        now: the moment expiries are judged at (default: now).

    Returns:
        A ``Verdict``: distinct trusted approvers (unexpired) and rejecters, accepted finding
        ids, every verifying approval, and the reason each statement that did not count was
        skipped.
    """
    trusted = list(trusted)
    rejecters: list[str] = []
    problems: list[str] = []
    newest: dict[str, dict] = {}  # one approval per key: a reviewer approving twice is one
    for env in envelopes:
        st, problem = check_statement(env, trusted, name=name, sha256=sha256, memo=memo)
        if st is None:
            problems.append(problem or "statement does not verify")
            continue
        if st.decision == "reject":
            if st.reviewer not in rejecters:
                rejecters.append(st.reviewer)
            continue
        had = newest.get(st.reviewer)
        if had is None or rank_of(st.sequence, st.time) > rank_of(had["sequence"], had["time"]):
            newest[st.reviewer] = _approval(st)
    verdict = Verdict(
        threshold=threshold,
        rejecters=rejecters,
        problems=problems,
        approvals=list(newest.values()),
    )
    return verdict.at(now or datetime.now(UTC))


def is_clean_path(origin: str | None, final_url: str | None, provenance: str) -> bool:
    """A clean import from a local path: usable without approvals. The gate, ``install`` and
    review's status rules must agree on this, so all of them call it."""
    return provenance == "clean" and not is_url(origin) and not is_url(final_url)


# --- remembered verdicts ----------------------------------------------------------------------

# Part of every verdict key: a release that changes ``evaluate``'s rules changes this text, so a
# verdict an older release remembered is never read back as today's.
VERDICT_RULES = "chimera-cards verdict 2"


def verdict_key(
    envelopes: Sequence[str],
    trusted: Iterable[TrustedKey],
    *,
    name: str,
    sha256: str,
    threshold: int,
) -> bytes:
    """SHA-256 of everything ``evaluate``'s outcome depends on.

    The name and SHA-256 the statements must be about, the threshold, every trusted key id with
    its public key, and every envelope's exact text: any change to one of them (a key added or
    removed, a raised threshold, a new or edited statement) is another key, so a remembered
    verdict needs no invalidation and cannot go stale.

    Args:
        envelopes: the stored envelopes, as their JSON text.
        trusted: the trust list.
        name: the card name; sha256: the bytes' SHA-256; threshold: approvals needed.
    Returns:
        The 32-byte key.
    """
    keys = [[k.keyid, k.public.text()] for k in trusted]
    text = json.dumps(
        [VERDICT_RULES, name, sha256, threshold, keys, list(envelopes)],
        ensure_ascii=False,
        default=repr,
    )
    return sha256_of(text.encode("utf-8", "surrogatepass")).digest()


def evaluate_remembered(
    store: Store,
    items: Sequence[tuple[str, str, Sequence[str]]],
    trusted: Sequence[TrustedKey],
    threshold: int,
    *,
    memo: dict[bytes, bool] | None = None,
) -> tuple[list[Verdict], dict[str, str]]:
    """``evaluate`` for many versions, reading back verdicts the store remembers.

    A verdict is remembered under ``verdict_key`` of its exact inputs, so a hit is the answer
    ``evaluate`` would give now: the Ed25519 arithmetic (and loading the library that does it)
    is what is skipped, never a check of what is trusted. The memo lives in the store and is
    trusted as the store's own trust list is: whoever can write the store can already add a key
    to that list. It is never consulted for a trust list from elsewhere (a trust file), and
    ``verify`` re-derives every verdict it remembers (``check_remembered_verdicts``).

    Args:
        store: the open store (the memo is read from it).
        items: (name, sha256, envelope texts) of each version to judge.
        trusted: the store's trust list; threshold: the store's threshold.
        memo: optional cache of single signature checks, for the verdicts not remembered.
    Returns:
        (a Verdict per item, in order; the new memo rows to keep, key hex -> verdict JSON,
        for ``Store.remember_verdicts``).
    """
    trusted = list(trusted)
    keys = [
        verdict_key(envelopes, trusted, name=name, sha256=sha, threshold=threshold).hex()
        if envelopes
        else ""
        for name, sha, envelopes in items
    ]
    known = store.recall_verdicts([k for k in keys if k])
    now = datetime.now(UTC)  # one clock for the whole batch
    # Many versions share one remembered text (same approvers, threshold): each is read once.
    read: dict[str, Verdict | None] = {}
    verdicts: list[Verdict] = []
    fresh: dict[str, str] = {}
    for key, (name, sha, envelopes) in zip(keys, items, strict=True):
        if not key:  # nothing signed: nothing to verify or remember
            verdicts.append(Verdict(threshold=threshold))
            continue
        text = known.get(key)
        verdict = None
        if text is not None:
            if text not in read:
                read[text] = Verdict.from_json(text)
            verdict = read[text]
            if verdict is not None:  # as it stands now (expiries), and a copy of its own
                verdict = verdict.at(now)
        if verdict is None or verdict.threshold != threshold:
            verdict = evaluate(
                envelopes, trusted, name=name, sha256=sha, threshold=threshold, memo=memo, now=now
            )
            fresh[key] = verdict.to_json()
        verdicts.append(verdict)
    return verdicts, fresh


def check_remembered_verdicts(store: Store, conn: object = None) -> list[Problem]:
    """``verify``'s check of the verdict memo (registered in ``store.EXTRA_VERIFY_CHECKS``): the
    verdict remembered for each version under today's trust list must be the one its statements
    give when verified now, so a memo row written by hand cannot make bytes look approved.

    Args:
        store: the open store; conn: verify's snapshot (the store's own connection).
    Returns:
        One Problem per remembered verdict that differs from a fresh evaluation.
    """
    from chimera_cards._store.verify import Problem  # verify's: not on check's start-up path

    trusted, threshold = trusted_keys(store), get_threshold(store)
    signed = {sha for _, sha, _ in store.all_statements()}
    # Keyed exactly as check and install key them: every envelope stored about the bytes.
    items = [
        (name, sha, store.envelopes(sha)) for name, sha in store.version_keys() if sha in signed
    ]
    keys = [
        verdict_key(envs, trusted, name=name, sha256=sha, threshold=threshold).hex()
        for name, sha, envs in items
    ]
    known = store.recall_verdicts(keys)
    problems = []
    signatures: dict[bytes, bool] = {}
    now = datetime.now(UTC)
    for key, (name, sha, envelopes) in zip(keys, items, strict=True):
        if key not in known:
            continue
        fresh = evaluate(
            envelopes, trusted, name=name, sha256=sha, threshold=threshold, memo=signatures, now=now
        )
        remembered = Verdict.from_json(known[key])
        if remembered is None or remembered.at(now) != fresh:
            problems.append(
                Problem(
                    "verdict-memo-mismatch",
                    f"{name} {sha[:12]}: the remembered verdict on its statements is not what "
                    "they verify to now (written by hand?)",
                    name,
                    sha,
                )
            )
    return problems


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
