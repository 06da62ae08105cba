"""The words a PDF carries where an agent told to read it would find them: its document
properties (``/Title``, ``/Subject``, ``/Keywords`` … and their XMP twins) and the literal
strings of its uncompressed content, one per line, for the detection pass to read as the text
of a file SKILL.md sends the agent to. Compressed streams are not inflated (cost and bombs)."""

from __future__ import annotations

import re
from itertools import islice

MAX_PDF = 8 * 1024 * 1024
MAX_WORDS = 262_144
# A literal string: (…) with \-escapes and one level of balanced parentheses inside. Runs of
# plain bytes are taken whole and never given back: no shorter reading of them ends at ")",
# so backtracking could not find another match (compressed streams are long runs of these).
_LITERAL_RE = re.compile(rb"\(((?:[^\\()]++|\\.|\((?:[^\\()]++|\\.)*+\))*+)\)", re.S)
_HEX_INFO_RE = re.compile(
    rb"/(?:Title|Subject|Keywords|Author|Creator|Producer)\s*<([0-9A-Fa-f\s]+)>"
)
_XMP_RE = re.compile(rb"<(?:rdf:li|pdf:Keywords|xmp:\w+|dc:\w+)[^>]*>([^<]{3,})<")
_ESCAPES = {b"n": "\n", b"r": " ", b"t": " ", b"b": "", b"f": "", b"(": "(", b")": ")", b"\\": "\\"}
_ESCAPE_RE = re.compile(rb"\\([nrtbf()\\]|[0-7]{1,3}|\n)")


def _literal(raw: bytes) -> str:
    def one(match: re.Match) -> bytes:
        code = match.group(1)
        if code in _ESCAPES:
            return _ESCAPES[code].encode("latin-1")
        if code == b"\n":
            return b""
        return bytes([int(code, 8) & 0xFF])

    data = _ESCAPE_RE.sub(one, raw)
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", "replace")
    return data.decode("latin-1")


def _hex(raw: bytes) -> str:
    digits = re.sub(rb"\s", b"", raw)
    data = bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode())
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", "replace")
    return data.decode("latin-1")


def pdf_words(data: bytes) -> str | None:
    """The readable strings of a PDF, one per line, or None when it is not one or holds none.

    Args:
        data: the file's bytes.
    Returns:
        The text, or None.
    """
    if not data.startswith(b"%PDF-") or len(data) > MAX_PDF:
        return None
    found = [_literal(m.group(1)) for m in _LITERAL_RE.finditer(data)]
    found += [_hex(m.group(1)) for m in _HEX_INFO_RE.finditer(data)]
    found += [m.group(1).decode("utf-8", "replace") for m in _XMP_RE.finditer(data)]
    # three letters or more; counting stops at the third
    words = [w.strip() for w in found if len(list(islice(filter(str.isalpha, w), 3))) == 3]
    text = "\n\n".join(w for w in words if w)[:MAX_WORDS]
    return text or None
