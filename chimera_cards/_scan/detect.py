"""The detection pass over a whole bundle: every script, and the code inside every Markdown
file, read by its language's parser and followed for where its data goes; the instructions
read as sentences; and flows that cross files.

Findings are graded by one policy (``sensitive.send_severity`` and the rule table and grading
of :mod:`chimera_cards._scan.detectgrade`): what is plainly hostile (a secret sent out, decoded
data run, a reverse shell, the user overridden or kept in the dark, a credential store read and
shipped) is an ``error`` and holds the version for review whatever its origin; a network send
or an install from an unreviewed place is a ``warning`` naming where; documentation showing the
user a command is ``info`` unless it ships secrets.
"""

from __future__ import annotations

import ast
import bisect
import csv
import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from chimera_cards._scan.agentconfig import config_findings, config_shell, read_agent_config
from chimera_cards._scan.buildfiles import (
    build_kind,
    hook_shell,
)
from chimera_cards._scan.collectors import concrete_collector
from chimera_cards._scan.detectgrade import _MARKDOWN, _grade, _index_findings, _Unit
from chimera_cards._scan.disclosure import disclosure_findings
from chimera_cards._scan.endpoints import DocumentedEndpoints
from chimera_cards._scan.findings import Finding
from chimera_cards._scan.generic import generic_facts
from chimera_cards._scan.hidden import PIPE_TO_SHELL_RE
from chimera_cards._scan.intent import intent_findings
from chimera_cards._scan.jsflow import analyse_javascript, parse_javascript
from chimera_cards._scan.jsflow import traversals as js_traversals
from chimera_cards._scan.mdcode import CodeUnit, code_units, command_line, embedded_shell
from chimera_cards._scan.prose import prose_findings
from chimera_cards._scan.pyfacts import Summaries
from chimera_cards._scan.pyflow import analyse_python
from chimera_cards._scan.pyreceivers import Definitions
from chimera_cards._scan.pyshapes import parse_python, traversals
from chimera_cards._scan.readertext import CONFUSABLES, phrase_text
from chimera_cards._scan.sensitive import collector_in
from chimera_cards._scan.shell import analyse_shell
from chimera_cards._scan.shellfacts import Out
from chimera_cards._scan.textruns import led

SKILL_FILE = "SKILL.md"
# Source files of languages without a parser here, read by ``scan.generic``.
_OTHER_CODE = (
    ".go",
    ".rb",
    ".pl",
    ".pm",
    ".php",
    ".ps1",
    ".psm1",
    ".lua",
    ".java",
    ".kt",
    ".kts",
    ".groovy",
    ".scala",
    ".cs",
    ".rs",
    ".swift",
    ".bat",
    ".cmd",
    ".vbs",
    ".applescript",
    ".scpt",
)
MAX_PER_RULE = 20
# Letters only: a hyphen joins words of two scripts legitimately ("Python-скрипт").
_WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)
_COMMANDS = frozenset(
    {
        "curl",
        "wget",
        "bash",
        "sh",
        "python",
        "python3",
        "node",
        "eval",
        "exec",
        "sudo",
        "chmod",
        "rm",
        "cat",
        "nc",
        "ssh",
        "scp",
        "base64",
        "pip",
        "npm",
        "npx",
        "git",
        "powershell",
        "iex",
        "echo",
        "env",
        "export",
        "source",
        "crontab",
        "perl",
        "ruby",
        "system",
        "popen",
        "requests",
        "subprocess",
        "os",
        "fetch",
        "require",
        "import",
    }
)


@dataclass(frozen=True)
class DetectFile:
    """One text file of a bundle as the detection pass takes it."""

    path: str
    text: str
    language: str | None = None  # a script's language ("python", "shell", "javascript", ...)


# A file spelling one of these may run downloaded content a late summary returns.
_RUNS_CODE = re.compile(
    r"(?<![\w.])(?:exec|eval|compile)\(|import_module\(|(?:pickle|marshal)\.loads\("
)


