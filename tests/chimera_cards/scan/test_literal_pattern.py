"""``literal_pattern`` gates rules with one trie regex instead of a substring search per literal:
it must match exactly where one of the literals occurs, the longest one at an offset."""

from __future__ import annotations

import random
import re

from chimera_cards._scan.prosesentences import _ALL_PIECES
from chimera_cards._scan.sensitive import (
    _STORE_COMMAND_RE,
    CREDENTIAL_LITERALS,
    CREDENTIAL_PATH_RE,
    credential_in,
)
from chimera_cards._scan.textruns import literal_pattern


def test_trie_matches_every_offset_where_a_literal_starts_with_the_longest_there():
    words = ["ab", "abc", "b", "bcd", "cd", "x.y", "a b"]
    pattern = re.compile("(?=(" + literal_pattern(words) + "))")
    rng = random.Random(3)
    for _ in range(2000):
        text = "".join(rng.choice("abcdxy. ") for _ in range(rng.randint(0, 12)))
        found = {m.start(): m.group(1) for m in pattern.finditer(text)}
        expected = {}
        for at in range(len(text)):
            here = [w for w in words if text.startswith(w, at)]
            if here:
                expected[at] = max(here, key=len)
        assert found == expected, text


def test_credential_gate_answers_as_the_regexes_alone_do():
    pieces = [*CREDENTIAL_LITERALS, "x", "/", "~", "~/", " ", "KEY", ".Env", "x" * 120]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        match = CREDENTIAL_PATH_RE.search(text) or _STORE_COMMAND_RE.search(text)
        assert credential_in(text) == (match.group(0) if match else None), text
    assert credential_in("cat ~/.ssh/id_rsa") is not None
    assert credential_in("x" * 300 + " ~/.aws/credentials") is not None  # the long-text path


def test_prose_pieces_are_ascii_so_offsets_of_the_lower_text_hold():
    assert all(p.isascii() for p in _ALL_PIECES)
