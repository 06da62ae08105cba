"""What a few shapes of Python code are, read from ``ast`` alone: a constant run through a
decoder, a string built from values, a loop nothing ends, the statements of a body. The flow
analysis (:mod:`chimera_cards._scan.pyflow`) asks these questions of the code it follows.
"""

from __future__ import annotations

import ast
import base64
import binascii
import bisect
import codecs
import re
import warnings
from collections import deque
from collections.abc import Callable, Container, Iterable
from typing import Any

from chimera_cards._scan.pystatements import first_line
from chimera_cards._scan.textruns import led


def decode_constant(name: str, raw: str, extra: list[str | None]) -> str | None:
    """What a decoder call (``base64.b64decode``, ``bytes.fromhex``, ``codecs.decode``) makes of
    a constant, as text.

    Args:
        name: the decoder's dotted name.
        raw: the constant it is given.
        extra: its further arguments, folded (a codec name).
    Returns:
        The decoded text, or None when the decoder or the data is not one it reads.
    """
    data = raw.encode("latin-1", "replace")
    try:
        if name.endswith(("b64decode", "decodebytes", "a2b_base64")):
            out = base64.b64decode(
                data + b"=" * (-len(data) % 4), altchars=b"-_" if "urlsafe" in name else None
            )
        elif name.endswith("b32decode"):
            out = base64.b32decode(data)
        elif name.endswith(("fromhex", "unhexlify", "a2b_hex", "b16decode")):
            out = binascii.unhexlify(re.sub(rb"\s", b"", data))
        elif name == "codecs.decode":
            codec = (extra[0] or "").lower().replace("-", "_") if extra else ""
            if codec in ("rot13", "rot_13"):
                return codecs.decode(raw, "rot13")
            if codec in ("hex", "hex_codec"):
                out = binascii.unhexlify(data)
            elif codec in ("base64", "base64_codec"):
                out = base64.b64decode(data)
            else:
                return None
        else:
            return None
    except (ValueError, binascii.Error):
        return None
    return out.decode("utf-8", "replace")


_BODIES = ("body", "orelse", "finalbody")
SQL_RE = re.compile(
    led("ACDIRSU", r"\b(?:SELECT|INSERT|UPDATE|DELETE|DROP|CREATE|ALTER|REPLACE)\b"), re.IGNORECASE
)
# Calls that make a loop wait for the world (a server, a poller, a prompt): not a busy loop.
_WAITS = frozenset({"sleep", "wait", "recv", "accept", "input", "get", "poll", "select", "read",
                    "readline", "join", "serve_forever", "listen", "result"})  # fmt: skip


