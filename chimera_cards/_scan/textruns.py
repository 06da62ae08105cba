"""Cheap exact gates for rules that only match long runs of some characters (blobs, base64).

A regex such as ``[0-9a-fA-F]{200,}`` is tried by ``re`` at every offset of a text, which costs
more than the rest of a file's scan. Most texts hold no run that long: translating the text's
UTF-8 bytes to "in the set" / "not in it" (``bytes.translate``, C speed) and looking for that many
in a row answers whether one exists. When it answers no, the regex cannot match and need not run.

``literal_pattern`` is the other gate: one regex for "any of these literals", written as a trie
(``re`` tries a flat alternation's branches one by one at every offset; a trie fails at the
first character that leads nowhere). ``Literals`` finds every place each of many literals occurs
in one Aho-Corasick pass (ahocorasick_rs): several times faster than the trie regex in a
lookahead, or than a substring search per literal, once there are dozens of them.

``led`` puts the set of characters every match starts with in front of a pattern's source:
``re`` tries a case-blind alternation of words branch by branch at every offset, but one set
test there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ahocorasick_rs import AhoCorasick, Implementation

# Lower-cased, a text keeps every character's place, and a case-blind pattern of lower-case
# ASCII words matches it where the same pattern, case-sensitive, matches the lower-cased text;
# except for these three: "İ" lower-cases to two characters, "ı" and "ſ" match "i" and "s"
# case-blind yet lower-case to themselves (no other character does either; checked over all
# of Unicode in the tests).
FOLDS_APART_RE = re.compile("[\u0130\u0131\u017f]")

_IN = 0x78  # "x"
_OUT = 0x20  # " "


@dataclass(frozen=True)
class RunGate:
    """Whether a text holds ``n`` characters in a row from one set of ASCII characters.

    Each character is looked at as its UTF-8 bytes; a non-ASCII character's bytes are never in
    an ASCII set, so the answer is exact.
    """

    table: bytes

    @classmethod
    def of(cls, chars: str) -> RunGate:
        """A gate for runs of ``chars``.

        Args:
            chars: the ASCII characters of the set.
        Returns:
            The gate.
        Raises:
            ValueError: a character is not ASCII.
        """
        if not chars.isascii():
            raise ValueError("RunGate sets are ASCII")
        return cls(bytes(_IN if chr(i) in chars else _OUT for i in range(256)))

    def has_run(self, text: str, n: int) -> bool:
        """Whether ``text`` holds ``n`` characters of the set in a row.

        Args:
            text: the text.
            n: the run length.
        Returns:
            True if such a run exists.
        """
        return b"x" * n in text.encode("utf-8", "surrogatepass").translate(self.table)

    def count_runs(self, text: str, n: int) -> int:
        """How many non-overlapping pieces of ``n`` set characters in a row the text holds (a run
        of ``2n`` counts twice); below 2, no two separate runs of ``n`` exist.

        Args:
            text: the text.
            n: the piece length.
        Returns:
            The count.
        """
        return text.encode("utf-8", "surrogatepass").translate(self.table).count(b"x" * n)


def literal_pattern(words: list[str] | tuple[str, ...]) -> str:
    """A regex matching exactly the given literals, as a trie; an optional tail is greedy, so
    at one offset the longest literal matches.

    Args:
        words: the literals (non-empty strings).
    Returns:
        The pattern's source (compile it, or embed it in a lookahead to find overlaps).
    """
    root: dict = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:
        alts = [re.escape(c) + emit(sub) for c, sub in sorted(node.items()) if c]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


@dataclass(frozen=True)
class Literals:
    """A set of literals to find everywhere in a text, overlapping occurrences included."""

    words: tuple[str, ...]
    _automaton: AhoCorasick = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A DFA: built in about a millisecond more than the default NFA, searched in half the
        # time (4 ms against 7 ms for the prose pieces over the 53 Markdown files of the corpus).
        automaton = AhoCorasick(list(self.words), implementation=Implementation.DFA)
        object.__setattr__(self, "_automaton", automaton)

    def occurrences(self, text: str) -> list[tuple[int, int]]:
        """Every (index in ``words``, start offset) of an occurrence in ``text``; offsets count
        characters, as ``str`` indexes do.

        Args:
            text: the text.
        Returns:
            The occurrences, in the order of where they end.
        """
        return [
            (index, start)
            for index, start, _ in self._automaton.find_matches_as_indexes(text, overlapping=True)
        ]


@dataclass(frozen=True)
class LiteralGated:
    """A pattern tried only on texts that hold one of its literals.

    ``re`` tries a case-blind alternation of ``\\b``-anchored words at every offset, branch by
    branch; a per-line rule over a file pays that on every line. Every match of ``pattern``
    holds one of ``literals`` (lower-case), so a lower-cased ASCII text holding none of them
    cannot match. The literals are looked for with one trie regex, case-sensitive, which ``re``
    skips through by the set of their first characters. Past ASCII the same holds (the Kelvin
    sign matches ``k`` case-blind and lower-cases to it) but for the three characters of
    ``FOLDS_APART_RE``: a text holding one goes straight to ``pattern``.
    """

    pattern: re.Pattern
    literals: tuple[str, ...]
    _gate: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if any(not word or word != word.lower() for word in self.literals):
            raise ValueError("gate literals are non-empty and lower-case")
        object.__setattr__(self, "_gate", re.compile(literal_pattern(self.literals)))

    def search(self, text: str, lower: str | None = None) -> re.Match | None:
        """``pattern.search(text)``.

        Args:
            text: the text.
            lower: ``text.lower()``, when the caller has it.
        Returns:
            The match, or None.
        """
        if self._gated(text) and self._gate.search(lower or text.lower()) is None:
            return None
        return self.pattern.search(text)

    def finditer(self, text: str, lower: str | None = None) -> list[re.Match]:
        """``list(pattern.finditer(text))``.

        Args:
            text: the text.
            lower: ``text.lower()``, when the caller has it.
        Returns:
            The matches, in order.
        """
        if self._gated(text) and self._gate.search(lower or text.lower()) is None:
            return []
        return list(self.pattern.finditer(text))

    @staticmethod
    def _gated(text: str) -> bool:
        return text.isascii() or FOLDS_APART_RE.search(text) is None


def led(first: str, source: str) -> str:
    """``source`` behind a lookahead for ``first``, the characters every match of it starts
    with: the same matches, found by one set test at each offset instead of a try of every
    branch's first step (``re`` tries a case-blind alternation of ``\\b``-words branch by
    branch). Compiled with the source's own flags, the set folds case as its literals do.
    ``test_led_patterns.py`` checks each led pattern of the scan: a branch starting with a
    character not in ``first`` fails it.

    Args:
        first: the characters (class syntax: escape ``\\``, ``]``, ``^`` and ``-``).
        source: the pattern's source.
    Returns:
        The led source.
    """
    return f"(?=[{first}])(?:{source})"
