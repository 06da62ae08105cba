"""Import cards into the store from a path (SKILL.md, card directory, folder of cards) or a URL.

Importing a card is a supply-chain event, so each card goes through the same steps, and any
failure refuses that card alone with nothing stored:

1. read the exact bytes (local: regular file, no symlink out of its card directory; URL: the
   bounded fetch in ``fetch.py``);
2. check them against ``--digest skill_md:`` *before* parsing, then parse and check the
   lockfile pin;
3. decide provenance from the **origin**, never from what the card says about itself: a URL is
   always tainted; a path is clean unless ``--taint`` or the card itself declares any provenance
   other than ``clean`` (case-insensitive; anything else, even an unknown value, is tainted);
4. lint leniently (the card need not be Chimera-shaped) and keep every finding; any *error*
   (including the hidden-instruction scan's) keeps the version ``pending``, except the rules
   about the card's shape (``SHAPE_RULES``: a name, a field's type, an unknown key): lint's
   business, never a reason to hold;
5. store it: clean and error-free -> ``active`` (the previous active version is retired as
   history); otherwise ``pending``, leaving the current active version in place. The same bytes
   again are a no-op whatever their status, so a rejected version stays rejected.

Cards are prepared (steps 1-4) outside the database lock, then written in batches, each in one
``BEGIN IMMEDIATE`` transaction with a savepoint per card: a folder imports quickly, one bad card
does not stop the rest, and a killed process leaves either a whole batch or nothing.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from chimera_cards._bundles.bundle import SKILL_FILE, Bundle
from chimera_cards._bundles.digests import BUNDLE, NPX, npx_hash, parse_digest, skill_digest
from chimera_cards._bundles.folderscan import read_receipt_bytes
from chimera_cards._bundles.manifest import BundleFile
from chimera_cards._cards.card import Card, parse_card
from chimera_cards._importer.lockfile import LockfileError, Pins, check_pin, read_lockfile
from chimera_cards._scan.codescan import ScanCache, lint_bundle
from chimera_cards._scan.external import (
    ScannerConfig,
    ScannerRun,
    import_scanners,
    scan_bundle_with,
)
from chimera_cards._scan.findings import SHAPE_RULES, Finding
from chimera_cards._sources.find import SkillSource, find_skills, pick, pick_plugin, read_skill
from chimera_cards._sources.locate import GitHosts
from chimera_cards._store.audit import canonical_json
from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards._store.verify import resolve_hook
from chimera_cards._store.versions import check_storable_name
from chimera_cards._util.integrity import (
    IntegrityError,
    check_integrity,
    expected_hex,
    sha256_hex,
)
from chimera_cards._util.urls import DEFAULT_TIMEOUT
from chimera_cards._util.workers import parallel_map
from chimera_cards.errors import ChimeraError, StoreWriteError, UnstorableNameError, UsageError

if TYPE_CHECKING:
    import ssl  # annotations only: importing it costs a folder import's start-up

# Cards per write transaction: big enough that commits do not dominate a folder import, small
# enough that the write lock is never held for long and memory stays bounded.
BATCH_CARDS = 500
# With workers, batches are also counted in files (a card is one, a skill folder ~10): storing
# then overlaps the analysis. Towards the end (the last POOL_TAIL_CARDS skills of an import) they
# are smaller still, so the skills analysed last wait only for a short final batch.
POOL_BATCH_CARDS = 128
POOL_BATCH_FILES = 256
POOL_TAIL_CARDS = 2 * POOL_BATCH_CARDS
BATCH_BYTES = 16 * 1024 * 1024

# Hooks run for every stored or already-present card, inside the write transaction, as
# "module:function" (so e.g. the review module can honour approvals shipped next to a card
# without this module importing it). Called fn(store, conn, candidate, version, new) and may
# return an updated Version. An exception refuses that card only (its savepoint is rolled back).
# Review: approvals.jsonl beside an imported SKILL.md is verified and applied.
IMPORT_HOOKS: tuple[str, ...] = ("chimera_cards._importer.hooks:approvals",)

# Test hook: when set to a file path, the import creates that file inside its write transaction
# and then sleeps, so a test can SIGKILL the process mid-transaction. Has no other effect.
PAUSE_ENV = "CHIMERA_CARDS_TEST_PAUSE_IN_IMPORT"


# Longest part of a finding's message a hold reason quotes (the review screen lists it whole).
REASON_QUOTE_MAX = 160


def _errors_reason(errors: list[Finding]) -> str:
    """Why errors hold a version, in one sentence: the first error's rule, place and message
    (what the reviewer must read first), then the others by rule and place."""

    def where(f: Finding) -> str:
        path = f"{f.path}:" if f.path and f.path != SKILL_FILE else ""
        return f"{path}{f.rule}" + (f" (line {f.line})" if f.line else "")

    first = errors[0]
    message = " ".join(first.message.split())
    if len(message) > REASON_QUOTE_MAX:
        message = message[: REASON_QUOTE_MAX - 3] + "..."
    others = [where(f) for f in errors[1:5]]
    more = f" and {len(errors) - 5} more" if len(errors) > 5 else ""
    rest = f"; also {', '.join(others)}{more}" if others else ""
    return f"lint errors: {where(first)}: {message}{rest}"


@dataclass
class Candidate:
    """A skill whose bundle was read, checked and parsed, ready to be stored."""

    name: str
    sha256: str  # the bundle digest: the identity a review statement signs
    raw: bytes  # the SKILL.md bytes
    origin: str  # absolute SKILL.md path, archive path, URL, or repository@commit
    final_url: str | None  # URL after redirects (None for a path)
    provenance: str
    taint_reasons: list[str]
    findings: list[Finding]
    file: Path | None = None  # the SKILL.md on disk, for hooks that look next to it
    bundle: Bundle | None = None
    source: dict = field(default_factory=dict)  # how it was fetched (kind, url, ref, commit, path)
    approvals: bytes | None = None  # approvals.jsonl shipped inside an archive or repository
    stored_findings: list[dict] | None = None  # ``findings`` as stored, when already made
    findings_json: str | None = None  # and their canonical JSON text, when already made
    scanner_runs: list[ScannerRun] = field(default_factory=list)  # other scanners' verdicts

    @property
    def skill_sha256(self) -> str:
        return _skill_sha(self.bundle) if self.bundle is not None else sha256_hex(self.raw)

    def hold_reasons(self) -> list[str]:
        """Why this version may not become active on import (empty: it may)."""
        reasons = []
        if self.provenance != "clean":
            reasons.append("tainted (" + "; ".join(self.taint_reasons) + "): needs review")
        errors = [f for f in self.findings if f.severity == "error" and f.rule not in SHAPE_RULES]
        if errors:
            reasons.append(_errors_reason(errors))
        for run in self.scanner_runs:
            if not run.ok:
                reasons.append(f"scanner {run.scanner} failed: {run.reason}")
            elif run.holds():
                errors = [f for f in run.findings if f.severity == "error"]
                listed = ", ".join(
                    f.rule.removeprefix(f"{run.scanner}/")
                    + (f" ({f.path}:{f.line})" if f.path and f.line else "")
                    for f in errors[:5]
                )
                more = f" and {len(errors) - 5} more" if len(errors) > 5 else ""
                reasons.append(f"scanner {run.scanner} errors: {listed}{more}")
        return reasons


def _skill_sha(bundle: Bundle) -> str:
    found = bundle.file(SKILL_FILE)
    assert found is not None  # every bundle has one (bundle_from_files)
    return found.sha256


@dataclass
class ImportResult:
    """What importing one skill did: imported, already present or refused, and why."""

    source: str  # the skill folder, file, archive entry or URL this result is about
    outcome: str  # "imported" | "present" | "refused"
    name: str | None = None
    sha256: str | None = None  # the version's identity (its bundle digest)
    provenance: str | None = None
    status: str | None = None
    origin: str | None = None
    final_url: str | None = None
    reason: str = ""  # why pending (or retired/rejected, for a present version)
    findings: list[dict] = field(default_factory=list)
    error: str | None = None  # why refused
    exit_code: int = 0  # 0 ok; for a refused card, the error's exit code
    digest: str | None = None  # the bundle digest
    skill_sha256: str | None = None  # SHA-256 of SKILL.md
    files: int = 0  # files in the bundle
    error_kind: str | None = None  # the refusal's class name, e.g. "LinkError"
    scanners: list[dict] = field(default_factory=list)  # other scanners' runs on a new version

    @property
    def ok(self) -> bool:
        return self.outcome != "refused"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "digest": self.digest or self.sha256,
            "skill_md_sha256": self.skill_sha256,
            "files": self.files,
            "provenance": self.provenance,
            "status": self.status,
            "origin": self.origin,
            "final_url": self.final_url,
            "findings": self.findings,
            "result": self.outcome,
            "reason": self.reason,
            "error": self.error,
            "error_kind": self.error_kind,
            "source": self.source,
            "scanners": self.scanners,
        }


def declared_taint(card: Card) -> str | None:
    """The reason a card's own frontmatter makes it tainted, or None if it declares none/clean."""
    if "provenance" not in card.frontmatter:
        return None
    value = card.frontmatter["provenance"]
    if isinstance(value, str) and value.strip().lower() == "clean":
        return None
    return f"the card declares provenance {value!r}"


