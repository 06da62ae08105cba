"""The single gate between the store and a model's prompt.

``match`` ranks cards with the store's FTS5 index (BM25 over name, description and triggers) and
returns only versions that are ``active`` *and* still verify now: the blob is re-hashed against
its recorded SHA-256, and unless it is a clean import from a local path, its review statements are
re-verified against the current trust list and threshold. Anything else is absent, not ranked low.
``render_for_prompt`` wraps each card in ``<skill-card ...>`` … ``</skill-card>`` with the card
text escaped, so a card cannot close the wrapper or forge another card's.

Index upkeep: a trigger on ``versions`` (from the review migration) queues each new version
in the same transaction that inserts it; ``sync_index`` drains the queue before every query. The
index holds a version's name, description and triggers, which never change for a given SHA-256;
status is *not* in the index but joined live from ``versions``, so no status change can leave the
index saying something the store does not.

Every code path that hands card text to a model must come through here; ``MODEL_READ_PATHS`` and
``OTHER_READ_PATHS`` list every function in the package allowed to read card bytes, and a test
walks the source to check that nothing else does.
"""

from __future__ import annotations

import html
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field

from chimera_cards.bundle import SKILL_FILE, BundleFile
from chimera_cards.card import CardParseError, parse_card
from chimera_cards.errors import ChimeraError, UsageError
from chimera_cards.prompt import LEVELS, render_card
from chimera_cards.store import Store, Version
from chimera_cards.trust import (
    TrustedKey,
    Verdict,
    evaluate,
    get_threshold,
    is_clean_path,
    trusted_keys,
    verdict_key,
)

# Functions that may hand card text to a model: the gate and its renderer.
MODEL_READ_PATHS = frozenset(
    {
        "chimera_cards.retrieve.match",
        "chimera_cards.retrieve._match",
        "chimera_cards.retrieve.render_for_prompt",
    }
)
# Functions that read card bytes for a human or a file, never for a model (review screen, export,
# integrity checks, indexing). Listed so the read-path test notices any new reader.
OTHER_READ_PATHS = frozenset(
    {
        "chimera_cards.retrieve.gate_check",  # re-hash for the gate
        "chimera_cards.retrieve.prompt_preview",  # what the reviewer is shown before approving
        "chimera_cards.review._decide",  # re-hash before signing an approval or rejection
        "chimera_cards.review._review_view",  # the review screen, for a human
        "chimera_cards.review.verify_check",  # verify: signatures against the stored bytes
        "chimera_cards.store.Store.get_blob",  # raw bytes for export/show; callers are listed too
        "chimera_cards.store.Store.index_queue",  # for sync_index: name/description/triggers
        "chimera_cards.store.check_blobs",  # verify: re-hash every blob
        "chimera_cards.store.export_card",  # writes the exact bytes to a file for a person/git
        "chimera_cards.store.Store.get_bundle",  # every file of a bundle, re-hashed; callers listed
        "chimera_cards.store.Store.get_bundles",  # get_bundle of many; callers listed
        "chimera_cards.store.Store._blobs_of",  # the files' bytes for get_bundle(s) to check
        "chimera_cards.store.Store.skill_bytes",  # SKILL.md alone, re-hashed; callers listed
        "chimera_cards.store.Store._bundle_of",  # records a bare card blob as its one-file bundle
        "chimera_cards.store.Store.approved_bundle",  # for installers: only after the gate passed
        "chimera_cards.store.check_bundles",  # verify: manifests against their file rows
        "chimera_cards.install.load_bundle",  # files install writes, after the gate rule said yes
        "chimera_cards.install.load_bundles",  # the same for many names at once
    }
)

MAX_QUERY_TERMS = 32
BM25_WEIGHTS = (10.0, 4.0, 2.0)  # name, description, triggers: a hit in the name says most


@dataclass
class Match:
    """A card the gate let through for a prompt, with why it may be used."""

    name: str
    sha256: str
    provenance: str  # as recorded at import: "clean" | "tainted"
    origin: str
    basis: str  # why it may be used: "clean-path" | "approved"
    approvers: list[str] = field(default_factory=list)  # trusted key ids (basis "approved")
    score: float = 0.0  # BM25 (lower is better, as SQLite reports it)
    level: int = 2
    text: str = ""  # the card rendered at ``level``, unescaped
    files: list[tuple[str, int]] = field(default_factory=list)  # other files: (path, size)

    @property
    def approved_after_taint(self) -> bool:
        return self.provenance != "clean" and self.basis == "approved"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "sha256": self.sha256,
            "provenance": self.provenance,
            "origin": self.origin,
            "basis": self.basis,
            "approved_after_taint": self.approved_after_taint,
            "approvers": self.approvers,
            "score": self.score,
            "level": self.level,
            "text": self.text,
            "files": [{"path": p, "size": n} for p, n in self.files],
        }


