"""The layout holds: one layer order per package, no import cycles, no upward imports, no
re-export shim, every subpackage private in name, no module or class past its size, and
ARCHITECTURE.md's map matches the tree.

The import graph is built from the source (every ``import`` and ``from ... import`` anywhere in a
module: at the top, inside functions, under ``if TYPE_CHECKING``), so a lazy import that would
close a cycle or reach up a layer fails here as surely as a top-level one. There is no list of
exceptions: a module either fits the order below or the order (and docs/ARCHITECTURE.md) changes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO_ROOT

# The one declared layer order, lowest first. A module may import modules of its own layer and
# of layers below it; reference_loop may import chimera_cards, never the reverse. Each entry is
# a subpackage or a module directly under the top-level package.
LAYERS: dict[str, list[tuple[str, ...]]] = {
    "chimera_cards": [
        ("errors",),
        ("_util",),
        ("_bundles",),
        ("_store",),
        ("_cards",),
        ("_scan",),
        ("_sources",),
        ("_trust",),
        ("_retrieve",),
        ("_review",),
        ("_importer",),
        ("_install",),
        ("_runtime", "provider"),
        ("_cli",),
    ],
    "reference_loop": [
        ("errors",),
        ("_process",),
        ("_core",),
        ("_workspace",),
        ("_verdict",),
        ("_tasks",),
        ("_attempters",),
        ("_run",),
        ("_bench",),
        ("_demo",),
        ("_cli",),
        ("_plugins",),
    ],
}
ROOTS = tuple(LAYERS)
# Data shipped inside the packages, not code of the layout.
DATA_DIRS = {("chimera_cards", "library"), ("reference_loop", "_tasks", "samples")}
MAX_MODULE_LINES = 1200
MAX_CLASS_LINES = 600
ARCHITECTURE = REPO_ROOT / "docs" / "ARCHITECTURE.md"


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool
    imports: list[tuple[str, int]] = field(default_factory=list)  # (module imported, line)


def _is_data(parts: tuple[str, ...]) -> bool:
    return any(parts[: len(d)] == d for d in DATA_DIRS)


def _load() -> dict[str, Module]:
    modules = {}
    for root in ROOTS:
        for path in sorted((REPO_ROOT / root).rglob("*.py")):
            parts = path.relative_to(REPO_ROOT).with_suffix("").parts
            if _is_data(parts):
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            modules[name] = Module(name, path, tree, is_package)
    return modules


def _exports(module: Module) -> dict[str, str]:
    """A lazy package's ``_EXPORTS`` (public name -> defining module), read from the source."""
    for node in module.tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    return {}


def _resolve(modules: dict[str, Module], target: str, names: list[str]) -> list[str]:
    """The modules an ``import`` really loads code from: a submodule named in ``from pkg import
    sub``, the module a lazy package maps a name to, else the module itself."""
    if target not in modules:
        return []
    package = modules[target]
    if not package.is_package or not names:
        return [target]
    exports = _exports(package)
    out = []
    for name in names:
        if f"{target}.{name}" in modules:
            out.append(f"{target}.{name}")
        elif name in exports:
            out.append(exports[name])
        else:
            out.append(target)
    return out


def _graph() -> dict[str, Module]:
    modules = _load()
    for module in modules.values():
        base = module.name if module.is_package else module.name.rpartition(".")[0]
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in ROOTS:
                        module.imports += [
                            (t, node.lineno) for t in _resolve(modules, alias.name, [])
                        ]
            elif isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    parent = base.split(".")[: len(base.split(".")) - node.level + 1]
                    target = ".".join([*parent, *([target] if target else [])])
                if target.split(".")[0] in ROOTS:
                    names = [a.name for a in node.names]
                    module.imports += [(t, node.lineno) for t in _resolve(modules, target, names)]
    return modules


def _only_imports(module: Module) -> bool:
    """A module that defines nothing: a docstring, imports and ``__all__`` (a re-export shim)."""
    body = [
        n
        for n in module.tree.body
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
        and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
    ]
    return bool(body) and all(
        isinstance(n, (ast.Import, ast.ImportFrom))
        or (isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["__all__"])
        for n in body
    )


def _layer(name: str) -> tuple[str, int] | None:
    """(top-level package, layer index) of a module; None for the package roots themselves."""
    parts = name.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return None
    for index, units in enumerate(LAYERS[parts[0]]):
        if parts[1] in units:
            return parts[0], index
    raise AssertionError(
        f"{name} is in no layer of LAYERS: place it (and say so in ARCHITECTURE.md)"
    )


GRAPH = _graph()
CODE = GRAPH


def test_every_module_has_a_layer():
    for name in CODE:
        _layer(name)


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for name, module in CODE.items():
        here = _layer(name)
        for target, line in module.imports:
            there = _layer(target) if target in CODE else None
            if here is None or there is None:
                continue
            if here[0] == "chimera_cards" and there[0] == "reference_loop":
                upward.append(
                    f"{module.path.name}:{line} {name} -> {target} (chimera_cards -> loop)"
                )
            elif here[0] == there[0] and there[1] > here[1]:
                upward.append(f"{name}:{line} -> {target}")
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_the_package_roots_import_nothing_but_what_runs_them():
    # The roots load their public names lazily (by string, in _EXPORTS); __main__ starts the CLI;
    # reference_loop takes its version from chimera_cards (one distribution, one version).
    assert GRAPH["chimera_cards"].imports == []
    assert {t for t, _ in GRAPH["reference_loop"].imports} == {"chimera_cards"}
    for root in ROOTS:
        started = {t for t, _ in GRAPH[f"{root}.__main__"].imports}
        assert started and all(t.startswith(f"{root}._cli.") for t in started), started


