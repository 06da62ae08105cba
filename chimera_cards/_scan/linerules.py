"""The line rules: the shell and generic patterns a script or a code block is read for (each
with the literals every match holds, so a text holding none skips the regex), and the hex
and base64 blobs in a text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from chimera_cards._scan.findings import INFO, WARNING, Finding
from chimera_cards._scan.textruns import RunGate

# Long enough that identifiers, hashes in lockfiles (64 hex) and short tokens are not flagged.
BLOB_MIN = 200
# Base64 runs are the hidden-instruction scan's (``base64-blob``, every text file); scripts add
# hex, as one run of digits or as \\x escapes.
_HEX_BLOB = re.compile(rf"[0-9a-fA-F]{{{BLOB_MIN},}}")
_HEX_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}){32,}")


_HEX_DIGITS = RunGate.of("0123456789abcdefABCDEF")
_HEX_ESCAPE_CHARS = RunGate.of("\\x0123456789abcdefABCDEF")


def _blob_findings(text: str, path: str, line: int, out: list[Finding]) -> None:
    # A blob is a run of BLOB_MIN hex digits, or 32 escapes (128 characters of "\\x" and hex):
    # without such a run neither regex can match, and they cost more than the rest of the scan.
    regexes = []
    if _HEX_DIGITS.has_run(text, BLOB_MIN):
        regexes.append((_HEX_BLOB, "hex"))
    if "\\x" in text and _HEX_ESCAPE_CHARS.has_run(text, 4 * 32):
        regexes.append((_HEX_ESCAPES, "hex-escaped"))
    for regex, label in regexes:
        for m in regex.finditer(text):
            run = m.group(0)
            where = line + text.count("\n", 0, m.start())
            out.append(
                Finding(
                    "code-obfuscation",
                    WARNING,
                    f"{len(run)}-character {label} blob: {run[:16]}...{run[-8:]}",
                    where,
                    path,
                )
            )


# --- shell and other languages, line by line ------------------------------------------------

_Rule = tuple[re.Pattern, str, str, Callable[[re.Match], str]]

_SH_OUTSIDE = r"(?:/(?!dev/(?:null|stdout|stderr|tty)\b|(?:var/)?tmp/)|~|\$HOME\b|\$\{HOME\}|\.\./)"
# Where a shell command word can stand (so "pnpm exec" is not the exec builtin).
_SH_COMMAND_START = r"(?:^|[;&|(]|\bthen\b|\bdo\b|\belse\b)\s*"
_SHELL_RULES: tuple[_Rule, ...] = (
    (
        re.compile(
            r"(?<![\w.-])(?:curl|wget|nc|ncat|netcat|ssh|scp|sftp|rsync|telnet|ftp|socat)(?![\w.-])|/dev/(?:tcp|udp)/"
        ),
        "code-network",
        INFO,
        lambda m: f"network: {m.group(0)}",
    ),
    (
        re.compile(
            # `bash -c '…'` given a single-quoted text (only the -c script's own positional
            # parameters in it) runs the code written there, shown; any other -c is built code
            r"\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b|\b(?:bash|sh|zsh)\s+-c\b"
            r"(?![ \t]+'(?:[^'$`]|\$[0-9@*#])*'(?![^\s;&|)]))|\bsource\s+<\(|"
            + _SH_COMMAND_START
            # exec runs the command after it as any line does: built code only when that
            # command is a variable's or a substitution's value (`exec "$CMD"`, `exec $(…)`)
            + r"(?:eval\b|exec[ \t]+(?:-a[ \t]+\S+[ \t]+|-\w+[ \t]+)*[\"']?[$`])"
        ),
        "code-eval",
        WARNING,
        lambda m: f"runs built or downloaded code: {m.group(0).strip()}",
    ),
    (
        re.compile(
            r"\bsudo\b|\b(?:npm|pnpm|yarn|pip3?|pipx|apt(?:-get)?|brew|gem|cargo|go)\s+(?:i|install|add)\b"
        ),
        "code-exec",
        INFO,
        lambda m: f"runs: {m.group(0).strip()}",
    ),
    (
        re.compile(
            r"(?:(?:(?<=\s)|(?<=^)|(?<=[0-9&]))>>?|\btee\s+(?:-a\s+)?)\s*[\"']?"
            + _SH_OUTSIDE
            + r"\S*"
        ),
        "code-write-outside",
        WARNING,
        lambda m: f"writes outside the skill folder: {m.group(0).strip()}",
    ),
    (
        re.compile(
            r"\b(?:rm|cp|mv|chmod|chown|ln|mkdir|install|dd)\b[^\n;|&]*?\s[\"']?"
            + _SH_OUTSIDE
            + r"\S*"
        ),
        "code-write-outside",
        WARNING,
        lambda m: f"changes files outside the skill folder: {m.group(0).strip()}",
    ),
    (
        re.compile(
            r"\bbase64\s+(?:-d|--decode|-D)\b|\bxxd\s+-r\b|\bopenssl\s+(?:enc|base64)\s+-d\b"
        ),
        "code-obfuscation",
        WARNING,
        lambda m: f"decodes hidden data: {m.group(0)}",
    ),
)

_GENERIC_RULES: tuple[_Rule, ...] = (
    (
        re.compile(
            r"\b(?:fetch|XMLHttpRequest|WebSocket|axios|urlopen|requests\.(?:get|post)|Net::HTTP|LWP::|"
            r"Invoke-WebRequest|Invoke-RestMethod|socket)\b|\b(?:curl|wget)\s"
        ),
        "code-network",
        INFO,
        lambda m: f"network: {m.group(0).strip()}",
    ),
    (
        re.compile(
            r"\b(?:child_process|execSync|spawnSync|spawn|execFile|subprocess|os\.system|system|"
            r"Start-Process|popen)\s*\(|`[^`\n]+`(?=\s*;?\s*$)"
        ),
        "code-exec",
        INFO,
        lambda m: f"runs other programs: {m.group(0).strip()}",
    ),
    (
        re.compile(
            r"(?<![.\w$])(?:eval|exec)\s*\(|\bnew\s+Function\s*\(|\bInvoke-Expression\b|\biex\b"
        ),
        "code-eval",
        WARNING,
        lambda m: f"runs code built at run time: {m.group(0).strip()}",
    ),
    (
        re.compile(r"\b(?:atob|Buffer\.from\([^)]*['\"]base64['\"]|FromBase64String)"),
        "code-obfuscation",
        WARNING,
        lambda m: f"decodes hidden data: {m.group(0)}",
    ),
)


# A line that only prints a hint to the terminal (`echo "   curl -LsSf https://… | sh"`): one
# quoted argument, no command substitution in it, nothing after it (no pipe, no redirect).
_PRINTED_RE = re.compile(
    r"[ \t]*(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?:\"[^\"`$\\]*\"|'[^']*')[ \t]*;?[ \t]*"
)


def _printed(line: str) -> bool:
    """Whether a line only prints (so a shell rule's match on it is inside the printed text)."""
    return ("echo" in line or "printf" in line) and _PRINTED_RE.fullmatch(line) is not None


# A shell heredoc's start (`cat > "$F" << EOF`, `<<-'EOF'`), and what on that line would run its
# body as code (an interpreter given it, or a pipe on to one): any other command reads it as data.
_HEREDOC_RE = re.compile(r"<<-?[ \t]*([\"']?)([A-Za-z_][\w-]*)\1")
_RUNS_BODY_RE = re.compile(
    r"(?<![\w.-])(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|deno|bun|php|osascript|"
    r"pwsh|powershell|eval|source|exec|xargs|sudo|ssh|su|env|sqlite3|psql|mysql)(?![\w.-])"
)


def _data_heredoc(line: str) -> str | None:
    """The delimiter of a heredoc the line starts whose body is data (written to a file, given
    to a reader), or None: a body an interpreter on that line runs is read as code."""
    start = _HEREDOC_RE.search(line) if "<<" in line else None
    if start is None or "<<<" in line:
        return None
    if _RUNS_BODY_RE.search(line[: start.start()] + line[start.end() :]):
        return None
    return start.group(2)


# Comment leaders of the languages the generic rules read, by extension: a comment runs
# nothing ("// CRITICAL: Required for Workers (eval() not supported)").
_SLASH_COMMENTS = ("//", "/*", "*")
_HASH_COMMENTS = ("#",)
_COMMENTS_BY_EXTENSION = {
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go", ".java",
                     ".kt", ".swift", ".rs", ".c", ".cc", ".cpp", ".h", ".cs", ".scala", ".dart"),
                    _SLASH_COMMENTS),
    **dict.fromkeys((".rb", ".pl", ".pm", ".ps1", ".psm1", ".r", ".R", ".tcl"), _HASH_COMMENTS),
}  # fmt: skip
# Calls that run a string they are given as code: an `eval(` quoted in their argument runs.
_RUNS_STRING_RE = re.compile(
    r"\b(?:setTimeout|setInterval|Function|exec\w*|spawn\w*|evaluate\w*|runIn\w*|system|"
    r"Invoke-Expression|iex|popen)\b"
)


