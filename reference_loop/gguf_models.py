"""Moved to ``reference_loop.plugins.gguf_models``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.plugins.gguf_models import (
    DEFAULT_MAX_CTX,
    GGUFModel,
    find_models,
    register_models,
)

__all__ = [
    "DEFAULT_MAX_CTX",
    "GGUFModel",
    "find_models",
    "register_models",
]
