"""Run the attempter's and the verifier's commands inside a bubblewrap (``bwrap``) sandbox.

Without a sandbox the loop bounds what it starts by killing process trees (``process.py``);
that stops processes, not what they can reach. ``--sandbox`` adds real containment, the way
Linux coding agents do it:

- a private PID namespace: the command is PID 1's only child, and when it ends (or the loop
  dies) the kernel kills every process left in the namespace, however it detached;
- the whole filesystem read-only, a private empty ``/tmp`` and ``/dev`` (so a private store
  in ``/dev/shm`` is out of sight), and the workspace as the only writable path (plus files the
  caller names read-only, e.g. the prompt file); every ``.git`` in the workspace stays
  read-only too: what is written there (a hook, ``core.fsmonitor``) would run later on the host
  and appears in no patch;
- no capability at all, even for root: a read-only mount cannot be made writable again;
- no network (a private loopback only) unless ``net`` is set (``--sandbox-net``), and no
  service of the host reached through its socket file: a read-only mount does not stop a
  ``connect`` to a Unix socket (a container daemon's, a session bus), so every socket the host
  listens on is covered by an empty device.

Where ``bwrap`` is missing or cannot create namespaces, :func:`make_sandbox` refuses with one
line instead of running the commands unconfined.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reference_loop.errors import LoopError

_INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install bubblewrap) or run without --sandbox"


class SandboxUnavailable(LoopError):
    """``--sandbox`` was asked for but bubblewrap is missing or unusable here."""


@dataclass(frozen=True)
class Sandbox:
    """How to wrap a command in bubblewrap. Build it with :func:`make_sandbox`."""

    bwrap: str
    net: bool = False

    def wrap(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        readable: Sequence[Path] = (),
        scratch: Sequence[tuple[Path, Sequence[str]]] = (),
    ) -> list[str]:
        """``argv`` as a bwrap command: ``workspace`` writable and the working directory,
        ``readable`` paths visible read-only even where they sit under the private ``/tmp``.

        Args:
            argv: the command to run.
            workspace: the one directory the command may write.
            readable: extra paths (files or directories) to show read-only.
            scratch: (folder, files) pairs: the folder becomes an empty private one the command
                may write (an agent's state folder) and gone when it ends, holding only the
                named files of the real folder, read-only (its config and credentials). Nothing
                written there reaches the real folder.

        Returns:
            The argv to start instead.
        """
        ws = str(Path(workspace).resolve())
        args = [self.bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not self.net:
            args.append("--unshare-net")
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for shown in _shown_read_only(argv, readable):
            args += ["--ro-bind", shown, shown]
        for folder, files in scratch:
            real = str(Path(folder).resolve())
            args += ["--tmpfs", real]
            for name in files:
                path = Path(real) / name
                if path.is_file():
                    args += ["--ro-bind", str(path), str(path)]
        for sock in host_sockets(ws):
            args += ["--ro-bind-try", "/dev/null", sock]
        args += ["--bind", ws, ws]
        for dotgit in git_dirs(Path(ws)):
            args += ["--ro-bind", dotgit, dotgit]
        args += ["--chdir", ws, "--", *argv]
        return args


_PRIVATE = ("/tmp/", "/dev/", "/proc/")


def host_sockets(workspace: str, table: str = "/proc/net/unix") -> list[str]:
    """The socket files of this network namespace's Unix sockets outside the workspace and the
    sandbox's private folders (the kernel's own list: one read, no walk)."""
    try:
        with open(table, "rb") as fh:
            lines = fh.read().splitlines()[1:]
    except OSError:
        return []
    inside = workspace.rstrip("/") + "/"
    found: set[str] = set()
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith(b"/"):
            continue  # unnamed, or abstract (a private network namespace has none of the host's)
        path = os.fsdecode(fields[7])
        if path.startswith(_PRIVATE) or path.startswith(inside):
            continue
        if os.path.exists(path):
            found.add(path)
    return sorted(found)


def git_dirs(root: Path) -> list[str]:
    """Every ``.git`` entry (a repository's directory or a gitfile) under ``root``, outermost
    first; a folder that cannot be listed is skipped (the command cannot list it either)."""
    found: list[str] = []
    todo = [str(root)]
    while todo:
        here = todo.pop()
        try:
            it = os.scandir(here)
        except OSError:
            continue
        with it:
            for entry in it:
                if entry.name == ".git":
                    if not entry.is_symlink():  # a link's target is outside, or bound itself
                        found.append(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
    return sorted(found)


def program_folders(program: str) -> list[Path]:
    """The folders a command's program needs to start: the one it is found in (by ``PATH`` for a
    bare name), the install root of what it links to (an npm package's ``.bin`` entry points
    into ``node_modules``), and the same for the interpreter its ``#!`` line names. A program
    that cannot be found gives nothing: it fails inside the sandbox as it would outside."""
    folders: list[Path] = []
    todo = [program]
    while todo and len(folders) < 8:
        name = todo.pop()
        found = name if os.path.isabs(name) else shutil.which(name)
        if found is None or not os.path.isfile(found):
            continue
        real = os.path.realpath(found)
        folders.append(Path(found).parent)
        parts = Path(real).parts
        if "node_modules" in parts:  # the package needs its whole tree (its own dependencies)
            folders.append(Path(*parts[: parts.index("node_modules")]))
        else:
            folders.append(Path(real).parent)
        todo.extend(_interpreter(real))
    return folders


def _interpreter(path: str) -> list[str]:
    """The program a script's ``#!`` line runs (``/usr/bin/env node`` gives ``node``)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return []
    if os.path.basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return rest[:1]
    return words[:1]