class RenderCache:
    """What a caller that matches many times (an agent) need not recompute: rendered card text by
    (SHA-256, level), and the outcomes of Ed25519 checks.

    Parsing a card costs milliseconds; rendering the same bytes again gives the same text. An
    entry is only added from bytes that were just re-hashed to that SHA-256, and only read after
    the current bytes re-hashed to it again and their approvals checked out on this very call, so
    it never hands out text the gate did not verify now. The signature memo is keyed by SHA-256 of
    (public key, signature, signed message): identical inputs always verify identically, so it
    skips arithmetic, never a check — statements, the trust list and the threshold are re-read on
    every call, and any changed byte is a new key. It lives in the caller's memory, never in the
    store file. ``memo_signatures=False`` keeps only the render cache.

    With the signature memo comes a verdict memo: the outcome of evaluating a version's statements,
    keyed by SHA-256 of everything the outcome depends on (name, SHA-256, threshold, every trusted
    key id with its public key, every envelope's exact text), all re-read from the store on each
    call. A trust change, a removed key, a raised threshold or a new statement is a new key, so it
    needs no invalidation and cannot go stale; a hand-edited trust row counts like any other.
    """

    def __init__(self, max_entries: int = 4096, *, memo_signatures: bool = True) -> None:
        self.max_entries = max_entries
        self._texts: dict[tuple[str, int], str] = {}
        self.signatures: dict[bytes, bool] | None = {} if memo_signatures else None
        self.verdicts: dict[bytes, Verdict] | None = {} if memo_signatures else None

    def get(self, sha256: str, level: int) -> str | None:
        return self._texts.get((sha256, level))

    def put(self, sha256: str, level: int, text: str) -> None:
        if len(self._texts) >= self.max_entries:
            self._texts.pop(next(iter(self._texts)))  # oldest first: a bounded FIFO is enough
        self._texts[(sha256, level)] = text
        if self.signatures is not None and len(self.signatures) > 4 * self.max_entries:
            self.signatures.clear()  # bounded; refilling costs one verification per signature
        if self.verdicts is not None and len(self.verdicts) > 4 * self.max_entries:
            self.verdicts.clear()


class MatchList(list):
    """The matches, best first (a plain list of ``Match``), plus ``skipped``: one line per card
    the gate could not read or verify (a broken row, unreadable or tampered bytes, text that is
    not valid Unicode) and per condition that hid cards (a store that could not be indexed).
    Those cards are left out; every other card is still served."""

    def __init__(self, matches=(), skipped: list[str] | None = None) -> None:
        super().__init__(matches)
        self.skipped: list[str] = skipped if skipped is not None else []


@dataclass
class GateDecision:
    """Whether a stored version may reach an agent, and its verified bytes if so."""

    ok: bool
    basis: str = ""  # "clean-path" | "approved" when ok
    reason: str = ""  # why not, when not ok
    approvers: list[str] = field(default_factory=list)
    data: bytes = b""  # the verified SKILL.md bytes (only when ok)
    files: tuple[BundleFile, ...] = ()  # the bundle's other files, verified (only when ok)


def gate_version(
    store: Store, version: Version, *, memo: dict[bytes, bool] | None = None
) -> GateDecision:
    """``gate_check`` with the trust list and threshold read from the store now.

    Args:
        store: the open store (inside a snapshot for one consistent answer).
        version: the version to check.
    Returns:
        The decision.
    """
    return gate_check(
        store, version, trusted=trusted_keys(store), threshold=get_threshold(store), memo=memo
    )


def fts_phrases(query: str) -> list[str]:
    """The user's words as FTS5 phrases that cannot be read as FTS5 syntax.

    Each word becomes a double-quoted string (quotes doubled), so operators, column filters,
    ``NEAR`` and unbalanced quotes in the input are just text.
    """
    words = re.findall(r"\w+", query)[:MAX_QUERY_TERMS]
    return ['"' + w.replace('"', '""') + '"' for w in words]


