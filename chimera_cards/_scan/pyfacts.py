"""What the Python walk carries, as ``shellfacts`` does for shell: a unit's facts for the rules
to grade (``PyFacts``), what a bundle's functions do by name (``Summaries``), and a unit's state
with the folding of values where they are written out (``"~/.s" + "sh"``, ``"".join([...])``,
``base64.b64decode("…")``, ``getattr(os, "sys" + "tem")``), which the walk in
:mod:`chimera_cards._scan.pyflow` builds on."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from chimera_cards._scan.pyreceivers import Definitions, Receivers
from chimera_cards._scan.pyshapes import (
    DECODERS,
    LiteralNames,
    constant_int,
    constant_slice,
    decode_constant,
    retrieved_to,
    statements,
)
from chimera_cards._scan.sensitive import (
    CodeFacts,
    Send,
    Taint,
    host_of,
)
from chimera_cards._scan.shellfacts import Embed, Out, ShellFacts


@dataclass
class Summaries:
    """What a bundle's functions do, by name: their return (``param`` taints for arguments)."""

    returns: dict[str, Out] = field(default_factory=dict)
    sends: dict[str, list[Send]] = field(default_factory=dict)  # the sends parameters reach
    # Where the bundle defines each function (which of them a method call can run).
    methods: Definitions = field(default_factory=lambda: Definitions(()))


@dataclass
class PyFacts(CodeFacts):
    """What a Python unit does, for the rules to grade."""

    persistence: list[tuple[int, str, str]] = field(default_factory=list)  # (line, what, severity)
    shell: ShellFacts = field(default_factory=ShellFacts)
    output: Out = field(default_factory=Out)
    parsed: bool = True
    env_reads: list[tuple[int, str]] = field(default_factory=list)  # secret variables read
    sql: list[tuple[int, str]] = field(default_factory=list)  # SQL built by string formatting
    saw_taint: bool = False  # sensitive data reached some call of this unit
    exhaustion: list[tuple[int, str]] = field(default_factory=list)  # endless loops, huge lists
    # Files downloaded content was saved to (path -> line): run or imported later, staged code.
    saved_downloads: dict[str, int] = field(default_factory=dict)


