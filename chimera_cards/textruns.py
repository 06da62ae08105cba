"""Cheap exact gates for rules that only match long runs of some characters (blobs, base64).

A regex such as ``[0-9a-fA-F]{200,}`` is tried by ``re`` at every offset of a text, which costs
more than the rest of a file's scan. Most texts hold no run that long: translating the text's
UTF-8 bytes to "in the set" / "not in it" (``bytes.translate``, C speed) and looking for that many
in a row answers whether one exists. When it answers no, the regex cannot match and need not run.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunGate"]

_IN = 0x78  # "x"
_OUT = 0x20  # " "


@dataclass(frozen=True)
class RunGate:
    """Whether a text holds ``n`` characters in a row of one set of ASCII characters, or (with
    ``complement``) of characters outside such a set.

    Each character is its UTF-8 bytes, and a non-ASCII character's bytes are all outside any
    ASCII set: so for an ASCII set the answer is exact, and for its complement a run of ``n``
    characters always gives at least ``n`` bytes in a row ("no" is exact, "yes" may not be).
    """

    table: bytes

    @classmethod
    def of(cls, chars: str, *, complement: bool = False) -> RunGate:
        """A gate for runs of ``chars`` (ASCII only), or of everything else with ``complement``.

        Args:
            chars: the ASCII characters of the set.
            complement: gate runs of characters outside ``chars`` (non-ASCII ones included).
        Returns:
            The gate.
        """
        if not chars.isascii():
            raise ValueError("RunGate sets are ASCII")
        inside, outside = (_OUT, _IN) if complement else (_IN, _OUT)
        table = bytes(inside if chr(i) in chars else outside for i in range(128))
        return cls(table + bytes([_IN if complement else _OUT]) * 128)

    def has_run(self, text: str, n: int) -> bool:
        """Whether ``text`` may hold ``n`` characters of the set in a row (see the class).

        Args:
            text: the text.
            n: the run length.
        Returns:
            False only when no such run exists.
        """
        return b"x" * n in text.encode("utf-8", "surrogatepass").translate(self.table)

    def count_runs(self, text: str, n: int) -> int:
        """How many non-overlapping pieces of ``n`` set characters in a row the text holds (a run
        of ``2n`` counts twice); 0 or 1 means no two separate runs of ``n`` exist.

        Args:
            text: the text.
            n: the piece length.
        Returns:
            The count.
        """
        return text.encode("utf-8", "surrogatepass").translate(self.table).count(b"x" * n)
