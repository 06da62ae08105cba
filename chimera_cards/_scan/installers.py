"""Which downloads piped into a shell are a vendor's installer shown to the reader."""

from __future__ import annotations

import re

from chimera_cards._scan.sensitive import COLLECTOR_HOSTS

# A vendor's installer shown to the reader: the command a README-style install step gives
# (`curl -fsSL https://cli.example.com/install.sh | bash` in a Markdown code block, or named in a
# script's comment). The reader sees the host and runs it with the user's own rights, as they
# would `pip install` the tool: a warning, listed for review, not a hold. Anything beyond that
# shape stays an error: a root shell (sudo/doas/su), plain http or a bare host (whoever is on the
# path picks the code), an IP address, a tunnel or paste drop, a link shortener (hides the host),
# something sent with the request (`$…`, a data or upload option), a command in a script file
# (run by the agent without being shown), or the pipeline inside another command (an echo into
# crontab, os.system, a comment that hides it).
_SHOWN_BEFORE_RE = re.compile(
    r"[ \t]*(?:(?:[-*+]|\d+\.)[ \t]+)?(?:`[ \t]*)?(?:[$%>][ \t]+)?"
    # `command -v uv || curl … | sh`: a check that the tool is missing, which runs nothing
    r"(?:(?:command[ \t]+-v|which|type|hash)[ \t]+[\w.-]+(?:[ \t]*(?:&>|2?>)[ \t]*/dev/null)*"
    r"(?:[ \t]*2>&1)?[ \t]*\|\|[ \t]*)?"
    # PowerShell's own form: `powershell -ExecutionPolicy ByPass -c "irm https://… | iex"` (the
    # user's shell given the pipeline as its command line; the closing quote ends it)
    r"(?P<ps>(?:powershell|pwsh)(?:\.exe)?(?:[ \t]+-(?:ExecutionPolicy[ \t]+\w+|NoProfile|"
    r"NonInteractive|NoLogo))*[ \t]+-(?:c|Command)[ \t]+\")?"
)
_INSTALLER_ARGS = r"(?:[ \t]+-[\w-]*)*(?:[ \t]+--(?:[ \t]+[\w.=/:-]+)*)?[ \t]*"
_SHOWN_AFTER_RE = re.compile(_INSTALLER_ARGS + r"(?:#[^\n]*)?")
_SPAN_AFTER_RE = re.compile(_INSTALLER_ARGS + r"`(?!`)")
# `… | bash && tvly login`: the installed tool's first run after a successful install, shown on
# the same line. Only a bare program name with plain words (no path, variable or redirect).
_THEN_RUN_RE = re.compile(
    _INSTALLER_ARGS + r"&&[ \t]+([A-Za-z][\w.-]*)(?:[ \t]+[\w.=:@-]+)*[ \t]*(?:#[^\n]*)?"
)
_NOT_A_TOOL_RE = re.compile(
    r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|curl|wget|eval|exec|source|env)",
    re.IGNORECASE,
)
_NAMED_RE = "`{}(?:[ \t:][^`\n]*)?`"
_HIDING_BEFORE_RE = re.compile(r"<!--|^\s*\[[^\]]*\]:")
_ROOT_RE = re.compile(r"\b(?:sudo|doas|su|runas|pkexec)\b", re.IGNORECASE)
_SENT_WITH_RE = re.compile(
    r"[$`]|\s-(?:[a-zA-Z]*[dTFHbu]\b|-data|-upload|-form|-header|-cookie|-user\b|Body\b|InFile\b|Headers\b)"
)
# The address: an option's dotted value (curl's --tlsv1.2) is no host.
INSTALLER_URL_RE = re.compile(
    r"(?<![\w.-])(https?://)?(\w[\w-]*(?:\.[\w-]+)+)(?::\d+)?(/[^\s'\"|)`]*)?"
)
_SHORTENERS = frozenset(
    ("bit.ly", "tinyurl.com", "is.gd", "t.co", "goo.gl", "ow.ly", "rebrand.ly", "cutt.ly", "v.gd",
     "t.ly", "shorturl.at")
)  # fmt: skip


def shown_installer(match: re.Match, *, markdown: bool) -> bool:
    """Whether a pipe-to-shell match is a vendor's installer shown to the reader (see above).
    ``markdown``: the text is Markdown (else only a comment line of a script is shown)."""
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end())
    before = text[line_start : match.start()]
    after = text[match.end() : line_end if line_end >= 0 else len(text)]
    body = match.group(0)
    comment = before.lstrip().startswith("#") and "<!--" not in before
    # a command of its own in a code block, or an inline code span in a sentence
    # (an odd count of backticks before it: earlier spans on the line, a table's cells, closed)
    span = before.endswith("`") and before.count("`") % 2 == 1
    span = span and not _HIDING_BEFORE_RE.search(before)
    shown = _SHOWN_BEFORE_RE.fullmatch(before)
    if not comment and not (markdown and (span or shown)):
        return False
    if shown and shown.group("ps") and not span:
        if not after.startswith('"'):
            return False
        after = after[1:]
    if not comment:
        tail = _SPAN_AFTER_RE.match(after) if span else _SHOWN_AFTER_RE.fullmatch(after)
        if tail is None and not (not span and _runs_installed_tool(text, line_start, body, after)):
            return False
    if _ROOT_RE.search(body) or _ROOT_RE.search(after) or _SENT_WITH_RE.search(body):
        return False
    url = INSTALLER_URL_RE.search(body)
    if url is None or (url.group(1) or "").lower() != "https://":
        return False
    host = url.group(2).lower()
    if host.replace(".", "").isdigit() or host.endswith((".local", ".internal", ".localhost")):
        return False
    where = host + (url.group(3) or "")
    return host not in _SHORTENERS and not any(c in where for c in COLLECTOR_HOSTS)


def _runs_installed_tool(text: str, line_start: int, body: str, after: str) -> bool:
    """Whether what follows the pipeline (``&& tvly login``) runs the tool it installs: a program
    the address names, or one the lines just before name in a code span ("If `tvly` is not
    found on PATH, install it first:"). Any other command after it keeps the line an error."""
    then = _THEN_RUN_RE.fullmatch(after)
    if then is None:
        return False
    tool = then.group(1)
    if _NOT_A_TOOL_RE.fullmatch(tool):
        return False
    url = INSTALLER_URL_RE.search(body)
    if url is not None and tool.lower() in re.split(r"[./-]", url.group(0).lower()):
        return True
    intro_start = line_start
    for _ in range(6):  # the fence and the paragraph before it
        intro_start = text.rfind("\n", 0, max(intro_start - 1, 0)) + 1
        if intro_start == 0:
            break
    return re.search(_NAMED_RE.format(re.escape(tool)), text[intro_start:line_start]) is not None
