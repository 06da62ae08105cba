"""The Python script scan: what a script imports and calls, read by ``ast`` (parsing only the
statements it walks).
"""

from __future__ import annotations

import ast
import bisect
import functools
import gc
import re
import warnings

from chimera_cards._scan.findings import INFO, WARNING, Finding
from chimera_cards._scan.linerules import _GENERIC_RULES, _blob_findings, _may_match, _scan_lines
from chimera_cards._scan.pystatements import first_line, parse_spanning, top_level

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
