"""The ``chimera-cards`` console entry: ``check`` and ``install`` with plain arguments skip click.

``check`` is what CI runs on every push, and importing click and building the command group cost
about as much as hashing a few hundred skill folders. So when the command is ``check`` or
``install`` and every argument is one this module can read without doubt (a known option, a
value that does not start with ``-``, a path click's checks would accept), the command's body
(``cli/plain.py``) runs straight away, with click's exit codes, error lines and output. Anything
else — ``--help``, an unknown or misspelt option, a missing value, a path click would refuse,
shell completion, a stream click would re-encode — goes to the click group, which then handles
all of it exactly as before. A test pins ``PLAIN_COMMANDS`` to the click commands' options.
"""

from __future__ import annotations

import errno
import os
import sys

# typing.TYPE_CHECKING, without importing typing: this module is the console script's first.
# Everything else is imported where it is used: ``hook`` runs before every tool call of an
# agent, and most of those calls are answered (hook_triage) before anything else is loaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import NoReturn


# How an argument is read: a flag, a text value, a text option that may be repeated (its values
# collected in order, as click's multiple=True does), a path click checks is not a file ("dir")
# or not a folder ("file") when it exists.
_FLAG, _TEXT, _TEXTS, _DIR, _FILE = "flag", "text", "texts", "dir", "file"


def _plain_commands() -> dict[str, tuple[Callable[..., None], tuple[str, str, bool], dict]]:
    """command -> (its body, (positional parameter, kind, required), {option: (parameter,
    kind)}); the same parameters, spelt the same way, as the click command in cli/install.py."""
    from chimera_cards._cli.plain import check_body, install_body

    return {
        "check": (
            check_body,
            ("dirs", _DIR, False),
            {
                "--agent": ("agent", _TEXTS),
                "--global": ("global_", _FLAG),
                "--all": ("all_", _FLAG),
                "--trust-file": ("trust_file", _FILE),
                "--lockfile": ("lockfile", _FILE),
                "--store": ("store_path", _FILE),
                "--json": ("as_json", _FLAG),
                "--format": ("fmt", _TEXT),
            },
        ),
        "install": (
            install_body,
            ("names", _TEXT, True),
            {
                "--to": ("to", _DIR),
                "--agent": ("agent", _TEXTS),
                "--global": ("global_", _FLAG),
                "--force": ("force", _FLAG),
                "--link": ("link", _FLAG),
                "--store": ("store_path", _FILE),
                "--json": ("as_json", _FLAG),
            },
        ),
    }


_PLAIN_NAMES = ("check", "install")


def __getattr__(name: str) -> object:
    # PLAIN_COMMANDS names the bodies, which load their modules: built when asked for.
    if name == "PLAIN_COMMANDS":
        return _plain_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _value(kind: str, text: str) -> str | Path | None:
    """The parameter click would pass, or None when click might refuse it (then click decides)."""
    import stat
    from pathlib import Path

    if not text or text.startswith("-") or "\x00" in text:
        return None
    if kind in (_TEXT, _TEXTS):
        return text
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return Path(text)  # not there: click passes it on unchecked
    if (kind == _DIR and stat.S_ISREG(mode)) or (kind == _FILE and stat.S_ISDIR(mode)):
        return None
    return Path(text)


def plain_call(argv: Sequence[str]) -> tuple[Callable[..., None], dict] | None:
    """The body and keyword arguments for ``argv`` when it is a plain ``check``/``install``.

    Args:
        argv: the arguments after the program name.
    Returns:
        (body, kwargs) to run as ``body(**kwargs, echo=...)``, or None: let click handle it.
    """
    if not argv or argv[0] not in _PLAIN_NAMES:
        return None
    body, (positional, positional_kind, required), options = _plain_commands()[argv[0]]
    kwargs: dict = {
        dest: (False if kind == _FLAG else () if kind == _TEXTS else None)
        for dest, kind in options.values()
    }
    found = []
    rest = iter(argv[1:])
    for token in rest:
        if not token.startswith("-"):
            value = _value(positional_kind, token)
            if value is None:
                return None
            found.append(value)
            continue
        name, equals, text = token.partition("=")
        if name not in options:
            return None  # --help, --, a short or unknown option: click's to handle or refuse
        dest, kind = options[name]
        if kind == _FLAG:
            if equals:
                return None
            kwargs[dest] = True
            continue
        if not equals:
            text = next(rest, "")
        value = _value(kind, text)
        if value is None:
            return None
        if kind == _TEXTS:
            kwargs[dest] = (*kwargs[dest], value)
        else:
            kwargs[dest] = value  # given twice, the last one counts, as in click
    if required and not found:
        return None
    kwargs[positional] = tuple(found)
    return body, kwargs


# ``hook AGENT`` runs before every matching tool call of the agent: without click it starts in
# about half the time. Its options as the click command spells them (cli/runtime.py).
HOOK_AGENTS = ("claude", "gemini")
_HOOK_EVENTS = ("auto", "pre-tool-use", "session-start")
_HOOK_PATHS = {"--store": "store_path", "--trust-file": "trust_file"}
_HOOK_FLAGS = ("--fail-open",)
_HOOK_VALUES = ("--event", "--deadline", *_HOOK_PATHS)