class _Detector:
    def __init__(self) -> None:
        self.summaries = Summaries()
        self.js_returns: dict[str, Out] = {}
        self.js_trees: dict[str, Any] = {}  # each script parsed once, read twice
        self.units: list[_Unit] = []
        # Python scripts with the function summaries known before each was read.
        self.python_scripts: list[tuple[_Unit, str, set[str]]] = []

    def summary_names(self) -> set[str]:
        # A return that is only downloaded content (a response) changes no finding of a caller
        # that reads it before its definition; secrets, decoded data and sends do.
        returns = {n for n, out in self.summaries.returns.items() if out.taint or out.decoded}
        return returns | set(self.summaries.sends)

    def reread_python(self, trees: dict[str, ast.Module | None]) -> None:
        """Read again each script that calls a function summarised only after it was read (in
        a later file, or later in itself): a call counts whatever the order of definitions."""
        # A return of its own arguments adds nothing to what a call gives by default.
        returns = {
            n
            for n, out in self.summaries.returns.items()
            if out.decoded or any(t.kind != "param" for t in out.taint)
        }
        sends = set(self.summaries.sends)
        downloads = {n for n, out in self.summaries.returns.items() if out.downloaded} - returns
        for unit, text, known in self.python_scripts:
            # A late summary matters when it brings secrets in, or sends what this file holds,
            # or hands downloaded content to a file that runs code (exec(fetch())).
            late = returns - known
            if unit.python[0].saw_taint:
                late |= sends - known
            if downloads and _RUNS_CODE.search(text):
                late |= downloads
            if any(f"{name}(" in text for name in late):
                unit.python[0] = analyse_python(
                    text,
                    summaries=self.summaries,
                    embed=self.embed_for(unit),
                    tree=trees.get(unit.path),
                )

    def embed_for(self, unit: _Unit):
        def embed(language: str, code: str, line: int, argv: Out) -> Out:
            if language == "python":
                facts = analyse_python(
                    code, first_line=line, summaries=self.summaries, embed=embed, argv=argv
                )
                unit.python.append(facts)
                return facts.output.merge(facts.shell.output)
            if language == "javascript":
                js = analyse_javascript(
                    code, first_line=line, embed=embed, returns=self.js_returns, argv=argv
                )
                unit.js.append(js)
                return js.output
            unit.generic.append(generic_facts(code, line))
            return Out()

        return embed

    def markdown(self, path: str, text: str) -> None:
        documentation = path.rsplit("/", 1)[-1] != SKILL_FILE
        unit = _Unit(path, documentation)
        self.units.append(unit)
        embed = self.embed_for(unit)
        variables: dict[str, Out] = {}
        units = code_units(text)
        lines = text.split("\n")
        for code in units:
            self.code(unit, code, variables, embed)
            if not code.inline and _shown_as_example(lines, code.line - 1):
                unit.example_lines.update(range(code.line, code.line + code.text.count("\n") + 1))
            if not code.inline and code.language == "javascript":
                unit.app_lines.update(range(code.line, code.line + code.text.count("\n") + 1))
        self.prose(unit, text, units)
        unit.findings += _confusables(path, text, 1)

    def instructions(self, path: str, text: str) -> None:
        """A plain file SKILL.md tells the agent to read, follow or run (``steps.txt``,
        ``workflow.json``, ``config.yaml``, ``INSTALL``): its words are instructions and its
        command-like lines are commands, as in SKILL.md itself."""
        unit = _Unit(path, False)
        self.units.append(unit)
        embed = self.embed_for(unit)
        variables: dict[str, Out] = {}
        if path.lower().endswith(_MARKUP):
            # <pre><code>curl …</code></pre>: the words and commands, tags taken out (lines kept)
            text = html.unescape(_TAG_RE.sub("", text))
        units = code_units(text)
        for code in units:
            self.code(unit, code, variables, embed)
        fenced = {
            n for c in units if not c.inline for n in range(c.line, c.line + c.text.count("\n") + 2)
        }
        lower = path.lower()
        records = "\t" if lower.endswith(".tsv") else "," if lower.endswith(_RECORDS) else None
        commands = [
            "" if number in fenced else (_command_of(line, records) or "")
            for number, line in enumerate(text.split("\n"), 1)
        ]
        if any(commands):
            analyse_shell(
                "\n".join(commands),
                variables=variables,
                tainted_files=unit.shell.tainted_files,
                embed=embed,
                facts=unit.shell,
            )
        if path.lower().endswith(_RECORDS):
            text = _records_as_rows(text, "\t" if path.lower().endswith(".tsv") else ",")
        # Comment markers of config formats are not headings: a note to the assistant in a
        # "# …" line reads on into the next line.
        self.prose(unit, _COMMENT_MARK_RE.sub("", text), units)

    def code(self, unit: _Unit, code: CodeUnit, variables: dict[str, Out], embed) -> None:
        if code.language == "shell":
            analyse_shell(
                code.text,
                first_line=code.line,
                variables=variables,
                tainted_files=unit.shell.tainted_files,
                embed=embed,
                facts=unit.shell,
            )
        elif code.language == "python":
            facts = analyse_python(
                code.text, first_line=code.line, summaries=self.summaries, embed=embed
            )
            unit.python.append(facts)
        elif code.language == "javascript":
            unit.js.append(
                analyse_javascript(
                    code.text, first_line=code.line, embed=embed, returns=self.js_returns
                )
            )
        if code.language in ("python", "javascript", "unknown"):
            shell = embedded_shell(code.text)
            if shell is not None:
                analyse_shell(
                    shell,
                    first_line=code.line,
                    variables=variables,
                    tainted_files=unit.shell.tainted_files,
                    embed=embed,
                    facts=unit.shell,
                )
        if code.language == "unknown" and _provisions_image(code.text):
            unit.image_lines.update(range(code.line, code.line + code.text.count("\n") + 1))
        if code.language in ("powershell", "other") or code.language == "unknown":
            unit.generic.append(
                generic_facts(code.text, code.line, powershell=code.language == "powershell")
            )
        if code.inline:
            unit.inline_lines.add(code.line)

    def prose(self, unit: _Unit, text: str, code: list[CodeUnit]) -> None:
        # Code is read by the code rules; its lines are blanked so prose lines keep their places.
        lines = text.split("\n")
        for block in code:
            if block.inline or _planted(block, lines):
                continue
            for index in range(
                block.line - 1, min(len(lines), block.line - 1 + block.text.count("\n") + 1)
            ):
                lines[index] = ""
        plain = phrase_text("\n".join(lines))
        line_at = _line_finder(plain)
        lines_flagged: set[int] = set()
        for finding in prose_findings(plain):
            line = line_at(finding.offset)
            severity = finding.severity
            if unit.documentation and severity == "warning":
                severity = "info"  # a reference page explaining a setting, not an instruction
            if finding.rule == "prose-tool-restrictions" and _captions_forced_command(
                lines, line, code
            ):
                severity = "warning"
            unit.findings.append(Finding(finding.rule, severity, finding.message, line, unit.path))
            if finding.rule == "prose-credential-exfiltration":
                lines_flagged.update(range(line - 4, line + 5))
        for said in disclosure_findings(plain):
            line = line_at(said.offset)
            unit.findings.append(Finding(said.rule, said.severity, said.message, line, unit.path))
        for intent in intent_findings(plain):
            line = line_at(intent.offset)
            if line not in lines_flagged:
                unit.findings.append(Finding(intent.rule, "error", intent.message, line, unit.path))

    def script(
        self, path: str, text: str, language: str, trees: dict[str, ast.Module | None]
    ) -> None:
        unit = _Unit(path, False)
        self.units.append(unit)
        embed = self.embed_for(unit)
        if language == "python":
            known = self.summary_names()
            unit.python.append(
                analyse_python(text, summaries=self.summaries, embed=embed, tree=trees.get(path))
            )
            self.python_scripts.append((unit, text, known))
            tree = trees.get(path)
            for line, what in traversals(tree, text) if tree is not None else ():
                unit.findings.append(Finding("path-from-input", "warning", what, line, path))
        elif language == "shell":
            analyse_shell(text, embed=embed, facts=unit.shell)
        elif language == "javascript":
            for line, what in js_traversals(text):
                unit.findings.append(Finding("path-from-input", "warning", what, line, path))
            unit.js.append(
                analyse_javascript(
                    text, embed=embed, returns=self.js_returns, tree=self.js_trees.get(path)
                )
            )
        else:
            unit.generic.append(generic_facts(text, powershell=language == "powershell"))
        unit.findings += _confusables(path, text, 1)


