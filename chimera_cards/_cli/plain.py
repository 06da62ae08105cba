"""What ``check`` and ``install`` do on the command line, without click.

``check`` runs in CI on every push and ``install`` in scripts, so both can also run straight from
the console entry (``cli/entry.py``) when their arguments are plain, without importing click at
all. Their click commands (``cli/install.py``) call the same functions here, so there is one body
per command whichever way it was started. ``echo`` is passed in: ``click.echo`` from click, and
``echo`` below (the same behaviour for a real terminal, file or pipe) from the console entry.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from chimera_cards.errors import ChimeraError, UsageError

# typing.TYPE_CHECKING, without importing typing: this module is on check's start-up path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from chimera_cards._store.facade import Store


DEBUG_ENV = "CHIMERA_CARDS_DEBUG"
CHECK_FORMATS = ("text", "json", "sarif")

Echo = Callable[..., object]  # echo(text, err=False), as click.echo is called

# click.echo strips ANSI escape sequences from text not written to a terminal (click._compat).
# A pattern, compiled on first use (re keeps it): check's lines hold no escape.
_ANSI = r"\033\[[0-?]*[ -/]*[@-~]"


def echo(text: str, err: bool = False) -> None:
    """Write one line as ``click.echo`` does to a real stream: escapes stripped unless it is a
    terminal, flushed at once."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    try:
        terminal = stream.isatty()
    except Exception:  # click treats any failure here as "not a terminal"
        terminal = False
    if not terminal and "\033" in text:
        text = re.sub(_ANSI, "", text)
    stream.write(text + "\n")
    stream.flush()


def json_text(value: object) -> str:
    """The ``--json`` output of every command."""
    import json  # here, so the console entry starts hashing before loading it

    return json.dumps(value, indent=2, sort_keys=False, default=str)


def error_report(exc: BaseException) -> tuple[str, int] | None:
    """The one stderr line and exit code for an error, or None when it must propagate.

    A ChimeraError is its message and exit code; a damaged or locked SQLite file mid-command is
    a store problem (exit 1). An OSError or ValueError that no lower layer turned into a
    ChimeraError is one line too, exit 2, unless ``CHIMERA_CARDS_DEBUG`` is set (the test suite
    sets it): then it propagates, so a bug is never hidden behind a tidy message.

    Args:
        exc: what the command raised.
    Returns:
        (the ``error: ...`` line, the exit code), or None.
    """
    if isinstance(exc, ChimeraError):
        return f"error: {exc}", exc.exit_code
    # An SQLite error can only come from a loaded sqlite3 (not imported here: start-up).
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        return f"error: store: {exc}", 1
    if isinstance(exc, (OSError, ValueError)) and not os.environ.get(DEBUG_ENV):
        text = " ".join(str(exc).split()) or exc.__class__.__name__
        return f"error: {text} ({exc.__class__.__name__}; {DEBUG_ENV}=1 shows where)", 2
    return None


def open_store(store_path: Path | None, *, create: bool = False) -> Store:
    """The store at ``store_path`` (default: ``store.default_store_path()``).

    Readers never create a store: verifying a mistyped path must not report an empty "ok".
    """
    from chimera_cards._store.facade import Store
    from chimera_cards._store.location import default_store_path  # one definition of "home"

    store = Store(store_path or default_store_path(), create=create)
    for warning in store.warnings:  # e.g. the audit log no longer holds its recorded head
        sys.stderr.write(f"warning: {warning}\n")
    return store


def _agents():
    from chimera_cards._install import agents

    return agents


def target_dirs(to: Path | None, agents: str | tuple[str, ...] | None, global_: bool) -> list[Path]:
    """The skills folders named by ``--to`` or ``--agent [--global]`` (one or the other), each
    once: ``--agent`` may be repeated, and ``--agent '*'`` is every agent detected here."""
    names = (agents,) if isinstance(agents, str) else tuple(agents or ())
    if (to is None) == (not names):
        raise UsageError("give exactly one of --to DIR or --agent AGENT")
    if to is not None:
        if global_:
            raise UsageError("--global goes with --agent, not --to")
        return [to]
    table = _agents()
    chosen = table.find_agents(names, os.environ, Path.cwd())
    if global_:
        without = [a.name for a in chosen if a.user is None]
        if without:
            raise UsageError(f"{', '.join(without)}: no user-wide skill folder; drop --global")
    found: dict[str, Path] = {}
    for agent in chosen:
        path = table.user_dir(agent) if global_ else table.project_dir(agent, Path.cwd())
        found.setdefault(os.path.abspath(path), path)
    return list(found.values())


