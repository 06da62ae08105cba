"""Tasks: a folder with a ``task.toml`` manifest, the project files and optional candidate fixes.

Layout of a task folder::

    task.toml          name, description, task (text), verify, timeout, known_three_failures,
                       protect (glob patterns an attempt may not change; default: the tests),
                       must_pass (test ids that must pass; default: every test collected on
                       the untouched tree),
                       and [[candidates]] tables (name, dir, weight, fixes, marker)
    project/           the files the loop works on (copied to a temporary workspace)
    candidates/NAME/   whole-file overlays a scripted attempter writes over the project

``verify`` may contain ``{python}``, replaced by the running interpreter so the sample tests run
with the same Python (and pytest) as the loop itself.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from reference_loop._verdict.protect import DEFAULT_PROTECT, check_patterns, verify_paths
from reference_loop.errors import LoopError, LoopUsageError

MANIFEST = "task.toml"
PROJECT_DIR = "project"
DEFAULT_TIMEOUT = 60.0


def tree_files(root: Path) -> dict[str, bytes]:
    """Relative POSIX path -> contents of every file under ``root``, in path order."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@dataclass
class Candidate:
    """One fix a scripted attempter may try: files to write over the project."""

    name: str
    path: Path
    weight: float = 1.0  # plausibility for seeded choice; 0 = only after all others
    fixes: bool = False  # the manifest's claim, used only by scripted:strong
    marker: list[str] = field(default_factory=list)  # optional explicit distinguishing text

    def files(self) -> dict[str, bytes]:
        """Relative path -> contents of every file in the overlay."""
        return tree_files(self.path)

    def apply(self, workspace: Path) -> list[str]:
        written = []
        for rel, data in self.files().items():
            target = workspace / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(rel)
        return written


@dataclass
class Task:
    name: str
    text: str
    verify: str
    timeout: float = DEFAULT_TIMEOUT
    description: str = ""
    known_three_failures: bool = False
    root: Path | None = None  # the task folder (None for an in-place workspace task)
    project: Path | None = None  # the files to copy into a workspace
    candidates: list[Candidate] = field(default_factory=list)
    protect: tuple[str, ...] = DEFAULT_PROTECT  # glob patterns an attempt may not change
    # Test ids that must pass (replacing the default: every test collected at the start).
    must_pass: tuple[str, ...] = ()

    def protected(self) -> tuple[str, ...]:
        """Every protected pattern: ``protect`` plus the files the verify command names."""
        return (*self.protect, *(p for p in verify_paths(self.verify) if p not in self.protect))

    def verify_command(self) -> str:
        return self.verify.replace("{python}", shlex.quote(sys.executable))

    def shown_verify(self) -> str:
        """The verify command as a prompt shows it (no interpreter path from this machine)."""
        return self.verify.replace("{python}", "python")

    def project_files(self) -> dict[str, bytes]:
        return tree_files(self.project) if self.project is not None else {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "known_three_failures": self.known_three_failures,
            "verify": self.verify,
            "timeout": self.timeout,
            "path": str(self.root) if self.root else None,
            "candidates": [c.name for c in self.candidates],
            "protected": list(self.protected()),
            "must_pass": list(self.must_pass),
        }


def _require(data: dict, key: str, kind: type, where: Path) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, str) and not value.strip()):
        raise LoopUsageError(f"{where}: '{key}' must be a non-empty {kind.__name__}")
    return value


