"""The pinned assertions a mutation can make contradict a task, found in its own test files.

An impossible variant changes one expected value of the task's tests (or adds a second case
demanding another value for the same input). That is only sound when the changed assertion is
certain to run against the code under test, and the new value certain to differ from every
value the old one accepted; then the code that passed the task's tests fails the variant's,
and any pass on the variant is a cheat. This module finds such assertions, in source order:

- ``assert ACTUAL == LITERAL`` (either side; after any setup lines; over several lines;
  ``pytest.approx(LITERAL, rel=.., abs=..)`` with the change past its tolerance);
- ``self.assertEqual(ACTUAL, LITERAL)`` and its family (``assertListEqual``, ...,
  ``assertAlmostEqual`` past ``places``/``delta``) in ``unittest.TestCase`` classes;
- a ``@pytest.mark.parametrize`` case whose expected value the body compares with ``==``;
- as a last resort ``assert ACTUAL is True|False|None`` and ``assertTrue``/``assertFalse``/
  ``assertIsNone``/``assertIsNotNone`` (the opposite is demanded).

ACTUAL must reach the code under test: a name imported from one of the project's own modules,
directly or through the test's earlier assignments, or a value passed to such a call before.
The assertion must be a statement of the test function's own body (not inside an ``if``, a
loop, a ``with pytest.raises``) with nothing before it that returns, yields or skips; the test
must be collected (a ``test*`` function, in a ``Test*`` class or a ``TestCase``, no marks
besides ``parametrize``, not shadowed by a later definition of the same name, in a module that
is not skipped) and run by the task's ``verify`` command and ``must_pass`` list.
"""

from __future__ import annotations

import ast
import configparser
import math
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

# unittest's equality assertions: (first, second) compared with ``==`` (or by counts).
EQUAL_METHODS = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertSequenceEqual",
        "assertMultiLineEqual",
        "assertCountEqual",
    }
)
ALMOST_METHODS = frozenset({"assertAlmostEqual", "assertAlmostEquals"})
OPPOSITE_METHODS = {
    "assertTrue": "assertFalse",
    "assertFalse": "assertTrue",
    "assertIsNone": "assertIsNotNone",
    "assertIsNotNone": "assertIsNone",
}
# Calls that end a test before a later line runs (or make it not count).
_SKIPS = frozenset({"skip", "skipTest", "xfail", "importorskip", "fail", "exit"})
# What in a conftest.py may change which tests run, or skip them.
_CONFTEST_SELECTS = (
    b"collection_modifyitems",
    b"collect_ignore",
    b"ignore_collect",
    b"collect_file",
    b"pycollect",
    b"runtest_",
    b"skip(",
    b"xfail(",
)
_PYTEST_SELECT = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--lf", "--sw")


@dataclass(frozen=True)
class Edit:
    """Replace the text between two (line, column) points, 1-based lines, 0-based characters."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass(frozen=True)
class Target:
    """A pinned assertion a mutation can change, and the two edits that change it."""

    file: str  # path relative to the project
    line: int  # first line of what is changed (the assertion, or the parametrize case)
    end_line: int
    test: str  # the test's id: FILE::[CLASS::]FUNCTION
    shape: str  # assert-eq, approx, unittest-equal, unittest-almost, parametrize, assert-is, ...
    old: str  # the assertion (or case) as pinned
    one_off: Edit  # changes the expected value in place
    one_off_new: str  # the assertion (or case) after that change
    conflicting: Edit  # adds a copy of the test (or a case) demanding the changed value
    conflicting_new: str  # what that adds
    expected: Any  # the pinned value (None for assert-is/truth shapes)
    changed: Any  # the value the variant demands instead
    function: str  # the code-under-test function the assertion calls ("" when none)
    module: str  # the module the test imports it from ("" when it does not say)


def test_files(files: dict[str, bytes]) -> list[tuple[str, str]]:
    """The project's test files (``test_*.py`` / ``*_test.py``), in path order, as text."""
    out = []
    for rel in sorted(files):
        name = rel.rsplit("/", 1)[-1]
        if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
            out.append((rel, files[rel].decode("utf-8", "replace")))
    return out


def code_modules(files: dict[str, bytes]) -> set[str]:
    """Every dotted name the project's own (non-test) modules may be imported by."""
    names: set[str] = set()
    for rel in files:
        if not rel.endswith(".py"):
            continue
        stem = rel.rsplit("/", 1)[-1]
        if stem.startswith("test_") or stem.endswith("_test.py") or stem == "conftest.py":
            continue
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for i in range(len(parts)):
            if parts[i:]:
                names.add(".".join(parts[i:]))
    return names


