"""Plug-ins other programs load: the llm GGUF model plugin and the chimera-cards command plugin.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.plugins.commands import register_commands
    from reference_loop.plugins.gguf_models import (
        DEFAULT_MAX_CTX,
        GGUFModel,
        find_models,
        register_models,
    )

# public name -> the module that defines it
_EXPORTS = {
    "DEFAULT_MAX_CTX": "reference_loop.plugins.gguf_models",
    "GGUFModel": "reference_loop.plugins.gguf_models",
    "find_models": "reference_loop.plugins.gguf_models",
    "register_commands": "reference_loop.plugins.commands",
    "register_models": "reference_loop.plugins.gguf_models",
}

__all__ = [
    "DEFAULT_MAX_CTX",
    "GGUFModel",
    "find_models",
    "register_commands",
    "register_models",
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