def fts_query(query: str) -> str | None:
    """The user's words as one FTS5 query, the phrases joined with OR (None: no words)."""
    return " OR ".join(fts_phrases(query)) or None


def sync_index(store: Store, problems: list[str] | None = None) -> int:
    """Index every queued version (call inside ``store.transaction()``); returns how many.

    The queue is always drained: a version whose row or text cannot be indexed is reported in
    ``problems`` (when given) and indexed by name only, or not at all, so one broken card never
    blocks the index for the others. The gate refuses such a card anyway.
    """
    done = 0
    for vid, name, data, problem in store.index_queue():
        if name is None:
            _note(problems, f"not indexed: {problem}")
            continue
        description, triggers = "", ""
        try:
            card = parse_card(data or b"")
            description = card.description or ""
            triggers = "\n".join(card.triggers)
        except CardParseError:
            pass  # a broken blob is still findable by name; the gate will refuse it anyway
        try:
            store.index_version(vid, name, description, triggers)
        except (UnicodeError, ValueError, sqlite3.Error) as exc:
            _note(problems, f"{_label(name)}: indexed by name only ({_reason(exc)})")
            try:
                store.index_version(vid, name, "", "")
            except (UnicodeError, ValueError, sqlite3.Error):
                continue
        done += 1
    store.clear_index_queue()
    return done


def _note(problems: list[str] | None, text: str) -> None:
    if problems is not None:
        problems.append(text)


def _label(name: object) -> str:
    # For messages about broken rows: never let the label itself be unprintable.
    return ascii(name) if not isinstance(name, str) else name.encode("utf-8", "replace").decode()


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).encode("utf-8", "backslashreplace").decode().split())
    return f"{type(exc).__name__}: {text}"[:200]


def gate_check(
    store: Store,
    version: Version | None = None,
    *,
    trusted,
    threshold: int,
    verify: bool = True,
    memo: dict[bytes, bool] | None = None,
    verdicts: dict[bytes, Verdict] | None = None,
    name: str | None = None,
    sha256: str | None = None,
    **_columns,
) -> GateDecision:
    """May this version go to a model right now? Re-hashes every file of its bundle and
    re-verifies its statements; never trusts columns alone.

    Args:
        store: the open store.
        version: the version; or give ``name`` and ``sha256`` and it is read from the store
            (other column keywords are accepted and ignored: the row is re-read).
        trusted: the trust list; threshold: approvals needed.
    Returns:
        The decision, with the verified SKILL.md bytes and the other files when it is ok.
    """
    if version is None:
        version = store.version(name or "", sha256 or "")
        if version is None:
            return GateDecision(False, reason="no such version")
    name, sha256, status = version.name, version.sha256, version.status
    origin, final_url, provenance = version.origin, version.final_url, version.provenance
    if status != "active":
        return GateDecision(False, reason=f"status is {status}")
    if not verify:  # benchmark baseline only: what the gate costs
        data = store.get_blob(version.skill_sha256)
        if data is None:
            return GateDecision(False, reason="blob is missing")
        return GateDecision(True, basis="unverified", data=data)
    try:
        bundle = store.get_bundle(version)  # every file re-hashed
    except ChimeraError:
        return GateDecision(False, reason="stored bytes do not match their SHA-256")
    data = bundle.skill_md
    others = tuple(f for f in bundle.files if f.path != SKILL_FILE)
    envelopes = store.envelopes(sha256)
    verdict = _evaluate(envelopes, trusted, name, sha256, threshold, memo, verdicts)
    if verdict.rejected:
        return GateDecision(False, reason="rejected by a trusted reviewer")
    if is_clean_path(origin, final_url, provenance):
        return GateDecision(
            True, basis="clean-path", approvers=verdict.approvers, data=data, files=others
        )
    if verdict.approved:
        return GateDecision(
            True, basis="approved", approvers=verdict.approvers, data=data, files=others
        )
    return GateDecision(
        False,
        reason=f"{len(verdict.approvers)} of {threshold} required trusted approvals verify",
    )


def _verdict_key(
    envelopes: list[str], trusted: list[TrustedKey], name: str, sha256: str, threshold: int
) -> bytes:
    return verdict_key(envelopes, trusted, name=name, sha256=sha256, threshold=threshold)


