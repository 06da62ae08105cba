"""Making an attempter from its spec (``scripted:NAME``, ``cmd:COMMAND``, ``llm:MODEL``, or an agent
preset: ``claude``, ``codex``, ``gemini``, optionally ``claude:MODEL``) and fitting the history
budget to the attempters of a run."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reference_loop._attempters.base import Attempter
from reference_loop.errors import LoopUsageError

if TYPE_CHECKING:
    from reference_loop._tasks.task import Task


# Hooks for attempter kinds that live in their own modules: kind -> (module, factory). Each
# factory is called as factory(argument, seed=seed). Adding a kind is one line here.
_HOOKS = {
    "cmd": ("reference_loop._attempters.cmd", "make_cmd_attempter"),  # cmd:COMMAND
    "llm": ("reference_loop._attempters.llm", "make_llm_attempter"),  # llm:MODEL
}


def make_attempter(
    spec: str,
    *,
    seed: int = 0,
    task: Task | None = None,
    timeout: float | None = None,
    options: Mapping[str, str] | None = None,
    context_tokens: int | None = None,
    model: str | None = None,
    agent_args: Sequence[str] = (),
) -> Attempter:
    """Resolve ``scripted:NAME``, ``cmd:COMMAND``, ``llm:MODEL`` or an agent preset (``claude``,
    ``codex``, ``gemini``; ``claude:MODEL`` names the model) to an attempter.

    ``task`` is needed by the scripted attempters only (they draw their candidate fixes from the
    task folder); ``seed`` makes their choice among plausible fixes vary as a sampled model's would.
    ``timeout`` bounds one attempt of a ``cmd:``, ``llm:`` or preset attempter; ``options`` (``-o
    KEY VALUE``) and ``context_tokens`` are for ``llm:`` models only; ``model`` (``--model``) and
    ``agent_args`` (``--agent-arg``) for presets only (a model in the spec wins over ``model``).
    """
    from reference_loop._attempters.presets import PRESETS, is_preset, make_preset_attempter

    kind, sep, arg = spec.partition(":")
    if is_preset(spec):
        if options:
            raise LoopUsageError(f"model options (-o) apply to llm: attempters only, not {spec!r}")
        return make_preset_attempter(
            kind,
            model=arg or model,
            agent_args=agent_args,
            seed=seed,
            **({"timeout": timeout} if timeout is not None else {}),
        )
    if model is not None or agent_args:
        raise LoopUsageError(
            f"--model and --agent-arg go with an agent preset ({', '.join(PRESETS)}), not {spec!r}"
        )
    if not sep or not arg:
        raise LoopUsageError(
            f"attempter {spec!r} must look like scripted:NAME, cmd:COMMAND, llm:MODEL or "
            f"an agent preset ({', '.join(PRESETS)})"
        )
    if kind == "scripted":
        if options:
            raise LoopUsageError(f"model options (-o) apply to llm: attempters only, not {spec!r}")
        from reference_loop._attempters.scripted import make_scripted

        return make_scripted(arg, seed=seed, task=task)
    if kind in _HOOKS:
        module_name, factory_name = _HOOKS[kind]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            raise LoopUsageError(f"attempter kind {kind!r} is not available in this build") from exc
        kwargs: dict[str, Any] = {"seed": seed}
        if timeout is not None:
            kwargs["timeout"] = timeout
        if kind == "llm":
            kwargs.update(options=dict(options or {}), context_tokens=context_tokens)
        elif options:
            raise LoopUsageError(f"model options (-o) apply to llm: attempters only, not {spec!r}")
        return getattr(module, factory_name)(arg, **kwargs)
    raise LoopUsageError(
        f"unknown attempter kind {kind!r} in {spec!r} (expected scripted:, cmd:, llm: or "
        f"an agent preset: {', '.join(PRESETS)})"
    )


def agent_settings(
    specs: Sequence[str | None], model: str | None, agent_args: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """For each spec of a run, the ``--model`` and ``--agent-arg`` it takes: every agent preset
    among them takes both; other kinds take none. Giving either with no preset in the run is a
    usage error, not a flag dropped in silence.

    Returns:
        spec -> keyword arguments for :func:`make_attempter`.
    """
    from reference_loop._attempters.presets import PRESETS, is_preset

    given = [s for s in specs if s]
    if (model is not None or agent_args) and not any(is_preset(s) for s in given):
        raise LoopUsageError(
            f"--model and --agent-arg go with an agent preset ({', '.join(PRESETS)}), "
            f"not {' or '.join(repr(s) for s in given)}"
        )
    return {
        s: {"model": model, "agent_args": tuple(agent_args)} if is_preset(s) else {} for s in given
    }


def fit_to_task(
    task: Task,
    budget: int,
    *attempters: object,
    transcripts: str | Path | None = None,
) -> int:
    """Prepare attempters for one run of ``task``: the history budget that keeps every prompt
    inside the smallest model context among them (``budget`` when none has one), and, given
    ``transcripts``, where a model attempter saves what it sent and got (attempt-N.prompt.txt,
    attempt-N.reply.txt). Raises the attempter's refusal when attempt 1 alone cannot fit.

    Args:
        task: the task about to run.
        budget: the history budget asked for (chars).
        attempters: the attempters of the run (None entries are skipped).
        transcripts: a folder for model transcripts, or None.

    Returns:
        The history budget to run with.
    """
    for att in attempters:
        fit = getattr(att, "history_budget", None)
        if callable(fit):
            budget = min(budget, fit(task, default=budget))
        if transcripts is not None and hasattr(att, "transcript_dir"):
            att.transcript_dir = Path(transcripts)
    return budget