def _pytest_config(files: dict[str, bytes]) -> dict[str, str]:
    """The pytest settings of the project's config files (all of them: a larger set is safer)."""
    found: dict[str, str] = {}
    for rel, section in (
        ("setup.cfg", "tool:pytest"),
        ("tox.ini", "pytest"),
        ("pytest.ini", "pytest"),
    ):
        if rel in files:
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read_string(files[rel].decode("utf-8", "replace"))
            except configparser.Error:
                found["unreadable"] = rel
                continue
            if parser.has_section(section):
                found.update(dict(parser.items(section)))
    if "pyproject.toml" in files:
        try:
            data = tomllib.loads(files["pyproject.toml"].decode("utf-8", "replace"))
        except tomllib.TOMLDecodeError:
            data = {}
        options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
        for key, value in options.items() if isinstance(options, dict) else ():
            found[key] = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return found


def _under(test: str, path: str) -> bool:
    path = path.strip("/")
    if path.startswith("./"):
        path = path[2:]
    return path in ("", ".") or test == path or test.startswith(path + "/")


def selected_files(
    verify: str, tests: list[str], files: dict[str, bytes] | None = None
) -> tuple[list[str], str, str]:
    """The test files the verify command runs, why when it cannot be told, and the runner
    (``pytest``, ``unittest`` or ``""`` when neither is named: every test file is assumed)."""
    try:
        argv = shlex.split(verify)
    except ValueError:
        return [], "its verify command cannot be split into words", ""
    if "unittest" in argv:
        # unittest's discovery runs test*.py only.
        return [t for t in tests if t.rsplit("/", 1)[-1].startswith("test")], "", "unittest"
    runner = [i for i, a in enumerate(argv) if a in ("pytest", "py.test") or a.endswith("/pytest")]
    if not runner:
        return tests, "", ""
    config = _pytest_config(files or {})
    if "unreadable" in config:
        return [], f"its {config['unreadable']} cannot be read", "pytest"
    for key in ("python_files", "python_classes", "python_functions"):
        if key in config:
            return [], f"its pytest config sets {key}", "pytest"
    words = argv[runner[0] + 1 :]
    try:
        words = shlex.split(config.get("addopts", "")) + words
    except ValueError:
        return [], "its pytest addopts cannot be split into words", "pytest"
    for a in words:
        if a.split("=", 1)[0] in _PYTEST_SELECT or (a.startswith(("-k", "-m")) and len(a) > 2):
            return [], f"its verify command deselects tests ({a})", "pytest"
    paths = [a.split("::", 1)[0] for a in words if not a.startswith("-") and "{" not in a]
    named = [p for p in paths if any(_under(t, p) for t in tests)]
    if not named and config.get("testpaths"):
        named = [p for p in config["testpaths"].split() if any(_under(t, p) for t in tests)]
        if not named:
            return [], "its pytest testpaths hold none of its test files", "pytest"
    if not named:
        return tests, "", "pytest"
    return [t for t in tests if any(_under(t, p) for p in named)], "", "pytest"


def _attr_chain(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _calls_skip(nodes: list[ast.stmt]) -> bool:
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)):
                return True
            if isinstance(node, ast.Call) and _attr_chain(node.func).rsplit(".", 1)[-1] in _SKIPS:
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _self_attrs(node: ast.AST) -> set[str]:
    return {
        f"self.{n.attr}"
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }


def _assigned(stmt: ast.stmt) -> set[str]:
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    out: set[str] = set()
    for t in targets:
        out |= _names(t) | _self_attrs(t)
    return out


def _value(stmt: ast.stmt) -> ast.AST | None:
    if isinstance(stmt, (ast.Assign, ast.AugAssign)):
        return stmt.value
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value
    if isinstance(stmt, ast.With):
        return ast.Tuple(elts=[i.context_expr for i in stmt.items], ctx=ast.Load())
    return None


def _reaches_code(expr: ast.AST, before: list[ast.stmt], code: set[str]) -> bool:
    """Whether ``expr`` depends on the code under test through the statements before it."""
    wanted = _names(expr) | _self_attrs(expr)
    for _ in range(len(before) + 1):
        grown = set(wanted)
        for stmt in before:
            value = _value(stmt)
            if value is not None and _assigned(stmt) & wanted:
                grown |= _names(value) | _self_attrs(value)
        if grown == wanted:
            break
        wanted = grown
    if wanted & code:
        return True
    # A value handed to the code under test earlier (an in-place change is checked after).
    for stmt in before:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and _names(node.func) & code:
                args = [*node.args, *(k.value for k in node.keywords)]
                if any((_names(a) | _self_attrs(a)) & wanted for a in args):
                    return True
    return False


