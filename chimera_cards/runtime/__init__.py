"""The gate at run time: what agents are served, and what stops a drifted skill as it loads.

- ``catalog``: the skills that may be served now (store or agent folder), re-hashed per read.
- ``mcp_server``: the MCP Skills extension over a catalog (optional extra ``mcp``).
- ``agent_hooks``: the Claude Code / Gemini CLI hook command and its settings installer.
- ``to_prompt``: ``<available_skills>`` for every installed, approved, ``ok`` skill.
- ``installed``: every skill folder of every agent, with its state.
- ``check_sarif``: a check report as SARIF 2.1.0.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings (nor the MCP SDK).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.runtime.agent_hooks import AGENT_HOOKS, HookOutcome, install_hooks, run_hook
    from chimera_cards.runtime.catalog import (
        Catalog,
        FolderCatalog,
        ServedFile,
        ServedSkill,
        StoreCatalog,
    )
    from chimera_cards.runtime.check_sarif import check_sarif
    from chimera_cards.runtime.installed import InstalledSkill, installed_skills
    from chimera_cards.runtime.mcp_server import build_server, run_http, run_stdio
    from chimera_cards.runtime.to_prompt import available, installed_states, render

# public name -> the module that defines it
_EXPORTS = {
    "Catalog": "chimera_cards.runtime.catalog",
    "FolderCatalog": "chimera_cards.runtime.catalog",
    "ServedFile": "chimera_cards.runtime.catalog",
    "ServedSkill": "chimera_cards.runtime.catalog",
    "StoreCatalog": "chimera_cards.runtime.catalog",
    "build_server": "chimera_cards.runtime.mcp_server",
    "run_http": "chimera_cards.runtime.mcp_server",
    "run_stdio": "chimera_cards.runtime.mcp_server",
    "AGENT_HOOKS": "chimera_cards.runtime.agent_hooks",
    "HookOutcome": "chimera_cards.runtime.agent_hooks",
    "install_hooks": "chimera_cards.runtime.agent_hooks",
    "run_hook": "chimera_cards.runtime.agent_hooks",
    "available": "chimera_cards.runtime.to_prompt",
    "installed_states": "chimera_cards.runtime.to_prompt",
    "render": "chimera_cards.runtime.to_prompt",
    "InstalledSkill": "chimera_cards.runtime.installed",
    "installed_skills": "chimera_cards.runtime.installed",
    "check_sarif": "chimera_cards.runtime.check_sarif",
}

__all__ = [
    "AGENT_HOOKS",
    "Catalog",
    "FolderCatalog",
    "HookOutcome",
    "InstalledSkill",
    "ServedFile",
    "ServedSkill",
    "StoreCatalog",
    "available",
    "build_server",
    "check_sarif",
    "install_hooks",
    "installed_skills",
    "installed_states",
    "render",
    "run_hook",
    "run_http",
    "run_stdio",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
