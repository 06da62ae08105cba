"""The ``cmd:`` attempter: run any command-line coding agent in the workspace.

``cmd:aider --yes --message-file {prompt_file}`` runs aider with the composed prompt written to a
file. Placeholders: ``{prompt_file}`` (the prompt, in a private temp dir *outside* the workspace so
it never shows up in the diff), ``{attempt_dir}`` (that private dir), ``{workspace}`` and
``{attempt}``. Without ``{prompt_file}`` the prompt goes to the command's stdin. The agent edits the
files itself; the loop diffs them. An agent preset (``presets.py``) adds environment (where the
placeholders work too) and files written into the private dir before the command starts.

The command runs in its own session (process group), so a timeout kills the agent *and* every
child it started. Its exit status and the tail of its stderr (of its stdout when stderr is empty)
become the tool step.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from reference_loop._attempters.base import AttemptOutcome, ToolStep
from reference_loop._process.run import run_contained
from reference_loop._process.sandbox import Sandbox, program_folders
from reference_loop._process.textsafe import visible
from reference_loop.errors import LoopUsageError

DEFAULT_TIMEOUT = 600.0
KILL_GRACE = 2.0  # an agent gets a SIGTERM and this long to clean up before SIGKILL
STDERR_TAIL_CHARS = 2000


def tail(text: str, limit: int = STDERR_TAIL_CHARS) -> str:
    """The last ``limit`` characters, cut at a line start, with a marker when cut."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    nl = cut.find("\n")
    if 0 <= nl < len(cut) - 1:
        cut = cut[nl + 1 :]
    return f"… ({len(text) - len(cut)} chars cut) …\n{cut}"


