"""Rendering approved cards for a prompt: each inside a ``<skill-card>`` envelope it cannot
close or forge, its text otherwise exactly as the reviewer read it."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from chimera_cards._cards.card import parse_card
from chimera_cards._cards.prompt import render_card
from chimera_cards._trust.policy import (
    Verdict,
    is_clean_path,
)


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
            "digest": self.sha256,
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


# Refusals that mean the card is broken or tampered with (reported), as opposed to a card that is
# simply not usable (awaiting approvals, rejected), which is absent without a word.
_BROKEN = ("blob is missing", "stored bytes do not match their SHA-256")


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


# The envelope's tag name; a body may hold any text but a sequence that reads as this tag.
_ENVELOPE_TAG = "skill-card"
# Characters a reader (or a model) passes over between '<', '/' and the tag's letters: spaces,
# format and combining characters, controls.
_PASSED_OVER = frozenset({"Cf", "Mn", "Me", "Zs", "Zl", "Zp", "Cc"})
_LOOKAHEAD = 64  # a tag spelt with more filler than this is not read as one


def _reads_as_envelope_tag(text: str, start: int) -> bool:
    """Whether the ``<`` at ``start`` opens something a reader could take for ``<skill-card``
    or ``</skill-card``: case, width, spaces and invisible characters do not count."""
    import unicodedata

    matched, slash = 0, False
    end = min(len(text), start + 1 + _LOOKAHEAD)
    for index in range(start + 1, end):
        ch = text[index]
        if ch.isspace() or unicodedata.category(ch) in _PASSED_OVER:
            continue
        if ch == "/" and matched == 0 and not slash:
            slash = True
            continue
        folded = unicodedata.normalize("NFKC", ch).lower()
        if folded != _ENVELOPE_TAG[matched : matched + len(folded)]:
            return False
        matched += len(folded)
        if matched == len(_ENVELOPE_TAG):
            return True
    return False


def defuse_envelope(text: str) -> str:
    """``text`` as written, except that a ``<`` opening what reads as the envelope's own tag
    becomes ``&lt;``: the one change that keeps a card from closing or forging ``<skill-card>``.

    Args:
        text: card text (or a file listing) going inside the envelope.
    Returns:
        The text, unchanged unless it spells the envelope's tag.
    """
    if "<" not in text:
        return text
    out, last = [], 0
    position = text.find("<")
    while position != -1:
        if _reads_as_envelope_tag(text, position):
            out.append(text[last:position])
            out.append("&lt;")
            last = position + 1
        position = text.find("<", position + 1)
    out.append(text[last:])
    return "".join(out)


def render_one(m: Match) -> str:
    """One match as a ``<skill-card ...>`` block, its text as written except where it would read
    as the envelope's own tag (``defuse_envelope``), so it cannot close the wrapper.

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
        listing = f"\nOther files in this skill:\n{defuse_envelope(lines)}"
    return (
        f'<skill-card name="{_attr(m.name)}" digest="{_attr(m.sha256)}" '
        f'provenance="{_attr(m.provenance)}" review="{_attr(review)}">\n'
        f"{defuse_envelope(m.text.rstrip())}\n"
        f"{listing}"
        "</skill-card>"
    )


def render_for_prompt(matches: list[Match]) -> str:
    """The cards as prompt text. Card text arrives as written (``cd x && make`` stays a command
    to run), yet cannot close or forge a ``<skill-card>`` wrapper: only a ``<`` opening that tag
    is written ``&lt;``."""
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
