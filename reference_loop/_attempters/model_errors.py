"""Model errors that no retry can change, named in words a user can act on.

A missing API key, a refused key, a model the provider does not know and a context window too
small for the prompt fail every attempt the same way: spending attempts, verifier runs and
minutes on them hides the cause behind ``fail — FAILED tests…`` lines. ``final_reason`` tells
such an error apart from one worth retrying (a timeout, a reply without an edit) by what the
exception *is* — llm's own ``NeedsKeyException``/``UnknownModelError``, an HTTP status a client
library attaches, a provider's error code — never by the model's wording alone.

This runs in the model worker, where the exception and the model object are at hand; only the
resulting line crosses the pipe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference_loop.errors import LoopError

# kind -> what it means, as the bench's VOID line and the run's error line say it.
FINAL_KINDS = {
    "no-key": "no API key",
    "auth": "the API key was refused",
    "unknown-model": "the model is unknown to its provider",
    "context": "the prompt does not fit the model's context window",
}

_CONTEXT_CODES = ("context_length_exceeded", "string_above_max_length")
_CONTEXT_WORDS = ("context length", "context window", "maximum context", "too many tokens")


class FinalModelError(LoopError):
    """A model call that cannot succeed on any attempt: the run stops (exit 2)."""

    exit_code = 2

    def __init__(self, message: str, *, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ModelProblem:
    """A final model error: its kind (a ``FINAL_KINDS`` key) and the line to show."""

    kind: str
    message: str


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        value = getattr(holder, "status_code", None) if holder is not None else None
        if isinstance(value, int):
            return value
    return None


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _key_hint(model: Any) -> str:
    key = getattr(model, "needs_key", None)
    env = getattr(model, "key_env_var", None)
    if not key:
        return "set the provider's API key"
    return f"llm keys set {key}" + (f" (or set {env})" if env else "")


def final_reason(exc: BaseException, model: Any = None, model_id: str = "") -> ModelProblem | None:
    """The final problem ``exc`` is, or None when a retry might go otherwise.

    Args:
        exc: what the model call (or loading the model) raised.
        model: the llm model object, when loaded (for its key name).
        model_id: the model's id, for the message.
    Returns:
        A ModelProblem, or None.
    """
    names = _names(exc)
    status = _status(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    who = model_id or getattr(model, "model_id", "") or "the model"
    if "NeedsKeyException" in names:
        return ModelProblem("no-key", f"model: no key for {who} — {_key_hint(model)}")
    if "UnknownModelError" in names:
        return ModelProblem("unknown-model", f"model: unknown model {who} — see `llm models`")
    if status in (401, 403) or names & {"AuthenticationError", "PermissionDeniedError"}:
        return ModelProblem(
            "auth", f"model: the key for {who} was refused ({text}) — {_key_hint(model)}"
        )
    code = str(getattr(exc, "code", "") or "")
    lowered = text.lower()
    if code in _CONTEXT_CODES or (status == 400 and any(w in lowered for w in _CONTEXT_WORDS)):
        return ModelProblem(
            "context",
            f"model: the prompt does not fit {who}'s context window ({text}) — use a model "
            "with a larger window, or fewer files in the task",
        )
    if status == 404 or "NotFoundError" in names:
        return ModelProblem(
            "unknown-model",
            f"model: {who} is not known to its provider ({text}) — see `llm models`",
        )
    return None