def _quoted(line: str, at: int) -> bool:
    """Whether offset ``at`` of a line of code is inside a string literal opened on that line
    (`it('should block eval( injection', …)`), given to nothing that runs a string."""
    quote = None
    index = 0
    while index < at:
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if quote is None and char in "'\"`":
            quote = char
        elif char == quote:
            quote = None
        index += 1
    return quote is not None and _RUNS_STRING_RE.search(line[:at]) is None


_DECODER_CALL_RE = re.compile(r"\b(?:atob|Buffer\.from)\s*\(\s*")
_RUNS_RE = re.compile(r"\b(?:eval|exec\w*|Function|spawn\w*|import|require|setTimeout|"
                      r"setInterval|runIn\w*|Invoke-Expression|iex)\b")  # fmt: skip


def _decodes_input(match: re.Match) -> bool:
    """Whether a JavaScript decode (`atob(x)`, `Buffer.from(x, 'base64')`) is given a value the
    code holds at run time rather than a literal, on a line that runs nothing."""
    line = match.string
    call = _DECODER_CALL_RE.match(line, match.start())
    if call is None:
        return False
    argument = line[call.end() :]
    return (
        bool(argument)
        and argument[0] not in "'\"`"
        and not argument.startswith(("0x", "[", "\\"))
        and _RUNS_RE.search(line) is None
    )