@dataclass
class Analysis:
    """What the pure steps make of a bundle: the card's name, the taint it declares, findings
    (and their stored form and its JSON text, made where the findings were: by a worker, for a
    big import, so the process that writes the store need not)."""

    name: str
    declared_taint: str | None
    findings: list[Finding]
    stored_findings: list[dict]
    findings_json: str


def analyse(
    bundle: Bundle, *, origin: str, dirname: str | None, scan_cache: ScanCache | None = None
) -> Analysis:
    """Parse the SKILL.md, check its name, and lint the whole bundle: a pure function of the bytes
    (and the names given), so it may run in a worker process.

    Args:
        bundle: the bundle.
        origin: where it came from, named in parse errors.
        dirname: the skill's folder name (None: the name-matches-folder rule does not apply).
        scan_cache: findings by file content, shared by the bundles of one import.
    Returns:
        The Analysis.
    Raises:
        CardParseError, UnstorableNameError: the card cannot be stored.
    """
    card = parse_card(bundle.skill_md, path=origin)
    name, renamed = _stored_name(card.name, dirname)
    # Without a folder (a bare card URL) the name-matches-folder rule does not apply.
    findings = lint_bundle(card, bundle, dirname=dirname or name, cache=scan_cache)
    if renamed is not None:
        findings.append(renamed)
    stored = [f.to_dict() for f in findings]
    return Analysis(name, declared_taint(card), findings, stored, canonical_json(stored))


