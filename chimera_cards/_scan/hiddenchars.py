"""The hidden-instruction scan's characters: which code points hide text (bidi controls,
zero-width and blank letters, variation selectors, Tag characters, the other default-ignorable
ones), which of them are innocent where they stand (an emoji's selector or joiner, a lone
zero-width space on a blank line), ``reveal(text)`` to show them, and the scan that reports
them, one finding per run."""

from __future__ import annotations

import re
import unicodedata

from chimera_cards._scan.described import names_the_character
from chimera_cards._scan.findings import (
    ERROR,
    INFO,
    MESSAGE_QUOTE_MAX,
    Finding,
    _Collector,
    _Lines,
)

_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}
_ZERO_WIDTH = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E}
# Characters that render as blank but are not category Cf (Hangul fillers, braille blank,
# combining grapheme joiner, Khmer inherent vowels).
_BLANK_LETTERS = {0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x034F, 0x17B4, 0x17B5}
# Mongolian free variation selectors (U+180B-180D, U+180F) carry bits like U+FE00-FE0F.
_VS = set(range(0xFE00, 0xFE10)) | {0x180B, 0x180C, 0x180D, 0x180F}
_VS_SUPPLEMENT = range(0xE0100, 0xE01F0)
# Default_Ignorable_Code_Point from Unicode's DerivedCoreProperties.txt: what a renderer may draw
# as nothing. Every one is hidden (the test suite checks this table against the property where
# the `regex` module can name it); those not in a class above are hidden-format.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_IGNORABLE = frozenset(cp for lo, hi in DEFAULT_IGNORABLE for cp in range(lo, hi + 1))


def _hidden_class(ch: str) -> str | None:
    """The rule id a single character falls under, or None if it is visible/ordinary."""
    cp = ord(ch)
    if cp in _BIDI:
        return "hidden-bidi"
    if cp in _ZERO_WIDTH:
        return "hidden-zero-width"
    if 0xE0000 <= cp <= 0xE007F:
        return "hidden-tag"
    if cp in _VS or cp in _VS_SUPPLEMENT:
        return "hidden-variation-selector"
    if ch in "\n\t":
        return None
    category = unicodedata.category(ch)
    if category == "Cc":
        return "hidden-control"
    if category in ("Cf", "Zl", "Zp", "Co") or cp in _BLANK_LETTERS or cp in _IGNORABLE:
        return "hidden-format"
    return None