def formatted(node: ast.AST) -> bool:
    """An f-string with a value in it, a ``+`` of strings with a non-constant part, ``"…" % x``
    or ``"…".format(x)``: a string built from values."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        sides = (node.left, node.right)
        has_text = any(isinstance(s, (ast.Constant, ast.JoinedStr)) for s in sides)
        return has_text and not all(isinstance(s, ast.Constant) for s in sides)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and bool(node.args or node.keywords)
    )


# Statements and patterns that bind the name they carry.
_NAMING = (ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.MatchAs,
           ast.MatchStar)  # fmt: skip


class LiteralNames:
    """``literal_names`` of a tree, read the first time a name is asked about (most code builds
    no query, and the walk costs a pass over the tree)."""

    def __init__(self) -> None:
        self.tree: ast.AST | None = None
        self._names: frozenset[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            self._names = literal_names(self.tree) if self.tree is not None else frozenset()
        return name in self._names


def built_sql(node: ast.AST, folded: str | None, literal: LiteralNames) -> bool:
    """Whether an assigned value is SQL built from values put in at run time (``folded``: the
    value as far as it is written out)."""
    return (
        formatted(node)
        and SQL_RE.search(folded or "") is not None
        and not built_from_literals(node, literal)
    )


def built_query(query: ast.AST, literal: LiteralNames, built_queries: Container[str]) -> bool:
    """Whether an ``execute()``'s query is SQL built from values put in at run time: formatted
    from more than literals, or a variable an earlier ``built_sql`` assignment holds."""
    return bool(
        formatted(query) and not built_from_literals(query, literal) and _may_be_sql(query)
    ) or (isinstance(query, ast.Name) and query.id in built_queries)


# What a query's written text keeps of SQL: a statement's verb (SQL_RE), or a clause's keyword
# in capitals ("WHERE id = {x}").
_SQL_CLAUSE_RE = re.compile(
    r"\b(?:FROM|WHERE|WITH|VALUES|INTO|SET|TABLE|UNION|ORDER|GROUP|LIMIT|JOIN|MERGE|TRUNCATE|"
    r"GRANT|PRAGMA|CALL|EXEC|BEGIN|COMMIT|ATTACH|COPY|SHOW|DESCRIBE|USE|AND|OR)\b"
)
_PLACEHOLDER_RE = re.compile(r"%[-+ #0-9.]*[sdifr]|\{[^{}]*\}|[^A-Za-z]+")


def _may_be_sql(query: ast.AST) -> bool:
    """Whether a formatted ``execute()`` argument may be SQL: its written text holds an SQL word,
    or nothing but placeholders (``"%s" % q`` is whatever ``q`` is). Code sent to a Jupyter
    kernel's ``execute`` ("import threading, time …") is no query."""
    text = " ".join(
        node.value
        for node in ast.walk(query)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )
    if not _PLACEHOLDER_RE.sub("", text):
        return True
    return SQL_RE.search(text) is not None or _SQL_CLAUSE_RE.search(text) is not None


def literal_names(tree: ast.AST) -> frozenset[str]:
    """Names that only ever hold a literal: every binding of the name in ``tree`` is
    ``NAME = <constant>`` (a number, a string), never a parameter, a loop, ``with``, import or
    ``except`` target, an augmented or unpacking assignment."""
    literal: set[str] = set()
    targets: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            bound = node.targets
        elif isinstance(node, ast.AnnAssign):
            bound = [node.target]
        else:
            continue
        if isinstance(node.value, ast.Constant):
            for target in bound:
                if isinstance(target, ast.Name):
                    literal.add(target.id)
                    targets.add(id(target))
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in targets:
                other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, _NAMING) and node.name:
            other.add(node.name)
    return frozenset(literal - other)


_LITERAL_PARTS = (ast.Constant, ast.JoinedStr, ast.FormattedValue, ast.BinOp, ast.UnaryOp,
                  ast.operator, ast.unaryop, ast.expr_context)  # fmt: skip


def built_from_literals(node: ast.AST, names: Container[str]) -> bool:
    """Whether every value ``formatted`` found in a built string is a literal or a name in
    ``names`` (``literal_names``): the string is the same on every run, nothing put in it."""
    if isinstance(node, ast.JoinedStr):
        parts: list[ast.AST] = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    elif isinstance(node, ast.BinOp):
        parts = [node.left, node.right]
    elif isinstance(node, ast.Call):
        parts = [*node.args, *(k.value for k in node.keywords)]
    else:
        return False
    return all(
        isinstance(n, _LITERAL_PARTS) or (isinstance(n, ast.Name) and n.id in names)
        for part in parts
        for n in ast.walk(part)
    )


def endless(node: ast.While) -> bool:
    """``while True:`` whose body never breaks, returns, raises, exits or waits."""
    if not (isinstance(node.test, ast.Constant) and node.test.value is True):
        return False
    for child in ast.walk(node):
        if isinstance(child, (ast.Break, ast.Return, ast.Raise, ast.Yield, ast.Await)):
            return False
        if isinstance(child, ast.Call):
            func = child.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _WAITS or name in ("exit", "_exit", "quit"):
                return False
    return True


def statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement of a body, nested ones included (not the expressions inside them)."""
    out: list[ast.stmt] = []
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        out.append(node)
        children: list = []
        for name in _BODIES:
            children += getattr(node, name, None) or []
        for handler in getattr(node, "handlers", None) or []:
            children += handler.body
        for case in getattr(node, "cases", None) or []:
            children += case.body
        stack.extend(reversed([c for c in children if isinstance(c, ast.stmt)]))
    return out


def parse_python(text: str) -> ast.Module | None:
    """The ``ast`` of someone else's Python, or None where this interpreter cannot read it (what
    Python would warn about in it is not for this user's stderr)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def imports_saved_module(text: str, path: str) -> bool:
    """Whether a script imports the module a file at ``path`` is (``import ext``,
    ``import_module("ext")``, ``__import__("ext")``) or loads a file as a module by path.

    Args:
        text: the script.
        path: the file's path as the script writes it.
    Returns:
        True when it does.
    """
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    if not dot or ext not in ("py", "pyc", "so", "pyd") or not stem.isidentifier():
        return False
    return bool(
        re.search(
            rf"(?:^|\n)\s*(?:import|from)\s+{stem}\b|import_module\(\s*['\"]{stem}['\"]|"
            rf"__import__\(\s*['\"]{stem}['\"]|run_path\(|spec_from_file_location\(",
            text,
        )
    )


def hidden_or_scratch(path: str) -> bool:
    """A file nobody shipped or reviewed (/tmp/.cache, ~/.x): code read from it is from
    elsewhere."""
    return path.startswith(("/tmp/", "/var/tmp/", "/dev/shm/", "~/.")) or "/." in path


def shell_quote(word: str) -> str:
    """A word quoted for the shell reader."""
    return "'" + word.replace("'", "'\\''") + "'"


def outside_skill(path: str) -> bool:
    """Whether a path written in a script lies outside the skill's folder."""
    return path.startswith(("/", "~", "\\\\", "../", "*")) and not path.startswith(
        ("/dev/null", "/dev/std")
    )


