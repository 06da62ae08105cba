"""Text that describes a command or an option instead of acting: a download piped into a shell
printed for the reader (an install hint in an ``echo`` or a script's ``console.error``) or
elided to its shape (``curl … | bash`` in a sentence) runs nothing; an option's help saying it
sets the tool's own system prompt overrides no one's; a deceit given as the reason for a ban
orders none, a mode's name is no order to enter it, and a format character quoted in code
beside its own escape names it."""

from __future__ import annotations

import re

# A pipeline inside the quoted argument of a command that prints it (`echo "install uv: curl
# ... | sh"`) is text shown to the user, run by nobody, unless what is printed goes on anywhere
# but the terminal: piped (into a shell, into `crontab -`), written to a file (a profile), or
# substituted into a command (`$(echo ...)`). A quoted string given to a shell (`sh -c "..."`,
# `eval "..."`, `ssh host "..."`) still runs.
# Calls that only show their message: printing, logging, and Python's own exceptions raised
# with it (a class of the skill's own could run what it is given, so only the built-in ones).
_SHOWS = (
    r"console\.(?:log|error|warn|info)|print|(?:click\.)?s?echo|sys\.(?:exit|std(?:err|out)\.write)"
    r"|(?:(?:self\.)?(?:_?logger|_?log)|logging)\.(?:debug|info|warning|error|critical)"
    r"|warnings\.warn"
    r"|(?:Runtime|Value|OS|Environment|Import|ModuleNotFound|FileNotFound|NotImplemented|Type"
    r"|Key|Assertion|Lookup|Connection|Permission)Error|Exception|SystemExit"
    r"|click\.(?:ClickException|UsageError|BadParameter)"
)
_PRINTED_QUOTE_RE = re.compile(
    r"(?:\b(?:echo|printf|print|Write-Host|Write-Output|puts)\s+|"
    rf"(?:\b(?:console\.(?:log|error|warn|info)|print)|(?<![\w.])(?:{_SHOWS}))\(\s*)(?:[^\s;|&$`(]+\s+)*?([\"'])"
    r"(?:(?!\1)[^\\\n]|\\.)*$",
    re.IGNORECASE,
)
_GOES_ON_RE = re.compile(r"(?<!\|)\|(?!\|)|>")
# A message printed from several string literals, one a line (`console.error(` then
# `"  Linux: curl … | sh\n" +`): a line that is one literal joined to the next, inside the
# parentheses of a print call opened a few lines up, every line between a literal too.
# (Python's form: literals side by side, joined without a `+`, and plain keyword arguments after
# the last one: `"Install with: curl … | sh", err=True`.)
_LITERAL_LINE_RE = re.compile(
    r"[ \t]*(?:\+[ \t]*)?([\"'])(?:(?!\1)[^\\\n]|\\.)*\1[ \t]*"
    r"(?:,[ \t]*\w+[ \t]*=[ \t]*[\w.]+[ \t]*)*(?:[+,][ \t]*|\)[ \t]*;?[ \t]*)?"
)
_PRINT_OPENS_RE = re.compile(
    rf"(?:^|[\s;{{(=])(?:{_SHOWS})\([ \t]*"
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
        if not _LITERAL_LINE_RE.fullmatch(text, start, end) or text[start:end].rstrip()[
            -1:
        ] not in ("+", '"', "'"):
            return False
        end = start - 1
    return False


# `curl … | bash` or `curl | bash` in a sentence: a fetcher given only an ellipsis, or nothing,
# downloads nothing; it names the shape of a command ("replace `curl | bash` with links").
_ELIDED_PIPE_RE = re.compile(r"\w+[ \t]*(?:(?:\u2026|\.{3})[ \t]*)?\|", re.IGNORECASE)


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


# "Do not hardcode md in the note — that misleads users": the deceit is the reason a ban gives
# (said of the banned act, after a negation), not an order to deceive.
_BANNED_BEFORE_RE = re.compile(r"\b(?:do\s+not|don't|never|must\s+not|avoid)\b", re.I)
_REASON_RE = re.compile(r"\b(?:that|which|it|this)\s+(?:would\s+|will\s+)?$", re.I)


def reason_for_a_ban(sentence: str, conceal: re.Match) -> bool:
    """Whether a lie/mislead/deceive match is said of an act the sentence bans before it."""
    words = conceal.group(0)
    if not re.match(r"(?:mislead|deceiv|lie)", words, re.I):
        return False
    before = sentence[: conceal.start()]
    return bool(_REASON_RE.search(before) and _BANNED_BEFORE_RE.search(before))


# A mode's name ("### Bypass Permissions Mode", the SDK's `bypassPermissions`) names a setting
# the documentation describes; entering it is still an order ("switch to bypass permissions mode").
_MODE_AFTER_RE = re.compile(r"\s*(?:mode|modes)\b", re.I)
_ENTERS_RE = re.compile(
    r"\b(?:use|using|switch\w*|enter\w*|enabl\w*|activat\w*|turn\w*\s+on|run\w*|start\w*|"
    r"set\w*|put|always|default)\b",
    re.I,
)


def names_a_mode(sentence: str, match: re.Match) -> bool:
    """Whether a setting-aside match is the name of a mode nothing orders entering (a warning)."""
    return bool(
        _MODE_AFTER_RE.match(sentence, match.end())
        and not _ENTERS_RE.search(sentence, 0, match.start())
    )


def names_the_character(text: str, i: int, j: int) -> bool:
    """Whether the format character at ``text[i:j]`` is alone in a quoted literal whose line also
    writes its escape (``s.replace("\u2028", "\\u2028")`` in a JSON escaper): code naming the
    character it handles, hiding nothing between words. Two or more in a row, one beside
    letters, or one with no escape of it on its line stay hidden characters."""
    if j != i + 1 or i == 0 or text[i - 1] not in "'\"" or text[j : j + 1] != text[i - 1]:
        return False
    start, end = text.rfind("\n", 0, i) + 1, text.find("\n", j)
    line = text[start : end if end >= 0 else len(text)].lower()
    cp = ord(text[i])
    return any(e in line for e in (f"\\u{cp:04x}", f"\\u{{{cp:x}}}", f"&#x{cp:x};", f"&#{cp};"))
