"""The code inside Markdown: fenced blocks (with the language their info string names, or the
one their text looks like) and inline code spans that are commands.

A skill's SKILL.md is read by an agent that runs what it shows, so its code is scanned as a
script of its language would be. The reader is a line scanner (linear; a fence may be indented,
as in a list item); a block left open runs to the end, as CommonMark reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chimera_cards._scan.textruns import led

_LANGUAGES = {
    **dict.fromkeys(
        (
            "bash",
            "sh",
            "shell",
            "zsh",
            "ksh",
            "console",
            "shell-session",
            "shellsession",
            "terminal",
            "shellscript",
            "bash-session",
            "fish",
            "dash",
            "sh-session",
            "cli",
            "command",
            "commands",
        ),
        "shell",
    ),
    **dict.fromkeys(
        ("python", "py", "python3", "py3", "ipython", "pycon", "python-repl"), "python"
    ),
    **dict.fromkeys(
        (
            "javascript",
            "js",
            "node",
            "nodejs",
            "jsx",
            "mjs",
            "cjs",
            "typescript",
            "ts",
            "tsx",
            "deno",
        ),
        "javascript",
    ),
    **dict.fromkeys(("powershell", "ps1", "pwsh", "ps"), "powershell"),
    # Detection rules and pattern lists: their strings are what a rule matches or a file
    # ignores, never a path the block reads or a command it runs.
    **dict.fromkeys(
        ("yara", "yar", "regex", "regexp", "gitignore", "ignore", "sigma", "snort", "suricata"),
        "pattern",
    ),
}
_FENCE_RE = re.compile(r"^( {0,12})(`{3,}|~{3,})\s*([^`\s{]*)")
# Words a shell line starts with often enough to read an unlabelled block as shell.
_SHELL_START_RE = re.compile(
    r"^\s*(?:\$\s+|sudo\s|curl\s|wget\s|cd\s|export\s|echo\s|cat\s|pip3?\s|npm\s|npx\s|yarn\s|"
    r"pnpm\s|git\s|python3?\s|node\s|bash\s|sh\s|chmod\s|mkdir\s|rm\s|cp\s|mv\s|brew\s|apt(?:-get)?\s|"
    r"docker\s|kubectl\s|uv\s|go\s|cargo\s|source\s|eval\s|base64\s|nc\s|scp\s|ssh\s|tar\s|"
    r"crontab\s|for\s+\w+\s+in\s|if\s+\[|[A-Z_][A-Z0-9_]*=\S|\./)"
)
_PY_HINT_RE = re.compile(r"^\s*(?:import\s+\w|from\s+[\w.]+\s+import\s|def\s+\w+\(|print\()", re.M)
_JS_HINT_RE = re.compile(r"\brequire\(|^\s*(?:const|let|var)\s+\w+\s*=|=>|\bawait\s+fetch\(", re.M)
# An inline span or an indented line reads as a command when it starts with a command-like word
# and carries a flag, a pipe, a redirect, a path, a variable or a URL.
_COMMAND_LIKE_RE = re.compile(
    r"^(?:sudo\s+)?[a-z][\w.+-]*(?:\s+\S+)*?\s+(?:-{1,2}[\w-]|[|<>]|&&|\$|~|/|\S*://|@)"
)
_NOT_COMMAND_WORDS = frozenset(
    {
        "the",
        "a",
        "an",
        "to",
        "and",
        "or",
        "if",
        "is",
        "of",
        "in",
        "for",
        "on",
        "at",
        "with",
        "e.g",
        "i.e",
    }
)
# An inline code span: one backtick run, the same run closing it on the line.
_SPAN_RE = re.compile(led("`", r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)"))


@dataclass(frozen=True)
class CodeUnit:
    """A piece of code inside Markdown: its language, text and the file line it starts on."""

    language: str  # "shell" | "python" | "javascript" | "powershell" | "pattern" | "unknown"
    text: str
    line: int
    inline: bool = False


def language_of(info: str, text: str) -> str:
    """The language of a code block from its info string, or, without one, from its text.

    Args:
        info: the info string's first word ("" for none).
        text: the block's text.
    Returns:
        "shell", "python", "javascript", "powershell", "pattern" (a detection rule or a
        pattern list: nothing in it is read or run) or "unknown".
    """
    word = info.strip().lower().lstrip(".")
    if word:
        language = _LANGUAGES.get(word, "unknown")
        if language == "pattern" and any(map(_SHELL_START_RE.match, text.split("\n"))):
            return "shell"  # commands labelled as patterns are still commands to run
        return language
    if _PY_HINT_RE.search(text):
        return "python"
    if _JS_HINT_RE.search(text):
        return "javascript"
    first = next((line for line in text.split("\n") if line.strip()), "")
    if _SHELL_START_RE.match(first):
        return "shell"
    return "unknown"


def _is_command(text: str) -> bool:
    if _SHELL_START_RE.match(text):
        return True
    if not _COMMAND_LIKE_RE.match(text):  # fails at the first character for most lines
        return False
    return text.split(None, 1)[0].lower() not in _NOT_COMMAND_WORDS


# A step's label before its command: "1.", "- ", "Step 2:", "[step 1]", "(3)", "#4", a log
# line's time and level ("2024-05-01 10:00:01 INFO").
_MARKER_RE = re.compile(
    r"^\s*(?:\d+[.)]|[-*+]|step\s*\d+\s*[:.)-]|\[[\w .:#/-]{1,24}\]:?|\(\d+\)|#\d+[:.)]?"
    r"|\d{4}-\d\d-\d\d[T ][\d:.,]+Z?(?:\s+[A-Z]{3,8}:?)?)\s+",
    re.I,
)
_QUOTED_RE = re.compile(r""""((?:[^"\\]|\\.){4,})"|'([^']{4,})'""")
_PATH_RUN_RE = re.compile(r"^(?:~|\.{0,2})/[\w./-]+(?:\s|$)")


