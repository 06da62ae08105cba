"""What a console entry answers without click, read off the click commands themselves.

``tools/derive_cli.py`` writes, for each CLI, a ``derived.py`` from ``module_text``: the help
screen click prints for every command (at the width of a pipe or of a terminal of 80 columns or
more), the ``--version`` line, each top-level command's help (the group lists commands from it
before loading them) and the parameters of each command marked ``runs_without_click``. The CLI
reference, docs/cli.md, is ``reference_text`` of the same screens. A test fails when either is
stale, so nothing here is kept by hand beside the click definitions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from chimera_cards._cli.entrypoints import plugin_entry_points

# click lays help out at min(terminal columns, 80) - 2; a pipe counts as 80 columns.
HELP_COLUMNS = 80


def _invoke(group: click.Group, prog: str, args: list[str]) -> str:
    # click wraps at min(columns, 80) - 2 (the runner alone would force 80).
    width = HELP_COLUMNS - 2
    result = CliRunner().invoke(
        group, args, prog_name=prog, catch_exceptions=False, terminal_width=width
    )
    if result.exit_code != 0:
        raise RuntimeError(f"{prog} {' '.join(args)}: exit {result.exit_code}: {result.output}")
    return result.output


def walk(group: click.Group, prog: str) -> Iterator[tuple[list[str], click.Command, click.Context]]:
    """Every command under ``group``, the group first, each with its path and context."""
    todo: list[tuple[list[str], click.Command, click.Context]] = [
        ([], group, click.Context(group, info_name=prog, **group.context_settings))
    ]
    while todo:
        path, command, ctx = todo.pop(0)
        yield path, command, ctx
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    todo.append(
                        ([*path, name], sub, click.Context(sub, parent=ctx, info_name=name))
                    )


def _kind(param: click.Parameter) -> tuple | None:
    """How the entry reads a parameter's value: ("text",), ("choice", choices) or ("path",
    file_okay, dir_okay, as Path); None for a type only click reads."""
    kind = param.type
    if isinstance(kind, click.Path):
        extra = (kind.exists, kind.resolve_path, kind.allow_dash, kind.writable, kind.executable)
        if any(extra) or not kind.readable:
            return None
        return ("path", kind.file_okay, kind.dir_okay, kind.type is Path)
    if isinstance(kind, click.Choice):
        return ("choice", tuple(kind.choices)) if kind.case_sensitive else None
    return ("text",) if kind is click.STRING else None


def param_spec(param: click.Parameter) -> tuple:
    """(name, opts, kind, flag, multiple, nargs, required, default) as the entry reads them.

    Raises:
        ValueError: the parameter is one only click can read (an environment variable, a
            callback, ``--x/--no-x``, another type); then the command may not be marked.
    """
    if param.envvar or param.callback is not None or getattr(param, "secondary_opts", None):
        raise ValueError(f"{param.name}: an envvar, a callback or --x/--no-x is click's to read")
    flag = bool(getattr(param, "is_flag", False))
    if flag and not getattr(param, "is_bool_flag", False):
        raise ValueError(f"{param.name}: a flag with a value is click's to read")
    kind = ("flag",) if flag else _kind(param)
    if kind is None or param.nargs not in (1, -1):
        raise ValueError(f"{param.name}: {param.type!r} is click's to read")
    default: object = param.default
    if not isinstance(default, (str, bool, int, float, tuple, list, type(None))):
        default = None  # click's "not given" marker: what click then passes is below
    if param.multiple or param.nargs == -1:
        default = tuple(default) if isinstance(default, (tuple, list)) else ()
    elif flag:
        default = bool(default)
    opts = tuple(param.opts) if isinstance(param, click.Option) else ()
    return (param.name, opts, kind, flag, param.multiple, param.nargs, param.required, default)


class Derived:
    """What one CLI's ``derived.py`` holds, read off its click group."""

    def __init__(
        self, group: click.Group, prog: str, version: str, plugin_group: str | None
    ) -> None:
        self.prog = prog
        self.screens: dict[str, tuple[tuple[str, ...], str, bool]] = {}
        self.short_help: dict[str, str] = {}
        self.commands: dict[str, tuple] = {}
        for path, command, ctx in walk(group, prog):
            key = " ".join(path)
            names = tuple(command.get_help_option_names(ctx))
            self.screens[key] = (names, _invoke(group, prog, [*path, names[0]]), command.hidden)
            if len(path) == 1:
                # click makes a short help from the first paragraph alone
                self.short_help[key] = (command.help or "").split("\n\n")[0]
            marked = getattr(command, "without_click", None)
            if marked is not None:
                self.commands[key] = _fast_command(key, command, *marked)
        line = _invoke(group, prog, ["--version"])
        self.version = line.replace(version, "%(version)s").replace(prog, "%(prog)s", 1)
        self.plugins: tuple | None = None
        if plugin_group is not None:
            theirs = tuple(sorted(getattr(group, "plugin_names", ())))
            self.plugins = (plugin_group, theirs, tuple(plugin_entry_points(plugin_group)))