# The agent's own standing instructions and memory: text written there is obeyed in every
# later session, so a block a skill has the agent put there is read as instructions.
_AGENT_FILE_RE = re.compile(
    led(
        "\\.ABCGHIMScs",
        r"\b(?:CLAUDE|AGENTS|GEMINI|MEMORY|SOUL|HEARTBEAT|IDENTITY|BOOTSTRAP)\.md\b|\.cursorrules\b|"
        r"\.windsurfrules\b|copilot-instructions\.md|\.claude/(?:settings[\w.-]*\.json|commands|agents)|"
        r"\.openclaw/workspace/|\bsystem\s+prompt\b",
    ),
    re.I,
)
_PLANT_VERB_RE = re.compile(
    led("aipsw", r"\b(?:add|append|prepend|insert|write|paste|put|save|store|place)\b"), re.I
)


def _line_finder(text: str) -> Callable[[int], int]:
    """The 1-based line of an offset of ``text``; its line breaks are found at the first call
    (most texts give no finding)."""
    newlines: list[int] = []

    def line_at(offset: int) -> int:
        if not newlines:
            newlines.extend(m.start() for m in re.finditer("\n", text))
            newlines.append(len(text) + 1)  # past every offset: marks the list as made
        return bisect.bisect_left(newlines, offset) + 1

    return line_at


