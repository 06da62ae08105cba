"""Import cards into the store from a path (SKILL.md, card directory, folder of cards) or a URL.

Importing a card is a supply-chain event, so each card goes through the same steps, and any
failure refuses that card alone with nothing stored:

1. read the exact bytes (local: regular file, no symlink out of its card directory; URL: the
   bounded fetch in ``fetch.py``);
2. check them against ``--sha256``/``--integrity`` *before* parsing, then parse and check the
   lockfile pin;
3. decide provenance from the **origin**, never from what the card says about itself: a URL is
   always tainted; a path is clean unless ``--taint`` or the card itself declares any provenance
   other than ``clean`` (case-insensitive; anything else, even an unknown value, is tainted);
4. lint leniently (the card need not be Chimera-shaped) and keep every finding; any *error*
   (including the hidden-instruction scan's) keeps the version ``pending``;
5. store it: clean and error-free -> ``active`` (the previous active version is retired as
   history); otherwise ``pending``, leaving the current active version in place. The same bytes
   again are a no-op whatever their status, so a rejected version stays rejected.

Cards are prepared (steps 1-4) outside the database lock, then written in batches, each in one
``BEGIN IMMEDIATE`` transaction with a savepoint per card: a folder imports quickly, one bad card
does not stop the rest, and a killed process leaves either a whole batch or nothing.
"""

from __future__ import annotations

import os
import sqlite3
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards.card import Card, find_card_files, parse_card, read_card_bytes
from chimera_cards.errors import ChimeraError, StoreWriteError, UsageError
from chimera_cards.fetch import DEFAULT_TIMEOUT, fetch_url, is_url
from chimera_cards.integrity import check_integrity, expected_hex, sha256_hex
from chimera_cards.lint import Finding, lint_card
from chimera_cards.lockfile import check_pin, read_lockfile
from chimera_cards.paths import check_link_inside
from chimera_cards.store import Store, Version, check_storable_name, resolve_hook

# Cards per write transaction: big enough that commits do not dominate a folder import, small
# enough that the write lock is never held for long and memory stays bounded.
BATCH_CARDS = 500
BATCH_BYTES = 16 * 1024 * 1024

# Hooks run for every stored or already-present card, inside the write transaction, as
# "module:function" (so e.g. the review module can honour approvals shipped next to a card
# without this module importing it). Called fn(store, conn, candidate, version, new) and may
# return an updated Version. An exception refuses that card only (its savepoint is rolled back).
# review (issue 4): approvals.jsonl beside an imported SKILL.md is verified and applied.
IMPORT_HOOKS: tuple[str, ...] = ("chimera_cards.review:import_hook",)

# Test hook: when set to a file path, the import creates that file inside its write transaction
# and then sleeps, so a test can SIGKILL the process mid-transaction. Has no other effect.
PAUSE_ENV = "CHIMERA_CARDS_TEST_PAUSE_IN_IMPORT"


@dataclass
class Candidate:
    """A card whose bytes were read, checked and parsed, ready to be stored."""

    name: str
    sha256: str
    raw: bytes
    origin: str  # absolute file path, or the URL as given
    final_url: str | None  # URL after redirects (None for a path)
    provenance: str
    taint_reasons: list[str]
    findings: list[Finding]
    file: Path | None = None  # the card file on disk, for hooks that look next to it

    def hold_reasons(self) -> list[str]:
        """Why this version may not become active on import (empty: it may)."""
        reasons = []
        if self.provenance != "clean":
            reasons.append("tainted (" + "; ".join(self.taint_reasons) + "): needs review")
        errors = [f for f in self.findings if f.severity == "error"]
        if errors:
            listed = ", ".join(
                f"{f.rule}" + (f" (line {f.line})" if f.line else "") for f in errors[:5]
            )
            more = f" and {len(errors) - 5} more" if len(errors) > 5 else ""
            reasons.append(f"lint errors: {listed}{more}")
        return reasons


