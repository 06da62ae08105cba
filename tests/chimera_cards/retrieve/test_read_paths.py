"""Every path that can hand card text to a model goes through the one gate (match).

The test walks the source of both packages and finds every function that reads card bytes out of
the store (``get_blob``, SQL selecting ``data`` from ``blobs``) or renders a card for a prompt
(``render_card``). Each one must be registered in ``MODEL_READ_PATHS`` (the gate and its
renderer) or ``OTHER_READ_PATHS`` (human/file/integrity readers that never feed a model);
a new reader that is in neither fails here until someone decides which it is. The reference loop,
which builds model prompts, may reach cards only through ``retrieve``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import chimera_cards
import reference_loop
from chimera_cards._retrieve import matching
from chimera_cards._retrieve.gate import MODEL_READ_PATHS, OTHER_READ_PATHS

BLOB_SQL = re.compile(r"\bselect\b.*\bdata\b.*\bblobs\b", re.I | re.S)
# Calls that yield stored card bytes (any file of a bundle) or prompt text.
CARD_READERS = {"get_blob", "_blobs_of", "get_bundle", "get_bundles", "skill_bytes", "render_card"}
# In the loop package, reading a card any way but through the gate is a bypass.
LOOP_FORBIDDEN = {
    "get_blob",
    "get_bundle",
    "get_bundles",
    "skill_bytes",
    "render_card",
    "load_card",
    "read_card_bytes",
    "parse_card",
    "Store",
}


def _modules(pkg) -> list[tuple[str, Path]]:
    root = Path(pkg.__file__).parent
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        out.append((".".join(rel.parts), path))
    return out


def _strings(node: ast.AST) -> list[str]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        elif isinstance(n, ast.JoinedStr):
            out.append("".join(v.value for v in n.values if isinstance(v, ast.Constant)))
    return out


def _called_names(node: ast.AST) -> set[str]:
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute):
                names.add(f.attr)
            elif isinstance(f, ast.Name):
                names.add(f.id)
    return names


def _imported_from(tree: ast.AST, prefix: str) -> set[str]:
    """The names a module imports from modules whose dotted path starts with ``prefix``."""
    return {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(prefix)
        for a in n.names
    }


def _functions(module: str, tree: ast.AST):
    """(qualified name, node) for every function, methods as Module.Class.method."""

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}.{child.name}"
                yield q, child
                yield from walk(child, q)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}.{child.name}")

    yield from walk(tree, module)


def _own_body(fn: ast.AST) -> ast.Module:
    """The function's body without nested function definitions (they are checked on their own)."""
    body = [s for s in fn.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return ast.Module(body=body, type_ignores=[])


def card_readers(pkg) -> dict[str, str]:
    found = {}
    for module, path in _modules(pkg):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for qual, fn in _functions(module, tree):
            body = _own_body(fn)
            calls = _called_names(body) & CARD_READERS
            sql = [s for s in _strings(body) if BLOB_SQL.search(s)]
            if calls or sql:
                found[qual] = ", ".join(sorted(calls) + (["SELECT data FROM blobs"] if sql else []))
    return found


@pytest.mark.slow
def test_every_function_that_reads_card_text_is_registered():
    registered = MODEL_READ_PATHS | OTHER_READ_PATHS
    found = card_readers(chimera_cards)
    unregistered = {q: how for q, how in found.items() if q not in registered}
    assert not unregistered, (
        "these functions read card bytes or render cards but are not registered in "
        f"MODEL_READ_PATHS / OTHER_READ_PATHS: {unregistered}"
    )


@pytest.mark.slow
def test_the_registry_names_real_readers_only():
    found = card_readers(chimera_cards)
    stale = (
        (MODEL_READ_PATHS | OTHER_READ_PATHS)
        - set(found)
        - {
            # registered because they hand card text onward, though they read it via the gate
            "chimera_cards._retrieve.render.render_for_prompt",
            "chimera_cards._retrieve.matching.match",
        }
    )
    assert not stale, f"registered but no longer reading card text: {stale}"


def test_model_facing_readers_live_in_the_gate_module():
    assert MODEL_READ_PATHS
    assert all(q.startswith("chimera_cards._retrieve.") for q in MODEL_READ_PATHS)
    assert not MODEL_READ_PATHS & OTHER_READ_PATHS


@pytest.mark.slow
def test_only_the_gate_renders_cards_for_a_prompt():
    renderers = {q for q, how in card_readers(chimera_cards).items() if "render_card" in how}
    assert renderers <= {
        "chimera_cards._retrieve.matching._match",
        "chimera_cards._retrieve.render.prompt_preview",
    }


def test_the_gate_checks_every_candidate_before_rendering_it():
    tree = ast.parse(Path(matching.__file__).read_text())
    fn = next(
        f for q, f in _functions("chimera_cards._retrieve.matching", tree) if q.endswith("._match")
    )
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    order = [c.func.id for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset))]
    assert order.index("gate_check") < order.index("render_card")


