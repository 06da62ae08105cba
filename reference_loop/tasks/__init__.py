"""Tasks: loading a task folder and the sample tasks that ship with the loop.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.tasks.prompt import compose_prompt
    from reference_loop.tasks.task import (
        DEFAULT_TIMEOUT,
        MANIFEST,
        PROJECT_DIR,
        Candidate,
        Task,
        copy_project,
        inline_task,
        load_task_dir,
        load_task_dirs,
        resolve_task,
        sample_tasks,
        sample_tasks_root,
        three_failure_task,
        tree_files,
    )

# public name -> the module that defines it
_EXPORTS = {
    "compose_prompt": "reference_loop.tasks.prompt",
    "Candidate": "reference_loop.tasks.task",
    "DEFAULT_TIMEOUT": "reference_loop.tasks.task",
    "MANIFEST": "reference_loop.tasks.task",
    "PROJECT_DIR": "reference_loop.tasks.task",
    "Task": "reference_loop.tasks.task",
    "copy_project": "reference_loop.tasks.task",
    "inline_task": "reference_loop.tasks.task",
    "load_task_dir": "reference_loop.tasks.task",
    "load_task_dirs": "reference_loop.tasks.task",
    "resolve_task": "reference_loop.tasks.task",
    "sample_tasks": "reference_loop.tasks.task",
    "sample_tasks_root": "reference_loop.tasks.task",
    "three_failure_task": "reference_loop.tasks.task",
    "tree_files": "reference_loop.tasks.task",
}

__all__ = [
    "DEFAULT_TIMEOUT",
    "MANIFEST",
    "PROJECT_DIR",
    "Candidate",
    "Task",
    "compose_prompt",
    "copy_project",
    "inline_task",
    "load_task_dir",
    "load_task_dirs",
    "resolve_task",
    "sample_tasks",
    "sample_tasks_root",
    "three_failure_task",
    "tree_files",
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
