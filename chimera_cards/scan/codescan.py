"""What a reviewer must see in a skill's other files: scripts as code, binaries by type and hash.

Every file of a bundle other than ``SKILL.md`` is classified as text, script or binary:

- a **script** is a file with a script extension (``.py``, ``.sh``, ``.js``, …), a ``#!`` line,
  or the executable bit. Python is read with ``ast`` (so a comment or a string mentioning
  ``subprocess`` is not a call); shell and other languages line by line. Findings name the path
  and line: network access, process execution, ``eval``/``exec`` and other dynamic code, writes
  outside the skill folder (absolute, home or ``..`` paths), and obfuscation (long base64 or hex
  blobs, decode-then-run). They are listed for the reviewer, not verdicts: network and process
  use are ``info``, the rest ``warning`` (a security skill may quote anything; see ``--accept``);
- a **binary** (not UTF-8, or holding NUL bytes) is listed with its size, a type guessed from its
  first bytes, and its SHA-256; a native executable is a ``warning``;
- text files (and scripts) also go through the hidden-instruction scan, each finding with its path.
"""

from __future__ import annotations

import ast
import bisect
import functools
import gc
import os
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from chimera_cards.bundles.bundle import SKILL_FILE, Bundle, BundleError, read_bundle_dir
from chimera_cards.cards.card import Card, CardReadError, find_card_files
from chimera_cards.scan.detect import DetectFile, detect_files
from chimera_cards.scan.findings import ERROR, INFO, WARNING, Finding
from chimera_cards.scan.lint import (
    LintReport,
    is_markdown_path,
    lint_card,
    lint_paths,
    lint_text,
    resolve_profile,
)
from chimera_cards.scan.pyshapes import parse_python
from chimera_cards.scan.pystatements import first_line, parse_spanning, top_level
from chimera_cards.scan.textruns import RunGate

__all__ = [
    "CODE_RULES",
    "BundleScan",
    "FileReport",
    "ScanCache",
    "binary_type",
    "classify",
    "finding_id",
    "lint_bundle",
    "lint_skill_paths",
    "scan_bundle",
    "scan_python",
    "scan_script",
    "scan_shell",
]

CODE_RULES: dict[str, str] = {
    "code-network": "A script opens network connections or downloads (info for the reviewer).",
    "code-exec": "A script runs other programs (info for the reviewer).",
    "code-eval": "A script runs code built at run time (eval, exec, compile, dynamic import).",
    "code-write-outside": "A script writes or deletes outside the skill folder.",
    "code-obfuscation": "A long base64/hex blob or a decode-then-run pattern in a script.",
    "binary-file": "A binary file, listed with its size, type and SHA-256.",
    "binary-executable": "A native executable (ELF, Mach-O, PE) shipped inside the skill.",
    "malware-signature": "A file carrying the antivirus test signature (EICAR).",
}

SCRIPT_EXTENSIONS = {
    ".py": "python",
    ".pyw": "python",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".ksh": "shell",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "javascript",
    ".rb": "ruby",
    ".pl": "perl",
    ".ps1": "powershell",
    ".bat": "batch",
    ".cmd": "batch",
}
_SHEBANG_LANGUAGES = (
    ("python", "python"),
    ("bash", "shell"),
    ("zsh", "shell"),
    ("ksh", "shell"),
    ("dash", "shell"),
    ("/sh", "shell"),
    (" sh", "shell"),
    ("node", "javascript"),
    ("deno", "javascript"),
    ("ruby", "ruby"),
    ("perl", "perl"),
    ("pwsh", "powershell"),
)
# Long enough that identifiers, hashes in lockfiles (64 hex) and short tokens are not flagged.
BLOB_MIN = 200
# Base64 runs are the hidden-instruction scan's (``base64-blob``, every text file); scripts add
# hex, as one run of digits or as \\x escapes.
_HEX_BLOB = re.compile(rf"[0-9a-fA-F]{{{BLOB_MIN},}}")
_HEX_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}){32,}")

_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x7fELF", 0, "ELF executable"),
    (b"\xcf\xfa\xed\xfe", 0, "Mach-O executable"),
    (b"\xce\xfa\xed\xfe", 0, "Mach-O executable"),
    (b"\xca\xfe\xba\xbe", 0, "Mach-O universal binary"),
    (b"MZ", 0, "PE/DOS executable"),
    (b"\x00asm", 0, "WebAssembly module"),
    (b"\x89PNG\r\n\x1a\n", 0, "PNG image"),
    (b"\xff\xd8\xff", 0, "JPEG image"),
    (b"GIF8", 0, "GIF image"),
    (b"RIFF", 0, "RIFF (WebP/WAV/AVI)"),
    (b"%PDF-", 0, "PDF document"),
    (b"PK\x03\x04", 0, "zip archive"),
    (b"\x1f\x8b", 0, "gzip data"),
    (b"BZh", 0, "bzip2 data"),
    (b"\xfd7zXZ\x00", 0, "xz data"),
    (b"7z\xbc\xaf\x27\x1c", 0, "7-zip archive"),
    (b"ustar", 257, "tar archive"),
    (b"SQLite format 3\x00", 0, "SQLite database"),
    (b"wOFF", 0, "WOFF font"),
    (b"wOF2", 0, "WOFF2 font"),
    (b"\x00\x01\x00\x00", 0, "TrueType font"),
    (b"OTTO", 0, "OpenType font"),
)
_NATIVE = ("ELF executable", "Mach-O executable", "Mach-O universal binary", "PE/DOS executable")