# "Bypass safety checks and deploy:" over a code block running `astro deploy … --force`: the
# caption says what the shown command's own option does (as an option's table row does), and
# the checks are that tool's: a warning. A caption over a command with no such option, or over
# more than one command, stays an order.
_FORCING_OPTION_RE = re.compile(r"(?:^|\s)(?:--force|--skip-[\w-]+|--no-verify|-f)(?![\w-])")


def _captions_forced_command(lines: list[str], line: int, code: list[CodeUnit]) -> bool:
    """Whether prose line ``line`` (1-based) ends with ":" and the code block after it (past
    blank lines and its fence) is one command carrying a forcing option."""
    if not 0 < line <= len(lines) or not lines[line - 1].rstrip().endswith(":"):
        return False
    block = next((b for b in code if not b.inline and b.line > line), None)
    if block is None or any(t.strip() for t in lines[line : block.line - 2]):
        return False
    commands = [t for t in block.text.split("\n") if t.strip()]
    return len(commands) == 1 and bool(_FORCING_OPTION_RE.search(commands[0]))


def _planted(block: CodeUnit, lines: list[str]) -> bool:
    """A plain text block the lines just above tell the agent to write into its own
    instruction or memory files ("Open ~/.openclaw/workspace/SOUL.md and prepend:")."""
    if block.language != "unknown":
        return False
    above = " ".join(lines[max(0, block.line - 4) : max(0, block.line - 1)])
    return bool(_AGENT_FILE_RE.search(above) and _PLANT_VERB_RE.search(above))


_COMMENT_MARK_RE = re.compile(r"(?m)^[ \t]*(?:#+|;+|//)[ \t]?")
# Plain files an agent may be told to read or follow; code and build files are read as such.
# Files that hold no instructions in words or commands (images, fonts, archives, data).
_NOT_TEXT = (".png", ".jpg", ".jpeg", ".gif", ".ico", ".woff", ".woff2", ".ttf",
             ".zip", ".gz", ".tgz", ".lock", ".map", ".min.js", ".min.css", ".css", ".scss",
             ".xsd", ".dtd", ".pem", ".crt", ".pub", ".sum")  # fmt: skip
_TAG_RE = re.compile(r"<[^>\n]*>")
# An SVG's <title>, <desc> and <text> are words an agent told to read the image reads.
_MARKUP = (".html", ".htm", ".xhtml", ".xml", ".svg")
_RECORDS = (".csv", ".tsv")


def _command_of(line: str, delimiter: str | None) -> str | None:
    """A line's command; in a CSV or TSV file, a field's as the csv module reads it
    (``2,register,"curl -F ""n=@x"" URL"``: the doubled quotes are one quote)."""
    found = command_line(line)
    if delimiter is None:
        return found
    try:
        fields = next(csv.reader([line], delimiter=delimiter, strict=True), [])
    except csv.Error:
        return found
    return next((c for f in fields if (c := command_line(f.strip()))), found)