def constant_int(node: ast.AST | None) -> int | None:
    """A written-out integer (``3``, ``-1``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def constant_slice(node: ast.Slice) -> slice | None:
    """A slice whose bounds are written-out integers (or left out), else None."""
    bounds = []
    for part in (node.lower, node.upper, node.step):
        value = None if part is None else constant_int(part)
        if part is not None and value is None:
            return None
        bounds.append(value)
    if bounds[2] == 0:
        return None
    return slice(*bounds)


def ciphered(node: ast.expr) -> bool:
    """Whether an expression makes each item by arithmetic on another (``b ^ key for b in
    blob``, ``chr(c - 3) for c in codes``): a cipher over character codes."""
    if not isinstance(node, (ast.GeneratorExp, ast.ListComp)):
        return False
    return any(
        isinstance(part, ast.BinOp) and isinstance(part.op, (ast.BitXor, ast.Add, ast.Sub, ast.Mod))
        for part in ast.walk(node.elt)
    )


# Calls that turn an encoded or compressed text back into what it says.
DECODERS = frozenset(
    {
        "base64.b64decode",
        "base64.b32decode",
        "base64.b16decode",
        "base64.b85decode",
        "base64.a85decode",
        "base64.decodebytes",
        "base64.urlsafe_b64decode",
        "base64.standard_b64decode",
        "codecs.decode",
        "zlib.decompress",
        "gzip.decompress",
        "bz2.decompress",
        "lzma.decompress",
        "bytes.fromhex",
        "binascii.unhexlify",
        "binascii.a2b_base64",
        "binascii.a2b_hex",
        "marshal.loads",
    }
)


def names_no_url(call: ast.Call) -> bool:
    """Whether a call names no URL: its first positional argument (an HTTP client's URL) is
    missing or a tuple, list, dict, set or number written out, and no ``url=``/``endpoint=``/
    ``uri=`` (nor ``**kwargs`` that could hold one). An HTTP client's put/post always names its
    URL; a key-value store's ``store.put(namespace=..., key=..., value=...)`` or
    ``store.put(("user-123", "facts"), "location", {...})`` does not."""
    first = call.args[0] if call.args else None
    return (
        first is None
        or isinstance(first, (ast.Tuple, ast.List, ast.Dict, ast.Set))
        or (isinstance(first, ast.Constant) and not isinstance(first.value, (str, bytes)))
    ) and not any(kw.arg in (None, "url", "endpoint", "uri") for kw in call.keywords)


def sends_nowhere(call: ast.Call, name: str, short: str, given: Iterable[Any]) -> bool:
    """Whether a put/post/patch or upload call sends nothing to an address: a test's
    ``unittest.mock.patch`` (it replaces a name), or a call that names no URL
    (``names_no_url``) and, for an upload, carries nothing sensitive either (an SDK's
    ``client.music.upload(file=open("song.mp3"))`` goes to the vendor's own service; sensitive
    data given to it is still a send). ``given``: what the call's arguments hold (their taint)."""
    if name.split(".")[0] in ("unittest", "mock", "mocker") and ".patch" in f".{name}":
        return True
    if short in ("put", "post", "patch"):
        return names_no_url(call)
    return short == "upload" and names_no_url(call) and not any(out.taint for out in given)


# Libraries whose objects deliver an ``emit()`` to another machine (Socket.IO and the like).
_EVENT_SENDERS = frozenset(
    {"socketio", "flask_socketio", "engineio", "websocket", "websockets", "pusher", "ably",
     "pysher", "nats", "paho", "zmq", "aiohttp", "tornado"}
)  # fmt: skip


def own_emit(methods: Container[str], root: str, aliases: dict[str, str]) -> bool:
    """Whether ``root.emit(…)`` stays on this machine: a Qt signal (``self.x.emit``,
    ``signal.emit``), or the bundle's own ``emit`` (a CLI's output writer) rather than a
    socket's: the bundle defines one, ``root`` is no imported name, and the module imports no
    library whose objects emit to another machine. What the bundle's ``emit`` sends is
    summarised and counted at the call as any function's."""
    return root in ("self", "signal") or (
        "emit" in methods
        and root not in aliases
        and not any(module.split(".")[0] in _EVENT_SENDERS for module in aliases.values())
    )


# Calls that keep a path inside its folder (or reduce it to a bare name) when a function makes
# any of them: its joins are checked, not traversals.
_CONFINING = frozenset(
    {"realpath", "abspath", "normpath", "resolve", "basename", "commonpath", "is_relative_to",
     "relative_to", "secure_filename", "safe_join", "name"}
)  # fmt: skip


def _fixed_root(node: ast.AST, roots: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value.startswith(("/", "~")) else None
    if isinstance(node, ast.Name):
        return roots.get(node.id)
    return None


def _extends(node: ast.AST, params: set[str], roots: dict[str, str]) -> str | None:
    """The fixed folder a path expression puts a parameter under: ``os.path.join(BASE, name)``,
    ``f"/etc/app/{name}"``, ``BASE + name``."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        short = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if short == "join" and len(node.args) >= 2:
            root = _fixed_root(node.args[0], roots)
            tail = node.args[-1]
            if root and isinstance(tail, ast.Name) and tail.id in params:
                return root
    if isinstance(node, ast.JoinedStr) and len(node.values) >= 2:
        head, *rest = node.values
        root = _fixed_root(head, roots)
        if root and any(
            isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
            and v.value.id in params
            for v in rest
        ):  # fmt: skip
            return root
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        root = _fixed_root(node.left, roots)
        if root and isinstance(node.right, ast.Name) and node.right.id in params:
            return root
    return None


def traversals(tree: ast.Module, text: str) -> list[tuple[int, str]]:
    """Files opened at a fixed folder extended by a function's argument, in functions that
    make no call keeping the path inside that folder: what ``../../etc/passwd`` escapes.

    Args:
        tree: the module.
        text: its source (``tree`` is its parse).
    Returns:
        (line, what) per such open.
    """
    roots = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str) and node.value.value.startswith(("/", "~"))
        for target in node.targets
        if isinstance(target, ast.Name)
    }  # fmt: skip
    found: list[tuple[int, str]] = []
    for func in _functions(tree.body, _open_lines(text)):
        opens = [
            c for c in func.calls
            if isinstance(c.func, ast.Name) and c.func.id == "open" and c.args
        ]  # fmt: skip
        if (
            not opens
            or func.dotdot
            or any(
                (c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", ""))
                in _CONFINING
                for c in func.calls
            )
        ):
            continue
        params, local = func.params, dict(roots)
        paths: dict[str, str] = {}
        for node in func.assigns:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                root = _fixed_root(node.value, local)
                if root:
                    local[target.id] = root
                built = _extends(node.value, params, local)
                if built:
                    paths[target.id] = built
        for call in opens:
            arg = call.args[0]
            root = paths.get(arg.id) if isinstance(arg, ast.Name) else _extends(arg, params, local)
            if root:
                found.append(
                    (call.lineno, f"opens a path under {root} that an argument of "
                     f"{func.node.name}() extends, unchecked")
                )  # fmt: skip
    return found


class _Function:
    """A function with parameters, and what its subtree holds in ``ast.walk`` order: its calls,
    its single-target assignments, whether a ``".."`` appears."""

    __slots__ = ("assigns", "calls", "dotdot", "node", "params")

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> None:
        self.node, self.params = node, params
        self.calls: list[ast.Call] = []
        self.assigns: list[ast.Assign] = []
        self.dotdot = False


# ``open`` written as a name of its own: not part of a longer name (``urlopen``, ``opened``)
# nor an attribute right after a dot (``Image.open``). A superset of where the name is. The
# literal comes first, so re finds each "open" by a fast search and then looks around it.
_OPEN_NAME_RE = re.compile(r"open(?<![\w.]open)(?!\w)")


def _open_lines(text: str) -> list[int] | None:
    """The lines where ``open`` is written as a name, in order, in ASCII text with ``\\n``
    line ends (the lines ``ast`` counts); None for other text (Python reads identifiers
    NFKC-normalised: ``ｏｐｅｎ`` is ``open``)."""
    if not text.isascii() or "\r" in text:
        return None
    lines: list[int] = []
    newlines = last = 0
    for match in _OPEN_NAME_RE.finditer(text):
        at = match.start()
        newlines += text.count("\n", last, at)
        last = at
        lines.append(newlines + 1)
    return lines


def _spans(st: ast.stmt, lines: list[int]) -> bool:
    """Whether a statement spans one of ``lines`` (in order)."""
    i = bisect.bisect_left(lines, first_line(st))
    return i < len(lines) and lines[i] <= (st.end_lineno or st.lineno)


def _note(node: ast.AST, inside: tuple[_Function, ...]) -> None:
    """Note a node in each function enclosing it."""
    if isinstance(node, ast.Call):
        for func in inside:
            func.calls.append(node)
    elif isinstance(node, ast.Assign):
        if len(node.targets) == 1:
            for func in inside:
                func.assigns.append(node)
    elif isinstance(node, ast.Constant) and node.value == "..":
        for func in inside:
            func.dotdot = True


def _functions(body: list[ast.stmt], lines: list[int] | None) -> list[_Function]:
    """Every function with parameters (``self``/``cls`` aside) in ``body`` that can call
    ``open``, in ``ast.walk`` order, from one breadth-first walk: a node is noted in each
    function enclosing it, so nested functions cost no walk of their own. Breadth-first order
    within a subtree is the whole walk's order restricted to it, so each list is what
    ``ast.walk`` of the function gives. Outside every such function, a statement spanning no
    line of ``lines`` is left out (no function in it can call ``open``), and so is an
    expression (it holds no ``def``)."""
    out: list[_Function] = []
    queue: deque[tuple[ast.AST, tuple[_Function, ...]]] = deque((st, ()) for st in body)
    while queue:
        node, inside = queue.popleft()
        if not inside and (
            isinstance(node, ast.expr)
            or (lines is not None and isinstance(node, ast.stmt) and not _spans(node, lines))
        ):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]} - {"self", "cls"}
            if params:
                out.append(_Function(node, params))
                inside = (*inside, out[-1])
        elif inside:
            _note(node, inside)
        for name in node._fields:
            child = getattr(node, name, None)
            if isinstance(child, ast.AST):
                queue.append((child, inside))
            elif isinstance(child, list):
                queue.extend((item, inside) for item in child if isinstance(item, ast.AST))
    return out


def retrieved_to(target: ast.expr, value: ast.expr) -> tuple[str, ast.expr] | None:
    """``path, _ = urlretrieve(URL, "/tmp/x.whl")``: the name bound to the saved file's path,
    and the expression of that path."""
    if not (isinstance(target, ast.Tuple) and target.elts and isinstance(value, ast.Call)):
        return None
    first, func = target.elts[0], value.func
    short = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if isinstance(first, ast.Name) and short == "urlretrieve" and len(value.args) >= 2:
        return first.id, value.args[1]
    return None


def written_handle(name: str, call: ast.Call, fold: Callable[[ast.AST], str | None]) -> str | None:
    """The path a call opens for writing (``open(p, "w")``, ``Path(p).open("a")``), or None."""
    if name in ("open", "io.open", "codecs.open") and call.args:
        mode = fold(call.args[1]) if len(call.args) > 1 else None
        for kw in call.keywords:
            if kw.arg == "mode":
                mode = fold(kw.value)
        return fold(call.args[0]) or None if mode and any(c in mode for c in "wax+") else None
    if isinstance(call.func, ast.Attribute) and call.func.attr == "open":
        path = fold(call.func.value)
        mode = fold(call.args[0]) if call.args else None
        return path or None if path and mode and any(c in mode for c in "wax+") else None
    return None


# Stream wrappers: what is written to the wrapper is written into the stream it wraps.
_WRAPPERS = frozenset({"ZipFile", "TarFile", "GzipFile", "BZ2File", "LZMAFile", "TextIOWrapper",
                       "BufferedWriter", "writer", "DictWriter"})  # fmt: skip


def wrapped_stream(name: str, call: ast.Call) -> str | None:
    """The variable a wrapper call writes through (``zipfile.ZipFile(buf, "w")``,
    ``tarfile.open(fileobj=buf, mode="w")``, ``csv.writer(buf)``), or None."""
    short = name.rsplit(".", 1)[-1]
    if not (short in _WRAPPERS or name in ("tarfile.open", "gzip.open", "bz2.open", "lzma.open")):
        return None
    for kw in call.keywords:
        if kw.arg in ("fileobj", "file", "buffer") and isinstance(kw.value, ast.Name):
            return kw.value.id
    first = call.args[0] if call.args else None
    return first.id if isinstance(first, ast.Name) else None


# logging's handlers that ship each record off the machine, and where their host is given.
LOG_HANDLERS = frozenset({"HTTPHandler", "SocketHandler", "DatagramHandler", "SysLogHandler",
                          "SMTPHandler"})  # fmt: skip
LOG_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


def log_handler_host(call: ast.Call, fold: Callable[[ast.AST], str | None]) -> str | None:
    """The host a network logging handler sends to, where it is written out."""
    given: ast.AST | None = call.args[0] if call.args else None
    for kw in call.keywords:
        if kw.arg in ("host", "address", "mailhost"):
            given = kw.value
    if isinstance(given, ast.Tuple) and given.elts:
        given = given.elts[0]
    text = fold(given) if given is not None else None
    if not text:
        return None
    return text.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower() or None