def hook_call(argv: Sequence[str]) -> tuple[str, dict] | None:
    """(agent, ``hook_body`` keyword arguments) for a plain ``hook AGENT`` run, else None.

    Anything else (``--install``, ``--help``, an unknown option, a path click would refuse)
    goes to click, as for ``check``.
    """
    if len(argv) < 2 or argv[0] != "hook" or argv[1] not in HOOK_AGENTS:
        return None
    kwargs: dict = {
        "store_path": None,
        "trust_file": None,
        "fail_open": False,
        "event": None,
        "deadline": None,
    }
    rest = iter(argv[2:])
    for token in rest:
        name, equals, text = token.partition("=")
        if name == "--fail-open" and not equals:
            kwargs["fail_open"] = True
            continue
        if name not in _HOOK_VALUES:
            return None
        if not equals:
            text = next(rest, "")
        if name == "--deadline":
            seconds = _seconds(text)
            if seconds is None:
                return None
            kwargs["deadline"] = seconds
            continue
        if name == "--event":
            if text not in _HOOK_EVENTS:
                return None
            kwargs["event"] = None if text == "auto" else text
            continue
        value = _value(_FILE, text)
        if value is None:
            return None
        kwargs[_HOOK_PATHS[name]] = value
    return argv[1], kwargs


def _seconds(text: str) -> float | None:
    """A finite number of seconds above 0, as click's ``Seconds`` reads it; else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value < float("inf") else None


def _plain_hook(argv: Sequence[str]) -> bool:
    """Whether ``argv`` is ``hook AGENT`` with only options the hook command reads its input
    with (not ``--install``, ``--help`` or a mistake: those must not consume stdin)."""
    if len(argv) < 2 or argv[0] != "hook" or argv[1] not in HOOK_AGENTS:
        return False
    rest = iter(argv[2:])
    for token in rest:
        name, equals, _ = token.partition("=")
        if name in _HOOK_FLAGS and not equals:
            continue
        if name not in _HOOK_VALUES:
            return False
        if not equals and next(rest, None) is None:
            return False
    return True


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


def run(argv: Sequence[str] | None = None, prog_name: str | None = None) -> None:
    """Run ``chimera-cards`` with ``argv`` (default ``sys.argv[1:]``) and exit.

    Args:
        argv: the arguments after the program name.
        prog_name: the name usage lines show (default: from ``sys.argv[0]``, as click does).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    hook_input = None
    if _plain_hook(args):
        from chimera_cards._runtime.hook_triage import quick_exit

        try:
            hook_input = sys.stdin.buffer.read()
        except (AttributeError, OSError, ValueError):  # no stdin at all: unreadable input blocks
            hook_input = b""
        answer = quick_exit(args[1], hook_input, os.environ)
        if answer is not None:
            _leave(answer)
    from chimera_cards._cli.plain import hook_body
    from chimera_cards._cli.plainhelp import wants_plain_help
    from chimera_cards._cli.table import PROG

    if wants_plain_help(args) and _plain_streams() and _prog(prog_name) == PROG:
        text = _group_help()
        if text is not None:
            sys.stdout.write(text)
            _leave(0)
    hook = hook_call(args) if _plain_streams() else None
    if hook is not None:
        agent, options = hook
        _leave(hook_body(agent, **options, data=hook_input))
    call = plain_call(args) if _plain_streams() else None
    if call is None:
        from chimera_cards._cli.app import main

        if hook_input is not None:  # already read: the click command reads it again
            import io

            sys.stdin = io.TextIOWrapper(io.BytesIO(hook_input))

        main(args=args, prog_name=prog_name)
        return
    body, kwargs = call
    try:
        code: object = _run_body(body, kwargs)
    except SystemExit as exc:  # check's exit 1 when a skill is not ok
        code = exc.code
    _leave(code)


def _prog(prog_name: str | None) -> str:
    """The name click would show in the usage line."""
    return prog_name if prog_name is not None else os.path.basename(sys.argv[0] or "")


def _group_help() -> str | None:
    """``chimera-cards --help`` without importing click (the same text, pinned by a test)."""
    from chimera_cards._cli.entrypoints import PLUGIN_GROUP
    from chimera_cards._cli.plainhelp import plain_group_help
    from chimera_cards._cli.table import COMMAND_TABLE, GROUP_HELP, OPTION_ROWS, PROG

    rows = [(name, short_help) for name, _target, short_help in COMMAND_TABLE]
    return plain_group_help(PROG, GROUP_HELP, OPTION_ROWS, rows, PLUGIN_GROUP)


def _run_body(body: Callable[..., None], kwargs: dict) -> int:
    """Run a command's body as click runs a command: the exit code of a reported error."""
    from chimera_cards._cli.plain import echo, error_report

    code = 0
    try:
        # As cli.common.reports_errors inside the command, then click's own handling around it.
        try:
            body(**kwargs, echo=echo)
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
        _quiet_streams()  # the reader went away: stay quiet, as click does
        code = 1
    return code


def _quiet_streams() -> None:
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
            _quiet_streams()
            status = 1 if exc.errno == errno.EPIPE else 120  # 120: what Python exits with
    os._exit(status)