def _evaluate(
    envelopes: list[str],
    trusted,
    name: str,
    sha256: str,
    threshold: int,
    memo: dict[bytes, bool] | None,
    verdicts: dict[bytes, Verdict] | None,
) -> Verdict:
    """``trust.evaluate``, remembered in ``verdicts`` by its exact inputs (see ``RenderCache``)."""
    trusted = list(trusted)
    if verdicts is None:
        return evaluate(
            envelopes, trusted, name=name, sha256=sha256, threshold=threshold, memo=memo
        )
    key = _verdict_key(envelopes, trusted, name, sha256, threshold)
    verdict = verdicts.get(key)
    if verdict is None:
        verdict = evaluate(
            envelopes, trusted, name=name, sha256=sha256, threshold=threshold, memo=memo
        )
        verdicts[key] = verdict
    # A copy: callers own the lists they are handed, and must never edit the remembered verdict.
    return Verdict(
        verdict.threshold,
        list(verdict.approvers),
        list(verdict.rejecters),
        list(verdict.accepted),
        list(verdict.problems),
    )


def match(
    store: Store,
    query: str,
    k: int = 5,
    level: int = 2,
    *,
    verify: bool = True,
    cache: RenderCache | None = None,
) -> MatchList:
    """Up to ``k`` usable cards for ``query``, best first. The only way card text reaches a model.

    Pass a ``RenderCache`` when calling repeatedly to skip re-parsing cards whose bytes were
    verified unchanged. ``verify=False`` exists only for the benchmark's baseline (with its own
    cache); ``tests/test_read_paths.py`` fails if anything in the packages passes it.

    Args:
        store: the open store.
        query: the user's words (never read as FTS5 syntax).
        k: at most this many cards.
        level: 1 (name and description) or 2 (the whole card).

    Returns:
        The usable matches, best first, as a ``MatchList``: its ``skipped`` lines name the cards
        left out because they are broken, and anything else that hid cards.
    """
    if level not in LEVELS:
        raise UsageError("level must be 1 or 2")
    if k < 1:
        raise UsageError("k must be at least 1")
    phrases = fts_phrases(query)
    if not phrases:
        return MatchList()
    skipped: list[str] = []
    with store.snapshot():
        dirty = store.index_dirty()
    if dirty:
        try:
            with store.transaction():
                sync_index(store, skipped)
        except (sqlite3.OperationalError, ChimeraError) as exc:
            # Read-only, or another writer holds the lock: answer from what is indexed, and say
            # how many active cards could not be considered (never serve them unchecked).
            with store.snapshot():
                waiting = store.index_backlog()
            if waiting:
                skipped.append(
                    f"{waiting} active card(s) are not indexed yet and were not searched: the "
                    f"store cannot be written now ({_reason(exc)}); run again with write access"
                )
    with store.snapshot():  # one consistent state for ranking and verification
        return MatchList(_match(store, phrases, k, level, verify, cache, skipped), skipped)


def match_path(path, query: str, k: int = 5, level: int = 2) -> MatchList:
    """``match`` on the store file at ``path``, for callers that hold a path and must not open a
    store themselves (the reference loop reaches cards only through this module). A missing store
    is an error (exit 2), never a new empty one."""
    with Store(path, create=False) as store:
        return match(store, query, k=k, level=level)


def _page_versions(
    store: Store, ranked: list[tuple[int, float]], skipped: list[str], wanted
) -> Iterator[tuple[float, Version]]:
    """(score, version) for the active versions of a ranked page, in rank order. Rows are read
    only as many at a time as ``wanted()`` still needs: most matches stop after the first k."""
    pos = 0
    while pos < len(ranked):
        chunk = ranked[pos : pos + max(wanted(), 1)]
        pos += len(chunk)
        versions, problems = store.versions_by_id([vid for vid, _ in chunk], status="active")
        skipped.extend(f"skipped: {text}" for _, text in problems)
        for vid, score in chunk:
            v = versions.get(vid)
            if v is not None:
                yield score, v