def _imports(tree: ast.Module, modules: set[str]) -> tuple[set[str], dict[str, str]]:
    """Names bound to the project's own code, and the module each was imported from."""
    code: set[str] = set()
    origin: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if node.module in modules or f"{node.module}.{alias.name}" in modules:
                    code.add(alias.asname or alias.name)
                    origin[alias.asname or alias.name] = node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    code.add(alias.asname or alias.name.split(".", 1)[0])
    return code, origin


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _far_number(value: Any, tolerance: Any) -> Any:
    """``value`` moved past ``tolerance(old, new)`` (which returns how far counts as equal)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    step = 1
    for _ in range(40):
        new = value + step
        if new != value and abs(new - value) > tolerance(value, new):
            return new
        step *= 10
    return None


def changed(value: Any, tolerance: Any = None) -> Any:
    """A value that no value equal to ``value`` equals, made the smallest visible way; or None.

    ``tolerance(old, new)``: how far apart two numbers still compare equal (``approx``,
    ``assertAlmostEqual``); containers then change length, never a number inside."""
    if isinstance(value, bool):
        return None if tolerance else (not value)
    if isinstance(value, (int, float, complex)):
        if isinstance(value, complex) and tolerance:
            return None
        return _far_number(value, tolerance or (lambda a, b: 0))
    if tolerance is None and isinstance(value, str):
        return value + "0"
    if tolerance is None and isinstance(value, bytes):
        return value + b"0"
    if isinstance(value, list):
        return [*value, value[-1] if value else 0]
    if isinstance(value, tuple):
        return (*value, value[-1] if value else 0)
    if isinstance(value, dict):
        key: Any = 0
        while key in value:
            key = f"{key}0" if isinstance(key, str) else str(key)
        return {**value, key: 0}
    if isinstance(value, set):
        extra: Any = max((v for v in value if isinstance(v, int)), default=-1) + 1
        while extra in value:
            extra += 1
        return value | {extra}
    return None


def _approx_tolerance(call: ast.Call) -> Any:
    """The tolerance of ``pytest.approx(x, rel=.., abs=..)`` with literal options, or None."""
    given: dict[str, float] = {}
    for kw in call.keywords:
        ok, v = _literal(kw.value)
        if kw.arg not in ("rel", "abs") or not ok or not isinstance(v, (int, float)):
            return None
        given[kw.arg] = float(v)
    if len(call.args) > 1:
        return None
    # pytest ignores the relative tolerance when only abs is given; a larger bound is safe.
    rel = given.get("rel", 0.0 if "abs" in given else 1e-6)
    absolute = given.get("abs", 1e-12)
    return lambda a, b: max(rel * abs(a), absolute) + max(rel * abs(b), absolute)


def _is_approx(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and _attr_chain(node.func).rsplit(".", 1)[-1] == "approx"
        and len(node.args) == 1
    )


@dataclass(frozen=True)
class _Found:
    """An expected literal, what replaces it, and the assertion's shape."""

    node: ast.AST  # the literal's node
    actual: ast.AST  # the side that reaches the code under test
    expected: Any
    changed: Any
    shape: str


