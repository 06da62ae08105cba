"""The prompt an attempter receives for a task: the task, how it is checked, cards, plan, history.

The loop composes it for every attempt; an attempter that must size its context before the first
attempt (``attempters.llm``) composes the same text with an empty history.
"""

from __future__ import annotations

from reference_loop._tasks.task import Task


def compose_prompt(task: Task, history_text: str, plan: str = "", cards: str = "") -> str:
    """The exact text an attempter receives (``cards``: a section from ``core.cards``)."""
    parts = [
        f"# Task\n\n{task.text.strip()}",
        f"## How the result is checked\n\n`{task.shown_verify()}` must exit 0. The workspace "
        "is reverted after every failed attempt, so each attempt starts from the original "
        "files.",
    ]
    if cards:
        parts.append(cards.strip())
    if plan:
        parts.append(f"## Plan\n\n{plan.strip()}")
    if history_text:
        parts.append(history_text.strip())
    return "\n\n".join(parts) + "\n"