@dataclass
class FileReport:
    """One file of a bundle as the scan classified it: what kind, how big, its hash."""

    path: str
    kind: str  # "skill" | "text" | "script" | "binary"
    size: int
    sha256: str
    executable: bool
    language: str | None = None  # for scripts
    type: str | None = None  # for binaries: what the first bytes say

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class BundleScan:
    """Every file of a bundle, classified, and the findings of scanning them."""

    files: list[FileReport]
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "files": [f.to_dict() for f in self.files],
            "findings": [f.to_dict() for f in self.findings],
        }


def binary_type(data: bytes) -> str:
    """A short description of a binary file from its first bytes ("data" when unknown).

    Args:
        data: the file's bytes.
    Returns:
        e.g. "PNG image", "ELF executable", "data".
    """
    for magic, offset, label in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return label
    return "data"


def _language(path: str, text: str | None, executable: bool) -> str | None:
    dot = path.rfind(".")
    if dot > path.rfind("/"):
        lang = SCRIPT_EXTENSIONS.get(path[dot:].lower())
        if lang:
            return lang
    if text is not None and text.startswith("#!"):
        first = text.split("\n", 1)[0].lower()
        for needle, lang in _SHEBANG_LANGUAGES:
            if needle in first:
                return lang
        return "unknown"
    if executable:
        return "unknown"
    return None


def classify(
    path: str, data: bytes, executable: bool, sha256: str = ""
) -> tuple[FileReport, str | None]:
    """Classify one file and decode it if it is text.

    Args:
        path: its path in the bundle.
        data: its bytes.
        executable: its executable bit.
        sha256: its hash (from the manifest).
    Returns:
        (FileReport, text or None for a binary).
    """
    text: str | None
    if b"\0" in data:
        text = None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if text is None:
        return FileReport(
            path, "binary", len(data), sha256, executable, type=binary_type(data)
        ), None
    if path == SKILL_FILE:
        return FileReport(path, "skill", len(data), sha256, executable), text
    language = _language(path, text, executable)
    kind = "script" if language else "text"
    return FileReport(path, kind, len(data), sha256, executable, language=language), text


# --- Python, read with ast ------------------------------------------------------------------

_PY_NETWORK_MODULES = {
    "socket", "ssl", "urllib", "urllib2", "urllib3", "http", "httplib", "requests", "httpx",
    "aiohttp", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "paramiko", "websocket",
    "websockets", "xmlrpc", "grpc", "pycurl", "dns",
}  # fmt: skip
_PY_EXEC_MODULES = {"subprocess", "pty"}
_PY_EXEC_CALLS = {
    "os.system", "os.popen", "os.execv", "os.execve", "os.execvp", "os.execvpe", "os.execl",
    "os.execle", "os.execlp", "os.execlpe", "os.spawnv", "os.spawnve", "os.spawnvp", "os.spawnl",
    "os.spawnlp", "os.posix_spawn", "os.posix_spawnp", "os.startfile", "pty.spawn",
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell", "commands.getoutput",
}  # fmt: skip
_PY_EVAL_CALLS = {
    "eval", "exec", "compile", "__import__", "importlib.import_module", "runpy.run_path",
    "runpy.run_module", "marshal.loads", "pickle.loads", "pickle.load", "ctypes.CDLL",
    "ctypes.cdll.LoadLibrary",
}  # fmt: skip
_PY_DECODERS = {"base64.b64decode", "base64.b85decode", "base64.a85decode", "base64.decodebytes",
                "codecs.decode", "zlib.decompress", "bytes.fromhex", "binascii.unhexlify",
                "binascii.a2b_base64"}  # fmt: skip