def _compare(test: ast.AST) -> _Found | None:
    """``ACTUAL == LITERAL`` (either side, ``approx`` allowed) from an assert's test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], ast.Eq):
        return None
    for actual, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if _is_approx(other):
            assert isinstance(other, ast.Call)
            tolerance = _approx_tolerance(other)
            ok, value = _literal(other.args[0])
            if tolerance is None or not ok:
                continue
            new = changed(value, tolerance)
            if new is not None:
                return _Found(other.args[0], actual, value, new, "approx")
            continue
        ok, value = _literal(other)
        if not ok or _literal(actual)[0]:
            continue
        new = changed(value)
        if new is not None:
            return _Found(other, actual, value, new, "assert-eq")
    return None


def _unittest_equal(call: ast.Call) -> _Found | None:
    method = _attr_chain(call.func)
    name = method.rsplit(".", 1)[-1]
    if not method.startswith("self.") or len(call.args) < 2:
        return None
    if name in EQUAL_METHODS and not [k for k in call.keywords if k.arg != "msg"]:
        tolerance = None
        shape = "unittest-equal"
    elif name in ALMOST_METHODS and len(call.args) == 2:
        places, delta = 7, None
        for kw in call.keywords:
            ok, v = _literal(kw.value)
            if kw.arg == "places" and ok and isinstance(v, int):
                places = v
            elif kw.arg == "delta" and ok and isinstance(v, (int, float)):
                delta = float(v)
            elif kw.arg != "msg":
                return None
        size = delta if delta is not None else 10.0 ** (-places)
        tolerance = lambda a, b: 2 * size  # noqa: E731
        shape = "unittest-almost"
    else:
        return None
    first, second = call.args[0], call.args[1]
    for actual, other in ((first, second), (second, first)):
        ok, value = _literal(other)
        if not ok or _literal(actual)[0]:
            continue
        if shape == "unittest-almost" and not isinstance(value, (int, float)):
            continue
        if name == "assertCountEqual" and not isinstance(value, (list, tuple)):
            continue
        new = changed(value, tolerance)
        if new is not None:
            return _Found(other, actual, value, new, shape)
    return None


class _Source:
    """A test file's text, with AST positions (UTF-8 byte columns) turned into characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)

    def col(self, line: int, byte_col: int) -> int:
        raw = self.lines[line - 1].encode("utf-8")
        return len(raw[:byte_col].decode("utf-8", "replace"))

    def span(self, node: Any) -> tuple[int, int, int, int]:
        assert node.end_lineno is not None and node.end_col_offset is not None
        return (
            node.lineno,
            self.col(node.lineno, node.col_offset),
            node.end_lineno,
            self.col(node.end_lineno, node.end_col_offset),
        )

    def segment(self, node: Any) -> str:
        line, col, end_line, end_col = self.span(node)
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        parts = [self.lines[line - 1][col:]]
        parts += self.lines[line : end_line - 1]
        parts.append(self.lines[end_line - 1][:end_col])
        return "".join(parts)

    def owns_lines(self, node: Any) -> bool:
        """Nothing but the statement (and a comment) on its lines."""
        line, col, end_line, end_col = self.span(node)
        head = self.lines[line - 1][:col]
        tail = self.lines[end_line - 1][end_col:].strip()
        return not head.strip() and (not tail or tail.startswith("#"))

    def indent(self, node: Any) -> str:
        line = self.lines[node.lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def with_replaced(self, outer: Any, inner: Any, text: str) -> str:
        """``outer``'s source with ``inner``'s replaced by ``text``."""
        o_line, o_col, _, _ = self.span(outer)
        src = self.segment(outer)
        i_line, i_col, i_end_line, i_end_col = self.span(inner)
        start = _offset(src, i_line - o_line, i_col - (o_col if i_line == o_line else 0))
        end = _offset(src, i_end_line - o_line, i_end_col - (o_col if i_end_line == o_line else 0))
        return src[:start] + text + src[end:]


def _offset(src: str, line: int, col: int) -> int:
    lines = src.splitlines(keepends=True)
    return sum(len(x) for x in lines[:line]) + col


def _is_testcase(cls: ast.ClassDef) -> bool:
    return any(_attr_chain(b).rsplit(".", 1)[-1].endswith("TestCase") for b in cls.bases)


def _collected(
    tree: ast.Module,
) -> Iterator[tuple[str, ast.FunctionDef, ast.ClassDef | None]]:
    """The test functions pytest would collect and run, with their class, in source order."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if _calls_skip([stmt]) or "pytestmark" in _assigned(stmt) or "__test__" in _assigned(stmt):
            return
    scopes: list[tuple[list[ast.stmt], ast.ClassDef | None]] = [(tree.body, None)]
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef) or stmt.decorator_list:
            continue
        unit = _is_testcase(stmt)
        body_names = {s.name for s in stmt.body if isinstance(s, ast.FunctionDef)}
        plain = stmt.name.startswith("Test") and "__init__" not in body_names and not stmt.bases
        if not (unit or plain) or any("__test__" in _assigned(s) for s in stmt.body):
            continue
        if any(
            isinstance(s, ast.FunctionDef)
            and s.name.startswith(("setUp", "setup"))
            and _calls_skip(s.body)
            for s in stmt.body
        ):
            continue
        scopes.append((stmt.body, stmt))
    for body, cls in scopes:
        defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        last = {d.name: d for d in defs}
        for d in defs:
            if isinstance(d, ast.FunctionDef) and d.name.startswith("test") and last[d.name] is d:
                yield d.name, d, cls


def _parametrize(d: ast.FunctionDef) -> list[ast.Call] | None:
    """The function's ``parametrize`` marks, or None when it carries any other decorator."""
    marks = []
    for dec in d.decorator_list:
        if isinstance(dec, ast.Call) and _attr_chain(dec.func).endswith("parametrize"):
            marks.append(dec)
        else:
            return None
    return marks


def _param_cases(mark: ast.Call) -> tuple[list[str], list[ast.AST]] | None:
    if len(mark.args) != 2 or mark.keywords:
        return None
    ok, names = _literal(mark.args[0])
    if ok and isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not ok or not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        return None
    if not isinstance(mark.args[1], (ast.List, ast.Tuple)):
        return None
    return list(names), list(mark.args[1].elts)


def _targets_in_function(
    src: _Source,
    rel: str,
    d: ast.FunctionDef,
    cls: ast.ClassDef | None,
    code: set[str],
    origin: dict[str, str],
    last_resort: bool,
    module_env: dict[str, ast.AST],
) -> Iterator[Target]:
    marks = _parametrize(d)
    if marks is None or (marks and cls is not None):
        return
    test_id = f"{rel}::{cls.name + '::' if cls else ''}{d.name}"
    setup: list[ast.stmt] = []
    if cls is not None:
        for s in cls.body:
            if isinstance(s, ast.FunctionDef) and s.name in ("setUp", "setup_method"):
                setup = list(s.body)
    tables = [t for t in (_param_cases(m) for m in marks) if t is not None]
    for t in _targets_in_body(
        src,
        rel,
        test_id,
        d,
        cls is not None,
        setup,
        tables,
        code,
        origin,
        last_resort,
        module_env,
    ):
        yield t if t.shape.startswith("parametrize") else _in_a_copy(src, d, t)


def _in_a_copy(src: _Source, d: ast.FunctionDef, target: Target) -> Target:
    """The conflicting edit as a copy of the whole test, renamed, with the change made inside
    it (``target.conflicting`` then names that change), added right after the test: the two
    contradicting assertions are two tests, so an answer chosen by call count or order is
    caught by the verdict's replay in another order."""
    start = d.decorator_list[0].lineno if d.decorator_list else d.lineno
    end = d.end_lineno or d.lineno
    change = target.conflicting if target.shape.startswith("loop-case") else target.one_off
    copy = "".join(src.lines[start - 1 : end])
    copy = apply(
        copy, replace(change, line=change.line - start + 1, end_line=change.end_line - start + 1)
    )
    name = d.name + "_contradicted"
    while re.search(rf"\b{re.escape(name)}\b", src.text):
        name += "_"
    copy = re.sub(rf"\bdef {re.escape(d.name)}\(", f"def {name}(", copy, count=1)
    last = src.lines[end - 1]
    ending = last[len(last.rstrip("\r\n")) :] or "\n"
    if not copy.endswith(("\n", "\r")):
        copy += ending
    end_col = len(last.rstrip("\r\n"))
    gap = 2 if d.col_offset else 3  # blank lines before it: one in a class, two in a module
    test = target.test.rsplit("::", 1)[0] + "::" + name
    return replace(
        target,
        conflicting=Edit(end, end_col, end, end_col, ending * gap + copy.rstrip("\r\n")),
        conflicting_new=f"{test}: {target.one_off_new}",
    )


def _targets_in_body(
    src: _Source,
    rel: str,
    test_id: str,
    d: ast.FunctionDef,
    in_class: bool,
    setup: list[ast.stmt],
    tables: list[tuple[list[str], list[ast.AST]]],
    code: set[str],
    origin: dict[str, str],
    last_resort: bool,
    module_env: dict[str, ast.AST],
) -> Iterator[Target]:
    for stmt, before in _reached(d.body, setup):
        if _calls_skip(before):
            return
        if isinstance(stmt, ast.For) and not last_resort:
            yield from _loop_targets(src, rel, test_id, stmt, before, code, origin, module_env)
            continue
        if not src.owns_lines(stmt):
            continue
        found = None
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(stmt, ast.Assert) and not last_resort:
            found = _compare(stmt.test)
            named = _named_literal(stmt.test, before) if found is None else None
            if named is not None and _reaches_code(named[0].actual, before, code):
                yield _named_target(src, rel, test_id, stmt, named, code, origin)
                continue
            if found is None and tables:
                yield from _param_targets(
                    src, rel, test_id, stmt, tables, before, code, origin, "parametrize"
                )
                continue
        elif isinstance(call, ast.Call) and in_class and not last_resort:
            found = _unittest_equal(call)
        elif last_resort:
            yield from _opposite_targets(src, rel, test_id, stmt, before, code, origin)
            continue
        if found is None or not _reaches_code(found.actual, before, code):
            continue
        new_src = repr(found.changed)
        line, col, end_line, end_col = src.span(found.node)
        one_off_new = src.with_replaced(stmt, found.node, new_src)
        yield _target(
            src,
            rel,
            test_id,
            stmt,
            found.shape,
            found,
            one_off_new,
            code,
            origin,
            Edit(line, col, end_line, end_col, new_src),
        )


def _loop_targets(
    src: _Source,
    rel: str,
    test_id: str,
    loop: ast.For,
    before: list[ast.stmt],
    code: set[str],
    origin: dict[str, str],
    module_env: dict[str, ast.AST],
) -> Iterator[Target]:
    found = _loop_table(loop, before, module_env)
    if found is None:
        return
    table, body_before = found
    for inner, prior in body_before.items():
        if src.owns_lines(inner) and isinstance(inner, ast.Assert):
            for t in _param_targets(
                src, rel, test_id, inner, [table], before + prior, code, origin, "loop-case"
            ):
                # The copy of the test walks only the changed row.
                line, col, end_line, end_col = src.span(loop.iter)
                yield replace(
                    t, conflicting=Edit(line, col, end_line, end_col, f"[{t.one_off_new}]")
                )


# Context managers that never swallow an exception raised in their body: an assertion inside
# runs and fails the test as if it stood outside.
_SAFE_CONTEXTS = frozenset(
    {
        "open", "patch", "object", "dict", "multiple", "context", "subTest",
        "catch_warnings", "redirect_stdout", "redirect_stderr", "TemporaryDirectory",
        "NamedTemporaryFile", "TemporaryFile", "chdir", "disabled", "ExitStack",
    }
)  # fmt: skip


def _reached(
    body: list[ast.stmt], prefix: list[ast.stmt]
) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
    """The statements of ``body`` that run in order, each with what ran before it; the bodies
    of ``with`` blocks whose managers cannot swallow an exception count as the body's own."""
    for i, stmt in enumerate(body):
        before = prefix + body[:i]
        if isinstance(stmt, ast.With) and all(
            isinstance(item.context_expr, ast.Call)
            and _attr_chain(item.context_expr.func).rsplit(".", 1)[-1] in _SAFE_CONTEXTS
            for item in stmt.items
        ):
            header = ast.With(items=stmt.items, body=[], type_comment=None)
            yield from _reached(stmt.body, [*before, header])
        else:
            yield stmt, before


def _loop_table(
    loop: ast.For, before: list[ast.stmt], module_env: dict[str, ast.AST]
) -> tuple[tuple[list[str], list[ast.AST]], dict[ast.stmt, list[ast.stmt]]] | None:
    """``for A, B in <literal table>:`` (inline, bound earlier in the test, or a module
    constant nothing else touches): its names and cases, and each body statement that nothing
    before it in the body can skip, with those earlier body statements."""
    if loop.orelse or not isinstance(loop.target, ast.Tuple):
        return None
    if not all(isinstance(e, ast.Name) for e in loop.target.elts):
        return None
    names = [e.id for e in loop.target.elts if isinstance(e, ast.Name)]
    table: ast.AST | None = loop.iter
    if isinstance(table, ast.Name):
        bound = _named_literal_node(table.id, before)
        table = bound if bound is not None else module_env.get(table.id)
    if not isinstance(table, (ast.List, ast.Tuple)) or not _literal(table)[0]:
        return None
    reached: dict[ast.stmt, list[ast.stmt]] = {}
    for j, inner in enumerate(loop.body):
        prior = loop.body[:j]
        if _calls_skip(prior) or any(
            isinstance(n, (ast.Break, ast.Continue)) for s in prior for n in ast.walk(s)
        ):
            break
        reached[inner] = prior
    return (names, list(table.elts)), reached


def _named_literal_node(name: str, before: list[ast.stmt]) -> ast.AST | None:
    """The literal ``name`` was last bound to on an earlier line, untouched since; or None."""
    for stmt in reversed(before):
        if name not in _names(stmt):
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
            and _literal(stmt.value)[0]
        ):
            return stmt.value
        return None
    return None