_SPACED_KEY_RE = re.compile(r"^[\w.-]+\s+=\s+\S")
_FIELD_RE = re.compile(r"[,\t]")


def command_line(line: str) -> str | None:
    """The shell command a line of a plain instruction file holds, if it reads as one: a list
    item, a quoted value (``"run": "…"``), a ``key = value`` entry, a ``$`` prompt, a program
    run by its path, or the line itself.

    Args:
        line: one line of a text, JSON, YAML or INI file.
    Returns:
        The command, or None.
    """
    marker = _MARKER_RE.match(line)  # anchored at the start: at most one, there
    text = (line[marker.end() :] if marker else line).strip().removeprefix("$ ")
    candidates = [text]
    if '"' in text or "'" in text:
        for match in _QUOTED_RE.finditer(text):
            candidates.append((match.group(1) or "").replace('\\"', '"') or match.group(2))
    if "," in text or "\t" in text:  # a row of a table (steps.csv): each field may be the command
        candidates += [f.strip().strip("'\"") for f in _FIELD_RE.split(text)[1:]]
    key, sep, value = text.partition("=") if "=" in text else text.partition(": ")
    if sep and key.strip().replace("-", "").replace("_", "").replace(".", "").isalnum():
        candidates.append(value.strip().strip("'\""))
    found = [c for c in candidates if len(c) > 3 and (_is_command(c) or _PATH_RUN_RE.match(c))]
    if not found:
        return None
    if len(found) > 1 and found[0] is text and _SPACED_KEY_RE.match(text):
        found.pop(0)  # TOML/INI `run = "curl …"`, `cmd = curl …`: the value runs, not `cmd`
    if found[0] is text or len(found) == 1:
        return found[0]
    return "; ".join(dict.fromkeys(found))  # ["pip install x", "curl …"]: every one runs


