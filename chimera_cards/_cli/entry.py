"""The console entries of both CLIs: what can be answered without importing click, is.

Importing click costs about as much as a bare interpreter start, so ``--version``, ``--help``
of any command and plain calls of the commands marked ``@runs_without_click`` (``check``, which
CI runs on every push; ``install``; ``hook``, run before every tool call of an agent) are
answered from ``derived.py``: the help screens click prints and each marked command's parameters,
written by ``derive.py`` from the click commands themselves (a test fails when it is stale). So
there is one definition of every command, the click one. Whatever this reader is not sure of —
an unknown or misspelt option, a missing value, a path click would refuse, a terminal narrower
than the screens, another plugin's commands, shell completion, a stream click would re-encode —
goes to click, which then handles all of it.
"""

from __future__ import annotations

import errno
import gc
import os
import sys

# typing.TYPE_CHECKING, without importing typing: this module is the console script's first.
# The rest is imported where it is used: ``hook`` runs before every tool call of an agent, and
# most of those calls are answered (``_hook_triage``) before anything else is loaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import ModuleType
    from typing import NoReturn


PROG = "chimera-cards"
# The width click lays help out at on a terminal of at least 80 columns, and on a pipe.
HELP_COLUMNS = 80
# New objects between two passes of the collector while a call is answered without click.
PLAIN_GC_THRESHOLD = 10_000


def run(argv: Sequence[str] | None = None, prog_name: str | None = None) -> None:
    """Run ``chimera-cards`` with ``argv`` (default ``sys.argv[1:]``) and exit.

    Args:
        argv: the arguments after the program name.
        prog_name: the name usage lines show (default: from ``sys.argv[0]``, as click does).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    # What a plain call allocates (modules, their classes, records) lives until it exits: the
    # collector's passes over it are ~1 ms of check's CPU. Click's commands (serve runs for
    # hours) get the usual thresholds back.
    thresholds = gc.get_threshold()
    gc.set_threshold(PLAIN_GC_THRESHOLD)
    if len(args) >= 2 and args[0] == "hook" and args[1] in _HOOK_AGENTS:
        _hook_triage(args)
    from chimera_cards import __version__
    from chimera_cards._cli import derived

    answer(derived, PROG, __version__, args, prog_name)
    gc.set_threshold(*thresholds)
    from chimera_cards._cli.app import main

    main(args=args, prog_name=prog_name)


_HOOK_AGENTS = ("claude", "gemini")
# Options that make ``hook AGENT`` something other than a hook run (nothing is read from stdin).
_NOT_A_HOOK_RUN = frozenset({"--install", "--settings", "--global", "--json", "--help", "-h"})


def _hook_triage(args: Sequence[str]) -> None:
    """A hook run whose call certainly touches no skill: answered here, before anything else is
    imported (``hook_triage``); else the input read here is put back for the hook's body."""
    if any(a.partition("=")[0] in _NOT_A_HOOK_RUN for a in args[2:]):
        return
    from chimera_cards._runtime.hook_triage import quick_exit

    try:
        data = sys.stdin.buffer.read()
    except (AttributeError, OSError, ValueError):  # no stdin at all: unreadable input blocks
        data = b""
    code = quick_exit(args[1], data, os.environ)
    if code is not None:
        _leave(code)
    import io

    sys.stdin = io.TextIOWrapper(io.BytesIO(data))


def answer(
    derived: ModuleType,
    prog: str,
    version: str,
    args: list[str],
    prog_name: str | None,
) -> None:
    """Answer ``args`` from ``derived`` and exit, or return: then click must run them."""
    shown = prog_name if prog_name is not None else os.path.basename(sys.argv[0] or "")
    if shown != prog or not _plain_streams():
        return
    if args == ["--version"]:
        _write(derived.VERSION % {"prog": prog, "version": version})
    if args and args[-1] in ("--help", "-h"):
        text = _help_screen(derived, args[:-1], args[-1])
        if text is not None:
            _write(text)
    call = read_call(derived.COMMANDS, args)
    if call is not None:
        body, kwargs = call
        _leave(_run_body(body, kwargs))


def _help_screen(derived: ModuleType, path: list[str], option: str) -> str | None:
    """The help click would print for the command ``path``, or None when it may differ here."""
    screen = derived.HELP.get(" ".join(path))
    if screen is None or option not in screen[0] or _columns() < HELP_COLUMNS:
        return None
    plugins = derived.PLUGINS
    if plugins is not None and (not path or path[0] in plugins[1]):
        # The group's screen lists plugins' commands: only the ones it was derived with.
        from chimera_cards._cli.entrypoints import plugin_entry_points

        if tuple(plugin_entry_points(plugins[0])) != plugins[2]:
            return None
    return screen[1]