@pytest.mark.slow
def test_the_reference_loop_reaches_cards_only_through_the_gate():
    offenders = {}
    for module, path in _modules(reference_loop):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        forbidden = LOOP_FORBIDDEN
        if module == "reference_loop._demo.steps":
            # The demo plays the user (it creates a store and imports into it), so it opens a
            # Store; it still reads no card bytes around the gate.
            forbidden = LOOP_FORBIDDEN - {"Store"}
        bad = _called_names(tree) & forbidden
        sql = [s for s in _strings(tree) if BLOB_SQL.search(s)]
        if bad or sql:
            offenders[module] = sorted(bad) + (["SELECT data FROM blobs"] if sql else [])
    assert not offenders, f"the loop reads cards around the gate: {offenders}"


def test_the_match_command_and_the_python_api_use_the_gate():
    from chimera_cards._cli import review as cli_review

    tree = ast.parse(Path(cli_review.__file__).read_text())
    fn = next(f for q, f in _functions("cli", tree) if q.endswith(".match_cmd"))
    gate = {"match", "render_for_prompt"}
    assert gate <= _called_names(fn) and gate <= _imported_from(tree, "chimera_cards._retrieve.")
    mtree = ast.parse(Path(matching.__file__).read_text())
    match_fn = next(
        f for q, f in _functions("chimera_cards._retrieve.matching", mtree) if q.endswith(".match")
    )
    assert "_match" in _called_names(match_fn)


@pytest.mark.slow
def test_the_loops_one_card_reader_asks_the_gate_and_renders_with_its_renderer():
    """``reference_loop.cards`` is the only loop module that touches ``chimera_cards._retrieve``; it
    gets cards from ``match_path`` (``match`` on a store file) and wraps them with
    ``render_for_prompt``, so card text reaches a loop prompt only through the gate."""
    from reference_loop._core import cards

    tree = ast.parse(Path(cards.__file__).read_text(encoding="utf-8"))
    from_gate = _imported_from(tree, "chimera_cards._retrieve.")
    assert from_gate == {"match_path", "render_for_prompt"}
    assert from_gate <= _called_names(tree)
    rtree = ast.parse(Path(matching.__file__).read_text(encoding="utf-8"))
    match_path = next(
        f
        for q, f in _functions("chimera_cards._retrieve.matching", rtree)
        if q.endswith(".match_path")
    )
    assert "match" in _called_names(match_path)

    def imports_gate(path: Path) -> bool:
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.ImportFrom) and "retrieve" in (
                (n.module or "") + " ".join(a.name for a in n.names)
            ):
                return True
            if isinstance(n, ast.Import) and any("retrieve" in a.name for a in n.names):
                return True
        return False

    others = [
        m
        for m, path in _modules(reference_loop)
        # The demo shows what `chimera-cards match` prints, by calling the gate itself.
        if m not in ("reference_loop._core.cards", "reference_loop._demo.steps")
        and imports_gate(path)
    ]
    assert not others, f"loop modules reaching for the gate around reference_loop.cards: {others}"


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


@pytest.mark.slow
def test_nothing_in_the_packages_turns_the_gates_verification_off():
    offenders = []
    for pkg in (chimera_cards, reference_loop):
        for module, path in _modules(pkg):
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(n, ast.Call)
                    and _callee(n) in {"match", "_match", "match_path"}
                    and any(
                        kw.arg == "verify"
                        and not (isinstance(kw.value, ast.Constant) and kw.value.value is True)
                        for kw in n.keywords
                    )
                    and not module.startswith("chimera_cards._retrieve.")
                ):
                    offenders.append(f"{module}:{n.lineno}")
    assert not offenders, f"verify= passed outside the gate (benchmark baseline only): {offenders}"