def test_there_is_no_import_cycle_lazy_imports_included():
    edges = {n: sorted({t for t, _ in m.imports if t in CODE and t != n}) for n, m in CODE.items()}
    # Tarjan's strongly connected components, iteratively (the graph has hundreds of nodes).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    assert not cycles, f"import cycles: {cycles}"


def test_no_module_is_a_re_export_shim():
    shims = [name for name, m in GRAPH.items() if not m.is_package and _only_imports(m)]
    assert not shims, f"modules that only re-export (import from the defining module): {shims}"


def test_every_subpackage_is_private_in_name_and_re_exports_nothing():
    # Public is what the two roots export; a subpackage's __init__ holds its docstring only, so
    # every name has one import path besides the root's.
    for name, module in GRAPH.items():
        parts = name.split(".")
        if module.is_package and len(parts) > 1:
            assert all(p.startswith("_") for p in parts[1:]), f"{name} is public in name"
            body = [
                n
                for n in module.tree.body
                if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
            ]
            assert body == [], f"{name}/__init__.py defines or re-exports names"


def test_the_only_public_modules_are_the_roots_errors_and_the_provider():
    public = {
        name
        for name in GRAPH
        if not any(p.startswith("_") for p in name.split(".")[1:]) and "." in name
    }
    assert public == {"chimera_cards.errors", "chimera_cards.provider", "reference_loop.errors"}


def test_shim_detection_sees_a_module_with_code_as_code():
    assert not _only_imports(GRAPH["chimera_cards._cards.card"])
    fake = Module(
        "x", Path("x.py"), ast.parse('"""doc"""\nfrom a import b\n__all__ = ["b"]\n'), False
    )
    assert _only_imports(fake)


@pytest.mark.parametrize("root", ROOTS)
def test_no_module_is_longer_than_the_limit(root):
    long_modules = []
    for name, module in GRAPH.items():
        if name.startswith(root):
            lines = len(module.path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                long_modules.append(f"{name}: {lines} lines")
    assert not long_modules, f"modules over {MAX_MODULE_LINES} lines: {long_modules}"


@pytest.mark.parametrize("root", ROOTS)
def test_no_class_is_longer_than_the_limit(root):
    long_classes = []
    for name, module in GRAPH.items():
        if name.startswith(root):
            for node in ast.walk(module.tree):
                if isinstance(node, ast.ClassDef):
                    size = node.end_lineno - node.lineno + 1
                    if size > MAX_CLASS_LINES:
                        long_classes.append(f"{name}.{node.name}: {size} lines")
    assert not long_classes, f"classes over {MAX_CLASS_LINES} lines: {long_classes}"


def _packages_on_disk() -> set[str]:
    out = set()
    for root in ROOTS:
        for init in (REPO_ROOT / root).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO_ROOT).parts
            if not _is_data(parts) and len(parts) > 1:
                out.add("/".join(parts))
    return out


def _packages_in_the_map() -> set[str]:
    """Every ``pkg/sub/`` path ARCHITECTURE.md's tables name (in backticks, ending in a slash)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set()
    for line in text.splitlines():
        if line.startswith("|"):
            named.update(re.findall(r"`((?:chimera_cards|reference_loop)(?:/\w+)+)/`", line))
    return named


def test_the_architecture_map_names_every_package_and_only_packages_that_exist():
    on_disk, in_map = _packages_on_disk(), _packages_in_the_map()
    assert on_disk - in_map == set(), "packages ARCHITECTURE.md's map does not name"
    assert in_map - on_disk == set(), "packages ARCHITECTURE.md's map names but do not exist"


def test_the_architecture_map_lists_the_layers_in_the_declared_order():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for root, layers in LAYERS.items():
        rows = re.findall(rf"^\| (\d+) \| `{root}/(\w+)(?:/|\.py)`", text, re.M)
        order = [(int(n), unit) for n, unit in rows]
        expected = [(i, unit) for i, units in enumerate(layers) for unit in units]
        present = [e for e in expected if e in order]
        assert present == order, f"{root}: the map's layers differ from LAYERS"


def test_the_loop_itself_reads_in_one_sitting():
    # run_loop is the card's method in code: a reader should see the whole loop at once.
    tree = GRAPH["reference_loop._run.loop"].tree
    (run_loop,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run_loop"]
    assert run_loop.end_lineno - run_loop.lineno + 1 <= 110


def test_no_private_module_declares_a_public_api():
    # __all__ says "import this from here"; a private module has no such promise to make.
    declared = [
        name
        for name, module in GRAPH.items()
        if "." in name
        and any(p.startswith("_") for p in name.split(".")[1:])
        and any(
            isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["__all__"]
            for n in module.tree.body
        )
    ]
    assert not declared, f"private modules with __all__: {declared}"


def test_every_data_class_has_a_docstring():
    # Without one, @dataclass builds it from inspect.signature at import: ~0.5 ms a class,
    # paid by every command's start-up (check and install load several such modules).
    missing = [
        f"{name}:{node.name}"
        for name, module in GRAPH.items()
        if name.split(".")[0] == "chimera_cards"
        # only these can hold one: walking every tree costs seconds
        and any(w in module.path.read_text(encoding="utf-8") for w in ("dataclass", "@record"))
        for node in ast.walk(module.tree)
        if isinstance(node, ast.ClassDef)
        and any(w in ast.unparse(d) for d in node.decorator_list for w in ("dataclass", "record"))
        and not ast.get_docstring(node)
    ]
    assert missing == []
