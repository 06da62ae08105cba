"""A group's ``--help`` printed without importing click: the same bytes, a third of the time.

``click`` alone costs more start-up than the rest of ``chimera-cards --help`` together, and the
screen it prints for a group of lazily loaded commands is fixed: a usage line, the group's help
paragraph, two options, the command table. ``render_group_help`` lays that out as click's
``HelpFormatter`` does (its width rule, two-space indents, a definition list whose first column
is capped at 30, short help cut at a word with ``...``); a test pins it to click's own output at
several terminal widths, so any difference sends the work back to click, never to the user.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence

_MAX_WIDTH = 80
_COL_MAX = 30
_COL_SPACING = 2


def help_width() -> int:
    """The width click's formatter wraps help at on this terminal."""
    import shutil

    return max(min(shutil.get_terminal_size().columns, _MAX_WIDTH) - 2, 50)


def short_help(text: str, limit: int) -> str:
    """The one-line help click shows for a command in a group's table (first sentence, cut)."""
    words = text.partition("\n\n")[0].split()
    if words and words[0] == "\b":
        words = words[1:]
    if not words:
        return ""
    last = len(words) - 1
    for i, word in enumerate(words):
        if word.endswith(".") and (i == last or not words[i + 1][0].islower()):
            words = words[: i + 1]
            break
    line = " ".join(words)
    if len(line) <= limit:
        return line
    if limit < 3:
        return "..."
    return textwrap.shorten(line, limit, placeholder="...", break_on_hyphens=False)


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    wrapper = textwrap.TextWrapper(
        width, initial_indent=first, subsequent_indent=rest, replace_whitespace=False
    )
    return wrapper.wrap(text.expandtabs())


def _dl(rows: Sequence[tuple[str, str]], width: int, indent: int) -> list[str]:
    first_col = min(max(len(term) for term, _ in rows), _COL_MAX) + _COL_SPACING
    out = []
    for term, text in rows:
        line = " " * indent + term
        if not text:
            out.append(line)
            continue
        if len(term) <= first_col - _COL_SPACING:
            line += " " * (first_col - len(term))
            lead: list[str] = []
        else:
            lead = [line]
            line = " " * (first_col + indent)
        wrapped = _wrap(text, max(width - first_col - 2, 10))
        if not wrapped:
            out += [*lead, line.rstrip()]
            continue
        out += [*lead, line + wrapped[0]]
        out += [" " * (first_col + indent) + more for more in wrapped[1:]]
    return out


def render_group_help(
    prog: str,
    help_text: str,
    options: Sequence[tuple[str, str]],
    commands: Sequence[tuple[str, str]],
    width: int | None = None,
) -> str:
    """The text click prints for ``PROG --help`` of a group.

    Args:
        prog: the program name the usage line shows.
        help_text: the group's help, one paragraph.
        options: (option spelling, help) rows, e.g. ("-h, --help", "Show this message and exit.").
        commands: (name, full help) rows, sorted as click lists them.
        width: the wrap width (default: click's rule for this terminal).
    Returns:
        The help, ending in a newline.
    """
    width = help_width() if width is None else width
    prefix = f"Usage: {prog} "
    args = "[OPTIONS] COMMAND [ARGS]..."
    lines = _wrap(args, width, prefix, " " * len(prefix))
    lines += [""]
    lines += _wrap(" ".join(help_text.split()), width, "  ", "  ")
    lines += ["", "Options:"]
    lines += _dl(options, width, 2)
    if commands:
        limit = width - 6 - max(len(name) for name, _ in commands)
        lines += ["", "Commands:"]
        lines += _dl([(name, short_help(text, limit)) for name, text in commands], width, 2)
    return "\n".join(lines) + "\n"


def wants_plain_help(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for the group's help and nothing else (``--help`` or ``-h``)."""
    return list(argv) in (["--help"], ["-h"]) and not any(
        key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ
    )


class _Recorder:
    """Stands in for the group when a plugin registers its commands (by name and help)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []

    def add_lazy_command(self, name: str, target: str, short_help: str) -> None:
        self.rows.append((name, short_help))


def plain_group_help(
    prog: str,
    help_text: str,
    options: Sequence[tuple[str, str]],
    commands: Sequence[tuple[str, str]],
    plugin_group: str | None = None,
) -> str | None:
    """The group's help with the commands of ``plugin_group``'s entry points added, or None
    when a plugin cannot say its commands without the real group (then click prints it).

    Args:
        prog: the program name.
        help_text: the group's help paragraph.
        options: the group's option rows.
        commands: (name, help) of the group's own commands.
        plugin_group: the entry-point group plugins register commands through.
    Returns:
        The help text, or None.
    """
    rows = dict(commands)
    if plugin_group is not None:
        import importlib

        from chimera_cards._cli.entrypoints import plugin_entry_points

        for _name, target in plugin_entry_points(plugin_group):
            module, _, attribute = target.partition(":")
            try:
                register = getattr(
                    importlib.import_module(module), attribute or "register_commands"
                )
                recorder = _Recorder()
                register(recorder)
            except Exception:  # a plugin that needs the real group: let click show it
                return None
            rows.update(recorder.rows)
    return render_group_help(prog, help_text, options, sorted(rows.items()))