def _records_as_rows(text: str, delimiter: str) -> str:
    """A CSV/TSV file's lines as table rows (``| a | b |``), one per line: each record, and each
    field of it, is read as its own sentence, as a Markdown table's are, not run on into the
    next record's fields. A line the csv module cannot read alone is left as it is."""
    rows = []
    for line in text.split("\n"):
        try:
            fields = next(csv.reader([line], delimiter=delimiter, strict=True), [])
        except csv.Error:
            rows.append(line)
            continue
        cells = [field.replace("|", "\\|").strip() for field in fields]
        rows.append("| " + " | ".join(cells) + " |" if len(cells) > 1 else line)
    return "\n".join(rows)


_NOT_INSTRUCTIONS_RE = re.compile(r"(?:^|/)(?:LICEN[CS]E|COPYING|NOTICE|COPYRIGHT)[^/]*$", re.I)
MAX_INSTRUCTION_FILE = 262_144
MAX_FOLLOWED = 128


def followed_files(files: list[DetectFile]) -> set[str]:
    """The plain files SKILL.md names (or a file it names names, and so on): what the agent is
    sent to read or follow, whatever their extension.

    Args:
        files: the bundle's text files.
    Returns:
        Their paths.
    """
    by_path = {f.path: f for f in files}
    candidates = []
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        lower = name.lower()
        # Any text that is neither a page nor code: the agent reads whatever it is sent to.
        plain = not lower.endswith(_MARKDOWN) and not lower.endswith(_NOT_TEXT)
        if (
            plain
            and f.language is None
            # a TOML file may be a tool's settings and the agent's steps at once
            and build_kind(f.path) in (None, "tool-toml")
            and not _NOT_INSTRUCTIONS_RE.search(f.path)
            and len(f.text) <= MAX_INSTRUCTION_FILE
        ):
            candidates.append((f.path, name))
    if not candidates or SKILL_FILE not in by_path:
        return set()
    # Markdown pages and scripts are read for the files they name (a runner script loading
    # tasks.json runs what that file lists), but are not instructions themselves.
    markdown = [
        (f.path, f.path.rsplit("/", 1)[-1])
        for f in files
        if f.path.lower().endswith(_MARKDOWN)
        or (f.language in ("python", "shell", "javascript") and len(f.text) <= MAX_INSTRUCTION_FILE)
    ]
    readers = {path for path, _ in markdown}
    followed: set[str] = set()
    read: set[str] = {SKILL_FILE}
    queue = [SKILL_FILE]
    while queue and len(read) <= MAX_FOLLOWED:  # each text read costs a pass per candidate
        text = by_path[queue.pop()].text
        for path, name in [*candidates, *markdown]:
            folder = path.rsplit("/", 1)[0] + "/" if "/" in path else None
            if path in read or (name not in text and (folder is None or folder not in text)):
                continue
            named = path in text or (folder is not None and folder in text)
            if named or re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
                read.add(path)
                queue.append(path)
                if path not in readers:
                    followed.add(path)
    return followed


_EXAMPLE_RE = re.compile(
    led(
        "cefrsty",
        r"\b(?:examples?|e\.g\.|for\s+instance|show\s+(?:the\s+user|them|you)\s+how|"
        r"(?:the\s+user|they|you)\s+(?:can|could|may|might)\s+run|run\s+(?:it\s+|them\s+)?themselves|"
        r"for\s+the\s+user\s+to\s+run|cheat\s*sheet|reference)\b",
    ),
    re.IGNORECASE,
)


def _shown_as_example(lines: list[str], fence: int) -> bool:
    """Whether the paragraph just above a code block (its fence on ``fence``, a 1-based file
    line) presents it as an example for the user."""
    at = fence - 2
    while at >= 0 and not lines[at].strip():
        at -= 1
    paragraph: list[str] = []
    while at >= 0 and lines[at].strip() and len(paragraph) < 6:
        paragraph.append(lines[at])
        at -= 1
    return bool(_EXAMPLE_RE.search(" ".join(paragraph)))


_GREEK_START, _GREEK_END = 0x0370, 0x03FF


def _greek_affix(word: str) -> bool:
    """Whether the word's non-ASCII letters are Greek ones leading or ending it."""
    core = word.strip("".join(c for c in set(word) if _GREEK_START <= ord(c) <= _GREEK_END))
    return core.isascii()