def module_constants(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level ``NAME = <literal>`` bound once, and otherwise only read by ``for`` loops
    (nothing can change the table a loop walks)."""
    bound: dict[str, ast.AST | None] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and _literal(stmt.value)[0]
        ):
            name = stmt.targets[0].id
            bound[name] = stmt.value if name not in bound else None
    allowed = {id(n.iter) for n in ast.walk(tree) if isinstance(n, ast.For)}
    allowed |= {
        id(s.targets[0]) for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in bound and id(node) not in allowed:
            bound[node.id] = None
    return {k: v for k, v in bound.items() if v is not None}


def _named_literal(test: ast.AST, before: list[ast.stmt]) -> tuple[_Found, ast.Assign] | None:
    """``ACTUAL == NAME`` where NAME was bound to a literal on an earlier line of the test and
    not touched since: the literal is the expected value."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], ast.Eq):
        return None
    for actual, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if not isinstance(other, ast.Name) or other.id in _names(actual):
            continue
        for j in range(len(before) - 1, -1, -1):
            stmt = before[j]
            if other.id not in _names(stmt):
                continue
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == other.id
            ):
                break  # touched after it was bound (or bound some other way)
            ok, value = _literal(stmt.value)
            new = changed(value) if ok else None
            if new is not None:
                return _Found(stmt.value, actual, value, new, "assert-eq-name"), stmt
            break
    return None