def _columns() -> int:
    """The terminal width click's help formatter sees (``shutil.get_terminal_size``'s rule)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or HELP_COLUMNS


# --- reading a call ------------------------------------------------------------------------


def read_call(
    commands: Mapping[str, tuple], argv: Sequence[str]
) -> tuple[Callable[..., object], dict] | None:
    """The body and keyword arguments of a plain call of a command that runs without click.

    Args:
        commands: ``derived.COMMANDS``: command path -> (body, bound arguments, parameters
            that send the call to click, parameter specs).
        argv: the arguments after the program name.
    Returns:
        (body, kwargs), or None: let click read it.
    """
    for depth in (1, 2):
        spec = commands.get(" ".join(argv[:depth]))
        if spec is not None:
            break
    else:
        return None
    target, bound, click_only, params = spec
    kwargs = _read_params(params, argv[depth:])
    if kwargs is None or any(kwargs.pop(name) != default for name, default in click_only):
        return None
    import importlib

    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function), {**bound, **kwargs}


def _read_params(params: Sequence[tuple], tokens: Sequence[str]) -> dict | None:
    """kwargs as click would pass them for ``tokens``, or None when click may read them
    differently or refuse them. ``params``: (name, opts, kind, flag, multiple, nargs, required,
    default) of each parameter, in the command's order."""
    options: dict[str, tuple] = {}
    arguments: list[tuple] = []
    kwargs: dict = {}
    for param in params:
        kwargs[param[0]] = param[7]
        if param[1]:
            options.update(dict.fromkeys(param[1], param))
        else:
            arguments.append(param)
    values: list[str] = []
    given: set[str] = set()
    rest = iter(tokens)
    for token in rest:
        if not token.startswith("-"):
            values.append(token)
            continue
        option, equals, text = token.partition("=")
        found = options.get(option)
        if found is None:
            return None  # --help, --, a short or unknown option: click's to handle or refuse
        name, _, kind, flag, multiple = found[:5]
        given.add(name)
        if flag:
            if equals:
                return None
            kwargs[name] = True
            continue
        if not equals:
            text = next(rest, "")
        value = _convert(kind, text)
        if value is None:
            return None
        # A repeated option collects, as click's multiple does; else the last one counts.
        kwargs[name] = (*kwargs[name], value) if multiple else value
    for name, _, kind, _, _, nargs, required, _ in arguments:
        taken, values = (values, []) if nargs == -1 else (values[:1], values[1:])
        if required and not taken:
            return None
        converted = [_convert(kind, text) for text in taken]
        if any(value is None for value in converted):
            return None
        if taken:
            kwargs[name] = tuple(converted) if nargs == -1 else converted[0]
    if values or any(p[6] and p[0] not in given for p in options.values()):
        return None  # an extra argument, a required option missing: click's message
    return kwargs


def _convert(kind: tuple, text: str) -> object:
    """The value click's parameter type would give for ``text``, or None when it may refuse."""
    if not text or text.startswith("-") or "\x00" in text:
        return None
    if kind[0] == "text":
        return text
    if kind[0] == "choice":
        return text if text in kind[1] else None
    # ("path", file_okay, dir_okay, as_path): click checks an existing path only.
    import stat
    from pathlib import Path

    try:
        mode = os.stat(text).st_mode
    except OSError:
        return Path(text) if kind[3] else text
    if (not kind[1] and stat.S_ISREG(mode)) or (not kind[2] and stat.S_ISDIR(mode)):
        return None
    if not os.access(text, os.R_OK):
        return None
    return Path(text) if kind[3] else text


# --- running a body as click runs a command ---------------------------------------------------


def _plain_streams() -> bool:
    """Whether output can go straight to sys.stdout/sys.stderr, as click would send it (click
    re-encodes a stream whose encoding is ASCII), and no shell completion is asked for."""
    import codecs

    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return False
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is None or codecs.lookup(stream.encoding or "ascii").name == "ascii":
                return False
        except (LookupError, AttributeError):
            return False
    return True


def _write(text: str) -> NoReturn:
    try:
        sys.stdout.write(text)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        quiet_streams()  # the reader went away: stay quiet, as click does
        _leave(1)
    _leave(0)


def _run_body(body: Callable[..., object], kwargs: dict) -> object:
    """Run a command's body as click runs a command: the exit code of a reported error."""
    from chimera_cards._cli.plain import echo, error_report

    code: object = 0
    try:
        # As cli.common.reports_errors inside the command, then click's own handling around it.
        try:
            code = body(**kwargs, echo=echo)
        except SystemExit as exc:  # check's exit 1 when a skill is not ok
            code = exc.code
        except Exception as exc:  # what error_report does not turn into a line propagates
            report = error_report(exc)
            if report is None:
                raise
            echo(report[0], err=True)
            code = report[1]
    except (EOFError, KeyboardInterrupt):
        echo("", err=True)  # closes the terminal's ^C echo
        echo("Aborted!", err=True)
        code = 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        quiet_streams()  # the reader went away: stay quiet, as click does
        code = 1
    return code


def quiet_streams() -> None:
    """Send what is still written to stdout and stderr nowhere (their reader went away)."""
    import contextlib

    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(devnull, stream.fileno())


def _leave(code: object) -> NoReturn:
    """Exit as ``sys.exit(code)`` would, without tearing down every module and object first.

    After a check that teardown is ~6 ms of the run. Nothing of this process needs it: the
    body closed the store and reaped any child; output is flushed and exit handlers (coverage,
    for one) run here, before leaving.
    """
    import atexit

    status = code if isinstance(code, int) else 0 if code is None else 1
    if not isinstance(code, int) and code is not None:
        sys.stderr.write(f"{code}\n")  # as Python prints a non-numeric exit code
    getattr(atexit, "_run_exitfuncs", lambda: None)()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except OSError as exc:
            quiet_streams()
            status = 1 if exc.errno == errno.EPIPE else 120  # 120: what Python exits with
    os._exit(status)
