"""textruns.py: a gate may answer "no run" only when the regex for that run finds none."""

from __future__ import annotations

import random
import re

import pytest

from chimera_cards._scan.textruns import Literals, RunGate

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
