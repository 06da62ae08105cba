"""Where a Python script's top-level statements start, found without parsing it, so that only the
statements a scan needs are parsed.

``ast.parse`` of a whole script costs more than everything else its scan does, yet the scan only
looks at the few top-level statements that span a line naming a flagged word. ``top_level``
finds the line where each top-level statement starts with one compiled regex (C speed) and a
short loop over the tokens that matter; ``parse_spanning`` parses only the statements that span
some given lines, each with the line numbers it has in the whole script.

Why a statement parsed alone is the statement of the whole parse. CPython reads a script as
tokens, and what a line means depends only on the tokenizer's state when the line starts:
inside a string or not, how many brackets are open, whether the line before ended in a
backslash, and the stack of indentations. A line is a **statement start** here when that state
is the initial one — outside every string and comment, no bracket open, not continued, and
indentation 0 (its first character is not white space) — and its first word is not ``else``,
``elif``, ``except`` or ``finally`` (those continue the compound statement above them); a
definition starts at its first decorator. In a script that parses, the tokens from one start up
to the next are then exactly the tokens of whole top-level statements (``a = 1; b = 2`` is two),
and parsing those lines alone — the lines before them turned blank, so each keeps its line
number and column — gives the same statements: the grammar of a module is a sequence of
statements, each ended by a NEWLINE or by the DEDENT back to column 0, and nothing in a
statement depends on the statements around it. (The one exception Python has, ``from __future__
import barry_as_FLUFL`` making ``<>`` an operator, makes such a piece fail to parse alone, which
the caller treats as doubt.)

So the lexer must find exactly those states, and it must never guess: it follows the 3.11
tokenizer for everything that can hide or continue a line —

- a string is any quote outside strings and comments, to its closing quote (one, or three for
  a triple-quoted string); a backslash inside skips the next character, a newline included, in
  raw strings too (the tokenizer finds where every string ends the same way: a prefix changes
  only what the characters mean, and up to 3.11 an f-string is one string token too); a
  single-quoted string does not cross an unescaped newline;
- a comment is ``#`` outside strings, to the end of the line;
- ``( [ {`` open and ``) ] }`` close a bracket, inside which no line is a start;
- a backslash outside strings and comments must end its line, and joins the next line to it;

and anything it does not handle answers "doubt" (``None``), and the caller parses the whole
script as before: outside strings and comments, any character but printable ASCII and tab
(non-ASCII identifiers, form feed, which resets the indentation, other controls); CR anywhere
(a line end to Python); a string or bracket still open at the end, a bracket closed that was not
open, a backslash not before a newline, a start line that begins with a backslash, code before
the first start (an indented first line), no statement at all; and, on Python 3.12 and later,
where f-strings (and t-strings) nest quotes inside their braces, any f- or t-string at all. A
wrong answer is only possible if the regex disagrees with the tokenizer on a script that
parses: the tests compare the starts found with the tree's on generated and adversarial scripts
(``test_pystatements.py``), and by hand they agreed on all 11,088 of Python 3.11's own
library and installed packages' files the lexer was sure of (13,341 that parse).
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from dataclasses import dataclass

# A string, every form: a prefix only changes what its characters mean, not where it ends.
_STRING = (
    r"'''(?:[^'\\]++|\\[\s\S]|'(?!''))*+'''"
    r'|"""(?:[^"\\]++|\\[\s\S]|"(?!""))*+"""'
    r"|'(?:[^'\\\n]++|\\[\s\S])*+'"
    r'|"(?:[^"\\\n]++|\\[\s\S])*+"'
)
_COMMENT = r"#[^\n]*+"
# Code characters that change nothing for the lexer: printable ASCII and tab, but no quote,
# comment, backslash or bracket (a small ASCII set, which re tests as a bitmap). Any other
# character outside a string or comment (form feed, which resets the indentation, other
# controls, non-ASCII) is doubt.
_CODE = r"[\t !$-&*-Z^-z|~]"


def _group(depth: int) -> str:
    """Brackets opened and closed again, nested ``depth`` deep at most: inside them newlines,
    comments, strings and backslash-newlines change nothing (no line inside is a start), so
    the whole group is one step for the lexer. Deeper nesting goes bracket by bracket."""
    inner = "" if depth == 1 else "|" + _group(depth - 1)
    items = (_CODE + "++", r"\n", _STRING, _COMMENT, r"\\\n")
    return r"[(\[{](?:" + "|".join(items) + inner + r")*+[)\]}]"


# What leaves the lexer's state as it was, on one line: code without quotes, comments,
# backslashes or brackets; whole strings (even over several lines); whole bracket groups.
_NEUTRAL = "(?:" + "|".join((_CODE + "++", _STRING, _COMMENT, _group(4))) + ")"
_TOKENS = re.compile(
    # Neutral steps, then the one thing after them that matters (or the end of the text).
    _NEUTRAL + r"*+(?:"
    # A newline, with the lines after it that cannot start a statement (blank, indented or
    # comment lines, each made of neutral steps only) taken along in one match.
    r"(?P<nl>\n(?:(?=[ \t#\n])" + _NEUTRAL + r"*+\n)*+)"
    r"|(?P<cont>\\\n)"
    r"|(?P<open>[(\[{])"
    r"|(?P<close>[)\]}])"
    # A quote that opens no string that ends, a backslash not before a newline, a character
    # outside ``_CODE``.
    r"|(?P<bad>[\s\S])"
    r"|\Z)"
)
# Python 3.12 (PEP 701) lets an f-string's braces hold any expression, quotes of its own kind
# included, and 3.14 adds t-strings: the string rules above would not find where they end.
_NESTING_STRING = re.compile(r"(?<![\w])(?:[fFtT][rR]?|[rR][fFtT])['\"]")
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_BLANK_OR_COMMENTS = re.compile(r"(?:[ \t]*+(?:#[^\n]*+)?\n)*+")


@dataclass(frozen=True)
class TopLevel:
    """Where the top-level statements of a script start: ``offsets[i]`` is the index in the
    text of the first character of the lines ``lines[i]`` (1-based) starts, a statement (or a
    definition's first decorator); piece ``i`` runs to the next start (or the end) and holds
    one or more whole statements, and perhaps blank and comment lines after them."""

    offsets: list[int]
    lines: list[int]

    def pieces_spanning(self, lines: list[int]) -> list[int]:
        """The pieces (sorted indexes) holding one of ``lines``: every statement spanning a
        line lies in the piece holding that line.

        Args:
            lines: 1-based line numbers.
        Returns:
            Indexes into ``offsets``/``lines``.
        """
        picked = {bisect.bisect_right(self.lines, line) - 1 for line in lines}
        picked.discard(-1)  # blank and comment lines before the first statement
        return sorted(picked)


def top_level(text: str) -> TopLevel | None:
    """Where each top-level statement of a script starts, or None when in doubt (see the module
    docstring: then parse the whole script).

    Args:
        text: the script, with ``\\n`` line ends.
    Returns:
        The starts, or None.
    """
    if "\r" in text or (sys.version_info >= (3, 12) and _NESTING_STRING.search(text)):
        return None
    starts = _code_lines(text)
    if not starts or not _BLANK_OR_COMMENTS.fullmatch(text, 0, starts[0]):
        return None
    offsets = _statement_starts(text, starts)
    if offsets is None:
        return None
    lines: list[int] = []
    line = 1
    last = 0
    for at in offsets:
        line += text.count("\n", last, at)
        last = at
        lines.append(line)
    return TopLevel(offsets, lines)


def _code_lines(text: str) -> list[int] | None:
    """Offsets of the lines that begin a logical line at depth 0 with code in column 0; None
    when in doubt."""
    starts: list[int] = [0] if text[:1] not in ("", " ", "\t", "\n", "#") else []
    depth = 0
    size = len(text)
    for m in _TOKENS.finditer(text):
        kind = m.lastgroup
        if kind is None or kind == "cont":
            continue
        if kind == "nl":
            at = m.end()
            # A line the match did not take along starts with code, or with white space before
            # something other than neutral steps, or is the last line, without a newline.
            if depth == 0 and at < size and text[at] not in " \t#":
                starts.append(at)
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth < 0:
                return None
        else:
            return None
    return None if depth else starts


def _statement_starts(text: str, starts: list[int]) -> list[int] | None:
    """Of those lines, the ones that start a statement: not a clause continuing the compound
    statement above (``else``, ``elif``, ``except``, ``finally``), not the definition under a
    decorator; None when one begins with a backslash (a logical line whose statement begins
    on the next line)."""
    offsets: list[int] = []
    decorated = False
    for at in starts:
        head = text[at]
        if head == "\\":
            return None
        if head == "@":
            if not decorated:
                offsets.append(at)
            decorated = True
        elif decorated:
            decorated = False  # the definition its decorators belong to
        elif head not in "ef" or not _CLAUSE.match(text, at):  # a clause's first letter
            offsets.append(at)
    return offsets


def first_line(st: ast.stmt) -> int:
    """The line a top-level statement starts on: its first decorator's, if it has any.

    Args:
        st: the statement.
    Returns:
        A 1-based line number.
    """
    decorators = getattr(st, "decorator_list", None)
    return decorators[0].lineno if decorators else st.lineno


def parse_spanning(text: str, table: TopLevel, pieces: list[int]) -> list[ast.stmt]:
    """Parse only the given pieces of a script, each with its own line numbers.

    Args:
        text: the script ``table`` was made from.
        table: from ``top_level(text)``.
        pieces: sorted piece indexes (``TopLevel.pieces_spanning``).
    Returns:
        The top-level statements of those pieces, in order.
    Raises:
        SyntaxError: a piece does not parse alone, or a piece's first line starts no statement
            (doubt: parse the whole script instead).
    """
    if not pieces:
        return []
    source: list[str] = []
    line = 1
    count = len(table.offsets)
    for index in pieces:
        source.append("\n" * (table.lines[index] - line))
        end = table.offsets[index + 1] if index + 1 < count else len(text)
        source.append(text[table.offsets[index] : end])
        line = table.lines[index + 1] if index + 1 < count else line
    body = ast.parse("".join(source)).body
    firsts = {first_line(st) for st in body}
    for index in pieces:
        if table.lines[index] not in firsts:
            raise SyntaxError(f"line {table.lines[index]} starts no statement alone")
    return body