def _fast_command(
    path: str, command: click.Command, target: str, bound: dict, click_only: tuple[str, ...]
) -> tuple:
    specs = tuple(param_spec(p) for p in command.params if p.expose_value)
    names = {spec[0] for spec in specs}
    if not set(click_only) <= names:
        raise ValueError(f"{path}: no parameter {sorted(set(click_only) - names)}")
    only = tuple((spec[0], spec[7]) for spec in specs if spec[0] in click_only)
    return (target, dict(bound), only, specs)


def _literal(text: str, indent: str) -> str:
    """``text`` as one string literal (the readable copy of every screen is docs/cli.md)."""
    return indent + json.dumps(text, ensure_ascii=False)


def module_text(derived: Derived, generator: str) -> str:
    """The source of a ``derived.py``."""
    out = [
        f'"""What ``{derived.prog}`` answers without click, read off its click commands.',
        "",
        f"Written by ``{generator}``: do not edit (a test fails when it is stale).",
        '"""',
        "",
        f"VERSION = {json.dumps(derived.version)}",
        "",
        "# (entry-point group, the plugins' command names, (name, target) of every entry point)",
        "# the screens were read with; None: the group takes no plugins.",
        f"PLUGINS: tuple | None = {derived.plugins!r}",
        "",
        "# Each top-level command's help: the group lists a command from it without loading it.",
        "SHORT_HELP: dict[str, str] = {",
    ]
    for name, text in derived.short_help.items():
        out += [f"    {json.dumps(name)}: (", _literal(text, "        "), "    ),"]
    out += [
        "}",
        "",
        "# command path -> (its help options, the help click prints, hidden).",
        "HELP: dict[str, tuple[tuple[str, ...], str, bool]] = {",
    ]
    for path, (names, text, hidden) in derived.screens.items():
        out += [
            f"    {json.dumps(path)}: (",
            f"        {names!r},",
            _literal(text, "        ") + ",",
            f"        {hidden!r},",
            "    ),",
        ]
    out += [
        "}",
        "",
        "# command path -> (body, bound arguments, ((click-only parameter, default), ...),",
        "# ((name, opts, kind, flag, multiple, nargs, required, default), ...)).",
        "COMMANDS: dict[str, tuple] = {",
    ]
    for path, (target, bound, only, specs) in derived.commands.items():
        out += [
            f"    {json.dumps(path)}: (",
            f"        {json.dumps(target)},",
            f"        {bound!r},",
            f"        {only!r},",
            "        (",
            *(f"            {spec!r}," for spec in specs),
            "        ),",
            "    ),",
        ]
    out += ["}", ""]
    return "\n".join(out)


def reference_text(parts: list[Derived], generator: str) -> str:
    """docs/cli.md: every command's help screen, as click prints it at 80 columns."""
    out = [
        "# Command-line reference",
        "",
        "Every command's `--help`, as it prints at 80 columns. Written by",
        f"`{generator}` from the click commands (a test fails when it is stale): edit a",
        "command's help in its module, not here.",
        "",
    ]
    for derived in parts:
        for path, (_names, text, hidden) in derived.screens.items():
            if not hidden:
                title = f"{derived.prog} {path}".strip()
                out += [f"## {title}", "", "```text", text.rstrip("\n"), "```", ""]
    return "\n".join(out)
