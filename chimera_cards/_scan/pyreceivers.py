"""Which of a bundle's functions a method call can run, from what the syntax says its receiver is.

Summaries of a bundle's functions are kept by bare name, so ``data.get("project")`` on a dict
would otherwise run the bundle's HTTP client ``get`` (and what it downloads would flow on). A
receiver is what its binding says: Python's own data (a literal, ``dict()``, a ``json.loads``
result, a ``dict[...]`` annotation), an instance of a library class, an imported module, ``self``,
or an instance of one of the bundle's classes. An unknown receiver (an unannotated parameter, the
result of an unknown call) runs a bundle function only when the bundle defines that name once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

BUILTIN = "builtin"  # Python's own data: dict, list, str, bytes, numbers, files
EXTERNAL = "external"  # an instance of a class no file of the bundle defines
MODULE = "module"  # an imported name: a module's function, as before
SELF = "self"
HOLDER = "holder"  # Python's own container written with calls in it: its items may be objects

_BUILTIN_CALLS = frozenset(
    {"dict", "list", "set", "tuple", "str", "bytes", "bytearray", "frozenset", "int", "float",
     "bool", "sorted", "reversed", "zip", "enumerate", "range", "map", "filter", "repr", "format",
     "vars", "dir", "open", "len", "sum", "min", "max", "abs", "round", "chr", "ord", "hex"}
)  # fmt: skip
# Library calls that return plain data (parsed documents, matches, listings).
_DATA_CALLS = frozenset(
    {"json.load", "json.loads", "tomllib.load", "tomllib.loads", "tomli.load", "tomli.loads",
     "toml.load", "toml.loads", "yaml.safe_load", "yaml.load", "yaml.full_load",
     "yaml.safe_load_all", "csv.reader", "csv.DictReader", "os.listdir", "os.environ.copy",
     "re.findall", "re.split", "collections.OrderedDict", "collections.defaultdict",
     "collections.Counter", "dict.fromkeys", "copy.deepcopy", "copy.copy", "shlex.split",
     "urllib.parse.urlparse", "urllib.parse.parse_qs", "os.path.join", "os.getcwd"}
)  # fmt: skip
# Methods whose result is plain data whatever they are called on.
_DATA_METHODS = frozenset(
    {"items", "keys", "values", "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip",
     "lower", "upper", "title", "format", "encode", "decode", "join", "replace", "json",
     "read_text", "read_bytes", "readlines", "hexdigest", "isoformat", "group", "groups",
     "groupdict", "to_dict", "model_dump", "dict"}
)  # fmt: skip
_DATA_ANNOTATIONS = frozenset(
    {"dict", "list", "set", "tuple", "str", "bytes", "int", "float", "bool", "Dict", "List",
     "Set", "Tuple", "Mapping", "MutableMapping", "Sequence", "Iterable", "Any", "object"}
)  # fmt: skip


class Definitions:
    """Where a bundle's Python files define each function name: the classes that define it as a
    method (``""`` for a function outside any class), and each class's bases. The trees are
    walked the first time a question is asked (few bundles ask one)."""

    def __init__(self, trees: Iterable[ast.Module | None]) -> None:
        self._trees: list[ast.Module | None] | None = list(trees)
        self._owners: dict[str, set[str]] = {}
        self._bases: dict[str, list[str]] = {}

    def _walk(self) -> None:
        if self._trees is None:
            return
        trees, self._trees = self._trees, None
        # Statements only (a definition is never inside an expression): a fraction of the nodes.
        stack: list[tuple[ast.stmt, str]] = [
            (node, "") for tree in trees if tree is not None for node in tree.body
        ]
        while stack:
            node, owner = stack.pop()
            if isinstance(node, ast.ClassDef):
                self._bases[node.name] = [_last(b) for b in node.bases]
                stack.extend((child, node.name) for child in node.body)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._owners.setdefault(node.name, set()).add(owner)
                stack.extend((child, "") for child in node.body)  # a nested function is free
                continue
            for field in ("body", "orelse", "finalbody"):
                for child in getattr(node, field, None) or ():
                    if isinstance(child, ast.stmt):
                        stack.append((child, owner))
            for part in (
                *(getattr(node, "handlers", None) or ()),
                *(getattr(node, "cases", None) or ()),
            ):
                stack.extend((child, owner) for child in part.body)

    def __contains__(self, name: object) -> bool:
        """Whether a class of the bundle defines a method of this name."""
        self._walk()
        return isinstance(name, str) and any(self._owners.get(name, ()))

    def is_class(self, name: str) -> bool:
        self._walk()
        return name in self._bases

    def candidates(self, name: str) -> set[str]:
        self._walk()
        return self._owners.get(name, set())

    def defines(self, cls: str, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``cls`` or one of the bundle's classes it derives from defines ``name``."""
        self._walk()
        if cls in seen or cls not in self._bases:
            return False
        if cls in self._owners.get(name, ()):
            return True
        return any(self.defines(base, name, seen | {cls}) for base in self._bases[cls])

    def derived(self, cls: str, name: str) -> bool:
        """Whether ``cls``, a bundle class it derives from, or one derived from it defines
        ``name`` (what ``self.name`` in a method of ``cls`` can run)."""
        self._walk()
        return self.defines(cls, name) or any(
            cls in self._ancestors(other) for other in self._owners.get(name, ()) if other
        )

    def _ancestors(self, cls: str) -> set[str]:
        seen: set[str] = set()
        todo = list(self._bases.get(cls, ()))
        while todo:
            base = todo.pop()
            if base not in seen:
                seen.add(base)
                todo.extend(self._bases.get(base, ()))
        return seen


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _last(node.value)
    return node.id if isinstance(node, ast.Name) else ""


