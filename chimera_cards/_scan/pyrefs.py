"""What a Python script names, resolved: every import, call, attribute read, store, delete,
subscript and string it builds, with import aliases, names bound to modules or functions, and
constant strings folded the way the flow analysis folds them (:class:`pyflow._PyFolding`), so
``getattr(__import__("o" + "s"), "_ex" + "it")`` reads as ``os._exit``, ``vars(m)["x"]`` as
``m.x``, and code run by ``exec`` of a folded (or decoded) constant is read too.

Rules over a script (:mod:`reference_loop._verdict.review` reads an attempt's patch with them)
match these references by kind and name instead of each walking the tree and re-deriving what
a name means. Where the code hides a name (``getattr(os, name)`` with ``name`` built at run
time, ``exec`` of text not written out) the reference says so (kind ``dynamic``): what cannot
be read is a fact too.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import translate

from chimera_cards._scan.pyfacts import PyFacts, Summaries, _PyFolding
from chimera_cards._scan.pyshapes import parse_python

KINDS = ("import", "call", "name", "store", "delete", "subscript", "string", "dynamic", "define")
MAX_NESTED = 3  # exec of exec of exec: deeper text is a dynamic reference
_DYNAMIC_CODE = frozenset({"exec", "eval", "compile", "builtins.exec", "builtins.eval"})
_IMPORTERS = frozenset({"__import__", "builtins.__import__", "importlib.import_module"})
_ATTR_CALLS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
_BUILTINS = ("__builtins__", "builtins")
_NAMESPACE_GETS = frozenset({"get", "pop", "setdefault", "__getitem__"})
_GETTERS = frozenset({"object.__getattribute__", "type.__getattribute__",
                      "inspect.getattr_static", "operator.attrgetter"})  # fmt: skip
_ALIASING = frozenset({*_IMPORTERS, "getattr"})  # calls whose result is the thing they name


@dataclass(frozen=True)
class Ref:
    """One place a script names something.

    ``kind``: ``import`` (a module), ``call`` (the callee), ``name`` (a name or attribute read),
    ``store`` / ``delete`` (an assignment or ``del`` target, ``setattr`` / ``delattr`` too),
    ``subscript`` (``name[key]`` read; ``args`` holds the key), ``string`` (a string constant
    or one the code builds), ``dynamic`` (a name or code the script builds at run time: the
    callee in ``name``), ``define`` (a function, or a lambda bound to a name: its name).
    ``name`` is dotted and resolved (``sp.run`` -> ``subprocess.run``); a part that cannot be
    resolved (the result of a call) is ``*``. ``args`` are the call's (or subscript's) folded
    arguments, None where one is not a constant.
    """

    kind: str
    name: str
    line: int
    args: tuple[str | None, ...] = ()
    scope: str = ""  # the enclosing class/function, dotted ("" at module level)
    node: ast.AST | None = field(default=None, compare=False, repr=False)

    @property
    def last(self) -> str:
        """The last part of the name (the attribute or function itself)."""
        return self.name.rsplit(".", 1)[-1]


@dataclass
class PyRefs:
    """The references of one script (``tree`` None: not Python this interpreter reads)."""

    path: str
    text: str
    tree: ast.Module | None
    refs: list[Ref] = field(default_factory=list)
    too_deep: bool = False  # nested past what the walk follows: the rest is unknown

    def find(self, kinds: Iterable[str], patterns: Iterable[str] = ("*",)) -> Iterator[Ref]:
        """The references of ``kinds`` whose name matches one of the ``fnmatch`` patterns."""
        wanted = frozenset(kinds)
        match = _matcher(tuple(patterns))
        for ref in self.refs:
            if ref.kind in wanted and match(ref.name):
                yield ref


@functools.lru_cache(maxsize=512)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """One compiled alternation of ``fnmatch`` patterns (a rule names a dozen; a review asks
    every reference of a file against each rule's)."""
    return re.compile("|".join(translate(p) for p in patterns) or "(?!)").match


class _Walker(_PyFolding):
    """One walk over a tree, every node visited once (nested ``exec`` text walked in place)."""

    def __init__(self, out: PyRefs, depth: int = 0, line_offset: int = 0) -> None:
        super().__init__(PyFacts(), Summaries(), first_line=1, depth=depth, embed=None)
        self.out = out
        self.scope: list[str] = []
        self.line_offset = line_offset

    # -- names ---------------------------------------------------------------------------

    def chain(self, node: ast.AST) -> str:
        """The dotted name of ``node``, resolved where the folding can, else with ``*`` for the
        part it cannot (``f().x`` -> ``*.x``)."""
        if isinstance(node, ast.Subscript):
            key = self.fold(node.slice)
            base = node.value
            if key is not None and "*" not in key:
                # vars(m)["x"], m.__dict__["x"], globals()["x"], __builtins__["x"]
                if isinstance(base, ast.Call) and self.dotted(base.func) == "vars" and base.args:
                    return f"{self.chain(base.args[0])}.{key}"
                if isinstance(base, ast.Attribute) and base.attr == "__dict__":
                    return f"{self.chain(base.value)}.{key}"
                if isinstance(base, ast.Call) and self.dotted(base.func) in ("globals", "locals"):
                    return self.resolve(key)
                if isinstance(base, ast.Name) and base.id == "__builtins__":
                    return f"builtins.{key}"
                if self.dotted(base) == "sys.modules":
                    return self.resolve(key)  # sys.modules["os"] is the module os
            return "*"
        found = self.dotted(node)
        if found is not None:
            return self.resolve(found)
        parts: list[str] = []
        current = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if isinstance(current, ast.Subscript | ast.Call) and parts:
            head = (
                self.chain(current)
                if isinstance(current, ast.Subscript)
                else self.namespace_name(current) or "*"
            )
            return ".".join([head, *reversed(parts)])
        return ".".join(["*", *reversed(parts)]) if parts else "*"

    def resolve(self, name: str) -> str:
        head, dot, rest = name.partition(".")
        if head in _BUILTINS:
            return "builtins" + (dot + rest if rest else "")
        return name

    def add(self, kind: str, name: str, node: ast.AST, args: tuple[str | None, ...] = ()) -> None:
        line = self.line_offset + getattr(node, "lineno", 1)
        self.out.refs.append(Ref(kind, name, line, args, ".".join(self.scope), node))

    # -- the walk ------------------------------------------------------------------------

    def walk(self, tree: ast.Module) -> None:
        self.learn(tree)
        self.block(tree.body)

    def block(self, body: list[ast.stmt]) -> None:
        for i, st in enumerate(body):
            if (
                i == 0
                and isinstance(st, ast.Expr)
                and isinstance(st.value, ast.Constant)
                and isinstance(st.value.value, str)
            ):
                continue  # a docstring says, it does not do
            self.visit(st)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.add("import", alias.name, node)
            return
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            self.add("import", module, node)
            for alias in node.names:
                self.add("name", f"{module}.{alias.name}".replace("..", "."), node)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in node.decorator_list:
                self.visit(deco)
            if not isinstance(node, ast.ClassDef):
                self.add("define", node.name, node)
                for default in (*node.args.defaults, *node.args.kw_defaults):
                    if default is not None:
                        self.visit(default)
            else:
                for base in (*node.bases, *(k.value for k in node.keywords)):
                    self.visit(base)
            self.scope.append(node.name)
            self.block(node.body)
            self.scope.pop()
            return
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            self.assign(node)
            return
        if isinstance(node, ast.Delete):
            for target in node.targets:
                self.target("delete", target)
            return
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            self.target("store", node.target)
            self.visit(node.iter)
            for name in ("body", "orelse", "ifs"):
                for child in getattr(node, name, ()):
                    self.visit(child)
            return
        if isinstance(node, ast.withitem):
            self.visit(node.context_expr)
            if node.optional_vars is not None:
                self.target("store", node.optional_vars)
            return
        if isinstance(node, ast.Call):
            self.call(node)
            return
        if isinstance(node, ast.Attribute | ast.Name):
            self.add("name", self.chain(node), node)
            if isinstance(node, ast.Attribute):
                self.inner(node.value)
            return
        if isinstance(node, ast.Subscript):
            name = self.chain(node)
            if name != "*":
                self.add("name", name, node)
            self.add("subscript", self.chain(node.value), node, (self.fold(node.slice),))
            self.inner(node.value)
            self.visit(node.slice)
            return
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                self.add("string", node.value, node)
            return
        if isinstance(node, ast.JoinedStr | ast.BinOp):
            folded = self.fold(node)
            if folded is not None and folded.strip("*"):
                self.add("string", folded, node)
        if isinstance(node, ast.Lambda):
            self.scope.append("<lambda>")
            self.visit(node.body)
            self.scope.pop()
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def inner(self, node: ast.AST) -> None:
        """The parts of an attribute chain's base worth a reference of their own (a call, a
        subscript); plain names inside the chain are in the chain's name already."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name):
            self.visit(node)

    def assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        value = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if value is not None:
            self.visit(value)
        for target in targets:
            self.target("store", target)
            if isinstance(node, ast.Assign) and value is not None:
                self.bind(target, value)

    def bind(self, target: ast.AST, value: ast.AST) -> None:
        """A name bound to a module, a function or an attribute of one is an alias for it
        (``e = os._exit`` then ``e(0)``); a lambda bound to a name defines it."""
        if not isinstance(target, ast.Name | ast.Attribute):
            return
        key = target.id if isinstance(target, ast.Name) else target.attr
        if isinstance(value, ast.Lambda):
            self.add("define", key, value)
            return
        if isinstance(value, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
            name = self.chain(value)
            plain = not isinstance(value, ast.Call) or self.dotted(value.func) in _ALIASING
            if plain and name != key and not name.startswith("*"):
                self.aliases[key] = name

    def target(self, kind: str, target: ast.AST) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.target(kind, elt)
        elif isinstance(target, ast.Starred):
            self.target(kind, target.value)
        elif isinstance(target, ast.Subscript):
            self.add(kind, self.chain(target.value), target, (self.fold(target.slice),))
            name = self.chain(target)
            if name != "*":
                self.add(kind, name, target)
            self.inner(target.value)
            self.visit(target.slice)
        elif isinstance(target, ast.Attribute):
            self.add(kind, self.chain(target), target)
            self.inner(target.value)
        elif isinstance(target, ast.Name):
            self.add(kind, target.id, target)

    def call(self, node: ast.Call) -> None:
        func = self.chain(node.func)
        name = self.dotted(node.func) or ""
        args = tuple(self.fold(a) for a in node.args[:4])
        self.add("call", func, node, args)
        if name in _ATTR_CALLS and len(node.args) >= 2:
            attr = self.fold(node.args[1])
            base = self.chain(node.args[0])
            if attr is None or "*" in attr:
                self.add("dynamic", f"{name}:{base}", node, (attr,))
            elif name == "setattr":
                self.add("store", f"{base}.{attr}", node)
            elif name == "delattr":
                self.add("delete", f"{base}.{attr}", node)
            else:
                self.add("name", f"{base}.{attr}", node)
        elif self.namespace_get(node):
            pass
        elif func.endswith(".__getattribute__") or name in _GETTERS:
            self.getter(node, func, name)
        elif name in _IMPORTERS or func in _IMPORTERS:
            module = self.fold(node.args[0]) if node.args else None
            if module is None or "*" in module:
                self.add("dynamic", "import", node)
            else:
                self.add("import", module, node)
        elif func in _DYNAMIC_CODE or name in _DYNAMIC_CODE:
            self.nested(node)
        if not isinstance(node.func, ast.Name):
            self.visit(node.func) if isinstance(node.func, ast.Call) else self.inner(node.func)
        for arg in (*node.args, *(k.value for k in node.keywords)):
            self.visit(arg)

    def namespace_key(self, node: ast.AST) -> tuple[str, str | None] | None:
        """For ``vars(m).get(k)``, ``m.__dict__.get(k)``, ``sys.modules.get(k)``: the holder's
        name ("" for ``sys.modules``) and the folded key; None for any other expression."""
        if not isinstance(node, ast.Call) or not node.args:
            return None
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _NAMESPACE_GETS):
            return None
        holder = func.value
        if isinstance(holder, ast.Call) and self.dotted(holder.func) == "vars" and holder.args:
            base = self.chain(holder.args[0])
        elif isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
            base = self.chain(holder.value)
        elif self.dotted(holder) == "sys.modules":
            base = ""
        else:
            return None
        return base, self.fold(node.args[0])

    def namespace_name(self, node: ast.AST) -> str | None:
        found = self.namespace_key(node)
        if found is None:
            return None
        base, key = found
        if key is None or "*" in key:
            return None
        return self.resolve(f"{base}.{key}" if base else key)

    def namespace_get(self, node: ast.Call) -> bool:
        """A read through a namespace (:meth:`namespace_key`): of ``m.x``, of the module."""
        found = self.namespace_key(node)
        if found is None:
            return False
        base, key = found
        name = self.namespace_name(node)
        if name is None:
            self.add("dynamic", f"getattr:{base or 'sys.modules'}", node, (key,))
        else:
            self.add("name", name, node)
        return True

    def getter(self, node: ast.Call, func: str, name: str) -> None:
        """``x.__getattribute__("a")``, ``object.__getattribute__(x, "a")``,
        ``inspect.getattr_static(x, "a")``, ``operator.attrgetter("a")``: a read of ``x.a``."""
        if func.endswith(".__getattribute__") and func not in _GETTERS:
            base, args = func.rsplit(".", 1)[0], node.args[:1]
        elif name == "operator.attrgetter":
            base, args = "*", node.args[:1]
        else:
            base, args = (self.chain(node.args[0]) if node.args else "*"), node.args[1:2]
        for arg in args:
            attr = self.fold(arg)
            if attr is None or "*" in attr:
                self.add("dynamic", f"getattr:{base}", node, (attr,))
            else:
                self.add("name", f"{base}.{attr}", node)

    def nested(self, node: ast.Call) -> None:
        code = self.fold(node.args[0]) if node.args else None
        if code is None or "*" in code or self.depth >= MAX_NESTED:
            self.add("dynamic", "exec", node)
            return
        tree = parse_python(code)
        if tree is None:
            return
        sub = _Walker(self.out, self.depth + 1, self.line_offset + node.lineno - 1)
        sub.aliases = dict(self.aliases)
        sub.scope = list(self.scope)
        sub.walk(tree)


def python_refs(path: str, text: str, *, tree: ast.Module | None = None) -> PyRefs:
    """The references of a Python script.

    Args:
        path: its path (carried into the result).
        text: its source.
        tree: its parse, when the caller has it.

    Returns:
        The PyRefs; ``tree`` is None when the text does not parse.
    """
    if tree is None:
        tree = parse_python(text)
    out = PyRefs(path, text, tree)
    if tree is None:
        return out
    try:
        _Walker(out).walk(tree)
    except RecursionError:
        out.too_deep = True
    return out