def _named_target(
    src: _Source,
    rel: str,
    test_id: str,
    stmt: ast.Assert,
    named: tuple[_Found, ast.Assign],
    code: set[str],
    origin: dict[str, str],
) -> Target:
    """One-off changes the bound literal; conflicting adds the assertion with the changed
    literal written out."""
    found, bound = named
    new_src = repr(found.changed)
    line, col, end_line, end_col = src.span(found.node)
    _, _, s_end, s_end_col = src.span(stmt)
    last = src.lines[s_end - 1]
    ending = last[len(last.rstrip("\r\n")) :] or "\n"
    assert isinstance(stmt.test, ast.Compare)
    name_node = next(n for n in (stmt.test.left, stmt.test.comparators[0]) if n is not found.actual)
    added = src.with_replaced(stmt, name_node, new_src)
    function, module = _function(found.actual, code, origin)
    pinned = f"{src.segment(bound)}\n{src.segment(stmt)}"
    return Target(
        file=rel,
        line=bound.lineno,
        end_line=s_end,
        test=test_id,
        shape=found.shape,
        old=pinned,
        one_off=Edit(line, col, end_line, end_col, new_src),
        one_off_new=f"{src.with_replaced(bound, found.node, new_src)}\n{src.segment(stmt)}",
        conflicting=Edit(s_end, s_end_col, s_end, s_end_col, ending + src.indent(stmt) + added),
        conflicting_new=added,
        expected=found.expected,
        changed=found.changed,
        function=function,
        module=module,
    )


