"""``chimera-cards exec -- COMMAND``: start an agent with only approved skill bytes in its reach.

Before the command starts, every skills folder an agent reads from here (``skill_places``:
project folders here and above and nested below, user, managed, Claude Code plugins) is judged
by ``check``. The command then runs in a private mount namespace (bubblewrap) in which each of
those folders is a read-only tmpfs holding a *copy* of every skill ``check`` calls ok — the
bytes read and hashed now, equal to the approved bundle — and nothing else: a dropped-in or
drifted folder, a stray file, a nested ``.system`` folder are simply not there. Every path
outside those folders is the real one, writable as before. Because the copies are made before
the agent starts, an edit on disk during the session does not reach it either.

The agent replaces this process (``execv``): its exit status, signals and terminal are its
own. Nothing the user has is moved or deleted. Where bubblewrap cannot run, the command runs
unwrapped only when every folder is ok (the view would equal the disk); otherwise it is refused
(``ViewUnavailableError``), naming the folders.

A skills folder made *during* the session (``mkdir -p sub/.claude/skills/x``, a ``git checkout``
or ``tar x`` that brings one) is not in the view's mounts, which are made at start. Claude Code
loads such a folder once a file tool touches a path below ``sub`` (measured: never before), so
Claude Code is started with the hook as well (``--settings``, a PreToolUse and prompt hook of
its own): the call that would load an unapproved folder is blocked. Codex CLI and Gemini CLI
list skills once, at start (measured: a folder made mid-session never reached the model).

Why bubblewrap and copies, not bind mounts of the approved folders: a bind shows the live
folder, so a file changed after the check would reach the agent; a copy cannot change. The
copies travel as sealed memory files (``memfd``) that bwrap writes into its tmpfs, so there is
no temporary folder to clean up after an ``exec`` that never returns.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards.errors import ChimeraError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from chimera_cards._install.policy import Policy
    from chimera_cards._runtime.skill_places import SkillPlaces


class ViewUnavailableError(ChimeraError):
    """A skills folder holds bytes that are not approved and no private view can be made here
    (bubblewrap is missing or cannot create a mount namespace): the agent is not started."""


class CommandNotFoundError(ChimeraError):
    """The command to run is not on PATH or not executable (exit 127, as ``env`` does)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=127)


@dataclass(frozen=True)
class ShownSkill:
    """An approved skill as the view shows it: its bytes, read and hashed before the start."""

    name: str
    digest: str
    files: tuple[tuple[str, bool, bytes], ...]  # (path, executable, bytes)


@dataclass(frozen=True)
class HiddenSkill:
    """A skill folder the view leaves out, and why (``check``'s state)."""

    path: str
    state: str
    detail: str

    def line(self) -> str:
        return f"{self.path}: {self.state}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Mount:
    """One folder of the view: a read-only tmpfs at ``target`` holding ``shown``.

    ``folder`` is a single skill folder (a plugin skill: its tmpfs holds that skill's files, or
    nothing); otherwise ``target`` is a skills directory holding one sub-folder per shown skill.
    """

    target: Path  # resolved
    folder: bool = False
    shown: list[ShownSkill] = field(default_factory=list)


@dataclass
class View:
    """What the agent will see: the mounts, and what each leaves out."""

    mounts: list[Mount] = field(default_factory=list)
    hidden: list[HiddenSkill] = field(default_factory=list)

    @property
    def files(self) -> int:
        return sum(len(s.files) for m in self.mounts for s in m.shown)

    def to_dict(self) -> dict:
        return {
            "folders": [str(m.target) for m in self.mounts],
            "shown": [
                {"path": str(m.target if m.folder else m.target / s.name), "digest": s.digest}
                for m in self.mounts
                for s in m.shown
            ],
            "hidden": [{"path": h.path, "state": h.state, "detail": h.detail} for h in self.hidden],
        }


def _approved_copy(folder: Path, name: str, digest: str) -> ShownSkill | None:
    """The folder's bytes when they still hash to ``digest`` (the approved bundle ``check`` just
    matched), else None (it changed in between, or cannot be read as a bundle now)."""
    from chimera_cards._bundles.bundle import BundleError, read_bundle_dir

    try:
        bundle = read_bundle_dir(folder)
    except (BundleError, OSError):
        return None
    if bundle.digest != digest:
        return None
    files = tuple((f.path, f.executable, bundle.contents[f.path]) for f in bundle.files)
    return ShownSkill(name, digest, files)


def _inside_any(path: Path, others: Sequence[Path]) -> bool:
    return any(path != o and path.is_relative_to(o) for o in others)