def _stored_name(name: object, dirname: str | None) -> tuple[str, Finding | None]:
    """The name a card is stored under: its own, or, for a name a folder cannot hold that names
    the folder it is published in (a title with spaces, "Uploadcare Automation" in
    ``uploadcare-automation/``; an owner's prefix, "r-lib/cli" in ``cli/``), the folder's (what
    agents call the skill by), with a finding saying so. Anything else a folder name cannot hold
    (control or invisible characters, a path) is refused.

    Raises:
        UnstorableNameError: the name cannot be stored and is not its folder's title.
    """
    try:
        return check_storable_name(name if isinstance(name, str) else None), None
    except UnstorableNameError:
        if not (isinstance(name, str) and dirname and name.isascii() and name.isprintable()):
            raise
        owner, _, last = name.rpartition("/")
        titled = " " in name and "/" not in name and _titles(name, dirname)
        prefixed = bool(owner) and last == dirname and "/" not in owner and owner not in (".", "..")
        if not (titled or prefixed) or check_storable_name(dirname) != dirname:
            raise
    return dirname, Finding(
        "name-from-folder",
        "info",
        f"name {name!r} cannot be a folder name; stored as {dirname!r}, its folder's",
        None,
        SKILL_FILE,
    )


# Words a folder name drops from its title ("API Fuzzing for Bug Bounty" in
# ``api-fuzzing-bug-bounty/``).
_LINKING_WORDS = frozenset({"a", "an", "and", "the", "for", "of", "to", "with", "in", "on", "by"})


def _titles(name: str, dirname: str) -> bool:
    """Whether a title with spaces names the folder: the folder's words are the title's, in
    order, each a whole word or a CamelCase word's capitals ("PocketBase SDK" in ``pb-sdk/``),
    leaving out only linking words, or the title's first words with a qualifier after them
    ("Cloudflare D1 Database" in ``cloudflare-d1/``). A hyphen joins words in a title as in a
    folder name ("Collision-Zone Thinking" in ``collision-zone-thinking/``)."""
    words = [part for word in name.split() for part in word.split("-") if part]
    parts = dirname.lower().split("-")
    if len(parts) > len(words):
        return False
    at = 0
    for word in words:
        if at == len(parts):
            break  # the folder is the title's head; the rest qualifies it
        if parts[at] in (word.lower(), _capitals(word)):
            at += 1
        elif word.lower() not in _LINKING_WORDS:
            return False
    return at == len(parts)


def _capitals(word: str) -> str:
    capitals = "".join(c for c in word if c.isupper()).lower()
    return capitals if len(capitals) > 1 and not word.isupper() else ""


@dataclass
class _Checked:
    """A bundle past its integrity checks: its digest and the version already holding it."""

    digest: str
    legacy: str | None  # the SKILL.md hash a pre-bundle lockfile pins a one-file bundle by
    known: Version | None


def _check_bundle(
    bundle: Bundle,
    expected: str | None,
    expected_digest: str | None,
    stored: Callable[[str], Version | None] | None,
) -> _Checked:
    skill_sha = _skill_sha(bundle)
    if expected:
        check_integrity(bundle.skill_md, expected)  # before parsing: a wrong card is never parsed
    digest = bundle.digest
    if expected_digest and ":" in expected_digest:  # another tool's digest, named by its kind
        kind, _, value = expected_digest.partition(":")
        files = [(f.path, bundle.contents[f.path]) for f in bundle.files]
        got = npx_hash(files) if kind == NPX else skill_digest(files)
        if got != value:
            raise IntegrityError(f"{kind} digest mismatch: expected {value}, got {got}")
    elif expected_digest and expected_digest != digest:
        raise IntegrityError(f"bundle digest mismatch: expected {expected_digest}, got {digest}")
    legacy = skill_sha if len(bundle.files) == 1 else None
    return _Checked(digest, legacy, stored(digest) if stored is not None else None)


