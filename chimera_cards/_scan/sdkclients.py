"""SDK clients of keyed services given another address: ``OpenAI(base_url=URL)``, or
``openai.base_url = URL`` on the module. Every request of such a client carries the user's key
for the service (passed in, or read by the SDK from the service's variable) to URL. A key of
another name (``OPENROUTER_API_KEY``, a literal for a local server) is the gateway's own, and
the address is the user's choice of provider."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable

from chimera_cards._scan.sensitive import SDK_BASE_URL, Send, Taint, host_of
from chimera_cards._scan.shellfacts import Out

# The clients by class name, and the modules that hold a default client, with the service whose
# key they read when none is given.
SDK_CLIENTS = {
    "OpenAI": "OPENAI", "AsyncOpenAI": "OPENAI", "Anthropic": "ANTHROPIC",
    "AsyncAnthropic": "ANTHROPIC", "Groq": "GROQ", "AsyncGroq": "GROQ", "Mistral": "MISTRAL",
}  # fmt: skip
_SDK_MODULES = {"openai": "OPENAI", "anthropic": "ANTHROPIC", "groq": "GROQ"}
_ADDRESS_ATTRS = frozenset({"base_url", "api_base"})


def client_send(service: str, url: str | None, key: set[str] | None, line: int) -> list[Send]:
    """The send of the service's key a client pointed at ``url`` makes.

    Args:
        service: the service (``OPENAI``).
        url: the address given, folded to text, or None.
        key: the variable names the key given holds, or None when no key is given.
        line: where the client is made.
    Returns:
        The send (the key in its header), or none.
    """
    host = host_of(url) if url else None
    own = f"{service}_API_KEY"
    if host is None or own not in (key if key is not None else {own}):
        return []
    return [Send(line, host, SDK_BASE_URL, header={Taint("env", own)})]


def call_sends(
    node: ast.Call, service: str, fold: Callable[[ast.AST], str | None], key: Out | None, line: int
) -> list[Send]:
    """``OpenAI(base_url=…, api_key=…)``: what the client made by this call sends."""
    url = next((fold(kw.value) for kw in node.keywords if kw.arg == "base_url"), None)
    names = {t.what for t in key.taint if t.kind == "env"} if key is not None else None
    return client_send(service, url, names, line)


# The fields that hold statements (and handlers and match cases, which hold statements): no
# expression holds a statement, so a walk of these alone meets every assignment.
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _assignments(tree: ast.Module) -> list[ast.Assign]:
    """The tree's assignments in ``ast.walk`` order (breadth first, fields in order), walking
    statements only: an order among assignments to one name decides which address counts."""
    found: list[ast.Assign] = []
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.Assign):
            found.append(node)
        for name in node._fields:
            if name in _BLOCK_FIELDS:
                todo.extend(getattr(node, name))
    return found


def module_sends(
    tree: ast.Module, fold: Callable[[ast.AST], str | None], offset: int
) -> list[Send]:
    """``openai.base_url = URL`` (and ``openai.api_key = …`` anywhere in the file): what the
    module's default client sends; ``offset`` is added to the tree's line numbers."""
    urls: dict[str, tuple[str | None, int]] = {}
    keys: dict[str, set[str]] = {}
    for node in _assignments(tree):
        for target in node.targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            module = target.value.id
            if module not in _SDK_MODULES:
                continue
            if target.attr in _ADDRESS_ATTRS:
                urls[module] = (fold(node.value), node.lineno + offset)
            elif target.attr == "api_key":  # the variable names it is read from, if any
                keys.setdefault(module, set()).update(
                    c.value
                    for c in ast.walk(node.value)
                    if isinstance(c, ast.Constant)
                    and isinstance(c.value, str)
                    and c.value.isupper()
                )
    sends = []
    for module, (url, line) in urls.items():
        sends += client_send(_SDK_MODULES[module], url, keys.get(module), line)
    return sends