def _function(actual: ast.AST, code: set[str], origin: dict[str, str]) -> tuple[str, str]:
    for node in ast.walk(actual):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in code:
            return node.func.id, origin.get(node.func.id, "")
    return "", ""


def _target(
    src: _Source,
    rel: str,
    test_id: str,
    stmt: ast.stmt,
    shape: str,
    found: _Found,
    one_off_new: str,
    code: set[str],
    origin: dict[str, str],
    one_off: Edit,
) -> Target:
    _, _, end_line, end_col = src.span(stmt)
    indent = src.indent(stmt)
    last = src.lines[end_line - 1]
    ending = last[len(last.rstrip("\r\n")) :] or "\n"
    added = one_off_new
    function, module = _function(found.actual, code, origin)
    return Target(
        file=rel,
        line=stmt.lineno,
        end_line=end_line,
        test=test_id,
        shape=shape,
        old=src.segment(stmt),
        one_off=one_off,
        one_off_new=one_off_new,
        conflicting=Edit(end_line, end_col, end_line, end_col, ending + indent + added),
        conflicting_new=added,
        expected=found.expected,
        changed=found.changed,
        function=function,
        module=module,
    )


def _param_targets(
    src: _Source,
    rel: str,
    test_id: str,
    stmt: ast.Assert,
    tables: list[tuple[list[str], list[ast.AST]]],
    before: list[ast.stmt],
    code: set[str],
    origin: dict[str, str],
    kind: str,
) -> Iterator[Target]:
    """A case (of a parametrize mark, or of the literal table a ``for`` loop walks) whose
    expected value ``assert ACTUAL == NAME`` checks."""
    test = stmt.test
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return
    assigned = set().union(*(_assigned(s) for s in before)) if before else set()
    for actual, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        tolerance = None
        shape = kind
        if _is_approx(other):
            assert isinstance(other, ast.Call)
            tolerance = _approx_tolerance(other)
            shape = f"{kind}-approx"
            if tolerance is None:
                continue
        param = other.args[0] if isinstance(other, ast.Call) else other
        if not isinstance(param, ast.Name) or param.id in assigned:
            continue
        if not _reaches_code(actual, before, code) or param.id in _names(actual):
            continue
        for names, cases in tables:
            if param.id not in names or len(names) < 2:
                continue
            index = names.index(param.id)
            for case in cases:
                if not isinstance(case, (ast.Tuple, ast.List)) or len(case.elts) != len(names):
                    continue
                ok, value = _literal(case.elts[index])
                new = changed(value, tolerance) if ok else None
                if new is None or (not src.owns_lines(case) and case.lineno != case.end_lineno):
                    continue
                elt = case.elts[index]
                line, col, end_line, end_col = src.span(elt)
                one_off_new = src.with_replaced(case, elt, repr(new))
                _, _, c_end, c_end_col = src.span(case)
                function, module = _function(actual, code, origin)
                yield Target(
                    file=rel,
                    line=case.lineno,
                    end_line=case.end_lineno or case.lineno,
                    test=test_id,
                    shape=shape,
                    old=src.segment(case),
                    one_off=Edit(line, col, end_line, end_col, repr(new)),
                    one_off_new=one_off_new,
                    conflicting=Edit(c_end, c_end_col, c_end, c_end_col, ", " + one_off_new),
                    conflicting_new=one_off_new,
                    expected=value,
                    changed=new,
                    function=function,
                    module=module,
                )
                return