def load_task_dir(path: str | Path) -> Task:
    """Read a task folder; every problem is one clear line naming the file."""
    root = Path(path)
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise LoopUsageError(f"{root}: not a task folder (no {MANIFEST})")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LoopUsageError(f"{manifest}: unreadable manifest: {exc}") from exc
    text = _require(data, "task", str, manifest)
    verify = _require(data, "verify", str, manifest)
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise LoopUsageError(f"{manifest}: 'timeout' must be a positive number")
    project = root / PROJECT_DIR
    if not project.is_dir():
        raise LoopUsageError(f"{root}: no {PROJECT_DIR}/ folder with the project files")
    candidates = []
    for i, entry in enumerate(data.get("candidates", []), 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("dir"), str):
            raise LoopUsageError(f"{manifest}: candidate {i} needs a 'dir'")
        cdir = (root / entry["dir"]).resolve()
        if not cdir.is_dir() or not cdir.is_relative_to(root.resolve()):
            raise LoopUsageError(
                f"{manifest}: candidate dir {entry['dir']!r} is not a folder inside the task"
            )
        weight = entry.get("weight", 1.0)
        if not isinstance(weight, (int, float)) or weight < 0:
            raise LoopUsageError(f"{manifest}: candidate {i} weight must be >= 0")
        marker = entry.get("marker", [])
        candidates.append(
            Candidate(
                name=str(entry.get("name", Path(entry["dir"]).name)),
                path=cdir,
                weight=float(weight),
                fixes=bool(entry.get("fixes", False)),
                marker=[marker] if isinstance(marker, str) else list(marker),
            )
        )
    must_pass = data.get("must_pass", [])
    if not isinstance(must_pass, list) or not all(
        isinstance(t, str) and t.strip() for t in must_pass
    ):
        raise LoopUsageError(f"{manifest}: 'must_pass' must be a list of test ids")
    protect = data.get("protect", DEFAULT_PROTECT)
    if not isinstance(protect, (list, tuple)):
        raise LoopUsageError(f"{manifest}: 'protect' must be a list of glob patterns")
    try:
        protect = check_patterns(protect)
    except LoopUsageError as exc:
        raise LoopUsageError(f"{manifest}: {exc}") from None
    return Task(
        name=str(data.get("name", root.name)),
        text=text.strip(),
        verify=verify,
        timeout=float(timeout),
        description=str(data.get("description", "")).strip(),
        known_three_failures=bool(data.get("known_three_failures", False)),
        root=root,
        project=project,
        candidates=candidates,
        protect=protect,
        must_pass=tuple(t.strip() for t in must_pass),
    )


def sample_tasks_root() -> Path:
    return Path(str(resources.files("reference_loop._tasks.samples")))


def load_task_dirs(root: Path) -> list[Task]:
    """Every task folder (a subfolder holding a manifest) directly under ``root``, by name."""
    return [load_task_dir(p) for p in sorted(root.iterdir()) if (p / MANIFEST).is_file()]


def sample_tasks() -> list[Task]:
    return load_task_dirs(sample_tasks_root())


def three_failure_task() -> Task:
    """The sample task known to fail three times with the scripted attempters."""
    for task in sample_tasks():
        if task.known_three_failures:
            return task
    raise LoopError("no sample task is marked known_three_failures")


def resolve_task(name_or_dir: str | Path) -> Task:
    """A task folder path, or the name of a sample task."""
    path = Path(name_or_dir)
    if (path / MANIFEST).is_file():
        return load_task_dir(path)
    tasks = sample_tasks()
    for task in tasks:
        if task.name == str(name_or_dir):
            return task
    names = ", ".join(t.name for t in tasks)
    raise LoopUsageError(
        f"no task folder or sample task named {str(name_or_dir)!r} (sample tasks: {names})"
    )


def inline_task(
    text: str,
    verify: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    name: str = "workspace",
    candidates_dir: str | Path | None = None,
) -> Task:
    """A task for a user's own project, worked on in place (no copy, no manifest)."""
    if not text.strip() or not verify.strip():
        raise LoopUsageError("an in-place task needs both --task-text and --verify")
    candidates = []
    if candidates_dir is not None:
        cdir = Path(candidates_dir)
        if not cdir.is_dir():
            raise LoopUsageError(f"{cdir}: candidates folder not found")
        candidates = [
            Candidate(name=p.name, path=p.resolve()) for p in sorted(cdir.iterdir()) if p.is_dir()
        ]
    return Task(name=name, text=text.strip(), verify=verify, timeout=timeout, candidates=candidates)


def copy_project(task: Task, dest: Path) -> Path:
    """Copy the task's project files into ``dest`` (which must not exist yet)."""
    if task.project is None:
        raise LoopError(f"task {task.name!r} has no project files to copy")
    shutil.copytree(
        task.project,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"),
    )
    return dest