def _read_pins(lockfile: str | os.PathLike) -> Mapping[str, str]:
    """Our lockfile's pins, or npx's skills-lock.json as pins (our digest where ``lock --format
    npx`` wrote it, else ``npx:COMPUTEDHASH``)."""
    from chimera_cards._importer.npxlock import is_npx_lock, read_npx_lock

    if not is_npx_lock(lockfile):
        return read_lockfile(lockfile)
    return Pins(
        {
            name: entry.chimera_digest or f"npx:{entry.computed_hash}"
            for name, entry in read_npx_lock(lockfile).items()
            if entry.chimera_digest or entry.computed_hash
        }
    )


def _check_pin(
    pins: Mapping[str, str], name: str, checked: _Checked, bundle: Bundle, source: str
) -> None:
    """``check_pin``, or for a pin read from npx's skills-lock.json (``npx:HASH``), the same
    refusal when the files' computedHash is another."""
    expected = pins.get(name)
    if isinstance(expected, str) and expected.startswith("npx:"):
        got = npx_hash((f.path, bundle.contents[f.path]) for f in bundle.files)
        if got != expected[4:]:
            raise LockfileError(
                f"{name}: npx computedHash {got} does not match {source} ({expected[4:]}); "
                "some file of the skill differs from what npx locked"
            )
        return
    check_pin(pins, name, checked.digest, source=source, legacy=checked.legacy)


def _candidate(
    bundle: Bundle,
    checked: _Checked,
    analysis: Analysis | None,
    *,
    origin: str,
    final_url: str | None,
    from_url: bool,
    pins: Mapping[str, str] | None,
    pins_source: str,
    taint: bool | str,
    file: Path | None,
    source: dict | None,
    approvals: bytes | None,
) -> Candidate:
    common: dict[str, Any] = dict(
        sha256=checked.digest,
        raw=bundle.skill_md,
        origin=origin,
        final_url=final_url,
        file=file,
        bundle=bundle,
        source=dict(source or {}),
        approvals=approvals,
    )
    known = checked.known
    if known is not None:
        if pins is not None:
            _check_pin(pins, known.name, checked, bundle, pins_source)
        return Candidate(
            name=known.name, provenance=known.provenance, taint_reasons=[], findings=[], **common
        )
    assert analysis is not None
    if pins is not None:
        _check_pin(pins, analysis.name, checked, bundle, pins_source)
    reasons = []
    if from_url:
        reasons.append("imported from a URL")
    if isinstance(taint, str) and taint:
        reasons.append(taint)
    elif taint:
        reasons.append("--taint given")
    if analysis.declared_taint:
        reasons.append(analysis.declared_taint)
    return Candidate(
        name=analysis.name,
        provenance="tainted" if reasons else "clean",
        taint_reasons=reasons,
        findings=analysis.findings,
        stored_findings=analysis.stored_findings,
        findings_json=analysis.findings_json,
        **common,
    )


def prepare(
    bundle: Bundle,
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
    expected_digest: str | None = None,
    dirname: str | None = None,
    source: dict | None = None,
    approvals: bytes | None = None,
    scan_cache: ScanCache | None = None,
) -> Candidate:
    """Integrity, parse, pin, provenance and lint for a bundle already read.

    ``expected`` pins the SKILL.md bytes (``--digest skill_md:HEX``), ``expected_digest`` the
    whole bundle (``--digest``); both are checked before anything is parsed. ``stored(digest)``
    returns the version already holding this bundle, if any: it was parsed and linted when it
    was stored and its import is a no-op, so it is not parsed again (only its pins are checked).
    ``scan_cache`` lets the skills of one import share the scan of files they have in common.
    """
    checked = _check_bundle(bundle, expected, expected_digest, stored)
    analysis = None
    if checked.known is None:
        analysis = analyse(bundle, origin=origin, dirname=dirname, scan_cache=scan_cache)
    return _candidate(
        bundle,
        checked,
        analysis,
        origin=origin,
        final_url=final_url,
        from_url=from_url,
        pins=pins,
        pins_source=pins_source,
        taint=taint,
        file=file,
        source=source,
        approvals=approvals,
    )


def _within(found: list[SkillSource], path: str | None, source: str) -> list[SkillSource]:
    """The skills in folder ``path`` of an archive or repository (all of them for None).

    Raises:
        UsageError: none is.
    """
    if not path:
        return found
    inside = path.strip("/")
    kept = [
        s
        for s in found
        if str(s.info.get("path", "")) == inside
        or str(s.info.get("path", "")).startswith(inside + "/")
    ]
    if not kept:
        raise UsageError(f"{source}: no skill in {inside!r}")
    return kept