_EMBEDDED_SHELL_RE = re.compile(
    r"^\s*(?:\$\s+)?(?:node|nodejs|python[0-9.]*|bash|sh|curl|wget|npm|npx|pip3?|perl|ruby|deno)\s"
)


def embedded_shell(text: str) -> str | None:
    """The shell command lines of a block labelled as another language (a ``node -e`` line
    inside a ``js`` block), other lines blanked; None when there are none."""
    lines = text.split("\n")
    kept = [line if _EMBEDDED_SHELL_RE.match(line) else "" for line in lines]
    return "\n".join(kept) if any(kept) else None


def _session_commands(text: str) -> str:
    """A console transcript's commands (``$ cmd`` lines and their continuations), output
    dropped; a block without prompts is all commands. Lines keep their places."""
    lines = text.split("\n")
    # Only a "$ " prompt makes a transcript: "# " starts a comment at least as often.
    if not any(line.lstrip().startswith("$ ") for line in lines):
        return text
    out = []
    going = False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("$ "):
            out.append(stripped[2:])
            going = stripped.rstrip().endswith("\\")
        elif going:
            out.append(line)
            going = line.rstrip().endswith("\\")
        else:
            out.append("")
    return "\n".join(out)


def code_units(text: str, first_line: int = 1, *, inline: bool = True) -> list[CodeUnit]:
    """Every fenced code block of a Markdown text, and (``inline``) every inline code span that
    reads as a shell command, with the language each is in.

    Args:
        text: Markdown with LF line endings.
        first_line: the file line of its first line.
        inline: also return inline command spans.
    Returns:
        The units in order.
    """
    units: list[CodeUnit] = []
    lines = text.split("\n")
    fence = ""
    info = ""
    start = 0
    body: list[str] = []
    indent = 0
    for number, line in enumerate(lines):
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                units.append(_unit(info, body, first_line + start + 1))
                fence = ""
                continue
            body.append(line[indent:] if line[:indent].isspace() else line.lstrip())
            continue
        match = _FENCE_RE.match(line) if "`" in line or "~" in line else None
        if match and not (match.group(2)[0] == "`" and "`" in line[match.end(2) :]):
            fence, info, start, body = match.group(2), match.group(3), number, []
            indent = len(match.group(1))
            continue
        if line.startswith(("    ", "\t")) and line.strip() and _is_command(line.strip()):
            # An indented line: a code block, or a paragraph's lazy continuation that an agent
            # reads as a command all the same.
            units.append(
                CodeUnit("shell", _filled(line.strip().removeprefix("$ ")), first_line + number)
            )
            continue
        if inline and "`" in line:
            for span in _SPAN_RE.finditer(line):
                code = span.group(2).strip()
                if len(code) > 6 and " " in code and _is_command(code):
                    units.append(
                        CodeUnit(
                            "shell", _filled(code.removeprefix("$ ")), first_line + number, True
                        )
                    )
    if fence:
        units.append(_unit(info, body, first_line + start + 1))
    return units


# A placeholder for the reader to fill in (`<KIBANA_URL>/api/slos`, `curl … <auth_flags>`) is a
# word in docs, not a redirect from one file into another: read as a word of the same length.
_PLACEHOLDER_RE = re.compile(r"<([A-Za-z][\w-]*)>")


def _filled(text: str) -> str:
    return _PLACEHOLDER_RE.sub(lambda m: f"_{m.group(1)}_", text) if "<" in text else text


def _unit(info: str, body: list[str], line: int) -> CodeUnit:
    text = "\n".join(body)
    language = language_of(info, text)
    if language == "shell":
        text = _filled(_session_commands(text))
    elif language == "python" and info.lower() in ("pycon", "python-repl", "ipython"):
        text = "\n".join(l[4:] if l.startswith((">>> ", "... ")) else "" for l in body)  # noqa: E741
    return CodeUnit(language, text, line)