class _PyFolding:
    """A unit's state and the folding of constant expressions (names, strings, calls on them)."""

    value: Callable[[ast.AST | None], Out]  # defined by _Analyser, the walk built on this class

    def __init__(
        self,
        facts: PyFacts,
        summaries: Summaries,
        *,
        first_line: int,
        depth: int,
        embed: Embed | None,
    ) -> None:
        self.facts = facts
        self.summaries = summaries
        self.offset = first_line - 1
        self.depth = depth
        self.embed = embed
        self.argv = Out()  # what sys.argv holds: a one-liner's arguments, when known
        self.aliases: dict[str, str] = {}
        self.receivers = Receivers(summaries.methods, self.aliases)
        self.consts: dict[str, str] = {}
        self.sequences: dict[str, ast.List | ast.Tuple] = {}  # module-level literal lists
        self.attrs: dict[str, Out] = {}
        self.env: dict[str, Out] = {}
        self.handles: dict[str, str] = {}
        self.wraps: dict[str, str] = {}  # ZipFile(buf) as z: what z is given lands in buf
        self.log_sink: tuple[str | None] | None = None  # (host,) of a logging handler added
        self.function: str | None = None
        self.returned = Out()
        self.sockets: dict[str, str] = {}
        self.dup2 = False
        self.current_line = first_line
        # Whether a string written in the source can name a credential store (folded strings,
        # joined or decoded, are looked at whatever this says).
        self.literals = True
        self.built_queries: set[str] = set()
        self.literal = LiteralNames()  # names that only hold a literal, read when asked
        self.guarded = 0  # inside a try body with handlers
        self.spawned_shell = False
        # Request objects by variable: (host, body secrets, header secrets).
        self.requests: dict[str, tuple[str | None, set[Taint], set[Taint]]] = {}

    def line(self, node: ast.AST) -> int:
        return self.offset + getattr(node, "lineno", 1)

    # --- names and folding ------------------------------------------------------------------

    def dotted(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while True:
            if isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                func = node.func.id
                if func == "getattr" and len(node.args) >= 2:
                    attr = self.fold(node.args[1])
                    base = self.dotted(node.args[0])
                    if attr and base and "*" not in attr:
                        parts.append(attr)
                        parts.append(base)
                        break
                    return None
                if func in ("__import__",) and node.args:
                    module = self.fold(node.args[0])
                    if module and "*" not in module:
                        parts.append(module)
                        break
                return None
            elif isinstance(node, ast.Call) and self.dotted(node.func) == "importlib.import_module":
                module = self.fold(node.args[0]) if node.args else None
                if module and "*" not in module:
                    parts.append(module)
                    break
                return None
            elif isinstance(node, ast.Name):
                name = "builtins" if node.id == "__builtins__" else node.id
                parts.append(self.aliases.get(name, name))
                break
            elif isinstance(node, ast.Subscript):
                # __builtins__.__dict__["ev" + "al"], globals()[name]: a name looked up by string.
                key = self.fold(node.slice)
                if not key or not key.isidentifier():
                    return None
                parts.append(key)
                node = node.value
                if isinstance(node, ast.Attribute) and self.dotted(node) == "sys.modules":
                    break  # sys.modules["os"] is the module os
                if isinstance(node, ast.Attribute) and node.attr == "__dict__":
                    node = node.value
                if isinstance(node, ast.Call) and self.dotted(node.func) in ("globals", "locals"):
                    break
            else:
                return None
        return ".".join(reversed(parts))

    def fold(self, node: ast.AST | None, depth: int = 0) -> str | None:
        """The string an expression is, where it is written out (unknown parts as ``*``)."""
        if node is None or depth > 12:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("latin-1")
            return None
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            return self.consts.get(node.attr)
        if isinstance(node, ast.Attribute) and self.dotted(node) == "sys.executable":
            return "python3"  # the interpreter running the script, as a command
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    parts.append(self.fold(value.value, depth + 1) or "*")
                else:
                    parts.append(self.fold(value, depth + 1) or "")
            return "".join(parts)
        if isinstance(node, ast.BinOp):
            left = self.fold(node.left, depth + 1)
            right = self.fold(node.right, depth + 1)
            if isinstance(node.op, ast.Add) and (left is not None or right is not None):
                return (left or "*") + (right or "*")
            if isinstance(node.op, ast.Div) and (left is not None or right is not None):
                return (left or "*") + "/" + (right or "*")
            if isinstance(node.op, ast.Mod) and left is not None:
                return left
            return None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            inner = self.fold(node.value, depth + 1)
            cut = constant_slice(node.slice)
            if inner is not None and cut is not None and "*" not in inner:
                return inner[cut]  # "hss."[::-1], ".aws/x"[:4]
            return None
        if isinstance(node, ast.Subscript):
            # parts[1] of a list of constants held in a variable
            items = self.fold_items(node.value, depth + 1)
            index = constant_int(node.slice)
            if items is not None and index is not None and -len(items) <= index < len(items):
                return items[index]
            return None
        if isinstance(node, ast.Call):
            return self.fold_call(node, depth)
        return None

    def fold_call(self, node: ast.Call, depth: int) -> str | None:
        name = self.dotted(node.func) or ""
        args = node.args
        if isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            sep = self.fold(node.func.value, depth + 1)
            if sep is not None and "*" not in sep and args:
                items = self.fold_items(args[0], depth)
                if items is not None:
                    return sep.join(items)
            if name in ("os.path.join", "path.join", "posixpath.join"):
                return "/".join(self.fold(a, depth + 1) or "*" for a in args)
            return None
        if isinstance(node.func, ast.Attribute) and node.func.attr in (
            "decode",
            "encode",
            "strip",
            "lower",
            "format",
            "replace",
            "rstrip",
            "lstrip",
        ):
            return self.fold(node.func.value, depth + 1)
        if name in ("Path.home", "pathlib.Path.home", "os.path.expanduser") and not args:
            return "~"
        if name in (
            "os.path.expanduser",
            "Path",
            "pathlib.Path",
            "os.path.expandvars",
            "str",
            "bytes",
            "os.fsencode",
            "os.fsdecode",
            "PurePath",
            "os.path.abspath",
            "os.path.realpath",
        ):
            if not args:
                return None
            parts = [self.fold(a, depth + 1) or "*" for a in args]
            return "/".join(parts)
        if (
            name in ("os.getenv", "os.environ.get")
            and args
            and self.fold(args[0]) in ("HOME", "USERPROFILE")
        ):
            return "~"
        if (
            name == "chr"
            and args
            and isinstance(args[0], ast.Constant)
            and isinstance(args[0].value, int)
        ):
            try:
                return chr(args[0].value)
            except (ValueError, OverflowError):
                return None
        if name in DECODERS and args:
            raw = self.fold(args[0], depth + 1)
            if raw is None or "*" in raw:
                return None
            return decode_constant(name, raw, [self.fold(a) for a in args[1:]])
        if name == "bytes" and args and isinstance(args[0], (ast.List, ast.Tuple)):
            items = self.fold_items(args[0], depth)
            return "".join(items) if items is not None else None
        return None

    def fold_items(self, node: ast.AST, depth: int) -> list[str] | None:
        if depth > 12:
            return None
        if isinstance(node, ast.Name) and node.id in self.sequences:  # codes = [101, 120, …]
            node = self.sequences[node.id]
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            items = self.fold_items(node.value, depth + 1)  # parts[:2], parts[::-1]
            cut = constant_slice(node.slice)
            return items[cut] if items is not None and cut is not None else None
        if (
            isinstance(node, ast.Call)
            and self.dotted(node.func) == "reversed"
            and len(node.args) == 1
        ):
            items = self.fold_items(node.args[0], depth + 1)
            return items[::-1] if items is not None else None
        if isinstance(node, (ast.List, ast.Tuple)):
            items = []
            for elt in node.elts:
                if isinstance(elt, ast.Constant) and isinstance(elt.value, int):
                    try:
                        items.append(chr(elt.value))
                    except (ValueError, OverflowError):
                        return None
                    continue
                value = self.fold(elt, depth + 1)
                if value is None:
                    return None
                items.append(value)
            return items
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and isinstance(node.elt, ast.Call):
            # "".join(chr(c) for c in [104, 105])
            gen = node.generators[0] if node.generators else None
            if gen is not None and self.dotted(node.elt.func) == "chr":
                return self.fold_items(gen.iter, depth)
        if (
            isinstance(node, ast.Call)
            and self.dotted(node.func) == "map"
            and len(node.args) == 2
            and self.dotted(node.args[0]) == "chr"
        ):
            return self.fold_items(node.args[1], depth)
        return None

    def learn(self, tree: ast.Module) -> None:
        """The import aliases and the names bound to a foldable constant, from every statement
        (nested ones too), before the walk: a name is known wherever it is used."""
        for node in statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.aliases[(alias.asname or alias.name).split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    key = (
                        target.id
                        if isinstance(target, ast.Name)
                        else (target.attr if isinstance(target, ast.Attribute) else None)
                    )
                    saved = retrieved_to(target, node.value)  # path, _ = urlretrieve(URL, P)
                    if saved is not None and (folded := self.fold(saved[1])) is not None:
                        self.consts.setdefault(saved[0], folded)
                    if isinstance(node.value, (ast.List, ast.Tuple)) and key is not None:
                        self.sequences.setdefault(key, node.value)
                    if key is not None and key not in self.consts:
                        folded = self.fold(node.value)
                        if folded is not None:
                            self.consts[key] = folded

    def remember_request(self, node: ast.Assign) -> None:
        """``req = Request(url, data=…, headers=…)``: where a later ``urlopen(req)`` goes, and
        which of its secrets ride in the headers rather than the body."""
        value = node.value
        if not (
            isinstance(value, ast.Call) and (self.dotted(value.func) or "").endswith("Request")
        ):
            return
        url = value.args[0] if value.args else None
        for kw in value.keywords:
            if kw.arg == "url":
                url = kw.value
        headers = next((kw.value for kw in value.keywords if kw.arg == "headers"), None)
        if headers is None and len(value.args) > 2:
            headers = value.args[2]
        header = self.value(headers).taint if headers is not None else set()
        body = set()
        for index, arg in enumerate(value.args):
            if index != 2:
                body |= self.value(arg).taint
        for kw in value.keywords:
            if kw.arg != "headers":
                body |= self.value(kw.value).taint
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.requests[target.id] = (host_of(self.fold(url)), body, header)

    def saved(self, path: str, content: Out, line: int) -> None:
        """Downloaded or decoded content saved to ``path``: a later run of the file (by the
        shell this script starts, or an import) runs code nobody reviewed."""
        self.facts.shell.tainted_files.setdefault(path, Out()).merge(
            Out(set(), content.decoded, content.downloaded)
        )
        self.facts.saved_downloads.setdefault(path, line)