def target_dir(to: Path | None, agent: str | tuple[str, ...] | None, global_: bool) -> Path:
    """The one skills folder named by ``--to`` or ``--agent [--global]``."""
    found = target_dirs(to, agent, global_)
    if len(found) != 1:
        raise UsageError("these agents read different folders; name one agent here")
    return found[0]


def check_dirs(
    dirs: tuple[Path, ...], agent: str | tuple[str, ...] | None, global_: bool, all_: bool
) -> list[Path]:
    """The skills folders ``check`` looks in: DIRs, ``--agent [--global]``, or ``--all``."""
    chosen = sum(bool(x) for x in (dirs, agent, all_))
    if chosen > 1:
        raise UsageError("give folders, --agent or --all, not several")
    if all_:
        env = os.environ
        places = {Path(a.project) for a in _agents().agent_locations(env, Path.cwd())}
        places |= {Path(a.user) for a in _agents().agent_locations(env, Path.cwd()) if a.user}
        return sorted(p for p in places if p.is_dir())
    if agent:
        return target_dirs(None, agent, global_)
    if global_:
        raise UsageError("--global goes with --agent")
    if not dirs:
        raise UsageError("give one or more skills folders, --agent AGENT, or --all")
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"{d}: no such folder")
    return list(dirs)


def canonical_dir(global_: bool) -> Path:
    """Where ``install --link`` keeps the one copy: npx's ``.agents/skills`` of the project,
    or ``~/.agents/skills`` with ``--global``."""
    if global_:
        home = os.environ.get("HOME", "").strip()
        return (Path(home) if home else Path.home()) / ".agents" / "skills"
    return Path.cwd() / ".agents" / "skills"


def install_body(
    names: tuple[str, ...],
    to: Path | None,
    agent: tuple[str, ...],
    global_: bool,
    force: bool,
    link: bool,
    store_path: Path | None,
    as_json: bool,
    *,
    echo: Echo,
) -> None:
    """``chimera-cards install``: what it writes and prints (errors are raised)."""
    from chimera_cards._install.installer import install, install_linked

    directories = target_dirs(to, agent, global_)
    if link and to is not None:
        raise UsageError("--link goes with --agent (it links each agent's folder to one copy)")
    with open_store(store_path) as store:
        if link:
            results = install_linked(store, names, directories, canonical_dir(global_), force=force)
        else:
            results = []
            for directory in directories:
                results += install(store, names, directory, force=force)
    if as_json:
        echo(json_text([r.to_dict() for r in results]))
        return
    for r in results:
        where = f"{r.path} -> {r.link}" if r.link else r.path
        echo(f"{r.action} {r.name} {r.digest[:12]} -> {where}")


def check_body(
    dirs: tuple[Path, ...],
    agent: tuple[str, ...],
    global_: bool,
    all_: bool,
    trust_file: Path | None,
    lockfile: Path | None,
    store_path: Path | None,
    as_json: bool,
    fmt: str | None = None,
    *,
    echo: Echo,
) -> None:
    """``chimera-cards check``: what it prints; SystemExit(1) unless every skill is ok."""
    from chimera_cards._bundles.folderscan import start_scan

    if fmt is not None and fmt not in CHECK_FORMATS:
        raise UsageError(f"--format {fmt}: give one of {', '.join(CHECK_FORMATS)}")
    if as_json and fmt not in (None, "json"):
        raise UsageError(f"--json and --format {fmt} say different things; give one")
    fmt = "json" if as_json else fmt or "text"
    directories = check_dirs(dirs, agent, global_, all_)
    # Hashing starts now (in a second process when a core is idle), while the store, the trust
    # rules and the rest of check load: that takes about as long as the hashing itself.
    with start_scan(directories) as scan:
        from chimera_cards._install.policy import Policy
        from chimera_cards._install.verify import check
        from chimera_cards._store.location import default_store_path

        policy = Policy()
        if trust_file is not None:
            from chimera_cards._review.trustfile import (
                read_trust_file,  # loads review: only when asked
            )

            trust = read_trust_file(trust_file)
            policy = Policy(tuple(trust.trusted_keys()), trust.threshold)
        npx_lock, pins = _check_lockfile(lockfile)
        path = store_path or default_store_path()
        if not path.exists() and not path.is_symlink():
            # No store yet (a project npx set up): every folder is unknown, not a usage error.
            report = check(None, directories, policy, scan=scan, npx_lock=npx_lock, pins=pins)
        else:
            with open_store(store_path) as store:
                report = check(store, directories, policy, scan=scan, npx_lock=npx_lock, pins=pins)
    if not report.states:
        # A CI job pointed at the wrong folder must not pass by finding nothing to check.
        where = ", ".join(str(d) for d in directories) or "any agent folder"
        raise ChimeraError(f"no skill folders in {where}{_nearest_above(directories)}")
    if fmt == "json":
        echo(json_text(report.to_dict()))
    elif fmt == "sarif":
        from chimera_cards._runtime.check_sarif import check_sarif

        echo(json_text(check_sarif(report)))
    else:
        echo("\n".join(state.line() for state in report.states))
    if not report.ok:
        raise SystemExit(1)