def _adopted_folders(store: Store, found: list[SkillSource]) -> Mapping[str, set[str]]:
    """The installed copies ``adopt`` took (only asked when a local folder is imported)."""
    if any(s.info.get("kind") == "folder" for s in found):
        return store.adopted_folders()
    return {}


def _copy_edited(item: SkillSource, adopted: Mapping[str, set[str]]) -> str:
    """Why a local folder is held though its path is local: it is an installed copy (our
    receipt is in it, or ``adopt`` took it from npx) whose bytes changed since. An edit of a
    copy an agent reads is drift, and must not become a version by being imported."""
    if item.info.get("kind") != "folder" or item.bundle is None:
        return ""
    folder = str(item.info.get("path") or "")
    digest = item.bundle.digest
    known = adopted.get(folder)
    if known and digest not in known:
        return "an installed copy npx put there, edited since it was adopted"
    receipt = read_receipt_bytes(folder)
    if receipt is not None:
        try:
            installed = json.loads(receipt).get("digest")
        except (ValueError, AttributeError):
            installed = None
        if isinstance(installed, str) and installed != digest:
            return "an installed copy, edited since chimera-cards installed it"
    return ""


def _refused(source: str, exc: ChimeraError) -> ImportResult:
    return ImportResult(
        source=source,
        outcome="refused",
        error=str(exc),
        exit_code=exc.exit_code,
        error_kind=type(exc).__name__,
    )


def _store_batch(
    store: Store, batch: list[tuple[str, Candidate]], hooks: list[Callable]
) -> list[ImportResult]:
    results: list[ImportResult] = []
    with store.transaction() as conn:
        # Digests and names nothing in the store has yet (asked once for the batch, inside its
        # transaction): those cards need no lookup of their own before they are stored.
        unknown = store.unknown_digests(cand.sha256 for _, cand in batch)
        unnamed = store.unknown_names(cand.name for _, cand in batch)
        for source, cand in batch:
            try:
                with store.savepoint("card"):
                    version, new = _store_one(
                        store, conn, cand, cand.sha256 in unknown, cand.name in unnamed
                    )
                    unknown.discard(cand.sha256)  # a second card with either must look
                    unnamed.discard(cand.name)
                    for hook in hooks:
                        changed = hook(store, conn, cand, version, new)
                        if changed:
                            version = changed
                            unknown.clear()  # a hook changed rows: look everything up again
                            unnamed.clear()
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
                    digest=version.digest,
                    skill_sha256=version.skill_sha256,
                    files=len(cand.bundle.files) if cand.bundle is not None else 1,
                    scanners=[run.to_dict() for run in cand.scanner_runs] if new else [],
                )
            )
        pause = os.environ.get(PAUSE_ENV)
        if pause:
            Path(pause).write_text(str(os.getpid()))
            time.sleep(60)
    return results


def _known(store: Store, name: str, digest: str) -> Version | None:
    """The version of ``name`` with this bundle (a pre-bundle version counts by its digest)."""
    # One query: every version stored as (name, digest) is among those with this digest.
    same = [v for v in store.versions_by_digest(digest) if v.name == name]
    for v in same:
        if v.sha256 == digest:
            return v
    return same[0] if same else None


def _store_one(
    store: Store,
    conn: sqlite3.Connection,
    cand: Candidate,
    unknown: bool = False,
    new_name: bool = False,
) -> tuple[Version, bool]:
    """Store one candidate (``unknown``: nothing in the store has its digest; ``new_name``: no
    version has its name; both as asked in this transaction) -> (its version, whether this
    stored it)."""
    # Same connection: the lookup sees this transaction.
    existing = None if unknown else _known(store, cand.name, cand.sha256)
    if existing is not None:
        return existing, False  # same bundle again: no-op, whatever the status (rejected stays)
    assert cand.bundle is not None
    digest = store.put_bundle(conn, cand.bundle, new=unknown)
    hold = cand.hold_reasons()
    version = store.add_version(
        conn,
        name=cand.name,
        sha256=digest,
        origin=cand.origin,
        final_url=cand.final_url,
        provenance=cand.provenance,
        status="pending" if hold else "active",
        reason="; ".join(hold),
        findings=(
            cand.stored_findings
            if cand.stored_findings is not None
            else [f.to_dict() for f in cand.findings]
        ),
        detail={
            "files": len(cand.bundle.files),
            **({"source": cand.source} if cand.source else {}),
        },
        source=cand.source,
        skill_sha256=cand.skill_sha256,
        findings_json=cand.findings_json,
        new_name=new_name,
    )
    for run in cand.scanner_runs:
        store.put_scanner_result(conn, version, run.to_dict())
    return version, True