@dataclass
class CmdAttempter:
    """Runs ``argv`` (with placeholders) once per attempt in the workspace."""

    argv: list[str]
    timeout: float = DEFAULT_TIMEOUT
    seed: int = 0
    env: dict[str, str] = field(default_factory=dict)
    name: str = ""
    sandbox: Sandbox | None = None  # run inside bubblewrap, the workspace the only writable path
    files: dict[str, str] = field(default_factory=dict)  # name -> text, in the private dir
    # Under a sandbox: the agent's state folders, each a private scratch folder showing only the
    # named files of the real one (see Sandbox.wrap); "~" and "$VAR" are expanded at run time.
    scratch: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        if not self.argv:
            raise LoopUsageError(
                "cmd: attempter needs a command, e.g. "
                "'cmd:aider --yes --message-file {prompt_file}'"
            )
        if not self.name:
            self.name = "cmd:" + Path(self.argv[0]).name
        exe = self.argv[0]
        if "{" not in exe and shutil.which(exe) is None and not Path(exe).is_file():
            raise LoopUsageError(f"cmd: attempter: command not found: {exe}")

    @property
    def uses_prompt_file(self) -> bool:
        return any("{prompt_file}" in a for a in self.argv)

    def command_for(self, prompt_file: Path, workspace: Path, attempt: int) -> list[str]:
        return [_fill(arg, prompt_file, workspace, attempt) for arg in self.argv]

    def _scratch_folders(self) -> list[tuple[Path, tuple[str, ...]]]:
        """The state folders to make private under the sandbox, each made first if missing: a
        mount point must exist, and the agent would make it on its first run anyway."""
        out = []
        for folder, files in self.scratch:
            path = Path(_expand(folder))
            path.mkdir(parents=True, exist_ok=True)
            out.append((path, files))
        return out

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        workspace = Path(workspace)
        with tempfile.TemporaryDirectory(prefix="reference-loop-cmd-") as tmp:
            tmpdir = Path(tmp)
            prompt_file = tmpdir / f"prompt-attempt-{attempt}.txt"
            prompt_file.write_text(prompt, encoding="utf-8")
            for name, text in self.files.items():
                (tmpdir / name).write_text(text, encoding="utf-8")
            argv = self.command_for(prompt_file, workspace, attempt)
            # The agent's own program stays visible in the sandbox even under /tmp, though the
            # counting wrapper now comes first on the command line.
            visible_paths = [tmpdir, *program_folders(argv[0])]
            wrap = (
                functools.partial(
                    self.sandbox.wrap,
                    workspace=workspace,
                    readable=visible_paths,
                    scratch=self._scratch_folders(),
                )
                if self.sandbox is not None
                else None
            )
            env = {
                **os.environ,
                **{k: _fill(v, prompt_file, workspace, attempt) for k, v in self.env.items()},
                "REFERENCE_LOOP_ATTEMPT": str(attempt),
                "REFERENCE_LOOP_SEED": str(self.seed),
                "REFERENCE_LOOP_PROMPT_FILE": str(prompt_file),
            }
            # Output goes to files, not pipes: a grandchild that keeps a pipe open cannot hang us.
            stdout_path, stderr_path = tmpdir / "stdout", tmpdir / "stderr"
            started = time.monotonic()
            with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
                # Either DEVNULL or a file closed in the finally below: no single with-block fits.
                stdin = subprocess.DEVNULL if self.uses_prompt_file else open(prompt_file, "rb")  # noqa: SIM115
                try:
                    try:
                        done = run_contained(
                            argv,
                            cwd=workspace,
                            env=env,
                            stdin=stdin,
                            stdout=out,
                            stderr=err,
                            timeout=self.timeout,
                            grace=KILL_GRACE,
                            wrap=wrap,
                        )
                        code, timed_out = done.code, done.timed_out
                    except OSError as exc:
                        return AttemptOutcome(
                            steps=[
                                ToolStep(
                                    self.name,
                                    False,
                                    f"could not start {argv[0]}: {exc.strerror or exc}",
                                )
                            ],
                            description=f"{self.name} did not start",
                        )
                finally:
                    if not isinstance(stdin, int):  # DEVNULL is an int, a file is not
                        stdin.close()
            duration = time.monotonic() - started
            stderr_tail = tail(visible(stderr_path.read_bytes().decode("utf-8", "replace")))
            if not stderr_tail:  # some agents report on stdout only (claude -p: "API Error: …")
                stderr_tail = tail(visible(stdout_path.read_bytes().decode("utf-8", "replace")))
        shown = " ".join(shlex.quote(a) for a in self.argv)
        if timed_out:
            error = f"timed out after {self.timeout:g}s; process group killed"
            if stderr_tail:
                error += "\n" + stderr_tail
            return AttemptOutcome(
                [ToolStep(self.name, False, error)],
                f"ran {shown}: timed out",
                left_running=done.left_running or 0,
            )
        if code != 0:
            error = f"exit status {code}"
            if stderr_tail:
                error += "\n" + stderr_tail
            return AttemptOutcome(
                [ToolStep(self.name, False, error)],
                f"ran {shown}: exit {code}",
                left_running=done.left_running or 0,
            )
        return AttemptOutcome(
            [ToolStep(self.name, True)],
            f"ran {shown}: exit 0 in {duration:.1f}s",
            left_running=done.left_running or 0,
        )


def _fill(template: str, prompt_file: Path, workspace: Path, attempt: int) -> str:
    """``template`` with the placeholders replaced (the prompt file's folder is the private dir)."""
    values = {
        "{prompt_file}": str(prompt_file),
        "{attempt_dir}": str(prompt_file.parent),
        "{workspace}": str(workspace),
        "{attempt}": str(attempt),
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def _expand(folder: str) -> str:
    """``$VAR`` or ``~`` in a state folder's name; ``$VAR|fallback`` takes the fallback when the
    variable is unset or empty (``$CODEX_HOME|~/.codex``)."""
    first, _, fallback = folder.partition("|")
    variable = re.match(r"\$(\w+)", first)
    if variable and not os.environ.get(variable[1]) and fallback:
        first = fallback
    return os.path.expanduser(os.path.expandvars(first))


def parse_cmd_spec(command: str) -> list[str]:
    """Split the text after ``cmd:`` as a shell would (quotes respected), without a shell."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise LoopUsageError(f"cmd: attempter: cannot parse command {command!r}: {exc}") from None
    return argv


def make_cmd_attempter(
    command: str, *, seed: int = 0, timeout: float = DEFAULT_TIMEOUT
) -> CmdAttempter:
    """Build the attempter for ``cmd:<command>`` (the part after ``cmd:``)."""
    return CmdAttempter(parse_cmd_spec(command), timeout=timeout, seed=seed)