def _char_label(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def _decode_tags(run: str) -> str:
    """Tag characters mirror ASCII at U+E0000 + n; decode the printable ones."""
    out = []
    for ch in run[:MESSAGE_QUOTE_MAX]:
        cp = ord(ch) - 0xE0000
        out.append(chr(cp) if 0x20 <= cp <= 0x7E else f"<U+{ord(ch):04X}>")
    return "".join(out)


def reveal(text: str) -> str:
    """Make hidden characters visible: ``<U+202E>`` for each, Tag runs decoded as ``<TAG:text>``.

    A lone U+FE0E/U+FE0F right after a visible character (the emoji presentation selector in
    "⚠️") and a U+200D joining two pictographs (an emoji ZWJ sequence) are left alone; they are
    ordinary text.
    """
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        kind = _hidden_class(ch)
        if kind == "hidden-tag":
            j = i
            while j < len(text) and _hidden_class(text[j]) == "hidden-tag":
                j += 1
            out.append(f"<TAG:{_decode_tags(text[i:j])}>")
            i = j
            continue
        if (kind == "hidden-variation-selector" and _is_lone_emoji_selector(text, i)) or (
            kind == "hidden-zero-width" and _is_emoji_joiner(text, i)
        ):
            out.append(ch)
        elif kind is not None:
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _is_lone_emoji_selector(text: str, i: int) -> bool:
    cp = ord(text[i])
    if cp not in (0xFE0E, 0xFE0F):
        return False
    # Emoji (non-ASCII) and keycap bases take a presentation selector; after a plain letter it
    # could only be carrying bits.
    prev = text[i - 1] if i > 0 else ""
    before_ok = (
        bool(prev) and _hidden_class(prev) is None and (ord(prev) > 0x7F or prev in "0123456789#*")
    )
    after = text[i + 1] if i + 1 < len(text) else ""
    return before_ok and not (after and _hidden_class(after) == "hidden-variation-selector")


# Blocks of pictographs (Miscellaneous Symbols, Dingbats, arrows and shapes, the emoji planes):
# the characters emoji ZWJ sequences join. No letter of any script is in them.
_PICTOGRAPH_BLOCKS = ((0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F000, 0x1FAFF))


def _is_pictograph(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _PICTOGRAPH_BLOCKS)


def _is_emoji_joiner(text: str, i: int) -> bool:
    """Whether the U+200D at ``i`` joins two pictographs, as emoji ZWJ sequences are spelled
    (eye + ZWJ + speech bubble, woman + ZWJ + laptop; a presentation selector or a skin tone may
    end the first). Between letters, or two in a row, it splits a word or carries bits."""
    if text[i] != "\u200d" or i == 0 or i + 1 >= len(text) or not _is_pictograph(text[i + 1]):
        return False
    before = i - 1
    if ord(text[before]) == 0xFE0F or 0x1F3FB <= ord(text[before]) <= 0x1F3FF:
        before -= 1
    return before >= 0 and _is_pictograph(text[before])


# Zero-width characters a text may hold when each is alone on its line (a spacer paragraph or
# two); more are read as a message, one bit a line.
_LONE_ZERO_WIDTH_MAX = 2


def _is_blank_paragraph(text: str, i: int, j: int) -> bool:
    """Whether the zero-width run ``text[i:j]`` is one character alone on its line (an empty
    paragraph kept by an HTML-to-Markdown conversion): it splits no word, and one character
    carries no message. Two or more in a row can carry bits; next to text they split a word."""
    if j - i != 1:
        return False
    line_start = text.rfind("\n", 0, i) + 1
    line_end = text.find("\n", j)
    return (
        not text[line_start:i].strip()
        and not text[j : len(text) if line_end < 0 else line_end].strip()
    )


def _escapes_a_fence(text: str, i: int, j: int) -> bool:
    """Whether the zero-width run ``text[i:j]`` is one character opening its line right before a
    code fence (three backticks or tildes): the way a page shows a fence inside a fenced block
    without closing it. It splits no word, and one character carries no message."""
    if j - i != 1 or text[i] != "\u200b":
        return False
    line_start = text.rfind("\n", 0, i) + 1
    return not text[line_start:i].strip() and text.startswith(("```", "~~~"), j)


def _snippet(text: str, start: int, end: int, width: int = 40) -> str:
    # Look for the line's ends only within the window, so a long line costs no more.
    line_start = text.rfind("\n", max(0, start - width), start) + 1
    line_end = text.find("\n", end, end + width)
    line_end = min(len(text), end + width) if line_end == -1 else line_end
    lo = max(line_start, start - width)
    hi = min(line_end, end + width)
    return reveal(text[lo:hi]).strip()


# Printable ASCII, tab and newline are never hidden; only other characters need a closer look.
_CANDIDATE_RE = re.compile(r"[^\t\n\x20-\x7e]")
_COMMON_BYTES = bytes([9, 10, *range(0x20, 0x7F)])


def _rare_chars(text: str) -> str:
    """Each character of ``text`` other than printable ASCII, tab and newline, once: the only
    ones the character scan and the reader's-view text need to look at (few, in real cards).
    Dropping those bytes from the UTF-8 leaves every other character's bytes whole."""
    if text.isascii() and text.replace("\n", " ").replace("\t", " ").isprintable():
        return ""
    rest = text.encode("utf-8", "surrogatepass").translate(None, _COMMON_BYTES)
    return "".join(set(rest.decode("utf-8", "surrogatepass")))


_HIDDEN_MESSAGES = {
    "hidden-bidi": "bidi control",
    "hidden-zero-width": "zero-width character",
    "hidden-variation-selector": "variation selector run",
    "hidden-control": "control character",
    "hidden-format": "invisible/format character",
}


def _scan_characters(
    text: str, lines: _Lines, out: _Collector, *, fast: bool = True, rare: str | None = None
) -> None:
    """``fast=False`` looks at every character (the reference the fast path is tested against).
    ``rare``: ``_rare_chars(text)``, when the caller has it."""
    if fast:
        if rare is None:
            rare = _rare_chars(text)
        if not any(_hidden_class(char) for char in rare):
            return  # no candidate is hidden (cards have a few dashes and arrows): nothing to report
    i = 0
    lone: int | None = None
    while True:
        if fast:
            match = _CANDIDATE_RE.search(text, i)
            if match is None:
                break
            i = match.start()
        elif i >= len(text):
            break
        kind = _hidden_class(text[i])
        if (
            kind is None
            or (kind == "hidden-variation-selector" and _is_lone_emoji_selector(text, i))
            or (kind == "hidden-zero-width" and _is_emoji_joiner(text, i))
        ):
            i += 1
            continue
        # Group a run of the same class on one line into one finding.
        j = i + 1
        while j < len(text) and text[j] != "\n" and _hidden_class(text[j]) == kind:
            j += 1
        run = text[i:j]
        line = lines(i)
        severity = INFO if kind == "hidden-format" and names_the_character(text, i, j) else ERROR
        if kind == "hidden-zero-width" and (
            _is_blank_paragraph(text, i, j) or _escapes_a_fence(text, i, j)
        ):
            if lone is None:  # many such lines can spell bits by where they are
                lone = sum(text.count(chr(cp)) for cp in _ZERO_WIDTH)
            severity = INFO if lone <= _LONE_ZERO_WIDTH_MAX else ERROR
        if out.full(kind):
            out.omit(kind, severity, line)
            i = j
            continue
        if kind == "hidden-tag":
            message = f"Unicode Tag characters hide text: {_decode_tags(run)!r}"
        else:
            kinds = list(dict.fromkeys(run))
            labels = ", ".join(_char_label(ch) for ch in kinds[:8])
            labels += f", ... ({len(kinds)} different)" if len(kinds) > 8 else ""
            count = f"{len(run)} x " if len(run) > 1 else ""
            message = f"{_HIDDEN_MESSAGES[kind]} {count}{labels} in: {_snippet(text, i, j)}"
        out.add(Finding(kind, severity, message, line))
        i = j


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # what \w is for re's str patterns
