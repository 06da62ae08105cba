"""textruns.py: a gate may answer "no run" only when the regex for that run finds none."""

from __future__ import annotations

import importlib
import pkgutil
import random
import re
import re._constants as sre
import re._parser as sre_parse
import sys

import pytest

import chimera_cards._scan as scan_package
from chimera_cards._scan.textruns import FOLDS_APART_RE, LiteralGated, Literals, RunGate, led

ALPHABET = ["a", "F", "0", "9", "g", "+", "/", " ", "\n", "é", "ａ", "\u00a0", "\x00", "😀"]


def texts(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        yield "".join(rng.choice(ALPHABET) * rng.randint(1, 6) for _ in range(rng.randint(0, 30)))


def test_an_ascii_set_gate_is_exact():
    gate = RunGate.of("0123456789abcdefABCDEF")
    for text in texts(3000, 1):
        for n in (1, 3, 8):
            assert gate.has_run(text, n) == bool(re.search(rf"[0-9a-fA-F]{{{n}}}", text)), text


def test_count_runs_counts_pieces_of_a_run():
    gate = RunGate.of("ab")
    assert gate.count_runs("ab ab", 2) == 2
    assert gate.count_runs("abab", 2) == 2
    assert gate.count_runs("aba", 2) == 1
    assert gate.count_runs("é" * 9, 1) == 0


def test_a_gate_set_is_ascii():
    with pytest.raises(ValueError):
        RunGate.of("é")


def test_literals_find_every_occurrence_a_substring_search_finds():
    # Overlapping and nested words, offsets past characters outside ASCII and the BMP.
    words = ("our", "you", "yo", "ab", "aba", "a", "é", "😀a")
    literals = Literals(words)
    alphabet = ["a", "b", "y", "o", "u", "r", "é", "😀", " ", "\n"]
    rng = random.Random(5)
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        expected = sorted(
            (index, at)
            for index, word in enumerate(words)
            for at in range(len(text))
            if text.startswith(word, at)
        )
        assert sorted(literals.occurrences(text)) == expected, text


@pytest.mark.slow
def test_only_the_three_listed_characters_lower_case_apart_from_case_blind_matching():
    # A character matches a printable ASCII character (a letter, or the digits and punctuation
    # gate literals hold) case-blind exactly when it lower-cases to it, and keeps one character
    # lower-cased, for every code point but İ, ı and ſ.
    letter = re.compile("[ -~]", re.IGNORECASE)
    points = "".join(chr(p) for p in range(0x80, sys.maxunicode + 1) if not 0xD800 <= p < 0xE000)
    apart = {m.group() for m in letter.finditer(points)}  # none lower-cases to ASCII
    for char in points:
        lower = char.lower()
        if len(lower) != 1 or (lower.isascii() and letter.fullmatch(lower) is not None):
            apart.add(char)
    apart.discard("\u212a")  # the Kelvin sign: matches "k" case-blind, lower-cases to "k"
    assert apart == {"\u0130", "\u0131", "\u017f"}
    assert all(FOLDS_APART_RE.search(char) for char in apart)


# What a lookahead may list: the characters a parsed pattern's matches can start with.
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _item_first(op, arg):
    if op is sre.LITERAL:
        return {chr(arg)}, False
    if op is sre.IN:
        chars = set()
        for kind, value in arg:
            if kind is sre.LITERAL:
                chars.add(chr(value))
            elif kind is sre.RANGE and value[1] - value[0] < 64:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            else:
                return None  # a negation, a category, a wide range
        return chars, False
    if op is sre.BRANCH:
        firsts = [_first_chars(list(alternative)) for alternative in arg[1]]
        if any(got is None for got in firsts):
            return None
        return set().union(*(got[0] for got in firsts)), any(got[1] for got in firsts)
    if op is sre.SUBPATTERN:
        return None if arg[1] or arg[2] else _first_chars(list(arg[3]))
    if op is sre.ATOMIC_GROUP:
        return _first_chars(list(arg))
    if op in _REPEATS:
        got = _first_chars(list(arg[2]))
        return None if got is None else (got[0], got[1] or arg[0] == 0)
    return None  # any character, a back-reference, a category


def _first_chars(items):
    """(characters a match can start with, whether it can be empty), or None: any character."""
    chars = set()
    for op, arg in items:
        if op in _ZERO_WIDTH:
            continue
        got = _item_first(op, arg)
        if got is None:
            return None
        chars |= got[0]
        if not got[1]:
            return chars, False
    return chars, True


def _unlisted(pattern: re.Pattern[str]) -> set[str] | None:
    """The first characters of a led pattern's matches its lookahead does not take; None when
    they cannot be listed."""
    parsed = list(sre_parse.parse(pattern.pattern, pattern.flags))
    lookahead = re.compile(re.match(r"\(\?=(\[.*?\])\)", pattern.pattern).group(1), pattern.flags)
    got = _first_chars(parsed[1:])
    if got is None or got[1]:
        return None
    # case-blind, a letter the class holds in either case takes what the letter takes
    return {c for c in got[0] if not lookahead.fullmatch(c)}


def _led_patterns():
    found = {}
    for info in pkgutil.iter_modules(scan_package.__path__):
        module = importlib.import_module(f"chimera_cards._scan.{info.name}")
        for name, value in vars(module).items():
            values = value if isinstance(value, (tuple, list)) else [value]
            for item in values:
                regex = item.pattern if isinstance(item, LiteralGated) else item
                if isinstance(regex, re.Pattern) and str(regex.pattern).startswith("(?=["):
                    found[f"{info.name}.{name}"] = regex
    return found


def test_every_led_pattern_of_the_scan_lists_every_character_a_match_starts_with():
    patterns = _led_patterns()
    assert len(patterns) >= 20
    for name, pattern in patterns.items():
        assert _unlisted(pattern) == set(), name


# Patterns of the shapes the scan's rules have: case-blind word alternations after \\b, a
# lookbehind first, optional and repeated first parts, groups and a back-reference, a class.
LED_PATTERNS = [
    (r"\b(?:send|sent|upload(?:s|ed)?|post)\b\s+(\w+)", re.I),
    (r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", 0),
    (r"\b(?:sk|kube)\w*|\bSELECT\b", re.I),
    (r"(?:don't\s+|never\s+)?(?:tell|hide)\b", re.I),
    (r"(?:a|b)*c|d+e", 0),
    (r"[a-cX]{2,}|\.env\b", re.I),
    (r"(?>ab|a)c|(?:x)", 0),
]
LED_ALPHABET = ["a", "b", "c", "d", "e", "x", "X", "K", "\u212a", "s", "S", "\u017f", "k", "u",
                "\u0130", "\u0131", "i", "`", ".", " ", "\n", "é", "send", "SENT", "Upload",
                "post", "tell", "hide", "don't ", "never ", "env", "select", "kube",
                "sk"]  # fmt: skip


def _spans(pattern: re.Pattern[str], text: str, pos: int) -> list:
    return [(m.span(), m.groups()) for m in pattern.finditer(text, pos)]


def test_a_led_pattern_finds_what_the_pattern_finds():
    rng = random.Random(11)
    for source, flags in LED_PATTERNS:
        pattern = re.compile(source, flags)
        got = _first_chars(list(sre_parse.parse(source, flags)))
        assert got is not None and not got[1], source
        fast = re.compile(led("".join(map(re.escape, sorted(got[0]))), source), flags)
        assert _unlisted(fast) == set()
        for _ in range(1500):
            text = "".join(rng.choice(LED_ALPHABET) for _ in range(rng.randint(0, 14)))
            pos = rng.randint(0, len(text))
            assert _spans(fast, text, 0) == _spans(pattern, text, 0), (source, text)
            assert _spans(fast, text, pos) == _spans(pattern, text, pos), (source, text, pos)
            match, got_match = pattern.match(text, pos), fast.match(text, pos)
            assert (match and (match.span(), match.groups())) == (
                got_match and (got_match.span(), got_match.groups())
            )


def test_a_lookahead_missing_a_first_character_is_caught():
    assert _unlisted(re.compile(led("a", r"\b(?:ab|cd)"), re.I)) == {"c"}
    assert _unlisted(re.compile(led("aC", r"\b(?:ab|cd)"), re.I)) == set()
    assert _unlisted(re.compile(led("aC", r"\b(?:ab|cd)"))) == {"c"}
    assert _unlisted(re.compile(led("a", r"\w+"))) is None


@pytest.mark.slow
def test_a_case_blind_class_of_one_character_matches_what_the_character_matches():
    # Case-blind, a class must take every character the literal takes, all of Unicode over.
    points = "".join(chr(p) for p in range(sys.maxunicode + 1) if not 0xD800 <= p < 0xE000)
    for code in range(0x21, 0x7F):
        char = re.escape(chr(code))
        literal = [m.start() for m in re.finditer(char, points, re.I)]
        assert [m.start() for m in re.finditer(f"[{char}]", points, re.I)] == literal, char