class Receivers:
    """What the names of one walk hold, as far as their bindings say (a scope's names are
    saved and restored around each function, as its values are)."""

    def __init__(self, definitions: Definitions, aliases: dict[str, str]) -> None:
        self.definitions = definitions
        self.aliases = aliases
        self.names: dict[str, str] = {}
        self.attrs: dict[str, str] = {}  # "Class.x": self.x, whatever method bound it
        self.cls: str | None = None  # the class whose body is being walked

    def annotation(self, node: ast.expr | None) -> str | None:
        """The kind an annotation gives (``dict[str, Any]``, ``HttpClient``, ``X | None``)."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = ast.parse(node.value, mode="eval").body if node.value.isidentifier() else node
        if isinstance(node, ast.BinOp):  # X | None
            left, right = self.annotation(node.left), self.annotation(node.right)
            if left == right or _none(node.right):
                return left
            return right if _none(node.left) else None
        name = _last(node)
        if name in _DATA_ANNOTATIONS:
            return BUILTIN
        if name in ("Optional",) and isinstance(node, ast.Subscript):
            return self.annotation(node.slice)
        if name and self.definitions.is_class(name):
            return f"class:{name}"
        return None

    def kind(self, node: ast.expr) -> str | None:
        """What an expression is, or None when the syntax does not say."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.DictComp)):
            return HOLDER if _holds_calls(node) else BUILTIN
        if isinstance(node, ast.Subscript):  # an item of plain data is plain data
            return BUILTIN if self.kind(node.value) == BUILTIN else None
        if isinstance(
            node,
            (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp,
             ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Compare),
        ):  # fmt: skip
            return BUILTIN
        if isinstance(node, ast.Name):
            if node.id in ("self", "cls"):
                return SELF
            return self.names.get(node.id) or (MODULE if node.id in self.aliases else None)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                return self.attrs.get(f"{self.cls}.{node.attr}")
            return MODULE if self.kind(node.value) == MODULE else None
        if isinstance(node, ast.BinOp):
            kinds = {self.kind(node.left), self.kind(node.right)}
            return BUILTIN if BUILTIN in kinds else None
        if isinstance(node, ast.BoolOp):  # value or {}: the literal says what it is
            kinds = {self.kind(v) for v in node.values}
            return BUILTIN if BUILTIN in kinds else (kinds.pop() if len(kinds) == 1 else None)
        if isinstance(node, ast.IfExp):
            body, orelse = self.kind(node.body), self.kind(node.orelse)
            return body if body == orelse else None
        if isinstance(node, ast.Await):
            return self.kind(node.value)
        if isinstance(node, ast.Call):
            return self.called(node)
        return None

    def called(self, node: ast.Call) -> str | None:
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self.kind(func.value)
            if func.attr in _DATA_METHODS or base == BUILTIN:  # data.get("a"): plain data
                return BUILTIN
            if base == MODULE:
                dotted = self._dotted(func)
                if dotted in _DATA_CALLS:
                    return BUILTIN
                if func.attr[:1].isupper():  # module.Class(): the bundle's or a library's
                    own = self.definitions.is_class(func.attr)
                    return f"class:{func.attr}" if own else EXTERNAL
            return None
        if not isinstance(func, ast.Name):
            return None
        name = func.id
        if name in _BUILTIN_CALLS and name not in self.aliases:
            return BUILTIN
        if self.definitions.is_class(name):
            return f"class:{name}"
        if self.aliases.get(name, "") in _DATA_CALLS:
            return BUILTIN
        if name in self.aliases and name[:1].isupper():
            return EXTERNAL
        return None

    def _dotted(self, node: ast.AST) -> str:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def bind(
        self, target: ast.AST, value: ast.expr | None, annotation: ast.expr | None = None
    ) -> None:
        """``target = value``: the name holds what the value (or the annotation) says; a name
        bound by unpacking, a loop or ``with`` is unknown."""
        kind = self.annotation(annotation) or (self.kind(value) if value is not None else None)
        if isinstance(target, ast.Name):
            if kind is None:
                self.names.pop(target.id, None)
            else:
                self.names[target.id] = kind
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id in ("self", "cls")
        ):
            key = f"{self.cls}.{target.attr}"
            if kind is not None and self.attrs.get(key, kind) == kind:
                self.attrs[key] = kind
            else:
                self.attrs[key] = ""  # bound to different things: unknown
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    self.names.pop(name.id, None)

    def enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
        """A function's scope: its parameters as their annotations say. Returns the outer scope."""
        saved = self.names
        self.names = dict(saved)
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self.bind(ast.Name(arg.arg), None, arg.annotation)
        return saved

    def may_run(self, receiver: ast.expr, name: str) -> bool:
        """Whether ``receiver.name(…)`` can run the bundle's function ``name``."""
        kind = self.kind(receiver)
        if kind == SELF:
            cls, known = self.cls, self.definitions
            return cls is None or not known.is_class(cls) or known.derived(cls, name)
        if kind == MODULE:
            return True
        if kind in (BUILTIN, HOLDER, EXTERNAL):
            return False
        if kind and kind.startswith("class:"):
            return self.definitions.defines(kind[6:], name)
        # Unknown: only when the bundle has no other candidate for the name.
        return len(self.definitions.candidates(name)) <= 1


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _holds_calls(node: ast.expr) -> bool:
    """Whether a container literal has a call among its items (nested literals included)."""
    items: list[ast.expr | None] = []
    if isinstance(node, ast.Dict):
        items = list(node.values)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = list(node.elts)
    else:
        return True  # a comprehension builds its items
    for item in items:
        if isinstance(item, ast.Call) or (
            isinstance(item, (ast.Dict, ast.List, ast.Tuple, ast.Set)) and _holds_calls(item)
        ):
            return True
    return False