def generic_comment(path: str, line: str) -> bool:
    """Whether a line of a script in a language the generic rules read is a comment."""
    leaders = _COMMENTS_BY_EXTENSION.get(path[path.rfind(".") :] if "." in path else "")
    return leaders is not None and line.lstrip().startswith(leaders)


def judge_match(
    match: re.Match, rule: str, severity: str, describe: Callable[[re.Match], str], *, shell: bool
) -> tuple[str, str, str] | None:
    """(rule, severity, message) of one line rule's match on a line, or None when it is no
    finding: in the generic languages an `eval(` inside a string given to nothing that runs
    strings, and a decode of base64 the code receives (an API's image, a data URL: it hides
    nothing the skill ships; a literal decoded, or a decode run, stays flagged)."""
    if not shell and rule == "code-eval" and _quoted(match.string, match.start()):
        return None
    if not shell and rule == "code-obfuscation" and _decodes_input(match):
        return (rule, INFO, f"decodes data it receives at run time: {match.group(0)}"[:200])
    return (rule, severity, describe(match)[:200])


def _scan_lines(
    path: str, text: str, rules: Iterable[_Rule], *, comment: str | None = None
) -> list[Finding]:
    # Each rule first searches the whole text (multiline: a superset of what it finds line by
    # line), so only rules that can match at all pay for the per-line pass.
    live = [rule for rule in rules if _may_match(rule[0], text)]
    findings: list[Finding] = []
    if live:
        body_end: str | None = None  # the delimiter of the data heredoc being read, if any
        for number, line in enumerate(text.splitlines(), 1):
            if comment is not None:
                if body_end is not None:
                    body_end = None if line.strip() == body_end else body_end
                    continue  # a line of a file's text the script writes, not a command
                body_end = _data_heredoc(line)
                stripped = line.lstrip()
                if stripped.startswith(comment) and not stripped.startswith("#!"):
                    continue
            elif generic_comment(path, line):
                continue
            for regex, rule, severity, describe in live:
                for m in regex.finditer(line):
                    if comment is not None and severity == WARNING and _printed(line):
                        continue  # printed for the user to read, not run
                    judged = judge_match(m, rule, severity, describe, shell=comment is not None)
                    if judged is not None:
                        findings.append(Finding(judged[0], judged[1], judged[2], number, path))
    _blob_findings(text, path, 1, findings)
    return sorted(findings, key=lambda f: f.line or 0)


# Per rule, in order: literals one of which every match of its regex holds (the regexes are
# case-sensitive). A text holding none cannot match, and ``in`` costs far less than re trying
# the regex at every offset (test_codescan_prefilter.py checks every match holds one).
_SHELL_LITERALS: tuple[tuple[str, ...], ...] = (
    ("curl", "wget", "nc", "netcat", "ssh", "scp", "sftp", "rsync", "telnet", "ftp", "socat",
     "/dev/"),
    ("|", "-c", "source", "eval", "exec"),
    ("sudo", "npm", "yarn", "pip", "apt", "brew", "gem", "cargo", "go"),
    (">", "tee"),
    ("rm", "cp", "mv", "chmod", "chown", "ln", "mkdir", "install", "dd"),
    ("base64", "xxd", "openssl"),
)  # fmt: skip
_GENERIC_LITERALS: tuple[tuple[str, ...], ...] = (
    ("fetch", "XMLHttpRequest", "WebSocket", "axios", "urlopen", "requests.", "Net::HTTP",
     "LWP::", "Invoke-WebRequest", "Invoke-RestMethod", "socket", "curl", "wget"),
    ("child_process", "exec", "spawn", "subprocess", "system", "Start-Process", "popen", "`"),
    ("eval", "exec", "Function", "Invoke-Expression", "iex"),
    ("atob", "Buffer.from", "FromBase64String"),
)  # fmt: skip
_RULE_LITERALS: dict[re.Pattern, tuple[str, ...]] = {
    rule[0]: literals
    for rules, literal_sets in (
        (_SHELL_RULES, _SHELL_LITERALS),
        (_GENERIC_RULES, _GENERIC_LITERALS),
    )
    for rule, literals in zip(rules, literal_sets, strict=True)
}


def _may_match(regex: re.Pattern, text: str) -> bool:
    """Whether the rule's regex matches anywhere in the text (searched over all of it at once:
    a superset of what it finds line by line)."""
    literals = _RULE_LITERALS.get(regex)
    if literals is not None and not any(literal in text for literal in literals):
        return False
    return _anywhere(regex).search(text) is not None


_MULTILINE: dict[re.Pattern, re.Pattern] = {}


def _anywhere(regex: re.Pattern) -> re.Pattern:
    found = _MULTILINE.get(regex)
    if found is None:
        found = _MULTILINE[regex] = re.compile(regex.pattern, regex.flags | re.MULTILINE)
    return found
