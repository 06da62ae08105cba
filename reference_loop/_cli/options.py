"""The model options ``run`` and ``bench`` share: one definition, so the two cannot drift.

``-o KEY VALUE`` (repeatable, validated by the model's own ``Options`` as ``llm -o`` does),
``--context-tokens N`` (the window, for a model that does not report it) and ``--edit-format``;
for the agent presets (``--attempter claude|codex|gemini``), ``--model`` and ``--agent-arg``.
Only click is imported: ``--help`` of either command stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from chimera_cards._cli.group import AdvancedOption

F = TypeVar("F", bound=Callable[..., object])

# reference_loop.edits.EDIT_FORMATS, spelt here so the option list does not import the edit
# parsers; a test pins the two together.
EDIT_FORMAT_CHOICES = ("auto", "whole", "search-replace", "diff")


def model_options(function: F) -> F:
    """Add ``-o/--option``, ``--context-tokens`` and ``--edit-format`` to a click command.

    The command receives ``model_options`` (tuple of (key, value)), ``context_tokens``
    (int or None) and ``edit_format`` (str).
    """
    for option in reversed(
        (
            click.option(
                "-o",
                "--option",
                "model_options",
                type=(str, str),
                multiple=True,
                metavar="KEY VALUE",
                cls=AdvancedOption,
                help="A model option passed to llm (as `llm -o`), e.g. -o n_ctx 8192 "
                "-o max_tokens 512.",
            ),
            click.option(
                "--context-tokens",
                type=click.IntRange(min=1),
                default=None,
                cls=AdvancedOption,
                help="The model's context window, when the model does not report it.",
            ),
            click.option(
                "--edit-format",
                type=click.Choice(EDIT_FORMAT_CHOICES),
                default="auto",
                show_default=True,
                cls=AdvancedOption,
                help="The reply format an llm: model is taught (auto picks by task size).",
            ),
        )
    ):
        function = option(function)
    return function


def agent_options(function: F) -> F:
    """Add ``--model`` and ``--agent-arg`` (the agent presets' model and extra CLI flags).

    The command receives ``model`` (str or None) and ``agent_args`` (tuple of str).
    """
    for option in reversed(
        (
            click.option(
                "--model",
                default=None,
                metavar="NAME",
                help="The model an agent preset (claude, codex, gemini) runs, passed with the "
                "CLI's own model flag.",
            ),
            click.option(
                "--agent-arg",
                "agent_args",
                multiple=True,
                metavar="ARG",
                help="One more argument for an agent preset's CLI (repeatable, kept in order).",
            ),
        )
    ):
        function = option(function)
    return function