_LOOKALIKE_RE = re.compile("[" + re.escape("".join(map(chr, CONFUSABLES))) + "]")


def _confusables(path: str, text: str, first_line: int) -> list[Finding]:
    """Words of code that mix a look-alike letter from another script with Latin ones, or that
    are a command spelled in look-alikes (``сurl`` with a Cyrillic с)."""
    if text.isascii():
        return []
    # A word maps to ASCII only if each of its non-ASCII letters is a look-alike: a text
    # holding none of them has no such word.
    if _LOOKALIKE_RE.search(text) is None:
        return []
    found = []
    for number, line in enumerate(text.split("\n")):
        if line.isascii():
            continue
        for match in _WORD_RE.finditer(line):
            word = match.group(0)
            if word.isascii():
                continue
            mapped = word.translate(CONFUSABLES)
            if not mapped.isascii():
                continue
            # Greek letters leading or ending a name are mathematics (``γfit``, ``fitσ``); a
            # look-alike inside a Latin word (``gοogle``), or another script's, is a disguise,
            # as is any word that reads as a command.
            mixed = any(c.isascii() and c.isalpha() for c in word) and not _greek_affix(word)
            # A Greek letter with a one-letter Latin subscript is a variable of a formula
            # (``σs``: a scattering coefficient, ``ρs``: a density), whatever two-letter command
            # it resembles; a longer word (``κill``) reads as the command.
            subscript = len(word) == 2 and word[1].isascii() and _greek_affix(word)
            if mixed or (mapped.lower() in _COMMANDS and not subscript):
                found.append(
                    Finding(
                        "confusable-command",
                        "error",
                        f"{word!r} is spelled with look-alike letters (reads as {mapped!r})",
                        first_line + number,
                        path,
                    )
                )
    return found


# A provisioner that runs on the machine being built (Packer's powershell/shell, Terraform's
# remote-exec); one that runs on the user's own machine (shell-local, local-exec) makes the whole
# block the user's.
_REMOTE_PROVISIONER_RE = re.compile(
    r'^\s*provisioner\s+"(?:powershell|shell|windows-shell|remote-exec|ansible|file)"', re.M
)
_LOCAL_PROVISIONER_RE = re.compile(r'provisioner\s+"[\w-]*local[\w-]*"|local-exec|"local"')


def _provisions_image(text: str) -> bool:
    return bool(_REMOTE_PROVISIONER_RE.search(text)) and not _LOCAL_PROVISIONER_RE.search(text)


# Programs that run (or install, which runs) the file they are given.
_RUNNERS_RE = re.compile(
    r"^(?:python[0-9.]*|py|node|nodejs|deno|bun|bash|sh|zsh|dash|ksh|ruby|perl|php|pwsh|"
    r"powershell|pip[0-9.]*|npm|pnpm|yarn|gem|uv|pipx)$"
)


def _home(path: str) -> str:
    for home in ("${HOME}/", "$HOME/", "%USERPROFILE%\\", "$env:USERPROFILE\\"):
        if path.startswith(home):
            return "~/" + path[len(home) :]
    return path.removeprefix("./")


def _runs_of_other_files_downloads(units: list[_Unit]) -> None:
    """A file one script fills from the network and a command of another file runs (``python
    fetch.py`` saves ``~/.cache/job.py``, SKILL.md then says ``python ~/.cache/job.py``): the
    download-then-run, split over two files, is run code nobody reviewed."""
    saved: dict[str, str] = {}
    for unit in units:
        facts = [unit.shell, *(p.shell for p in unit.python), *(j.shell for j in unit.js)]
        for shell in facts:
            for path, content in shell.tainted_files.items():
                if (
                    (content.downloaded or content.decoded)
                    and not path.endswith("/")
                    and not path.startswith("/dev/")
                ):
                    saved.setdefault(_home(path), unit.path)
    if not saved:
        return
    for unit in units:
        if unit.container:
            continue
        for cmd in unit.shell.commands:
            if not (_RUNNERS_RE.match(cmd.name) or cmd.name in ("source", ".")):
                continue
            script = next((a for a in cmd.argv if not a.startswith("-")), "")
            if script == "install":  # pip install ~/.cache/x.whl
                script = next((a for a in cmd.argv[1:] if not a.startswith("-")), "")
            where = saved.get(_home(script))
            if where is not None and where != unit.path:
                unit.shell.download_exec.append(
                    (cmd.line, f"{script}, which {where} saves from the network")
                )