def _match(
    store: Store,
    phrases: list[str],
    k: int,
    level: int,
    verify: bool,
    cache: RenderCache | None,
    skipped: list[str],
) -> list[Match]:
    trusted = trusted_keys(store)
    threshold = get_threshold(store)
    memo = cache.signatures if cache is not None else None
    verdicts = cache.verdicts if cache is not None else None
    out: list[Match] = []
    page = max(2 * k, 16)
    offset = 0
    while len(out) < k:
        # Rank inside FTS5 first, then read only the page's versions: the index also holds
        # versions that are not active, so a page may yield fewer than k and the loop goes on.
        ranked = store.search_index(phrases, BM25_WEIGHTS, page, offset)
        if not ranked:
            break
        offset += len(ranked)
        for score, v in _page_versions(store, ranked, skipped, lambda: k - len(out)):
            label = f"{_label(v.name)} {v.sha256[:12]}"
            try:
                decision = gate_check(
                    store,
                    v,
                    trusted=trusted,
                    threshold=threshold,
                    verify=verify,
                    memo=memo,
                    verdicts=verdicts,
                )
                if not decision.ok:
                    if decision.reason in _BROKEN:
                        skipped.append(f"skipped {label}: {decision.reason} (run verify)")
                    continue
                text = cache.get(v.sha256, level) if cache is not None else None
                if text is None:
                    text = render_card(parse_card(decision.data), level)
                    text.encode("utf-8")  # text that is not valid Unicode must not reach a prompt
                    if cache is not None:
                        cache.put(v.sha256, level, text)
            except (sqlite3.Error, CardParseError, UnicodeError, ValueError, TypeError) as exc:
                # One card's content must never make the gate fail for the others.
                skipped.append(f"skipped {label}: {_reason(exc)}")
                continue
            out.append(
                Match(
                    name=v.name,
                    sha256=v.sha256,
                    provenance=v.provenance,
                    origin=v.final_url or v.origin,
                    basis=decision.basis,
                    approvers=decision.approvers,
                    score=score,
                    level=level,
                    text=text,
                    files=[(f.path, f.size) for f in decision.files],
                )
            )
            if len(out) == k:
                break
    return out


# Refusals that mean the card is broken or tampered with (reported), as opposed to a card that is
# simply not usable (awaiting approvals, rejected), which is absent without a word.
_BROKEN = ("blob is missing", "stored bytes do not match their SHA-256")


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def _escape_text(text: str) -> str:
    # '&' first (html.escape does), then '<' and '>': the text can no longer contain a tag.
    return html.escape(text, quote=False)


def render_one(m: Match) -> str:
    """One match as a ``<skill-card ...>`` block, its text escaped so it cannot close the wrapper.

    Args:
        m: a match the gate returned.

    Returns:
        The block, with the card's name, SHA-256, provenance and review basis as attributes.
    """
    if m.approved_after_taint:
        review = f"approved after arriving tainted ({len(m.approvers)} trusted reviewer(s))"
    elif m.basis == "approved":
        review = f"approved ({len(m.approvers)} trusted reviewer(s))"
    else:
        review = "clean local import"
    listing = ""
    if m.files:
        # The other files are listed, never inlined: the agent opens the one it needs.
        lines = "".join(f"- {path} ({size} bytes)\n" for path, size in m.files)
        listing = f"\nOther files in this skill:\n{_escape_text(lines)}"
    return (
        f'<skill-card name="{_attr(m.name)}" sha256="{_attr(m.sha256)}" '
        f'provenance="{_attr(m.provenance)}" review="{_attr(review)}">\n'
        f"{_escape_text(m.text.rstrip())}\n"
        f"{listing}"
        "</skill-card>"
    )


def render_for_prompt(matches: list[Match]) -> str:
    """The cards as prompt text. Card text is escaped (``&`` ``<`` ``>``), so it cannot close or
    forge a ``<skill-card>`` wrapper; read it as text, not markup."""
    return "\n\n".join(render_one(m) for m in matches)


def prompt_preview(
    name: str,
    sha256: str,
    provenance: str,
    origin: str,
    data: bytes,
    *,
    approvals: int = 1,
    level: int = 2,
    files: list[tuple[str, int]] | None = None,
) -> str:
    """Exactly what ``render_for_prompt`` would give a model for these bytes once ``approvals``
    trusted reviewers have approved them (or at once, for a clean path import)."""
    card = parse_card(data)
    basis = "clean-path" if is_clean_path(origin, None, provenance) else "approved"
    approvers = [f"reviewer-{i + 1}" for i in range(approvals)] if basis == "approved" else []
    m = Match(
        name,
        sha256,
        provenance,
        origin,
        basis,
        approvers,
        level=level,
        text=render_card(card, level),
        files=list(files or []),
    )
    return render_for_prompt([m])


def held_back(store: Store, query: str, k: int = 5) -> list[str]:
    """Names of pending cards that would have matched ``query`` (for a one-line hint that
    something awaits review); never their text.

    Returns:
        Up to ``k`` names, best match first.
    """
    q = fts_query(query)
    if q is None:
        return []
    with store.snapshot():
        return store.search_names(q, "pending", k)
