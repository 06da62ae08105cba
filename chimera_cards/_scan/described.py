"""Text that describes a command or an option instead of acting: a download piped into a shell
printed for the reader (an install hint in an ``echo`` or a script's ``console.error``) or
elided to its shape (``curl … | bash`` in a sentence) runs nothing; an option's help saying it
sets the tool's own system prompt overrides no one's."""

from __future__ import annotations

import re

# A pipeline inside the quoted argument of a command that prints it (`echo "install uv: curl
# ... | sh"`) is text shown to the user, run by nobody, unless what is printed goes on anywhere
# but the terminal: piped (into a shell, into `crontab -`), written to a file (a profile), or
# substituted into a command (`$(echo ...)`). A quoted string given to a shell (`sh -c "..."`,
# `eval "..."`, `ssh host "..."`) still runs.
_PRINTED_QUOTE_RE = re.compile(
    r"(?:\b(?:echo|printf|print|Write-Host|Write-Output|puts)\s+|"
    r"\b(?:console\.(?:log|error|warn|info)|print)\(\s*)(?:[^\s;|&$`(]+\s+)*?([\"'])"
    r"(?:(?!\1)[^\\\n]|\\.)*$",
    re.IGNORECASE,
)
_GOES_ON_RE = re.compile(r"(?<!\|)\|(?!\|)|>")
# A message printed from several string literals, one a line (`console.error(` then
# `"  Linux: curl … | sh\n" +`): a line that is one literal joined to the next, inside the
# parentheses of a print call opened a few lines up, every line between a literal too.
_LITERAL_LINE_RE = re.compile(
    r"[ \t]*(?:\+[ \t]*)?([\"'])(?:(?!\1)[^\\\n]|\\.)*\1[ \t]*(?:[+,][ \t]*|\)[ \t]*;?[ \t]*)?"
)
_PRINT_OPENS_RE = re.compile(
    r"(?:^|[\s;{(=])(?:console\.(?:log|error|warn|info)|print)\([ \t]*"
    r"(?:([\"'])(?:(?!\1)[^\\\n]|\\.)*\1[ \t]*\+[ \t]*)?$"
)


def _in_printed_literals(text: str, line_start: int) -> bool:
    """Whether the line at ``line_start`` is one string literal of a print call's message."""
    line_end = text.find("\n", line_start)
    if not _LITERAL_LINE_RE.fullmatch(text, line_start, line_end if line_end >= 0 else len(text)):
        return False
    end = line_start - 1
    for _ in range(20):
        if end < 0:
            return False
        start = text.rfind("\n", 0, end) + 1
        if _PRINT_OPENS_RE.search(text, start, end):
            return True
        if not _LITERAL_LINE_RE.fullmatch(text, start, end) or text[start:end].rstrip()[-1:] != "+":
            return False
        end = start - 1
    return False


# `curl … | bash` in a sentence: a fetcher given only an ellipsis downloads nothing; it names
# the shape of a command ("do not install by piping remote scripts to a shell").
_ELIDED_PIPE_RE = re.compile(r"\w+[ \t]+(?:\u2026|\.{3})[ \t]*\|", re.IGNORECASE)


def pipe_runs(match: re.Match) -> bool:
    """Whether a download piped into a shell (a match of the pipe-to-shell pattern) runs: not
    when it is printed for the reader or elided to its shape."""
    text = match.string
    if _ELIDED_PIPE_RE.match(match.group(0)):
        return False
    line_start = text.rfind("\n", 0, match.start()) + 1
    printed = _PRINTED_QUOTE_RE.search(text, line_start, match.start())
    if printed is None:
        return not _in_printed_literals(text, line_start)
    if "$(" in text[line_start : printed.start()] or "`" in text[line_start : printed.start()]:
        return True
    quote = printed.group(1)
    line_end = text.find("\n", match.end())
    rest = text[match.end() : line_end if line_end >= 0 else len(text)]
    closing = rest.find(quote)
    # no closing quote on the line, or the printed words sent on after it
    return closing < 0 or bool(_GOES_ON_RE.search(rest, closing + 1))


# A command-line option's help text saying the option sets the prompt of the tool's own model
# calls (`help="Override system prompt for all examples"`): what the option does, said to
# whoever runs the tool. Any other phrase there ("ignore previous instructions") is read as ever.
_HELP_OPENS_RE = re.compile(r"\bhelp\s*=\s*[rRuU]?([\"'])(?:(?!\1)[^\\\n]|\\.)*$")
_SETS_PROMPT_RE = re.compile(r"(?:override|replace)\s+(?:the\s+)?system\s+prompt\b", re.IGNORECASE)


def option_sets_prompt(match: re.Match) -> bool:
    """Whether an override phrase is an option's help saying the option sets the prompt."""
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    return bool(
        _SETS_PROMPT_RE.fullmatch(match.group(0))
        and _HELP_OPENS_RE.search(text, line_start, match.start())
    )