_PY_FS_WRITERS = {
    "shutil.rmtree", "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
    "shutil.move", "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename",
    "os.replace", "os.makedirs", "os.mkdir", "os.chmod", "os.chown", "os.symlink", "os.link",
    "os.truncate",
}  # fmt: skip
_PATH_WRITE_METHODS = {"write_text", "write_bytes", "unlink", "rmdir", "mkdir", "touch", "chmod",
                       "rename", "replace", "symlink_to", "hardlink_to"}  # fmt: skip


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, with import aliases resolved (``sp.run`` ->
    ``subprocess.run``)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _outside_literal(value: str) -> bool:
    """A path literal that points outside the skill folder."""
    v = value.strip()
    if v in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"):
        return False
    if v.startswith(("/tmp/", "/var/tmp/")):
        return False  # scratch space every program writes to; a secret sent there is a flow rule
    return (
        v.startswith(("/", "~", "\\\\"))
        or v == ".."
        or v.startswith("../")
        or "/../" in v
        or (len(v) > 2 and v[1] == ":" and v[2] in "/\\")
    )


_GUARDED_RE = re.compile(
    r"^(?:~|\$HOME\b|\$\{HOME\}|/home/|/root\b|/Users/|/etc\b|/usr\b|/bin\b|/sbin\b|/lib|/boot\b|"
    r"/sys\b|/proc\b|/var/(?!tmp/)|/opt\b|/System\b|/Library\b|/Applications\b|\\\\|"
    r"[A-Za-z]:[/\\](?:Windows|Program Files|Users))|(?:^|/)\.\.(?:/|$)",
    re.IGNORECASE,
)


def _write_severity(path: str) -> str:
    """A write into the home folder, the system or another skill (``..``) is a warning; one to a
    data folder the task names (``/mnt/data/out.csv``) is listed only."""
    return WARNING if _GUARDED_RE.search(path.strip()) else INFO


def _first_str(node: ast.Call) -> str | None:
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _open_mode(node: ast.Call) -> str:
    mode = node.args[1] if len(node.args) > 1 else None
    for kw in node.keywords:
        if kw.arg == "mode":
            mode = kw.value
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return mode.value
    return "r"


_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _sensitive_names() -> frozenset[str]:
    names = {n.rsplit(".", 1)[-1] for n in (*_PY_EXEC_CALLS, *_PY_EVAL_CALLS, *_PY_FS_WRITERS)}
    return frozenset(names | _PATH_WRITE_METHODS | {"open", "home", "expanduser"})


# Every call a rule flags writes one of these names as an identifier: the last part of its
# dotted name (``sp.run``, ``Path(...).write_text``, ``eval``) or an alias (``go`` after
# ``from subprocess import run as go``).
_SENSITIVE = _sensitive_names()


_WORD_BYTES = bytes(
    byte if chr(byte).isalnum() or byte == ord("_") else ord(" ") for byte in range(128)
) + bytes(range(128, 256))


@functools.lru_cache(maxsize=4096)
def _word_re(word: str) -> re.Pattern:
    # Starts with the word itself, so re finds it with a fast search; the lookarounds make it
    # a whole identifier.
    return re.compile(rf"{re.escape(word)}(?<!\w{re.escape(word)})(?!\w)")


@functools.lru_cache(maxsize=2)
def _words(text: str) -> frozenset[bytes]:
    """A text's words, at C speed (every ASCII byte that is not a word character becomes a
    space; a non-ASCII character's bytes stay in their word); kept for the last texts, as the
    pre-filter and the scan after it ask about the same script."""
    return frozenset(text.encode("utf-8", "surrogatepass").translate(_WORD_BYTES).split())


def _name_lines(
    text: str, wanted: frozenset[str] | set[str], *, ascii_names: bool = False
) -> list[int] | None:
    """Sorted lines where a ``wanted`` name is written as a whole word, in ASCII text, or in a
    text whose every identifier is ASCII (``ascii_names``: non-ASCII only inside strings and
    comments, as ``pystatements.top_level`` makes sure); else None (Python reads identifiers
    NFKC-normalised, ``ｅｖａｌ`` is ``eval``, so any line may hold one)."""
    if not ascii_names and not text.isascii():
        return None
    words = _words(text)
    starts: list[int] = []
    for word in wanted:
        if word.encode("ascii", "replace") in words:
            starts.extend(m.start() for m in _word_re(word).finditer(text))
    starts.sort()
    lines: list[int] = []
    newlines = last = 0
    for start in starts:
        newlines += text.count("\n", last, start)
        last = start
        if not lines or lines[-1] != newlines + 1:
            lines.append(newlines + 1)
    return lines


# Words one of which a script must write to get any finding of the ``ast`` pass: an import
# finding names its module (its first part), and a call finding's name ends with a sensitive
# name, written at the call or, for an alias, in the import that made it (``from subprocess
# import run as go``; ``import a.b.c as x`` ends with ``c``; ``import a.b`` binds ``a``).
_FLAG_WORDS = frozenset(
    word.encode("ascii")
    for word in (*_SENSITIVE, *_PY_NETWORK_MODULES, *_PY_EXEC_MODULES, "multiprocessing")
)


