"""The installer of the tool a skill is for: listed, not flagged.

A skill that drives a command-line tool (allowed-tools `Bash(oo *)`) tells the reader how to
install that tool when it is missing: the vendor's installer (`curl -fsSL
https://cli.oomol.com/install.sh | bash` under "install the oo CLI"), the vendor's Homebrew tap
(`brew install dopplerhq/cli/doppler` in a skill named doppler-…), or the tool's repository
(`pipx install https://github.com/<owner>/agent-reach/...` in the skill named agent-reach).
Installing the tool is what the skill is for: the trust it asks is the trust in the skill's
author, as an unflagged `npm i -g <tool>` asks. Only warnings already graded as one of those
shapes shown to the reader over https are listed (info); every hostile shape (root, plain http,
an address, a tunnel, data sent with the request, the pipeline inside another command, a
script's own command) was graded an error before this and is not touched. Why, and what it
leaves an attacker: docs/decisions/scan-published-false-alarms.md, "Round 4, warnings".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chimera_cards._cards.card import Card, code_block_lines
from chimera_cards._scan.findings import INFO, WARNING, Finding
from chimera_cards._scan.hidden import PIPE_TO_SHELL_RE
from chimera_cards._scan.installers import INSTALLER_URL_RE

_MARKDOWN = (".md", ".markdown", ".mdx", ".mdc")

# Commands that run whatever they are given: naming one in allowed-tools names no tool.
_RUN_ANYTHING = frozenset(
    ("bash", "sh", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh", "pwsh", "powershell",
     "cmd", "python", "python3", "py", "node", "perl", "ruby", "php", "iex", "sudo", "doas",
     "su", "env", "xargs", "exec", "eval", "command", "nohup", "timeout", "time", "nice",
     "curl", "wget", "irm", "iwr", "source", "osascript")
)  # fmt: skip
# Words of an installer's address that name how it is served, not what it installs.
_SERVING_WORDS = frozenset(
    ("install", "installer", "get", "cli", "setup", "download", "downloads", "releases",
     "release", "latest", "raw", "main", "master", "www", "sh", "ps1", "script", "scripts", "bin",
     "dl", "static", "cdn", "api", "docs", "stable", "tools", "tool", "app", "sdk", "v1", "v2")
)  # fmt: skip
_BASH_TOOL_RE = re.compile(r"\bBash\(\s*([A-Za-z0-9][\w.+-]*)")
_NAME_WORD_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class OwnTools:
    """The tools a skill says it drives: commands its allowed-tools lets it run (named in the
    text that introduces an installer, or in the installer's address), and its name and the
    words of its name (named in the installer's address or package only)."""

    declared: frozenset[str]
    named: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.declared or self.named)


def own_tools(card: Card) -> OwnTools:
    """The tools ``card`` names as its own (see OwnTools)."""
    value = card.frontmatter.get("allowed-tools", card.frontmatter.get("allowed_tools"))
    entries = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    declared = {
        m.group(1).lower()
        for entry in entries
        if isinstance(entry, str)
        for m in _BASH_TOOL_RE.finditer(entry)
    }
    name = card.name.lower() if isinstance(card.name, str) else ""
    named = {name, *_NAME_WORD_RE.findall(name)} if name else set()
    return OwnTools(
        frozenset(declared - _RUN_ANYTHING),
        frozenset(
            w for w in named - _RUN_ANYTHING - _SERVING_WORDS if len(w) >= 2 and not w.isdigit()
        ),
    )


def _address_words(url: str) -> set[str]:
    """The host's labels (not its top-level domain) and the path's segments and their stems."""
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    labels = host.lower().split(":")[0].split(".")[:-1]
    words = set(labels)
    for part in path.lower().split("/"):
        segment = part.split("?")[0].split("#")[0]
        words.update((segment, segment.rsplit(".", 1)[0]))
    return words - _SERVING_WORDS - {""}


def _names_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


def _introduction(text: str, line: int, *, markdown: bool) -> str:
    """The words that introduce the command on ``line`` (1-based): in Markdown, the paragraph
    before the code block it is in (past blank lines and other code blocks), or its own
    paragraph; in a script, the comment lines down to it."""
    lines = text.split("\n")
    index = line - 1
    if not markdown:
        start = index
        while start > 0 and lines[start - 1].lstrip().startswith("#") and index - start < 5:
            start -= 1
        return "\n".join(lines[start : index + 1])
    blocks = code_block_lines(text, 1)
    end = index + 1  # the intro paragraph's lines, [start, end)
    inside = next(((a, b) for a, b in blocks if a <= line < b), None)
    if inside is not None:
        at = inside[0] - 2  # the line above the block (0-based)
        while at >= 0:
            block = next(((a, b) for a, b in blocks if a <= at + 1 < b), None)
            if block is not None:
                at = block[0] - 2
            elif not lines[at].strip():
                at -= 1
            else:
                break
        if at < 0:
            return ""
        end = at + 1
    start = end - 1
    while start > 0 and end - start < 5 and lines[start - 1].strip():
        if lines[start].lstrip().startswith("#"):
            break  # a heading starts the paragraph
        start -= 1
    return "\n".join(lines[start:end])


_BREW_TAP_RE = re.compile(r"\bbrew\s+install\s+(?:-\S+\s+)*([\w.-]+)/([\w.-]+)/([\w.@+-]+)")
_REPO_URL_RE = re.compile(
    r"(?:git\+)?(\w+)://(?:www\.)?(github\.com|gitlab\.com)/[\w.-]+/([\w.-]+)"
)


def _installs_own_tool(finding: Finding, text: str, tools: OwnTools) -> str | None:
    """The own tool a shown installer's warning installs, or None (see the section above)."""
    lines = text.split("\n")
    if not finding.line or finding.line > len(lines):
        return None
    code = lines[finding.line - 1]
    markdown = finding.path is not None and finding.path.lower().endswith(_MARKDOWN)
    if finding.rule == "pipe-to-shell":
        match = PIPE_TO_SHELL_RE.search(code)
        url = INSTALLER_URL_RE.search(match.group(0)) if match else None
        if url is None or (url.group(1) or "").lower() != "https://":
            return None
        words = _address_words(url.group(0))
        for tool in sorted(tools.declared | tools.named):
            if tool in words:
                return tool
        intro = _introduction(text, finding.line, markdown=markdown)
        return next((t for t in sorted(tools.declared) if _names_word(intro, t)), None)
    if "Homebrew tap" in finding.message:
        formulas = [m.group(3).split("@")[0].lower() for m in _BREW_TAP_RE.finditer(code)]
        owned = [f for f in formulas if f in tools.declared | tools.named]
        return owned[0] if formulas and len(owned) == len(formulas) else None
    if "straight from" in finding.message:
        repos = list(_REPO_URL_RE.finditer(code))
        if not repos or any(m.group(1).lower() != "https" for m in repos):
            return None
        names = [m.group(3).lower().removesuffix(".git") for m in repos]
        owned = [n for n in names if n in tools.declared | tools.named]
        return owned[0] if len(owned) == len(names) else None
    return None


def list_own_tool_installs(
    card: Card, text_of: Callable[[str], str | None], findings: Iterable[Finding]
) -> None:
    """Make each warning that installs the skill's own tool over https (see above) info, in place.

    Args:
        card: the skill's SKILL.md.
        text_of: a finding's path -> the text of that file of the skill (None if not text).
        findings: the skill's findings.
    """
    tools = own_tools(card)
    if not tools:
        return
    for finding in findings:
        if finding.severity != WARNING or finding.rule not in ("pipe-to-shell", "remote-install"):
            continue
        text = text_of(finding.path or "")
        tool = _installs_own_tool(finding, text, tools) if text is not None else None
        if tool is not None:
            finding.severity = INFO
            finding.message = f"installs {tool}, the tool this skill is for: {finding.message}"