@dataclass
class ImportResult:
    source: str  # the file or URL this result is about
    outcome: str  # "imported" | "present" | "refused"
    name: str | None = None
    sha256: str | None = None
    provenance: str | None = None
    status: str | None = None
    origin: str | None = None
    final_url: str | None = None
    reason: str = ""  # why pending (or retired/rejected, for a present version)
    findings: list[dict] = field(default_factory=list)
    error: str | None = None  # why refused
    exit_code: int = 0  # 0 ok; for a refused card, the error's exit code

    @property
    def ok(self) -> bool:
        return self.outcome != "refused"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "sha256": self.sha256,
            "provenance": self.provenance,
            "status": self.status,
            "origin": self.origin,
            "final_url": self.final_url,
            "findings": self.findings,
            "result": self.outcome,
            "reason": self.reason,
            "error": self.error,
            "source": self.source,
        }


def declared_taint(card: Card) -> str | None:
    """The reason a card's own frontmatter makes it tainted, or None if it declares none/clean."""
    if "provenance" not in card.frontmatter:
        return None
    value = card.frontmatter["provenance"]
    if isinstance(value, str) and value.strip().lower() == "clean":
        return None
    return f"the card declares provenance {value!r}"


def prepare(
    data: bytes,
    *,
    origin: str,
    final_url: str | None,
    from_url: bool,
    expected: str | None,
    pins: Mapping[str, str] | None,
    pins_source: str,
    taint: bool,
    file: Path | None = None,
    stored: Callable[[str], Version | None] | None = None,
) -> Candidate:
    """Steps 2-4 for bytes already read: integrity, parse, pin, provenance, lint.

    ``stored(sha256)`` returns the version already holding these exact bytes, if any: such a
    card was parsed, checked and linted when it was stored, and its import is a no-op, so it
    is not parsed again (only its pins are checked). That keeps re-importing a folder cheap.
    """
    if expected:
        check_integrity(data, expected)  # before parsing: a wrong card is never even parsed
    sha = sha256_hex(data)
    known = stored(sha) if stored is not None else None
    if known is not None:
        if pins is not None:
            check_pin(pins, known.name, sha, source=pins_source)
        return Candidate(
            name=known.name,
            sha256=sha,
            raw=data,
            origin=origin,
            final_url=final_url,
            provenance=known.provenance,
            taint_reasons=[],
            findings=[],
            file=file,
        )
    card = parse_card(data, path=origin)
    name = check_storable_name(card.name)
    if pins is not None:
        check_pin(pins, name, sha, source=pins_source)
    reasons = []
    if from_url:
        reasons.append("imported from a URL")
    if taint:
        reasons.append("--taint given")
    declared = declared_taint(card)
    if declared:
        reasons.append(declared)
    # A URL has no card directory, so the name-matches-directory rule does not apply to it.
    findings = lint_card(card, strict=False, dirname=name if from_url else None)
    return Candidate(
        name=name,
        sha256=sha,
        raw=data,
        origin=origin,
        final_url=final_url,
        provenance="tainted" if reasons else "clean",
        taint_reasons=reasons,
        findings=findings,
        file=file,
    )


def _refused(source: str, exc: ChimeraError) -> ImportResult:
    return ImportResult(source=source, outcome="refused", error=str(exc), exit_code=exc.exit_code)


def _store_batch(
    store: Store, batch: list[tuple[str, Candidate]], hooks: list[Callable]
) -> list[ImportResult]:
    results: list[ImportResult] = []
    with store.transaction() as conn:
        for source, cand in batch:
            try:
                with store.savepoint("card"):
                    version, new = _store_one(store, conn, cand)
                    for hook in hooks:
                        version = hook(store, conn, cand, version, new) or version
            except (ChimeraError, sqlite3.Error) as exc:
                if not conn.in_transaction:
                    # SQLite undid the whole transaction (disk full, I/O error): nothing of this
                    # batch is stored, so no card of it may be reported as imported.
                    raise StoreWriteError(
                        f"{store.path}: could not write ({exc}); nothing of this batch was stored"
                    ) from None
                error = exc if isinstance(exc, ChimeraError) else StoreWriteError(f"store: {exc}")
                results.append(_refused(source, error))
                continue
            results.append(
                ImportResult(
                    source=source,
                    outcome="imported" if new else "present",
                    name=version.name,
                    sha256=version.sha256,
                    provenance=version.provenance,
                    status=version.status,
                    origin=version.origin,
                    final_url=version.final_url,
                    reason=version.reason,
                    findings=version.findings,
                )
            )
        pause = os.environ.get(PAUSE_ENV)
        if pause:
            Path(pause).write_text(str(os.getpid()))
            time.sleep(60)
    return results