def _python_may_flag(text: str) -> bool:
    """False only when neither the ``ast`` pass nor its line-by-line fallback (for a script
    that does not parse) can find anything beyond blobs: ASCII text (so every keyword and name
    is spelled as matched here) writing none of ``_FLAG_WORDS`` as a whole word (so no import
    or call finding, whatever the aliases) and without a match of any fallback rule."""
    if not text.isascii():
        return True
    # The word set first: most scripts write a flagged word, and it costs a fraction of
    # searching the text for the fallback rules (and the scan after a parse reuses it).
    return not _words(text).isdisjoint(_FLAG_WORDS) or any(
        _may_match(rule[0], text) for rule in _GENERIC_RULES
    )


def _spanning(body: list, lines: list[int] | None) -> list:
    """The statements of ``body`` (in order) that span one of the sorted ``lines`` (None: all).

    A body's statements come in source order and overlap at most on a shared line
    (``a = 1; b = 2``), so for each line only the statements just before it need a look. A
    decorated definition starts at its first decorator (its ``lineno`` is the ``def`` line)."""
    if lines is None or not body:
        return body
    starts = [first_line(st) for st in body]
    # Only the lines within the body can pick a statement of it (the last one ends last).
    low = bisect.bisect_left(lines, starts[0])
    high = bisect.bisect_right(lines, body[-1].end_lineno or body[-1].lineno, low)
    picked: set[int] = set()
    for line in lines[low:high]:
        at = bisect.bisect_right(starts, line) - 1
        while at >= 0 and (body[at].end_lineno or body[at].lineno) >= line:
            picked.add(at)
            at -= 1
    return [body[at] for at in sorted(picked)]


def _calls_in(node: ast.AST) -> list[ast.Call]:
    """The calls in ``node`` (itself included), in the order of ``ast.walk`` (breadth first),
    without its three generators per node: on a script's longest statements that walk costs
    about as much as the rest of the scan."""
    queue = [node]
    calls = []
    for current in queue:  # the queue grows while it is read: breadth first
        if isinstance(current, ast.Call):
            calls.append(current)
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, ast.AST):
                queue.append(value)
            elif isinstance(value, list):
                queue.extend([item for item in value if isinstance(item, ast.AST)])
    return calls


def _import_lines(text: str) -> list[int]:
    """Sorted lines holding ``import``: every import statement spans one (its keyword)."""
    lines: list[int] = []
    newlines = last = 0
    at = text.find("import")
    while at != -1:
        newlines += text.count("\n", last, at)
        last = at
        if not lines or lines[-1] != newlines + 1:
            lines.append(newlines + 1)
        at = text.find("import", at + 6)
    return lines


