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

``led`` puts the set of characters every match starts with in front of a pattern: ``re`` tries
a case-blind alternation of words branch by branch at every offset, but one set test there.
"""

from __future__ import annotations

import re
import re._constants as sre
import re._parser as sre_parse
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
    ``FOLDS_APART_RE``: a text holding one goes straight to ``pattern``. Where it runs, the
    pattern runs ``led``.
    """

    pattern: re.Pattern
    literals: tuple[str, ...]
    _gate: re.Pattern = field(init=False, repr=False, compare=False)
    _led: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if any(not word or word != word.lower() for word in self.literals):
            raise ValueError("gate literals are non-empty and lower-case")
        object.__setattr__(self, "_gate", re.compile(literal_pattern(self.literals)))
        object.__setattr__(self, "_led", led(self.pattern))

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
        return self._led.search(text)

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
        return list(self._led.finditer(text))

    @staticmethod
    def _gated(text: str) -> bool:
        return text.isascii() or FOLDS_APART_RE.search(text) is None


_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _class_chars(items: list) -> set[int] | None:
    """The characters of a parsed class, when it lists them (no negation, no category)."""
    chars: set[int] = set()
    for kind, value in items:
        if kind is sre.LITERAL:
            chars.add(value)
        elif kind is sre.RANGE and value[1] - value[0] < 64:
            chars.update(range(value[0], value[1] + 1))
        else:
            return None  # a negation, a category (\\w), a wide range
    return chars


def _item_first(op, arg) -> tuple[set[int], bool] | None:
    """What ``_first_chars`` gives for one parsed item."""
    if op is sre.LITERAL:
        return {arg}, False
    if op is sre.IN:
        chars = _class_chars(arg)
        return None if chars is None else (chars, False)
    if op is sre.BRANCH:
        firsts = [_first_chars(list(alternative)) for alternative in arg[1]]
        if any(got is None for got in firsts):
            return None
        return set().union(*(got[0] for got in firsts)), any(got[1] for got in firsts)  # type: ignore[index]
    if op is sre.SUBPATTERN:
        # flags set or cleared inside change what a character matches
        return None if arg[1] or arg[2] else _first_chars(list(arg[3]))
    if op is sre.ATOMIC_GROUP:
        return _first_chars(list(arg))
    if op in _REPEATS:
        got = _first_chars(list(arg[2]))
        return None if got is None else (got[0], got[1] or arg[0] == 0)
    return None  # any character, a back-reference, a category


def _first_chars(items: list) -> tuple[set[int], bool] | None:
    """The characters a match of ``items`` (a parsed sequence) can start with, and whether it
    can match the empty string; None when that set is not a small list of characters."""
    chars: set[int] = set()
    for op, arg in items:
        if op in _ZERO_WIDTH:
            continue  # consumes nothing: the next item's character is the first
        got = _item_first(op, arg)
        if got is None:
            return None
        chars |= got[0]
        if not got[1]:
            return chars, False
    return chars, True


def led(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` with a lookahead for the characters every match of it starts with: the same
    matches, found by one set test at each offset instead of every branch's first step. A
    pattern whose matches can start anywhere (a category, an empty match) is returned as it is.

    Args:
        pattern: the compiled pattern (a ``str`` one).
    Returns:
        The led pattern, compiled with the same flags, or ``pattern``.
    """
    source = pattern.pattern
    parsed = sre_parse.parse(source, pattern.flags)
    if parsed.state.flags != pattern.flags or (source.startswith("(?") and source[2:3].isalpha()):
        return pattern  # global flags written inline must stay first
    got = _first_chars(list(parsed))
    if got is None or got[1] or not got[0]:
        return pattern
    chars = "".join(re.escape(chr(c)) for c in sorted(got[0]))
    tail = "\n)" if pattern.flags & re.VERBOSE else ")"
    return re.compile(f"(?=[{chars}])(?:{source}{tail}", pattern.flags)