def _store_one(store: Store, conn: sqlite3.Connection, cand: Candidate) -> tuple[Version, bool]:
    existing = store.version(cand.name, cand.sha256)  # same connection: sees this transaction
    if existing is not None:
        return existing, False  # same bytes again: no-op, whatever the status (rejected stays)
    sha = store.put_blob(conn, cand.raw)
    hold = cand.hold_reasons()
    version = store.add_version(
        conn,
        name=cand.name,
        sha256=sha,
        origin=cand.origin,
        final_url=cand.final_url,
        provenance=cand.provenance,
        status="pending" if hold else "active",
        reason="; ".join(hold),
        findings=[f.to_dict() for f in cand.findings],
    )
    return version, True


def import_source(
    store: Store,
    source: str | os.PathLike,
    *,
    sha256: str | None = None,
    integrity: str | None = None,
    lockfile: str | os.PathLike | Mapping[str, str] | None = None,
    taint: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    hooks: Iterable[str | Callable] | None = None,
) -> list[ImportResult]:
    """Import every card SOURCE names; one ImportResult per card, in order.

    Raises (nothing stored) only for a bad invocation: a malformed hash, an unreadable lockfile,
    a path that does not exist, a folder without cards, or a pinned hash with several cards.
    Each card's own failure is a ``refused`` result, and the other cards still import.
    """
    expected = expected_hex(sha256, integrity)
    if lockfile is None or isinstance(lockfile, Mapping):
        pins, pins_source = lockfile, "the lockfile"
    else:
        pins, pins_source = read_lockfile(lockfile), str(lockfile)
    hook_fns = [resolve_hook(h) for h in (IMPORT_HOOKS if hooks is None else hooks)]
    source = str(source)
    common = dict(
        expected=expected,
        pins=pins,
        pins_source=pins_source,
        taint=taint,
        stored=store.version_with_bytes,
    )

    if is_url(source):
        try:
            fetched = fetch_url(source, timeout=timeout, ssl_context=ssl_context)
            cand = prepare(
                fetched.data, origin=source, final_url=fetched.final_url, from_url=True, **common
            )
        except ChimeraError as exc:
            return [_refused(source, exc)]
        return _store_batch(store, [(source, cand)], hook_fns)

    files = find_card_files(source)
    if not files:
        raise UsageError(
            f"{source}: no cards found (expected a SKILL.md, a card directory, "
            "or a folder of card directories)"
        )
    if expected and len(files) != 1:
        raise UsageError(
            f"{source}: --sha256/--integrity pins one card but this holds "
            f"{len(files)}; use --lockfile for a folder"
        )

    results: list[ImportResult] = []
    batch: list[tuple[str, Candidate]] = []
    batch_bytes = 0
    slots: list[int] = []  # result index each batched card fills, to keep results in file order
    root = Path(source)
    for file in files:
        label = str(file)
        try:
            if file.parent.parent == root:  # a card folder inside a folder of cards
                check_link_inside(root, file.parent)
            data, resolved = read_card_bytes(file)
            cand = prepare(
                data, origin=resolved, final_url=None, from_url=False, file=Path(resolved), **common
            )
        except ChimeraError as exc:
            results.append(_refused(label, exc))
            continue
        slots.append(len(results))
        results.append(None)  # type: ignore[arg-type]  # filled when the batch is stored
        batch.append((label, cand))
        batch_bytes += len(data)
        if len(batch) >= BATCH_CARDS or batch_bytes >= BATCH_BYTES:
            for slot, result in zip(slots, _store_batch(store, batch, hook_fns), strict=True):
                results[slot] = result
            batch, batch_bytes, slots = [], 0, []
    if batch:
        for slot, result in zip(slots, _store_batch(store, batch, hook_fns), strict=True):
            results[slot] = result
    return results