class _PyScanner:
    """Imports are read first (statements only), so an alias (``import subprocess as sp``) is
    known when ``sp.run`` is seen. Then only the statements spanning a line where such a name is
    written are walked for calls: walking every expression of every script costs more than
    parsing it, and a call can only be flagged if its name (or the alias naming it) is written
    inside its statement.
    Likewise only statements spanning a line that holds the word ``import`` are searched for
    imports. ``gated=False`` walks every statement: the plain reference the tests compare with.
    """

    def __init__(self, path: str, *, gated: bool = True) -> None:
        self.path = path
        self.gated = gated
        self.aliases: dict[str, str] = {}
        self.findings: list[Finding] = []

    def scan(self, tree: ast.Module, text: str) -> list[Finding]:
        """Findings for a parsed script; ``text`` has ``\\n`` line ends (as ``ast`` counts)."""
        # A keyword is ASCII as written; elsewhere every statement is looked at.
        gate = _import_lines(text) if self.gated and text.isascii() else None
        self.read_imports(tree.body, gate)
        lines = _name_lines(text, _SENSITIVE | set(self.aliases)) if self.gated else None
        return self.finish(tree.body, lines, text)

    def read_imports(self, body: list, gate: list[int] | None) -> None:
        """Record the imports (findings and aliases) of the statements of ``body`` spanning
        one of the ``gate`` lines (None: all)."""
        imports: list[ast.stmt] = []
        self._statements(body, imports.append, gate)
        for node in sorted(imports, key=lambda n: n.lineno):
            if isinstance(node, ast.Import):
                self.visit_Import(node)
            elif isinstance(node, ast.ImportFrom):
                self.visit_ImportFrom(node)

    def finish(self, body: list, lines: list[int] | None, text: str) -> list[Finding]:
        """The calls in the statements of ``body`` spanning one of ``lines`` (None: all), then
        the blobs of ``text``: every finding, in line order."""
        if lines is None or lines:
            for call in self._calls_on(body, lines):
                self.visit_Call(call)
        _blob_findings(text, self.path, 1, self.findings)
        return sorted(self.findings, key=lambda f: f.line or 0)

    def _statements(self, body: list, found, lines: list[int] | None) -> None:
        for st in _spanning(body, lines):
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                found(st)
            for name in _BODY_FIELDS:
                children = getattr(st, name, None)
                if children:
                    if name == "handlers" or name == "cases":
                        for child in children:
                            self._statements(child.body, found, lines)
                    else:
                        self._statements(children, found, lines)

    def _calls_on(self, body: list, lines: list[int] | None) -> list[ast.Call]:
        """Every call inside the statements that span one of ``lines`` (None: every line)."""
        out: list[ast.Call] = []
        for st in _spanning(body, lines):
            nested = [name for name in _BODY_FIELDS if getattr(st, name, None)]
            if not nested:
                out.extend(_calls_in(st))
                continue
            for name, value in ast.iter_fields(st):
                if name in _BODY_FIELDS:
                    if name == "handlers" or name == "cases":
                        for child in value:
                            out.extend(self._calls_on(child.body, lines))
                            guard = getattr(child, "type", None) or getattr(child, "guard", None)
                            if guard is not None:
                                out.extend(_calls_in(guard))
                    else:
                        out.extend(self._calls_on(value, lines))
                elif isinstance(value, ast.AST):
                    out.extend(_calls_in(value))
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.AST):
                            out.extend(_calls_in(item))
        return out

    def add(self, rule: str, severity: str, message: str, node: ast.AST) -> None:
        self.findings.append(
            Finding(rule, severity, message, getattr(node, "lineno", None), self.path)
        )

    def _imported(self, module: str, node: ast.AST) -> None:
        top = module.split(".")[0]
        if top in _PY_NETWORK_MODULES:
            self.add("code-network", INFO, f"imports {module} (network access)", node)
        elif top in _PY_EXEC_MODULES or module == "multiprocessing":
            self.add("code-exec", INFO, f"imports {module} (runs other programs)", node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[(alias.asname or alias.name).split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            self._imported(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = (
                f"{module}.{alias.name}" if module else alias.name
            )
        if node.level == 0 and module:
            self._imported(module, node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func, self.aliases) or ""
        if name in _PY_EXEC_CALLS:
            shell = any(
                kw.arg == "shell" and isinstance(kw.value, ast.Constant) and kw.value.value
                for kw in node.keywords
            )
            self.add(
                "code-exec", INFO, f"calls {name}" + (" with shell=True" if shell else ""), node
            )
        elif name in _PY_EVAL_CALLS:
            self.add("code-eval", WARNING, f"calls {name} (runs code built at run time)", node)
            if any(
                isinstance(a, ast.Call) and (_dotted(a.func, self.aliases) or "") in _PY_DECODERS
                for a in ast.walk(node)
                if a is not node
            ):
                self.add(
                    "code-obfuscation", WARNING, f"{name} of decoded data (decode-then-run)", node
                )
        elif name in _PY_FS_WRITERS or name == "open" or name == "io.open":
            literal = _first_str(node)
            if name in ("open", "io.open") and not any(c in _open_mode(node) for c in "wax+"):
                literal = None
            if literal is not None and _outside_literal(literal):
                self.add(
                    "code-write-outside",
                    _write_severity(literal),
                    f"{name} on {literal!r} (outside the skill folder)",
                    node,
                )
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_WRITE_METHODS:
            target = node.func.value
            if isinstance(target, ast.Call):
                inner = _dotted(target.func, self.aliases) or ""
                literal = _first_str(target)
                home = inner.endswith("Path.home") or inner.endswith("expanduser")
                if home or (inner.endswith("Path") and literal and _outside_literal(literal)):
                    self.add(
                        "code-write-outside",
                        WARNING,
                        f"{node.func.attr} on {literal or 'the home folder'!r} "
                        "(outside the skill folder)",
                        node,
                    )
        if name in ("os.path.expanduser", "pathlib.Path.home", "Path.home"):
            self.add("code-write-outside", INFO, f"{name}: reaches into the home folder", node)


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


def scan_python(path: str, text: str, *, tree: ast.Module | None = None) -> list[Finding]:
    """Findings for a Python script, read with ``ast`` (line by line if it does not parse).

    Args:
        path: its path in the bundle.
        text: its source.
        tree: ``ast.parse`` of the text, when the caller has it (the bundle scan parses each
            script once for this scan and the detection pass).
    Returns:
        code-* findings with path and line.
    """
    if "\r" in text:
        # Python ends a line at CR too: count lines as ast does, or a call would be looked for
        # on the wrong line (and missed).
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not _python_may_flag(text):
        # Parsing costs more than everything else a script goes through; it cannot find anything
        # here (test_codescan_prefilter.py checks both ways give the same findings).
        findings: list[Finding] = []
        _blob_findings(text, path, 1, findings)
        return sorted(findings, key=lambda f: f.line or 0)
    if tree is not None and "\r" not in text:
        return _scan_tree(path, text, tree)
    return _parse_and_scan_python(path, text, pieces=True)


def _scan_tree(path: str, text: str, tree: ast.Module) -> list[Finding]:
    """``_scan_pieces`` over a whole parse already paid for: the same statements are walked
    (``_spanning`` picks from the whole body what it picks from the pieces), so the same
    findings."""
    if top_level(text) is None:
        return _PyScanner(path).scan(tree, text)
    scanner = _PyScanner(path)
    gate = _import_lines(text)
    scanner.read_imports(tree.body, gate)
    # top_level saw every identifier: all ASCII, outside strings and comments.
    lines = _name_lines(text, _SENSITIVE | set(scanner.aliases), ascii_names=True)
    if lines is None:
        return _PyScanner(path).scan(tree, text)
    return scanner.finish(tree.body, lines, text)


def _parse_and_scan_python(
    path: str, text: str, *, gated: bool = True, pieces: bool = False
) -> list[Finding]:
    """The ``ast`` scan of a script: of only the statements it needs with ``pieces`` when the
    lexer is sure where they start (``_scan_pieces``), else of the whole parse (without
    ``gated``, of every statement: the plain reference the tests compare with)."""
    # The cyclic garbage collector is paused while the tree lives: it has no cycles (refcounts
    # free it when the scan returns), yet its many new objects would start collections that
    # walk it and the whole heap, about a quarter of the parse.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        found = _scan_pieces(path, text) if pieces else None
        return found if found is not None else _parse_then_scan(path, text, gated)
    finally:
        if paused:
            gc.enable()


def _scan_pieces(path: str, text: str) -> list[Finding] | None:
    """The findings of the whole parse, from parsing only the top-level statements that span a
    line holding ``import`` (for the imports and aliases), then those spanning a line naming a
    sensitive name or an alias; None when ``pystatements`` is in doubt or a piece does not
    parse alone (then parse the whole script).

    Why nothing the whole parse finds is missed. The scan of the whole tree only ever looks
    inside top-level statements that span a line of ``_import_lines`` (imports, aliases) or of
    ``_name_lines`` (calls): ``_spanning``. Those lines are computed here from the same text, and
    the aliases from the same import statements, so the lists are the same. A statement spanning
    such a line lies wholly inside the piece holding that line — pieces are cut only where a
    top-level statement starts — and that piece is parsed, into the very statement the whole
    parse has, with the same line numbers (``pystatements``). The pieces come in source order
    and hold every statement spanning a selected line, so ``_spanning`` picks from them exactly
    the statements it picks from the whole tree, and the same calls are visited with the same
    aliases. To hide a call, a script would have to make the lexer place a statement start
    where Python does not, in a script Python accepts; the lexer answers only when every
    character outside strings and comments is in a small ASCII set, and follows the
    tokenizer's rules for strings, comments, brackets and continuations (compared with the
    tree's starts in ``tests/chimera_cards/scan/test_pystatements.py``).

    A script that does not parse as a whole may still parse in these pieces; then the tree's
    findings for them are reported instead of the line-by-line fallback's (Python would not
    run that script).
    """
    table = top_level(text)
    if table is None:
        return None
    scanner = _PyScanner(path)
    gate = _import_lines(text)
    first = table.pieces_spanning(gate)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = parse_spanning(text, table, first)
            scanner.read_imports(body, gate)
            # top_level saw every identifier: all ASCII, outside strings and comments.
            lines = _name_lines(text, _SENSITIVE | set(scanner.aliases), ascii_names=True)
            if lines is None:
                return None
            parsed = set(first)
            more = [piece for piece in table.pieces_spanning(lines) if piece not in parsed]
            if more:
                body = sorted(body + parse_spanning(text, table, more), key=first_line)
    except (SyntaxError, ValueError):
        return None
    return scanner.finish(body, lines, text)


def _parse_then_scan(path: str, text: str, gated: bool) -> list[Finding]:
    try:
        # What Python would warn about in someone else's script (``1if x else 2``, and from 3.12
        # invalid escapes such as "\\d") is not for this user's stderr.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return _scan_lines(path, text, _GENERIC_RULES)
    return _PyScanner(path, gated=gated).scan(tree, text)


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
            r"\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b|\b(?:bash|sh|zsh)\s+-c\b|\bsource\s+<\(|"
            + _SH_COMMAND_START
            + r"(?:eval|exec)\b"
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


def _scan_lines(
    path: str, text: str, rules: Iterable[_Rule], *, comment: str | None = None
) -> list[Finding]:
    # Each rule first searches the whole text (multiline: a superset of what it finds line by
    # line), so only rules that can match at all pay for the per-line pass.
    live = [rule for rule in rules if _may_match(rule[0], text)]
    findings: list[Finding] = []
    if live:
        for number, line in enumerate(text.splitlines(), 1):
            if comment is not None:
                stripped = line.lstrip()
                if stripped.startswith(comment) and not stripped.startswith("#!"):
                    continue
            for regex, rule, severity, describe in live:
                for m in regex.finditer(line):
                    findings.append(Finding(rule, severity, describe(m)[:200], number, path))
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


def scan_shell(path: str, text: str) -> list[Finding]:
    """Findings for a shell script, line by line (whole-line comments skipped).

    Args:
        path: its path in the bundle.
        text: its source.
    Returns:
        code-* findings with path and line.
    """
    return _scan_lines(path, text, _SHELL_RULES, comment="#")


def scan_script(
    path: str, text: str, language: str | None, *, tree: ast.Module | None = None
) -> list[Finding]:
    """Findings for one script in the language it is written in.

    Args:
        path: its path in the bundle.
        text: its source.
        language: from ``classify`` ("python", "shell", "javascript", ...).
        tree: a Python script's ``ast``, when the caller has parsed it.
    Returns:
        code-* findings with path and line.
    """
    if language == "python":
        return scan_python(path, text, tree=tree)
    if language == "shell":
        return scan_shell(path, text)
    return _scan_lines(path, text, _GENERIC_RULES)


@dataclass
class ScanCache:
    """Findings of files already scanned, by content: a collection often repeats a licence or a
    helper script in every skill, and the same bytes classified the same way give the same
    findings (no rule reads the path beyond how it classifies the file, and each finding's
    path is set per file). Keep one for the length of an import."""

    by_blob: dict[tuple[str, str, str | None, bool, bool], list[Finding]] = field(
        default_factory=dict
    )
    hits: int = 0


def _scan_file(
    path: str,
    text: str,
    report: FileReport,
    scan_text: Callable[[str, str], list[Finding]],
    tree: ast.Module | None = None,
) -> list[Finding]:
    findings = scan_text(text, path)
    if report.kind == "script":
        findings.extend(scan_script(path, text, report.language, tree=tree))
    return findings


def scan_bundle(
    bundle: Bundle,
    *,
    hidden: Callable[[str, str], list[Finding]] | None = None,
    cache: ScanCache | None = None,
) -> BundleScan:
    """Classify every file and scan all but ``SKILL.md`` (which ``lint_card`` covers), then run
    the detection pass (``scan.detect``) over every text file, ``SKILL.md`` included: code in
    Markdown, data flows within and across files, instructions read as sentences.

    Args:
        bundle: the bundle.
        hidden: the hidden-instruction scan for one text file, called (text, path); default
            ``lint.lint_text`` (comments are errors in Markdown, warnings elsewhere).
        cache: findings by file content, shared across the bundles of one import (only used
            with the default ``hidden`` scan).
    Returns:
        The file listing and every finding, each with its path.
    """
    scan_text = hidden or lint_text
    if hidden is not None:
        cache = None
    reports: list[FileReport] = []
    findings: list[Finding] = []
    texts: list[DetectFile] = []
    trees: dict[str, ast.Module | None] = {}
    for f in bundle.files:
        data = bundle.contents[f.path]
        report, text = classify(f.path, data, f.executable, f.sha256)
        reports.append(report)
        if text is not None:
            texts.append(DetectFile(f.path, text, report.language))
            if report.language == "python":
                trees[f.path] = _parse_quietly(text)
        if f.path == SKILL_FILE:
            continue
        if _EICAR in data:
            findings.append(
                Finding(
                    "malware-signature",
                    ERROR,
                    "carries the EICAR antivirus test signature",
                    None,
                    f.path,
                )
            )
        if text is None:
            native = report.type in _NATIVE
            findings.append(
                Finding(
                    "binary-executable" if native else "binary-file",
                    WARNING if native else INFO,
                    f"binary, {report.size} bytes, {report.type}, sha256 {f.sha256}",
                    None,
                    f.path,
                )
            )
            continue
        if cache is None or not f.sha256:
            findings.extend(
                _licence_urls(
                    f.path, _scan_file(f.path, text, report, scan_text, trees.get(f.path))
                )
            )
            continue
        # Everything a scan reads of the path: the kind and language it gives the file, whether
        # it is Markdown (comments are errors there) and whether it is a licence text.
        key = (
            f.sha256,
            report.kind,
            report.language,
            is_markdown_path(f.path),
            _is_licence(f.path),
        )
        known = cache.by_blob.get(key)
        if known is None:
            known = cache.by_blob[key] = _licence_urls(
                f.path, _scan_file(f.path, text, report, scan_text, trees.get(f.path))
            )
        else:
            cache.hits += 1
        findings.extend(replace(finding, path=f.path) for finding in known)
    # Code in Markdown, flows within and across files, prose: over the whole bundle at once.
    findings.extend(detect_files(texts, trees=trees))
    return BundleScan(reports, findings)


def _parse_quietly(text: str) -> ast.Module | None:
    """``parse_python`` with the cyclic collector paused (see ``_parse_and_scan_python``)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return parse_python(text)
    finally:
        if paused:
            gc.enable()


# Every antivirus flags a file holding this (the industry's test string); no skill needs it.
_EICAR = b"EICAR-STANDARD-ANTIVIRUS-TEST-FILE"
_LICENCE_RE = re.compile(r"(?:^|/)(?:LICEN[CS]E|COPYING|NOTICE|COPYRIGHT)(?:[._-][^/]*)?$", re.I)


def _is_licence(path: str) -> bool:
    return bool(_LICENCE_RE.search(path))


def _licence_urls(path: str, findings: list[Finding]) -> list[Finding]:
    """A licence text's links are the licence's, not the skill's: one line for all of them."""
    if not _is_licence(path):
        return findings
    urls = [f for f in findings if f.rule == "url"]
    if not urls:
        return findings
    rest = [f for f in findings if f.rule != "url"]
    return [
        *rest,
        Finding("url", INFO, f"{len(urls)} link(s) in a licence text", urls[0].line, path),
    ]


def lint_bundle(
    card: Card, bundle: Bundle, *, dirname: str | None, cache: ScanCache | None = None
) -> list[Finding]:
    """Every finding about a bundle: the card's own lint, then each other file (hidden
    instructions in text, scripts as code, binaries listed), each finding with its path.

    Args:
        card: the parsed SKILL.md.
        bundle: the whole bundle.
        dirname: the skill's folder name (for the name-matches-folder rule), None to skip it.
        cache: findings by file content, shared across the bundles of one import.
    Returns:
        The findings.
    """
    findings = lint_card(card, dirname=dirname)
    for f in findings:
        f.path = SKILL_FILE
    return findings + scan_bundle(bundle, cache=cache).findings


def lint_skill_paths(
    paths: Iterable[str | os.PathLike], *, profile: str | None = None
) -> LintReport:
    """Lint what ``chimera-cards lint`` is given: a ``SKILL.md`` file as a card alone; a skill
    folder (or a folder of them) as the whole bundle import would store, each finding with the
    path of its file.

    Args:
        paths: SKILL.md files, skill folders, folders of skill folders.
        profile: "agent-skills" (default) or "chimera", for the card.
    Returns:
        A LintReport listing each SKILL.md. A skill folder that cannot be read as a bundle (a
        symlink inside, too many files, ...) is a ``read-refused`` finding on the folder, and a
        SKILL.md that does not parse a ``parse-error``; the rest are still linted.
    Raises:
        CardReadError: a path does not exist, holds no card, or its SKILL.md is not a readable
            file (exit 2, as for a card alone).
    """
    profile = resolve_profile(profile)
    files: list[str] = []
    findings: list[Finding] = []
    for path in paths:
        if not Path(path).is_dir():
            report = lint_paths([path], profile=profile)
            files += report.files
            findings += report.findings
            continue
        found = find_card_files(path)
        if not found:
            raise CardReadError(
                f"{path}: no SKILL.md found (expected a card, a card directory "
                f"or a folder of card directories)"
            )
        for card_file in found:
            # The card as before (an unreadable SKILL.md is still exit 2), then the rest.
            report = lint_paths([card_file], profile=profile)
            files += report.files
            findings += report.findings
            if card_file.name == SKILL_FILE:
                findings += _other_files(card_file.parent)
            else:  # a lone skill.md: no bundle to read the other files as
                findings.append(
                    Finding(
                        "skill-file-name",
                        WARNING,
                        f"{card_file.name} read as SKILL.md; rename it for import and agents",
                        None,
                        str(card_file),
                    )
                )
    return LintReport(files=files, findings=findings)


def _other_files(folder: Path) -> list[Finding]:
    try:
        bundle = read_bundle_dir(folder)
    except BundleError as exc:
        return [Finding("read-refused", ERROR, str(exc), None, str(folder))]
    return [
        replace(finding, path=str(folder / (finding.path or "")))
        for finding in scan_bundle(bundle).findings
    ]


def finding_id(finding: Finding | dict) -> str:
    """A finding's stable id (``Finding.id``, e.g. ``override-phrase-3f2a9c01de``): the same bytes
    always give the same ids, so a reviewer can accept a finding by name in a signed approval
    (``approve --accept ID``).

    Args:
        finding: a Finding or its dict form.
    Returns:
        The id.
    """
    if isinstance(finding, Finding):
        return finding.id
    existing = finding.get("id")
    if isinstance(existing, str) and existing:
        return existing
    # Stored before findings carried ids: the id lint would give the same finding.
    return Finding(
        str(finding.get("rule")),
        str(finding.get("severity")),
        str(finding.get("message")),
        finding.get("line"),
    ).id
