"""The click group both CLIs use: commands loaded on first use, plugins, one-line usage errors.

Start-up matters for a command run by agents and hooks many times a day, so the group knows each
command's name and one-line help without importing its module; the module (and markdown-it,
cryptography, http.client behind it) is imported only when that command runs or shows its help.
Only ``click`` is imported here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

from chimera_cards._cli.entrypoints import plugin_entry_points


class LazyCommand:
    """Where a command lives (``"module:attribute"``) and its one-line help, known up front."""

    def __init__(self, target: str, short_help: str) -> None:
        self.target = target
        self.short_help = short_help

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class ChimeraGroup(click.Group):
    """A click group with lazily loaded commands, plugin commands, and one-line usage errors.

    ``lazy`` maps a command name to a ``LazyCommand``. With ``plugins=True`` every entry point
    in ``chimera_cards.commands`` is a function called as ``register_commands(cli)``, as llm's
    plugins are; it may ``cli.add_command(cmd)`` or, to keep start-up fast,
    ``cli.add_lazy_command(name, "module:attr", short_help)``. Plugins are looked up only when
    the command name is not a built-in one or when commands are listed.
    """

    def __init__(
        self,
        *args: Any,
        lazy: Mapping[str, LazyCommand] | None = None,
        plugins: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, LazyCommand] = dict(lazy or {})
        self._plugins_pending = plugins

    def add_lazy_command(self, name: str, target: str, short_help: str) -> None:
        """Register a command by name, module path and one-line help, loaded when first used."""
        self.lazy[name] = LazyCommand(target, short_help)

    def _load_plugins(self) -> None:
        if not self._plugins_pending:
            return
        self._plugins_pending = False
        for _name, target in plugin_entry_points():
            module, _, attribute = target.partition(":")
            register = getattr(importlib.import_module(module), attribute or "register_commands")
            register(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugins()
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name not in self.lazy:
            self._load_plugins()
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Like click's, but a command not loaded yet shows its known help instead of loading.
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max((len(n) for n in names), default=0)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is not None and command.hidden:
                continue
            if command is not None:
                help_text = command.get_short_help_str(limit)
            else:
                placeholder = click.Command(name, help=self.lazy[name].short_help)
                help_text = placeholder.get_short_help_str(limit)
            rows.append((name, help_text))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

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