def _stored_by_digest(store: Store) -> Callable[[str], Version | None]:
    def lookup(digest: str) -> Version | None:
        found = store.versions_by_digest(digest)
        return found[0] if len(found) == 1 else None

    return lookup


def import_source(
    store: Store,
    source: str | os.PathLike,
    *,
    sha256: str | None = None,
    integrity: str | None = None,
    digest: str | None = None,
    lockfile: str | os.PathLike | Mapping[str, str] | None = None,
    taint: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    hooks: Iterable[str | Callable] | None = None,
    ref: str | None = None,
    skill: str | None = None,
    plugin: str | None = None,
    path: str | None = None,
    jobs: int | None = None,
    hosts: GitHosts | None = None,
    scanners: Sequence[ScannerConfig] = (),
    source_note: Mapping | None = None,
) -> list[ImportResult]:
    """Import every skill SOURCE names; one ImportResult per skill, in order.

    Args:
        store: the open store.
        source: a skill folder, a collection, a SKILL.md, an archive (path or URL), a git
            repository (path or URL), or a SKILL.md URL (see ``sources.find_skills``).
        sha256, integrity: pin the SKILL.md bytes (one skill only).
        digest: pin the bundle digest (one skill only): ours, or another tool's named by its
            prefix (``npx:``, ``skill_digest:``; see ``bundles.digests``).
        lockfile: pins by name (bundle digests; older lockfiles' SKILL.md hashes still read).
        taint: hold the import for review whatever its origin.
        ref: a git branch, tag or commit.
        skill: import only the skill of this name (folder or frontmatter name).
        plugin: import only the skills of this plugin of a Claude Code marketplace.
        path: only the skills in this folder of an archive or repository (as npx records a
            skill's place in its source).
        hosts: what ``owner/repo`` and github.com / gitlab.com URLs clone from (default: the
            environment's ``CHIMERA_CARDS_GITHUB_URL`` / ``CHIMERA_CARDS_GITLAB_URL``).
        jobs: worker processes that parse and lint; None: one per CPU once there are
            ``POOL_MIN_BUNDLES`` bundles to read, else none; 1: none (this process does it).
        scanners: other scanners (SARIF plug-ins) to run over each new bundle's files, besides
            those the store configures ``on_import``; their findings are stored with the
            version, and an error among them (or a scanner that fails or times out) holds it.
        source_note: what another tool recorded about where the skill came from (``adopt``:
            npx's lock entry), kept in each version's source as ``recorded``.
    Returns:
        One result per skill: imported, present or refused.
    Raises (nothing stored) only for a bad invocation: a malformed hash, an unreadable lockfile,
    a path that does not exist, a source without skills, a pin with several skills.
    A source that cannot be read at all (fetch, git, unsafe archive) is one refused result.
    """
    expected = expected_hex(sha256, integrity)
    pin = parse_digest(digest, "--digest") if digest else None
    # Ours as bare hex; another tool's digest as "kind:value" (checked over the same files).
    expected_digest = None if pin is None else pin.value if pin.kind == BUNDLE else str(pin)
    if lockfile is None or isinstance(lockfile, Mapping):
        pins, pins_source = lockfile, "the lockfile"
    else:
        pins, pins_source = _read_pins(lockfile), str(lockfile)
    hook_fns = [resolve_hook(h) for h in (IMPORT_HOOKS if hooks is None else hooks)]
    scanners = import_scanners(store, scanners)
    source = str(source)
    try:
        # Left unread: each skill is read when the import gets to it (see _Checks).
        found = find_skills(
            source, ref=ref, timeout=timeout, ssl_context=ssl_context, read=False, hosts=hosts
        )
    except UsageError:
        raise
    except ChimeraError as exc:
        if exc.exit_code == 2 and not isinstance(exc, IntegrityError):
            raise
        return [_refused(source, exc)]
    if plugin is not None:
        found = pick_plugin(found, plugin, source=source)
    found = _within(found, path, source)
    if skill is not None:
        found = pick(found, skill, source=source)
    if not found:
        raise UsageError(
            f"{source}: no cards found (expected a SKILL.md, a skill folder, a folder of "
            "them, an archive or a repository holding them)"
        )
    if (expected or expected_digest) and len(found) != 1:
        raise UsageError(
            f"{source}: --digest pins one card but this holds "
            f"{len(found)}; use --skill NAME or --lockfile"
        )
    # Each skill is read and checked (integrity, the stored-version lookup) in order; the pure
    # steps (parse, lint) of those not stored yet run ahead in worker processes for a big
    # import; pins, provenance and storing follow in order while the workers go on.
    if jobs is None and len(found) < POOL_MIN_BUNDLES:
        jobs = 1
    checks = _Checks(
        iter(found), expected, expected_digest, _stored_by_digest(store), store.unknown_digests
    )
    adopted = _adopted_folders(store, found)
    analyses = _analyses(checks.to_analyse(), jobs)
    results: list[ImportResult | None] = []
    batch = (
        _Batch(limit=BATCH_CARDS)
        if jobs == 1
        else _Batch(limit=BATCH_CARDS, file_limit=POOL_BATCH_FILES, tail_limit=POOL_BATCH_CARDS)
    )
    try:
        while (entry := checks.next()) is not None:
            label, item, checked = entry
            if isinstance(checked, ChimeraError):
                results.append(_refused(label, checked))
                continue
            assert item.bundle is not None
            # Outside the card's try: a dead worker (WorkerError) ends the import, not one card.
            analysis = None if checked.known is not None else next(analyses)
            try:
                if isinstance(analysis, ChimeraError):
                    raise analysis
                cand = _candidate(
                    item.bundle,
                    checked,
                    analysis,
                    origin=item.origin,
                    final_url=item.final_url,
                    from_url=item.network,
                    pins=pins,
                    pins_source=pins_source,
                    taint=taint or item.taint_reason or _copy_edited(item, adopted),
                    file=item.skill_file,
                    source=(
                        {**item.info, "recorded": dict(source_note)} if source_note else item.info
                    ),
                    approvals=item.approvals,
                )
                # Over the exact files the store will keep, under the skill's name.
                cand.scanner_runs = scan_bundle_with(
                    scanners if checked.known is None else (), item.bundle, dirname=cand.name
                )
            except ChimeraError as exc:
                results.append(_refused(label, exc))
                continue
            results.append(None)  # filled when its batch is stored
            if batch.add(len(results) - 1, label, cand, left=len(found) - len(results)):
                batch.store(store, hook_fns, results)
    finally:
        analyses.close()  # stops the worker pool, if any, whatever happened above
    batch.store(store, hook_fns, results)
    return [r for r in results if r is not None]


