"""The click group both CLIs use: commands by job, loaded on first use, plugins, one-line errors.

Start-up matters for a command run by agents and hooks many times a day, so the group knows each
command's name and one-line help without importing its module (the help comes from
``derived.py``, written from the commands themselves); the module (and markdown-it,
cryptography, http.client behind it) is imported only when that command runs or shows its help.
Only ``click`` is imported here.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import click

from chimera_cards._cli.entrypoints import plugin_entry_points

# Where --help lists a plugin's command that no section names.
PLUGIN_SECTION = "Other commands"


class LazyCommand:
    """Where a command lives (``"module:attribute"``) and its help, known up front."""

    def __init__(self, target: str, short_help: str) -> None:
        self.target = target
        self.short_help = short_help

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class AdvancedOption(click.Option):
    """An option ``--help`` lists apart, under "Advanced options": tuning and internals."""


class SectionedCommand(click.Command):
    """A command whose ``--help`` lists its ``AdvancedOption`` options after the others."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_options(self, ctx, formatter)


def _format_options(
    command: click.Command, ctx: click.Context, formatter: click.HelpFormatter
) -> None:
    rows: dict[bool, list[tuple[str, str]]] = {False: [], True: []}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None:
            rows[isinstance(param, AdvancedOption)].append(record)
    for title, advanced in (("Options", False), ("Advanced options", True)):
        if rows[advanced]:
            with formatter.section(title):
                formatter.write_dl(rows[advanced])


class ChimeraGroup(click.Group):
    """A click group with commands listed by job, lazily loaded, plugin commands, ``Did you
    mean`` for a mistyped command, and one-line usage errors.

    ``sections`` lists (title, ((name, "module:attribute"), ...)) in the order ``--help`` shows
    them; ``short_help`` gives each lazily loaded command's help until it is loaded. With
    ``plugins=True`` every entry point in ``chimera_cards.commands`` is a function called as
    ``register_commands(cli)``, as llm's plugins are; it may ``cli.add_command(cmd)`` or, to
    keep start-up fast, ``cli.add_lazy_command(name, "module:attr", short_help)``; its
    commands are listed under the section that names them, else under "Other commands".
    Plugins are looked up only when the command name is not a built-in one or when commands are
    listed.
    """

    def __init__(
        self,
        *args: Any,
        sections: Sequence[tuple[str, Sequence[tuple[str, str | None]]]] = (),
        short_help: Mapping[str, str] | None = None,
        plugins: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        known = short_help or {}
        self.sections = [(title, [name for name, _ in rows]) for title, rows in sections]
        self.lazy: dict[str, LazyCommand] = {
            name: LazyCommand(target, known.get(name, ""))
            for _, rows in sections
            for name, target in rows
            if target is not None
        }
        self._plugins_pending = plugins
        self.plugin_names: set[str] = set()  # the commands plugins added

    def add_lazy_command(self, name: str, target: str, short_help: str) -> None:
        """Register a command by name, module path and one-line help, loaded when first used."""
        self.lazy[name] = LazyCommand(target, short_help)

    def _load_plugins(self) -> None:
        if not self._plugins_pending:
            return
        self._plugins_pending = False
        before = set(self.commands) | set(self.lazy)
        for _name, target in plugin_entry_points():
            module, _, attribute = target.partition(":")
            register = getattr(importlib.import_module(module), attribute or "register_commands")
            register(self)
        self.plugin_names = (set(self.commands) | set(self.lazy)) - before

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugins()
        names = set(self.commands) | set(self.lazy)
        ordered = [n for _, rows in self.sections for n in rows if n in names]
        return ordered + sorted(names - set(ordered))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name not in self.lazy:
            self._load_plugins()
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if not name.startswith("-") and self.get_command(ctx, name) is None:
            shown = [n for n in self.list_commands(ctx) if not self._hidden(n)]
            close = difflib.get_close_matches(name, shown)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return super().resolve_command(ctx, args)

    def _hidden(self, name: str) -> bool:
        command = self.commands.get(name)
        return command is not None and command.hidden

    def _short_help(self, ctx: click.Context, name: str, limit: int) -> str:
        command = self.commands.get(name)
        if command is None and not self.lazy[name].short_help:
            command = self.get_command(ctx, name)
        if command is None:  # not loaded yet: its known help, cut as click cuts it
            command = click.Command(name, help=self.lazy[name].short_help)
        return command.get_short_help_str(limit)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_options(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Like click's, by section, and a command not loaded yet shows its known help.
        names = [n for n in self.list_commands(ctx) if not self._hidden(n)]
        limit = formatter.width - 6 - max((len(n) for n in names), default=0)
        placed = {n for _, rows in self.sections for n in rows}
        rest = (
            PLUGIN_SECTION if self.sections else "Commands",
            [n for n in names if n not in placed],
        )
        sections = [*self.sections, rest]
        for title, rows in sections:
            shown = [(n, self._short_help(ctx, n, limit)) for n in rows if n in names]
            if shown:
                with formatter.section(title):
                    formatter.write_dl(shown)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            raise _one_line(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line(exc) from None


class _OneLineUsageError(click.UsageError):
    """A usage error shown as one ``error: ...`` line, like every other refusal."""

    def show(self, file: Any = None) -> None:
        hint = ""
        if self.ctx is not None:
            hint = f" (see '{self.ctx.command_path} --help')"
        click.echo(f"error: {self.format_message()}{hint}", err=True)


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", _OneLineUsageError)


def _one_line(exc: click.UsageError) -> click.UsageError:
    if isinstance(exc, (_OneLineUsageError, _NO_ARGS_IS_HELP)):
        return exc  # `chimera-cards` alone shows the help, as click does
    converted = _OneLineUsageError(exc.format_message(), exc.ctx)
    return converted