def _shown_read_only(argv: Sequence[str], readable: Sequence[Path]) -> list[str]:
    """``readable`` plus the Python environment running us and the command's own program, where
    they sit under ``/tmp``: the private ``/tmp`` would otherwise hide a venv made there."""
    candidates = [Path(p) for p in readable] + [Path(sys.prefix), Path(sys.exec_prefix)]
    if argv:
        candidates += program_folders(argv[0])
    shown: list[str] = []
    for path in candidates:
        resolved = str(path.resolve())
        under_tmp = resolved == "/tmp" or resolved.startswith("/tmp/")
        if (path in readable or under_tmp) and os.path.exists(resolved) and resolved not in shown:
            shown.append(resolved)
    return shown


def make_sandbox(*, net: bool = False) -> Sandbox:
    """A :class:`Sandbox`, after checking that bwrap exists and can build one here.

    Args:
        net: keep the host network (``--sandbox-net``); by default the sandbox has none.

    Returns:
        The sandbox to pass to the verifier and the ``cmd:`` attempter.

    Raises:
        SandboxUnavailable: bwrap is not installed, or it cannot create namespaces here (e.g. a
            container that forbids user namespaces).
    """
    bwrap = shutil.which("bwrap", path=os.environ.get("PATH", os.defpath))
    if bwrap is None:
        raise SandboxUnavailable(
            f"--sandbox needs bubblewrap (bwrap), which is not installed; {_INSTALL_HINT}",
            exit_code=2,
        )
    sandbox = Sandbox(bwrap=bwrap, net=net)
    probe = sandbox.wrap(["true"], workspace=Path(os.getcwd()))
    try:
        proc = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"--sandbox: bwrap did not run: {exc}", exit_code=2) from exc
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines() or [
            f"exit {proc.returncode}"
        ]
        raise SandboxUnavailable(
            f"--sandbox: bwrap cannot create a sandbox here ({why[-1]}); {_INSTALL_HINT}",
            exit_code=2,
        )
    return sandbox


def sandbox_attempters(sandbox: Sandbox | None, *attempters: object) -> None:
    """Give ``sandbox`` to each attempter that runs a command (``cmd:``); the others edit files
    in-process and start nothing to contain."""
    if sandbox is None:
        return
    for attempter in attempters:
        if attempter is not None and hasattr(attempter, "sandbox"):
            attempter.sandbox = sandbox