@dataclass
class _Checks:
    """The skills of an import, read and checked one at a time, in order, for two readers: the
    loop that stores them (``next``) and the analysis that runs ahead of it (``to_analyse``, the
    bundles not stored yet). Each skill is read once, when the first of the two gets to it."""

    found: Iterator[SkillSource]
    expected: str | None
    expected_digest: str | None
    stored: Callable[[str], Version | None]
    # Which of some digests the store has never seen (one query for many).
    unknown: Callable[[Iterable[str]], set[str]]
    queued: deque[tuple[str, SkillSource, _Checked | ChimeraError]] = field(default_factory=deque)
    unanalysed: deque[SkillSource] = field(default_factory=deque)

    def _pull(self) -> bool:
        """Read and check the next few skills (one query asks which digests are new)."""
        read: list[tuple[SkillSource, ChimeraError | None]] = []
        for item in itertools.islice(self.found, CHECK_BLOCK):
            try:
                read_skill(item)
                if item.error is not None:
                    raise item.error
                read.append((item, None))
            except ChimeraError as exc:
                read.append((item, exc))
        if not read:
            return False
        digests = [i.bundle.digest for i, error in read if error is None and i.bundle is not None]
        unknown = self.unknown(digests)

        def stored(digest: str) -> Version | None:
            return None if digest in unknown else self.stored(digest)

        for item, error in read:
            checked: _Checked | ChimeraError
            if error is not None:
                checked = error
            else:
                assert item.bundle is not None
                try:
                    checked = _check_bundle(
                        item.bundle, self.expected, self.expected_digest, stored
                    )
                except ChimeraError as exc:
                    checked = exc
            self.queued.append((_label(item), item, checked))
            if isinstance(checked, _Checked) and checked.known is None:
                self.unanalysed.append(item)
        return True

    def next(self) -> tuple[str, SkillSource, _Checked | ChimeraError] | None:
        """The next skill to store (or refuse), with its checks; None after the last."""
        if not self.queued and not self._pull():
            return None
        return self.queued.popleft()

    def to_analyse(self) -> Iterator[SkillSource]:
        """The skills ``next`` will give with nothing stored yet, in the same order."""
        while self.unanalysed or self._pull():
            if self.unanalysed:
                yield self.unanalysed.popleft()


