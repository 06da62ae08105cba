"""The workspace's two engines, by name, and how one is chosen.

``git`` stages through git's own ``add``, ``diff-files`` and ``cat-file`` and is complete on its
own; ``fast`` puts the hand-written index and pack path (``gitindex``, ``gitstore``) in front of
it and falls back to it for anything unusual. Both keep the same contract (``core.Workspace``);
docs/workspace.md says which is the default and why. This module imports nothing, so a CLI can
offer the choice without loading the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from reference_loop.errors import LoopUsageError

# The two engines behind the one contract: ``git`` stages through git's own add, diff-files and
# cat-file; ``fast`` puts the hand-written index and pack path in front of it (falling back to
# git for anything unusual). docs/workspace.md says which is the default and why.
ENGINES = ("git", "fast")
DEFAULT_ENGINE = "fast"
ENGINE_ENV = "REFERENCE_LOOP_WORKSPACE"


def engine_name(engine: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The engine to use: ``engine`` if given, else ``$REFERENCE_LOOP_WORKSPACE``, else the default.

    Args:
        engine: ``git`` or ``fast``, or None.
        env: the environment to read (``os.environ`` when None).
    Returns:
        The engine's name.
    Raises:
        LoopUsageError: an unknown name (from either place).
    """
    if engine is None:
        engine = (os.environ if env is None else env).get(ENGINE_ENV) or DEFAULT_ENGINE
        where = f"{ENGINE_ENV}={engine}"
    else:
        where = f"engine {engine!r}"
    if engine not in ENGINES:
        raise LoopUsageError(
            f"unknown workspace engine ({where}): choose one of {', '.join(ENGINES)}"
        )
    return engine