def _cross_files(findings: list[Finding]) -> list[Finding]:
    """A credential store read in one file and data sent out in another: the bundle ships it.
    Two reference pages (a command shown in each) are two examples, not one flow."""
    if any(f.rule == "secret-exfiltration" and f.severity == "error" for f in findings):
        return []
    reads = [f for f in findings if f.rule == "credential-access"]
    sends = [f for f in findings if f.rule == "network-send" and f.severity == "warning"]
    out = []
    for read in reads:
        for send in sends:
            if _config_and_token(read, send):
                continue
            if send.path != read.path and not (_reference(read.path) and _reference(send.path)):
                out.append(
                    Finding(
                        "secret-exfiltration",
                        "error",
                        f"{read.path} {read.message} and {send.path} (line {send.line}) "
                        f"{send.message}",
                        read.line,
                        read.path,
                    )
                )
                return out
    return out


# A tool loading its own dotenv file ("reads .env") and, in another file, a named token sent
# to an address the scan cannot read ("is this the service it is for?"): the load adds nothing
# to the send, whose token is already the reviewer's question. A credential store read, or data
# sent, is still joined.
_DOTENV_READ_RE = re.compile(r"reads \.env(?:\.[\w-]+)?")
_TOKEN_QUESTION = ": is this the service it is for?"


def _config_and_token(read: Finding, send: Finding) -> bool:
    return bool(_DOTENV_READ_RE.fullmatch(read.message)) and send.message.endswith(_TOKEN_QUESTION)


def _reference(path: str | None) -> bool:
    """A Markdown page other than SKILL.md: documentation the agent may read."""
    path = path or ""
    return path.lower().endswith(_MARKDOWN) and path.rsplit("/", 1)[-1] != SKILL_FILE


def _capped(findings: list[Finding]) -> list[Finding]:
    kept: list[Finding] = []
    counts: dict[tuple[str | None, str], int] = {}
    seen: set[tuple] = set()
    for f in findings:
        key = (f.path, f.rule, f.line, f.message)
        if key in seen:
            continue
        seen.add(key)
        count = counts.get((f.path, f.rule), 0)
        counts[(f.path, f.rule)] = count + 1
        if count < MAX_PER_RULE:
            kept.append(f)
    for (path, rule), count in counts.items():
        if count > MAX_PER_RULE:
            worst = min(
                (f.severity for f in findings if f.path == path and f.rule == rule),
                key=("error", "warning", "info").index,
            )
            kept.append(
                Finding(
                    rule,
                    worst,
                    f"{count - MAX_PER_RULE} more {rule} finding(s) in this file, not listed "
                    f"(at most {MAX_PER_RULE} per rule are)",
                    None,
                    path,
                )
            )
    return kept


# A value of a JSON or YAML mapping (quoted) that holds code starting processes: a payload for
# whatever host evaluates the value (a flow engine's "function" field, a template), not data.
_CODE_VALUE_RE = re.compile(
    r"""[:=]\s*(["'])(?:(?!\1)[^\\\n]|\\.){0,400}?(?:require\(\\?["']child_process|"""
    r"""process\.mainModule|__import__\(\\?["'](?:os|subprocess)\b|Runtime\.getRuntime\(\)\.exec|"""
    r"""\.constructor\(\\?["']return\s+process)"""
)
_CODE_VALUE_GATE = ("child_process", "mainModule", "__import__", "getRuntime", "constructor")


def _code_in_values(text: str) -> list[tuple[int, str]]:
    if not any(piece in text for piece in _CODE_VALUE_GATE):
        return []
    return [
        (
            text.count("\n", 0, hit.start()) + 1,
            f"a data value holds code that starts processes: {hit.group(0)[-60:]!r}",
        )
        for hit in _CODE_VALUE_RE.finditer(text)
    ]