@dataclass
class _Batch:
    """Candidates waiting for one write transaction, with the result slot each fills."""

    limit: int  # cards
    file_limit: int | None = None  # files of those cards (None: no bound)
    tail_limit: int | None = None  # cards, once fewer than POOL_TAIL_CARDS skills are left
    slots: list[int] = field(default_factory=list)
    candidates: list[tuple[str, Candidate]] = field(default_factory=list)
    size: int = 0
    files: int = 0

    def add(self, slot: int, label: str, cand: Candidate, left: int | None = None) -> bool:
        """Queue a candidate (``left``: skills of the import after it); True when the batch is
        full and should be stored."""
        if self.tail_limit is not None and left is not None and left < POOL_TAIL_CARDS:
            self.limit = self.tail_limit
        self.slots.append(slot)
        self.candidates.append((label, cand))
        if cand.bundle is not None:
            self.size += cand.bundle.total_bytes
            self.files += len(cand.bundle.files)
        else:
            self.size += len(cand.raw)
            self.files += 1
        return (
            len(self.candidates) >= self.limit
            or (self.file_limit is not None and self.files >= self.file_limit)
            or self.size >= BATCH_BYTES
        )

    def store(self, store: Store, hooks: list[Callable], results: list) -> None:
        if self.candidates:
            stored = _store_batch(store, self.candidates, hooks)
            for slot, result in zip(self.slots, stored, strict=True):
                results[slot] = result
        self.slots, self.candidates, self.size, self.files = [], [], 0, 0


# Skills read and checked at a time, ahead of storing them: one query for their digests.
CHECK_BLOCK = 32
# A pool of workers pays for itself from about this many bundles to parse and lint.
POOL_MIN_BUNDLES = 64
# Bundles per task sent to a worker: enough to amortise the round trip, small enough to spread.
# Bytes bound a chunk of skill folders (analysis costs grow with bytes): some four chunks per MB
# keep every worker busy to the end, rather than one finishing a big last chunk alone.
CHUNK_BUNDLES = 32
CHUNK_BYTES = 256 * 1024

_Job = tuple[tuple[BundleFile, ...], dict[str, bytes], str, str | None, tuple[tuple[str, str], ...]]


def _analyses(
    skills: Iterable[SkillSource], jobs: int | None
) -> Generator[Analysis | ChimeraError, None, None]:
    """``analyse`` of each skill's bundle, in order (a refusal as its error): in this process for
    ``jobs=1``, else chunked over a pool of ``jobs`` workers (None: one per CPU). Closing the
    generator stops the pool."""
    if jobs == 1:
        cache = ScanCache()
        for item in skills:
            yield _analyse_one(_job(item), cache)
        return
    chunks = parallel_map(_analyse_chunk, _chunks(skills), workers=jobs)
    try:
        for chunk in chunks:
            for sent in chunk:
                yield _from_wire(sent)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _job(item: SkillSource) -> _Job:
    assert item.bundle is not None
    # A Bundle's contents are a read-only mapping proxy, which does not pickle: send a dict.
    bundle = item.bundle
    return bundle.files, dict(bundle.contents), item.origin, item.folder or None, bundle.links


def _chunks(skills: Iterable[SkillSource]) -> Iterator[list[_Job]]:
    chunk: list[_Job] = []
    size = 0
    for item in skills:
        job = _job(item)
        chunk.append(job)
        size += sum(len(data) for data in job[1].values())
        if len(chunk) >= CHUNK_BUNDLES or size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _analyse_one(job: _Job, cache: ScanCache) -> Analysis | ChimeraError:
    files, contents, origin, dirname, links = job
    bundle = Bundle(files, MappingProxyType(contents), links)
    # The cyclic collector is paused while one bundle is analysed: its trees, tokens and flow
    # records are freed by their reference counts when it returns (the few cycles wait for the
    # next collection), yet their number alone starts some 45 collections in an import of the
    # benchmark's 35 skills (20 ms of 0.5 s CPU; 3 ms paused). Resumed after each bundle.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return analyse(bundle, origin=origin, dirname=dirname, scan_cache=cache)
    except ChimeraError as exc:
        return exc
    finally:
        if collecting:
            gc.enable()


_Wire = tuple[str, str | None, list[dict], str] | ChimeraError


def _analyse_chunk(chunk: list[_Job]) -> list[_Wire]:
    """The task a worker runs: ``analyse`` every bundle of a chunk (refusals as values). Sent
    back without the Finding objects, which the stored dicts rebuild (half the pickling)."""
    cache = ScanCache()
    out: list[_Wire] = []
    for job in chunk:
        analysis = _analyse_one(job, cache)
        if isinstance(analysis, Analysis):
            out.append(
                (
                    analysis.name,
                    analysis.declared_taint,
                    analysis.stored_findings,
                    analysis.findings_json,
                )
            )
        else:
            out.append(analysis)
    return out


def _from_wire(sent: _Wire) -> Analysis | ChimeraError:
    if isinstance(sent, ChimeraError):
        return sent
    name, declared, stored, stored_json = sent
    findings = [
        Finding(d["rule"], d["severity"], d["message"], d["line"], d["path"]) for d in stored
    ]
    return Analysis(name, declared, findings, stored, stored_json)


def _label(item: SkillSource) -> str:
    # A folder's result names its SKILL.md, as single-card imports always have.
    return str(item.skill_file) if item.skill_file is not None else item.label