def plan_view(store, places: SkillPlaces, policy: Policy, *, keep_commands: bool = False) -> View:
    """Judge every place and read the approved copies the view will show.

    Args:
        store: an open Store (None: no store yet, so nothing is approved).
        places: from ``skill_places``.
        policy: whose approvals count.
        keep_commands: show Claude Code's command folders as they are (by default each is an
            empty folder in the view: a command is listed to the model like a skill, and none
            can be approved).
    Returns:
        The view: one mount per skills directory and per plugin skill folder (resolved, each
        once; one inside another's tmpfs is left to that one), what each shows and hides.
    """
    from chimera_cards._install.verify import check

    view = View()
    dirs: dict[Path, Path] = {}
    for directory in places.dirs:
        dirs.setdefault(Path(os.path.realpath(directory)), directory)
    folders: dict[Path, Path] = {}
    for folder in places.folders:
        folders.setdefault(Path(os.path.realpath(folder)), folder)
    targets = list(dirs)
    for real, directory in dirs.items():
        if _inside_any(real, targets):
            continue
        mount = Mount(real)
        for state in check(store, [directory], policy).states:
            if state.state == "missing":
                continue  # recorded, not on disk: nothing to show or hide
            _judge(mount, view, state, Path(state.path).name)
        view.mounts.append(mount)
    for real, folder in folders.items():
        if _inside_any(real, targets) or _inside_any(real, list(folders)):
            continue
        mount = Mount(real, folder=True)
        states = check(store, [folder.parent], policy, only=[folder.name]).states
        found = next((s for s in states if Path(s.path).name == folder.name), None)
        if found is None:
            view.hidden.append(HiddenSkill(str(folder), "unknown", "no skill chimera-cards reads"))
        else:
            _judge(mount, view, found, folder.name)
        view.mounts.append(mount)
    if not keep_commands:
        for folder in places.commands:
            real = Path(os.path.realpath(folder))
            if _inside_any(real, targets) or any(m.target == real for m in view.mounts):
                continue
            entries = sorted(p.name for p in real.iterdir()) if real.is_dir() else []
            if entries:
                view.mounts.append(Mount(real))
                view.hidden.append(HiddenSkill(str(folder), "commands", _COMMANDS_NOTE))
    return view


_COMMANDS_NOTE = "Claude Code commands, listed like skills and never approved; --keep-commands"


def _judge(mount: Mount, view: View, state, name: str) -> None:
    if not state.ok or not state.digest:
        view.hidden.append(HiddenSkill(state.path, state.state, state.detail))
        return
    shown = _approved_copy(Path(state.path), name, state.digest)
    if shown is None:
        view.hidden.append(HiddenSkill(state.path, "modified", "changed while it was read"))
        return
    mount.shown.append(shown)


def bwrap_args(view: View) -> tuple[list[str], list[int]]:
    """bwrap's arguments (before ``--``) that build the view, and the memory files they name.

    The whole file system is bound as it is (``--dev-bind / /``); each mount is then a tmpfs
    with the shown skills written into it from sealed memory files, and made read-only.

    Returns:
        (arguments, descriptors to pass to bwrap: it reads and closes each one).
    """
    args = ["--dev-bind", "/", "/"]
    fds: list[int] = []
    for mount in view.mounts:
        args += ["--perms", "0755", "--tmpfs", str(mount.target)]
        for skill in mount.shown:
            base = mount.target if mount.folder else mount.target / skill.name
            made = {base}
            if base != mount.target:
                args += ["--dir", str(base)]
            for path, executable, data in skill.files:
                target = base / path
                for parent in reversed(target.parents):
                    if parent.is_relative_to(base) and parent not in made:
                        made.add(parent)
                        args += ["--dir", str(parent)]
                fd = _memory_file(data)
                fds.append(fd)
                args += ["--perms", "0755" if executable else "0644"]
                args += ["--file", str(fd), str(target)]
        args += ["--remount-ro", str(mount.target)]
    return args, fds


def _memory_file(data: bytes) -> int:
    fd = os.memfd_create("chimera-skill", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    import fcntl

    seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


def _args_file(args: Sequence[str]) -> int:
    """bwrap's ``--args FD``: the arguments NUL-separated, so no argument list is too long."""
    return _memory_file(b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args))


