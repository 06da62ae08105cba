"""Matching a task to cards: full-text search over the index, then the gate."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from chimera_cards._cards.card import CardParseError, parse_card
from chimera_cards._cards.prompt import LEVELS, render_card
from chimera_cards._retrieve.gate import _label, _note, _reason, gate_check
from chimera_cards._retrieve.render import _BROKEN, Match, MatchList, RenderCache
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards._trust.policy import (
    get_threshold,
    trusted_keys,
)
from chimera_cards.errors import ChimeraError, UsageError

MAX_QUERY_TERMS = 32
BM25_WEIGHTS = (10.0, 4.0, 2.0)  # name, description, triggers: a hit in the name says most


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
    cache); ``test_read_paths.py`` fails if anything in the packages passes it.

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