def _nearest_above(directories: list[Path]) -> str:
    """A hint when one of ``directories`` (below the current folder) holds nothing but the same
    folder above it does: a user who ran ``check --agent claude`` in a subfolder of the project."""
    here = Path(os.path.abspath("."))
    for directory in directories:
        below = Path(os.path.abspath(directory))
        if here not in below.parents:
            continue
        for parent in here.parents:
            candidate = parent / below.relative_to(here)
            if candidate.is_dir() and any(candidate.iterdir()):
                return f" (but {candidate} has some: run check from {parent}, or name that folder)"
    return ""


def _check_lockfile(lockfile: Path | None) -> tuple[dict | None, dict | None]:
    """(npx's entries, our pins) from ``check --lockfile``: npx's ``skills-lock.json`` or ours."""
    if lockfile is None:
        return None, None
    from chimera_cards._importer.npxlock import is_npx_lock, read_npx_lock

    if is_npx_lock(lockfile):
        return read_npx_lock(lockfile), None
    from chimera_cards._importer.lockfile import read_lockfile

    return None, dict(read_lockfile(lockfile))


HOOK_DEADLINE = 10.0  # seconds; the hooks are installed with the agent's timeout at 60


def _seconds(value: str | float | None) -> float | None:
    """The deadline in seconds (``HOOK_DEADLINE`` when not given); None when it is no finite
    number above 0."""
    if value is None:
        return HOOK_DEADLINE
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 < seconds < float("inf") else None


def _arm_deadline(seconds: float, fail_open: bool) -> None:
    """After ``seconds``, end this process at once with the hook's failure code (2: blocked)."""
    import signal

    code = 1 if fail_open else 2
    verb = "not blocked (--fail-open)" if fail_open else "blocked"
    line = f"chimera-cards hook: no answer within its {seconds:g} s deadline; {verb}\n".encode()

    def expire(signum: int, frame: object) -> None:
        os.write(2, line)
        os._exit(code)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def hook_body(
    agent: str,
    store_path: Path | None,
    trust_file: Path | None,
    fail_open: bool,
    event: str | None,
    deadline: str | float | None = None,
    *,
    echo: Echo | None = None,
) -> int:
    """``chimera-cards hook AGENT``: read the hook input on stdin, answer, return the exit code.

    Run for every matching tool call of the agent, so the console entry runs it without click
    when its options are plain; the click command calls it too. ``event`` ``auto`` (or None)
    takes the input's own hook_event_name. The answer is the agent's protocol, written as it is
    (``echo`` is not used). An agent lets a call through when its hook outlives the hook
    timeout, so the hook has a deadline of its own (``deadline`` seconds, default
    ``HOOK_DEADLINE``), well under that timeout: past it the process prints one line and exits
    2 (blocked; 1 with ``--fail-open``), whatever it was doing.
    """
    seconds = _seconds(deadline)
    if seconds is None:
        line = f"chimera-cards hook: --deadline {deadline!r} is no number of seconds above 0"
        sys.stderr.write(f"{line}; {'not blocked (--fail-open)' if fail_open else 'blocked'}\n")
        return 1 if fail_open else 2
    _arm_deadline(seconds, fail_open)
    from chimera_cards._runtime.agent_hooks import run_hook

    event = None if event == "auto" else event
    try:
        data = sys.stdin.buffer.read()
    except (AttributeError, OSError, ValueError):  # no stdin at all: unreadable input blocks
        data = b""
    outcome = run_hook(
        data,
        agent=agent,
        store_path=store_path,
        trust_file=trust_file,
        fail_open=fail_open,
        event=event,
    )
    import signal

    signal.setitimer(signal.ITIMER_REAL, 0)
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
        sys.stdout.flush()
    if outcome.stderr:
        sys.stderr.write(outcome.stderr.rstrip("\n") + "\n")
        sys.stderr.flush()
    return outcome.exit_code