def find_bwrap(env: Mapping[str, str]) -> str | None:
    """bwrap's path when it can build a view here (it runs and makes a mount namespace)."""
    bwrap = shutil.which("bwrap", path=env.get("PATH", os.defpath))
    if bwrap is None:
        return None
    try:
        probe = subprocess.run(
            [bwrap, "--dev-bind", "/", "/", "--tmpfs", "/tmp", "true"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bwrap if probe.returncode == 0 else None


def _program(argv: Sequence[str], env: Mapping[str, str]) -> str:
    if not argv:
        raise UsageError("give the command to run after --, e.g. chimera-cards exec -- claude")
    found = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if found is None:
        raise CommandNotFoundError(f"{argv[0]}: command not found")
    return found


@dataclass
class Launch:
    """What ``exec`` will do: the argv to ``execve``, its descriptors, and the view's notes."""

    argv: list[str]
    fds: list[int]
    view: View
    wrapped: bool


def named_folders(argv: Sequence[str], cwd: str | os.PathLike) -> list[Path]:
    """Every existing folder the command line names, in any argument (``DIR``, ``--opt=DIR``,
    ``a,b``, ``a:b``), without knowing the agent's options.

    An agent reads skills from folders it is given as much as from its working directory:
    Claude Code from ``--add-dir DIR/.claude/skills`` and ``--plugin-dir DIR``, Codex CLI from
    ``-C DIR/.agents/skills``, Gemini CLI from its ``--include-directories``. Each such folder
    is judged as a working directory would be (and as a plugin, when it looks like one).
    """
    found: list[Path] = []
    for arg in argv[1:]:
        values = [arg]
        if arg.startswith("-") and "=" in arg:
            values.append(arg.split("=", 1)[1])
        for value in values:
            parts = [value, *value.split(","), *value.split(os.pathsep)]
            for part in dict.fromkeys(p.strip() for p in parts):
                if not part or part.startswith("-"):
                    continue
                folder = Path(cwd, os.path.expanduser(part))
                if folder.is_dir():
                    found.append(Path(os.path.abspath(folder)))
    return list(dict.fromkeys(found))


def guard_args(
    argv: Sequence[str], agent: str, store: Path | None, trust_file: Path | None
) -> list[str]:
    """The arguments that give Claude Code the hook for this session (empty for other agents):
    ``--settings`` with a PreToolUse and a UserPromptSubmit hook running this Python's
    ``chimera-cards hook claude``. They are added to what the user's settings already hold.

    Args:
        argv: the command line; Claude Code is ``claude`` (its program's name) or ``agent``.
        agent: ``exec --agent``'s value.
        store, trust_file: what the hook judges with (the store exec judged with).
    """
    if not argv or (agent != "claude" and os.path.basename(argv[0]) != "claude"):
        return []
    import json
    import shlex
    import sys

    from chimera_cards._runtime.agent_hooks import AGENT_HOOKS, hook_commands

    hooks = AGENT_HOOKS["claude"]
    commands = hook_commands("claude", store=store, trust_file=trust_file)
    ours = shlex.quote(sys.executable) + " -m chimera_cards hook claude"
    settings: dict = {"hooks": {}}
    for event in (hooks.pre_event, "UserPromptSubmit"):
        command = commands[event].replace(hooks.command, ours, 1)
        entry: dict = {"hooks": [{"type": "command", "command": command, "timeout": 60}]}
        if event == hooks.pre_event:
            entry = {"matcher": hooks.matcher, **entry}
        settings["hooks"][event] = [entry]
    return ["--settings", json.dumps(settings)]


def prepare(
    argv: Sequence[str],
    *,
    store,
    policy: Policy,
    env: Mapping[str, str],
    cwd: str | os.PathLike,
    keep_commands: bool = False,
    guard: Sequence[str] = (),
) -> Launch:
    """Judge every skills folder and build the command that starts ``argv`` inside the view.

    Args:
        argv: the agent's command line (every folder it names is judged too:
            ``named_folders``).
        store: an open Store, or None.
        policy: whose approvals count.
        env: the environment the agent gets.
        cwd: where it starts.
        keep_commands: leave Claude Code's command folders as they are.
        guard: arguments put right after the program (``guard_args``).
    Returns:
        The launch; ``wrapped`` False only when bubblewrap cannot run and nothing is hidden.
    Raises:
        UsageError: no command. CommandNotFoundError: it is not on PATH.
        ViewUnavailableError: something must be hidden and no view can be made here, or a walk
            for skills folders stopped before it was done (what it did not reach is unjudged).
    """
    from chimera_cards._runtime import skill_places as sp

    program = _program(argv, env)
    named = named_folders(argv, cwd)
    places = sp.skill_places(
        env, cwd, also=named, plugin_dirs=[f for f in named if sp.plugin_like(f)]
    )
    if places.walk_stopped:
        raise ViewUnavailableError(
            "the search for skills folders stopped before it was done (more than "
            f"{sp.MAX_NESTED_WALK:,} folders below a project, or {sp.MAX_PLUGIN_WALK:,} in a "
            "plugin); what it did not reach cannot be judged; not started"
        )
    view = plan_view(store, places, policy, keep_commands=keep_commands)
    bwrap = find_bwrap(env)
    if bwrap is None:
        if view.hidden:
            names = "; ".join(h.line() for h in view.hidden)
            raise ViewUnavailableError(
                "cannot hide skills that are not approved: bubblewrap (bwrap) is missing or "
                f"cannot make a mount namespace here; not started. Not ok: {names}"
            )
        return Launch([program, *guard, *argv[1:]], [], view, wrapped=False)
    args, fds = bwrap_args(view)
    args_fd = _args_file(args)
    return Launch(
        [bwrap, "--args", str(args_fd), "--", program, *guard, *argv[1:]],
        [*fds, args_fd],
        view,
        True,
    )


def exec_agent(launch: Launch, env: Mapping[str, str]) -> None:
    """Replace this process with the launch's command (returns only by raising OSError)."""
    for fd in launch.fds:
        os.set_inheritable(fd, True)
    os.execve(launch.argv[0], launch.argv, dict(env))