def detect_files(
    files: Iterable[DetectFile], *, trees: dict[str, ast.Module | None] | None = None
) -> list[Finding]:
    """The detection findings of a bundle's text files.

    Args:
        files: every text file (SKILL.md included), each with the language of a script.
        trees: ``parse_python`` of Python files by path, where the caller has parsed them.
    Returns:
        The findings, each with its path and line.
    """
    detector = _Detector()
    files = list(files)
    trees = dict(trees or {})
    # JavaScript's functions are summarised first (a first look at every file), so a call in one
    # file to a function of another counts whatever their order; Python's scripts are read again
    # only when a call needs a summary made after them (reread_python).
    for f in files:
        if f.language == "python" and f.path not in trees:
            trees[f.path] = parse_python(f.text)
    detector.summaries.methods = Definitions(trees.values())
    for f in files:
        if f.language == "javascript":
            detector.js_trees[f.path] = parse_javascript(f.text)
            analyse_javascript(f.text, returns=detector.js_returns, tree=detector.js_trees[f.path])
    built: list[Finding] = []
    followed = followed_files(files)
    for f in files:
        lower = f.path.lower()
        if f.path in followed:
            detector.instructions(f.path, f.text.replace("\r\n", "\n"))
        kind = build_kind(f.path)
        config = read_agent_config(f.path, f.text) if kind is None else None
        if config is not None:
            # MCP servers, hooks, tasks: what the agent or editor runs and where it connects.
            built += config_findings(f.path, config, f.text)
            shell = config_shell(config, f.text)
            if shell is not None:
                detector.script(f.path, shell, "shell", trees)
            continue
        if kind is not None:
            built += _index_findings(f.path, kind, f.text)
            shell = hook_shell(kind, f.text)
            if shell is not None:
                detector.script(f.path, shell, "shell", trees)
                detector.units[-1].container = kind == "dockerfile"
            if kind != "requirements" and f.language is None:
                continue
        if lower.endswith(_MARKDOWN):
            detector.markdown(f.path, f.text.replace("\r\n", "\n"))
        elif f.language in ("python", "shell", "javascript"):
            detector.script(f.path, f.text, f.language, trees)
        elif f.language is not None or lower.endswith(_OTHER_CODE):
            detector.script(f.path, f.text, f.language or "other", trees)
    detector.reread_python(trees)
    _runs_of_other_files_downloads(detector.units)
    findings: list[Finding] = list(built)
    documented = DocumentedEndpoints(f.text for f in files)
    for unit in detector.units:
        findings += _grade(unit, documented)
    findings += _cross_files(findings)
    for f in files:
        # A collection or tunnel service named anywhere (a config file, a comment): listed
        # for the reviewer as the likely far end of a flow.
        found = collector_in(f.text)
        if found and not any(
            x.path == f.path and "collection or tunnel" in x.message for x in findings
        ):
            # Named at an address someone receives at: a warning; by name alone or with a
            # placeholder (`https://<id>.ngrok.app`, `bot<TOKEN>`): listed (collectors.py).
            receiving = concrete_collector(f.text)
            if receiving is not None:
                found, at = receiving
                message = f"names {found}, a catch-all collection or tunnel service"
            else:
                at = f.text.lower().find(found)
                message = (
                    f"names {found}, a catch-all collection or tunnel service, by name or at a "
                    f"placeholder address"
                )
            line = f.text[:at].count("\n") + 1
            severity = "warning" if receiving is not None else "info"
            findings.append(Finding("network-send", severity, message, line, f.path))
        for line, what in _code_in_values(f.text):
            findings.append(Finding("code-in-data", "error", what, line, f.path))
    texts = {f.path: f.text for f in files}
    return _capped([f for f in findings if not _reported_as_pipe_to_shell(f, texts)])


def _reported_as_pipe_to_shell(finding: Finding, texts: dict[str, str]) -> bool:
    """A download piped into a shell on a line the hidden-instruction scan already reports as
    ``pipe-to-shell`` (one problem, one line for the reviewer)."""
    if finding.rule != "download-exec" or "piped into" not in finding.message or not finding.line:
        return False
    text = texts.get(finding.path or "", "")
    lines = text.split("\n", finding.line)
    return len(lines) >= finding.line and bool(PIPE_TO_SHELL_RE.search(lines[finding.line - 1]))