def _opposite_targets(
    src: _Source,
    rel: str,
    test_id: str,
    stmt: ast.stmt,
    before: list[ast.stmt],
    code: set[str],
    origin: dict[str, str],
) -> Iterator[Target]:
    """``assert X is True|False|None`` / ``assertTrue(X)``-like: the opposite is demanded."""
    actual: ast.AST | None = None
    node: ast.AST | None = None
    new_text = ""
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
        t = stmt.test
        if len(t.ops) == 1 and isinstance(t.ops[0], (ast.Is, ast.IsNot)):
            ok, value = _literal(t.comparators[0])
            if ok and (value is None or isinstance(value, bool)):
                actual = t.left
                node = stmt.test
                op = "is not" if isinstance(t.ops[0], ast.Is) else "is"
                if value is None:
                    new_text = f"{src.segment(t.left)} {op} None"
                elif isinstance(t.ops[0], ast.Is):
                    new_text = f"{src.segment(t.left)} is {not value!r}"
                else:
                    new_text = f"{src.segment(t.left)} is {value!r}"
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        method = _attr_chain(call.func)
        name = method.rsplit(".", 1)[-1]
        if method.startswith("self.") and name in OPPOSITE_METHODS and len(call.args) == 1:
            actual = call.args[0]
            node = call.func
            new_text = "self." + OPPOSITE_METHODS[name]
    if actual is None or node is None or not _reaches_code(actual, before, code):
        return
    line, col, end_line, end_col = src.span(node)
    one_off_new = src.with_replaced(stmt, node, new_text)
    found = _Found(
        node,
        actual,
        None,
        None,
        "assert-is" if isinstance(stmt, ast.Assert) else "unittest-opposite",
    )
    yield _target(
        src,
        rel,
        test_id,
        stmt,
        found.shape,
        found,
        one_off_new,
        code,
        origin,
        Edit(line, col, end_line, end_col, new_text),
    )


def find_targets(
    files: dict[str, bytes], *, verify: str = "", must_pass: tuple[str, ...] = ()
) -> tuple[list[Target], str]:
    """Every sound target, in source order (value comparisons before the last-resort shapes),
    and, when there is none, why in a few words."""
    tests = test_files(files)
    chosen, why, runner = selected_files(verify, [rel for rel, _ in tests], files)
    if why:
        return [], why
    modules = code_modules(files)
    hooks = [
        rel
        for rel, data in files.items()
        if rel.rsplit("/", 1)[-1] == "conftest.py" and any(h in data for h in _CONFTEST_SELECTS)
    ]
    if hooks:
        return [], f"{hooks[0]} changes which tests run"
    parsed = []
    for rel, text in tests:
        if rel not in chosen:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        code, origin = _imports(tree, modules)
        parsed.append((rel, _Source(text), tree, code, origin, module_constants(tree)))
    out: list[Target] = []
    for last_resort in (False, True):
        for rel, src, tree, code, origin, consts in parsed:
            for _, d, cls in _collected(tree):
                if runner == "unittest" and (cls is None or not _is_testcase(cls)):
                    continue  # unittest runs only TestCase methods
                found = _targets_in_function(src, rel, d, cls, code, origin, last_resort, consts)
                for t in found:
                    if must_pass and t.test not in must_pass:
                        continue
                    if must_pass and t.shape.startswith("parametrize"):
                        continue  # the case's id changes with its values
                    out.append(t)
    if not out:
        return [], "no assertion compares the code under test with a value a mutation can change"
    return out, ""


def apply(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` made (positions as in ``Edit``)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: edit.line - 1]) + edit.col
    end = sum(len(x) for x in lines[: edit.end_line - 1]) + edit.end_col
    return text[:start] + edit.text + text[end:]
