"""The text as a reader takes it in: invisible code points dropped, NFKC, look-alike letters
mapped to Latin, combining marks on Latin letters and Markdown emphasis dropped, newlines kept
so lines count the same. The override phrases are matched in it, and other scans read the
same way (``phrase_text``, ``CONFUSABLES``)."""

from __future__ import annotations

import re
import unicodedata

from chimera_cards._scan.hiddenchars import (
    DEFAULT_IGNORABLE,
    _is_word,
    _rare_chars,
)

# Latin look-alikes from other scripts, mapped to the letter they imitate (after NFKC, which
# already folds fullwidth, mathematical and other compatibility letters). A small table of
# the Cyrillic, Greek and Latin-extension letters that pass for ASCII in an override phrase.
_CONFUSABLES = str.maketrans(
    {
        **dict.fromkeys("аɑα", "a"),
        **dict.fromkeys("АΑ", "A"),
        **dict.fromkeys("ВΒ", "B"),
        **dict.fromkeys("сϲ", "c"),
        **dict.fromkeys("СϹ", "C"),
        **dict.fromkeys("ԁ", "d"),
        **dict.fromkeys("еε", "e"),
        **dict.fromkeys("ЕΕ", "E"),
        **dict.fromkeys("ɡ", "g"),
        **dict.fromkeys("һ", "h"),
        **dict.fromkeys("НΗ", "H"),
        **dict.fromkeys("іιıɩ", "i"),
        **dict.fromkeys("ІΙӀ", "I"),
        **dict.fromkeys("ј", "j"),
        **dict.fromkeys("ЈͿ", "J"),
        **dict.fromkeys("κ", "k"),
        **dict.fromkeys("КΚ", "K"),
        **dict.fromkeys("ӏ", "l"),
        **dict.fromkeys("МΜ", "M"),
        **dict.fromkeys("Ν", "N"),
        **dict.fromkeys("оοσ", "o"),
        **dict.fromkeys("ОΟ", "O"),
        **dict.fromkeys("рρ", "p"),
        **dict.fromkeys("РΡ", "P"),
        **dict.fromkeys("ԛ", "q"),
        **dict.fromkeys("ѕ", "s"),
        **dict.fromkeys("Ѕ", "S"),
        **dict.fromkeys("τ", "t"),
        **dict.fromkeys("ТΤ", "T"),
        **dict.fromkeys("υ", "u"),
        **dict.fromkeys("ν", "v"),
        **dict.fromkeys("ԝ", "w"),
        **dict.fromkeys("хχ", "x"),
        **dict.fromkeys("ХΧ", "X"),
        **dict.fromkeys("уγ", "y"),
        **dict.fromkeys("УΥ", "Y"),
        **dict.fromkeys("Ζ", "Z"),
    }
)
# Searched with re (C speed) before any per-character translate, which costs far more.
_INVISIBLE_RE = re.compile(
    "["
    + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in DEFAULT_IGNORABLE)
    + "]"
)
_CONFUSABLE_RE = re.compile("[" + re.escape("".join(map(chr, _CONFUSABLES))) + "]")
# Markdown emphasis and code-span marks: "ig**no**re" renders (and is read) as "ignore". An
# underscore inside a word is not emphasis (CommonMark), and names like im_start keep it.
# A run of underscores is dropped unless a word character (re's \w is _is_word) is on both
# sides: from its first "_", either no word character follows the whole run, or none stands
# before that "_" (the lookbehind sees it and the character before). Inside a run neither can
# hold, so each run matches whole or not at all. The pattern starts with a literal, so re
# finds each run with a fast search instead of trying every offset.
_EDGE_UNDERSCORES_RE = re.compile(r"_(?:_*(?!\w)|(?<!\w_)_*)")


def _drop_emphasis(text: str, *, fast: bool = True) -> str:
    for mark in "*~`":
        if mark in text:
            text = text.replace(mark, "")
    if "_" not in text:
        return text
    if not fast:
        # The plain reference: each run of underscores looked at on its own.
        def edge(match: re.Match) -> str:
            start, end = match.span()
            inside = (
                start > 0 and _is_word(text[start - 1]) and end < len(text) and _is_word(text[end])
            )
            return match.group() if inside else ""

        return re.sub("_+", edge, text)
    return _EDGE_UNDERSCORES_RE.sub("", text)


def _phrase_text(text: str, *, fast: bool = True, rare: str | None = None) -> str:
    """The text as a reader takes it in: invisible code points dropped, NFKC, look-alike letters
    mapped to Latin, emphasis marks dropped. Newlines are kept, so lines still count the same.
    ``rare``: ``_rare_chars(text)`` (no invisible or look-alike character is printable ASCII, so
    the fast path looks for them among those few, and rewrites the text only when one is there).
    """
    return _reader_text(text, fast=fast, rare=rare)[0]


_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_MARKS_RE = re.compile(f"[{_MARKS}]")
_MARKED_LATIN_RE = re.compile(f"([A-Za-z0-9~/.])[{_MARKS}]+")


# A word holding a look-alike letter. It is folded when every letter of it then reads as Latin
# ("іgnоrе", "сору"); a word that keeps letters of its own script ("отправьте") is that
# language's spelling, left as written so the prose rules read it in its language.
_LOOK_ALIKE_WORD_RE = re.compile(r"\w*" + _CONFUSABLE_RE.pattern + r"\w*")


def _fold_word(match: re.Match) -> str:
    folded = match.group(0).translate(_CONFUSABLES)
    return folded if folded.isascii() else match.group(0)


def _reader_text(text: str, *, fast: bool, rare: str | None) -> tuple[str, str | None]:
    """``_phrase_text`` and characters including every one of it past ASCII (None: unknown)."""
    if not text.isascii():
        if not fast or rare is None:
            rare = text
        if _INVISIBLE_RE.search(rare):
            text = _INVISIBLE_RE.sub("", text)
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
            rare = text  # normalising may bring in characters the text did not have
        if _CONFUSABLE_RE.search(rare):
            text = _LOOK_ALIKE_WORD_RE.sub(_fold_word, text)  # look-alikes become ASCII letters
        if _MARKS_RE.search(rare):
            # u̲p̲l̲o̲a̲d̲: marks NFKC cannot fold into a letter (underlines, overlays) read as the
            # letter under them. Marks on other scripts' letters are their spelling: kept.
            text = _MARKED_LATIN_RE.sub(r"\1", text)
    stripped = _drop_emphasis(text, fast=fast)
    # The same object when nothing changed. ``rare`` still holds every character past ASCII:
    # dropping code points and marks, and mapping look-alikes to ASCII, adds none.
    return (stripped if stripped != text else text), rare


# What other scans read the same way: the look-alike table and the text as a reader takes it in.
CONFUSABLES = _CONFUSABLES


def phrase_text(text: str) -> str:
    """The text as a reader takes it in (invisible code points dropped, NFKC, look-alike letters
    mapped to Latin, emphasis marks dropped), newlines kept so lines count the same.

    Args:
        text: the text.
    Returns:
        The reader's text.
    """
    # The characters past ASCII, once: the normalising steps look for theirs among those few.
    return _phrase_text(text, rare=None if text.isascii() else _rare_chars(text))
