"""How one verifier run is set up to leave evidence, and how that evidence is read back.

For a pytest verifier the loop's plugin (``pytest_report.py``) is copied into a private folder
outside the workspace and put on ``PYTHONPATH``. ``python -m pytest`` and a standard ``pytest``
console script become ``python -P -m`` the launcher beside it (``pytest_launch.py``), which
registers the plugin as an object: pytest's lookup of a ``-p`` name among every installed
distribution's entry points costs 4% of a short run. Any other command loads it with ``-p``
through ``PYTEST_ADDOPTS``. The plugin writes its report through a file descriptor the loop
opened on a fresh file in that folder, so under ``--sandbox`` (where the folder is not even
visible) nothing in the run can write the file by name, and no stale or planted report can
stand in for this run's. For ``--result-file
junit`` the command's ``{result_file}`` becomes ``/dev/fd/N`` of such a file.

In a pytest run the plugin makes every module under the workspace compile from its source
(no ``.pyc`` read from a workspace ``__pycache__``, no sourceless module, no assertion-rewrite
cache; a private ``PYTHONPYCACHEPREFIX`` was measured instead and recompiled pytest itself on
every ``-B`` run, +160% CPU), and pytest gets a private cache folder. The launcher's ``-P`` (or
``PYTHONSAFEPATH`` for ``python -m pytest`` with ``-p``) keeps the workspace off ``sys.path``
until pytest, the launcher and the plugin are imported, so it cannot shadow them (the plugin
adds the workspace back after site-packages).
"""

from __future__ import annotations

import contextlib
import json
import os
import py_compile
import re
import secrets
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reference_loop._verdict import pyenv
from reference_loop._verdict.evidence import FORMATS, Report, read_junit, read_pytest_report
from reference_loop.errors import LoopUsageError

RESULT_FILE = "{result_file}"
# A fresh value per run, for a JUnit runner to write into its report (a suite name, a
# property): a report without it was not written by this run.
NONCE = "{result_nonce}"
PLUGIN_MODULE = "_reference_loop_report"
LAUNCH_MODULE = "_reference_loop_launch"
GUARD_MODULE = "_reference_loop_guard"
HOOKS = (
    "pytest_configure",
    "pytest_load_initial_conftests",
    "pytest_plugin_registered",
    "pytest_sessionstart",
    "pytest_collection",
    "pytest_ignore_collect",
    "pytest_collectreport",
    "pytest_deselected",
    "pytest_collection_finish",
    "pytest_runtest_logreport",
    "pytest_sessionfinish",
    "pytest_unconfigure",
)
_SANDBOX_TMP = "/tmp/.reference-loop"  # inside bwrap, /tmp is the sandbox's own tmpfs
_PYTEST_WORD = re.compile(r"(^|[\s/])(py\.test|pytest)(\s|$)")
# A word the shell passes on as it is (no quote, expansion, glob or operator).
_PLAIN = re.compile(r"[\w@%+=:,./-]+")
_ASSIGN = re.compile(r"([A-Za-z_]\w*)=")
# Interpreter options that take no separate value and leave PYTHONPATH in effect.
_PY_FLAG = re.compile(r"-[BbdOqsuvRP]+|-[XW]\S+")
# The console scripts pip (distlib) and uv write for an entry point, after the #! line.
_PIP_SCRIPT = (
    "# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom {module} import {func}\n"
    "if __name__ == '__main__':\n"
    "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
    "    sys.exit({func}())\n"
)
_UV_SCRIPT = (
    "# -*- coding: utf-8 -*-\nimport sys\nfrom {module} import {func}\n"
    'if __name__ == "__main__":\n'
    '    if sys.argv[0].endswith("-script.pyw"):\n'
    "        sys.argv[0] = sys.argv[0][:-11]\n"
    '    elif sys.argv[0].endswith(".exe"):\n'
    "        sys.argv[0] = sys.argv[0][:-4]\n"
    "    sys.exit({func}())\n"
)
_PYTEST_SCRIPTS = frozenset(
    template.format(module=module, func=func)
    for template in (_PIP_SCRIPT, _UV_SCRIPT)
    for module, func in (("_pytest.config", "_console_main"), ("pytest", "console_main"))
)


def detect_format(command: str, declared: str = "auto") -> str:
    """``pytest`` when the command runs pytest (or that was declared), ``junit`` when declared,
    else ``exit-status``.

    Args:
        command: the verify command (placeholders unexpanded are fine).
        declared: ``--verify-format`` / ``--result-file``: auto, pytest, junit or exit-status.

    Returns:
        The format the loop judges by.
    """
    if declared not in FORMATS:
        raise LoopUsageError(
            f"unknown verify format {declared!r} (expected one of: {', '.join(FORMATS)})"
        )
    if declared == "junit" and RESULT_FILE not in command:
        raise LoopUsageError(
            f"--result-file junit needs {RESULT_FILE} in the verify command, where the runner "
            "is told to write its JUnit XML (e.g. node --test --test-reporter=junit "
            f"--test-reporter-destination={RESULT_FILE})"
        )
    if declared != "auto":
        return declared
    if RESULT_FILE in command:
        return "junit"
    return "pytest" if _PYTEST_WORD.search(command) else "exit-status"


def _is_python_m_pytest(command: str) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(
        words[i] == "-m" and words[i + 1] in ("pytest", "py.test") for i in range(len(words) - 1)
    )


def launched(command: str, root: Path, env: dict[str, str]) -> tuple[str, str] | None:
    """``command`` with pytest started through the loop's launcher, and the launcher's mode;
    None when the command is not exactly ``[VAR=v ...] PYTHON [flags] -m pytest ARGS`` or a
    standard ``pytest`` console script (then the plugin is loaded with ``-p``).

    Args:
        command: the verify command.
        root: the workspace (an interpreter or script inside it is never replaced).
        env: the environment the command runs in (its PATH finds the script).

    Returns:
        (the command to run, ``pytest`` or the script's path), or None.
    """
    words = command.split()
    if not words or not all(_PLAIN.fullmatch(w) for w in words):
        return None
    head: list[str] = []
    while words and (assign := _ASSIGN.match(words[0])):
        name = assign.group(1)
        if name == "PATH" or name.startswith(("PYTHON", "REFERENCE_LOOP")):
            return None  # it would change what starts, or what the launcher imports
        head.append(words.pop(0))
    if not words:
        return None
    first = os.path.basename(words[0])
    if first.startswith("python"):
        flags = 1
        while flags < len(words) and _PY_FLAG.fullmatch(words[flags]):
            flags += 1
        if words[flags : flags + 2] != ["-m", "pytest"]:
            return None
        exe = _outside(_found(words[0], root, env), root)
        if exe is None or not _safe_path(exe):
            return None
        new = [*head, *words[:flags], "-P", "-m", LAUNCH_MODULE, "pytest", *words[flags + 2 :]]
        return " ".join(new), "pytest"
    if first != "pytest" or os.environ.get("PYTHONSAFEPATH"):
        return None
    script = _outside(_found(words[0], root, env), root)
    exe = _script_interpreter(script) if script is not None else None
    if script is None or exe is None or _outside(exe, root) is None or not _safe_path(exe):
        return None
    argv0 = words[0] if "/" in words[0] else script  # what the kernel passes the script
    if not _PLAIN.fullmatch(argv0):
        return None
    return " ".join([*head, exe, "-P", "-m", LAUNCH_MODULE, argv0, *words[1:]]), argv0


def _found(word: str, root: Path, env: dict[str, str]) -> str | None:
    if "/" in word:
        path = word if os.path.isabs(word) else os.path.join(root, word)
        return path if os.path.isfile(path) else None
    return shutil.which(word, path=env.get("PATH", os.defpath))


def _outside(path: str | None, root: Path) -> str | None:
    if path is None:
        return None
    real = Path(os.path.realpath(path))
    return None if real.is_relative_to(root) else path


def _safe_path(exe: str) -> bool:
    # -P (no script folder or working directory on sys.path) is Python 3.11's.
    found = pyenv.probe(exe)
    return found is not None and found.version >= (3, 11)


def _script_interpreter(script: str) -> str | None:
    """The interpreter of a standard pytest console script (None for any other file)."""
    try:
        with open(script, "rb") as fh:
            data = fh.read(4096)
    except OSError:
        return None
    first, _, body = data.partition(b"\n")
    exe = first[2:].decode("utf-8", "replace")
    if not first.startswith(b"#!/") or not _PLAIN.fullmatch(exe):
        return None
    if body.decode("utf-8", "replace") not in _PYTEST_SCRIPTS or not os.path.isfile(exe):
        return None
    return exe


@dataclass
class EvidenceRun:
    """One prepared run: the command, what to add to its environment, the descriptors to pass."""

    command: str
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    report_fd: int | None  # the loop's own read end of the report (its file has no name)
    nonce: str
    kind: str
    readable: tuple[Path, ...] = ()
    # The JUnit report must carry the nonce: the command passes it to the runner ({nonce}).
    nonce_required: bool = False
    _fds: tuple[int, ...] = field(default=(), repr=False)

    def started(self) -> None:
        """Close the loop's copies of the descriptors once the command has started."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = ()

    def read(self) -> Report | None:
        """The report this run left (None for an exit-status verifier)."""
        self.started()
        fd, self.report_fd = self.report_fd, None
        if fd is None:
            return None
        try:
            data = _read_all(fd)
        finally:
            os.close(fd)
        if self.kind == "pytest":
            return read_pytest_report(data, self.nonce)
        return read_junit(data, self.nonce if self.nonce_required else "")


def _read_all(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class Harness:
    """Sets up the evidence of every verifier run of one loop run (a private folder per run)."""

    def __init__(self, command: str, root: Path, kind: str, *, sandboxed: bool = False) -> None:
        self.command = command
        self.root = Path(root).resolve()
        self.kind = kind
        self.sandboxed = sandboxed
        self.private = Path(tempfile.mkdtemp(prefix="reference-loop-verdict-"))
        self.plugin_dir = self.private / "plugin"
        self.plugin_dir.mkdir()
        if kind == "pytest":
            source = Path(__file__).with_name("pytest_report.py")
            # pytest parses, rewrites and compiles a module it loads with -p on every run;
            # the module it loads is a two-line shim, the plugin itself is compiled once here.
            impl = self.plugin_dir / f"{PLUGIN_MODULE}_impl.py"
            launcher = self.plugin_dir / f"{LAUNCH_MODULE}.py"
            guard = self.plugin_dir / f"{GUARD_MODULE}.py"
            shutil.copyfile(source, impl)
            shutil.copyfile(source.with_name("pytest_launch.py"), launcher)
            shutil.copyfile(source.with_name("pytest_guard.py"), guard)
            for module in (impl, launcher, guard):
                with contextlib.suppress(OSError, py_compile.PyCompileError):
                    py_compile.compile(str(module), doraise=True)
            (self.plugin_dir / f"{PLUGIN_MODULE}.py").write_text(
                f'"""PYTEST_DONT_REWRITE"""\nfrom {PLUGIN_MODULE}_impl import {", ".join(HOOKS)}\n',
                encoding="utf-8",
            )
        tmp = Path(_SANDBOX_TMP) if sandboxed else self.private
        self.pytest_cache = tmp / "pytest-cache"
        self._count = 0

    def close(self) -> None:
        shutil.rmtree(self.private, ignore_errors=True)

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prepare(
        self, only: Sequence[str] | None = None, plugins: Sequence[str] | None = None
    ) -> EvidenceRun:
        """A run of the verify command that leaves a report.

        Args:
            only: pytest only: collect just these test files (None: what the command collects).
            plugins: pytest only: run with plugin autoload off, loading these entry-point
                plugins by name (the ones the untouched tree's run loaded); None: autoload as
                the user has it (the baseline run).

        Returns:
            The EvidenceRun to start (pass ``pass_fds``; call ``started()`` then ``read()``).
        """
        env: dict[str, str] = {}
        if self.kind == "exit-status":
            return EvidenceRun(self.command, env, (), None, "", self.kind)
        self._count += 1
        path = self.private / f"report-{self._count}.{'jsonl' if self.kind == 'pytest' else 'xml'}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        # The file loses its name at once: the run can reach it only through the descriptor
        # it was given (a glob over the temp folder finds nothing); the loop reads its own end.
        report_fd = os.open(path, os.O_RDONLY)
        os.unlink(path)
        os.set_inheritable(fd, True)
        nonce = secrets.token_hex(16)
        command = self.command
        if self.kind == "junit":
            command = command.replace(RESULT_FILE, f"/dev/fd/{fd}").replace(NONCE, nonce)
            required = NONCE in self.command
            return EvidenceRun(
                command, env, (fd,), report_fd, nonce, self.kind, (), required, (fd,)
            )
        # The nonce goes through a pipe the plugin reads once: an environment variable would
        # stay readable in /proc/self/environ after the plugin removed it.
        nonce_in, nonce_out = os.pipe()
        os.write(nonce_out, nonce.encode("ascii"))
        os.close(nonce_out)
        os.set_inheritable(nonce_in, True)
        if plugins is not None:
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            env["REFERENCE_LOOP_USER_AUTOLOAD"] = os.environ.get(
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD", ""
            )
        # The PATH the verifier runs with (run_verifier puts this interpreter's folder first).
        search = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", os.defpath)
        launch = launched(command, self.root, {"PATH": search})
        if launch is not None:
            # The launcher registers the plugin before pytest reads its options: no -p, so
            # no lookup among every installed distribution's entry points for it.
            command, mode = launch
            if plugins:
                env["REFERENCE_LOOP_PLUGINS"] = json.dumps(list(plugins))
            if mode == "pytest":
                env["REFERENCE_LOOP_APPEND_PATH"] = str(self.root)
        else:
            user_addopts = os.environ.get("PYTEST_ADDOPTS", "")
            ours = f"-p {PLUGIN_MODULE}"
            ours += "".join(f" -p {shlex.quote(name)}" for name in plugins or ())
            env["PYTEST_ADDOPTS"] = f"{ours} {user_addopts}".strip()
            env["REFERENCE_LOOP_USER_ADDOPTS"] = user_addopts
            if _is_python_m_pytest(command):
                env["PYTHONSAFEPATH"] = "1"
                env["REFERENCE_LOOP_APPEND_PATH"] = str(self.root)
        pythonpath = os.environ.get("PYTHONPATH", "")
        env.update(
            {
                "REFERENCE_LOOP_REPORT_FD": str(fd),
                "REFERENCE_LOOP_GUARD": GUARD_MODULE,
                "REFERENCE_LOOP_NONCE_FD": str(nonce_in),
                "REFERENCE_LOOP_CACHE_DIR": str(self.pytest_cache),
                "REFERENCE_LOOP_NO_BYTECODE_FROM": str(self.root),
                # A user site-packages (outside the workspace) is not the verifier's to import.
                "PYTHONNOUSERSITE": "1",
                "PYTHONPATH": str(self.plugin_dir)
                + (os.pathsep + pythonpath if pythonpath else ""),
            }
        )
        if only is not None:
            listing = self.private / f"collect-{self._count}.json"
            listing.write_text(json.dumps({"only": sorted(set(only))}), encoding="utf-8")
            env["REFERENCE_LOOP_COLLECT"] = str(listing)
            readable: tuple[Path, ...] = (self.plugin_dir, listing)
        else:
            readable = (self.plugin_dir,)
        fds = (fd, nonce_in)
        return EvidenceRun(command, env, fds, report_fd, nonce, self.kind, readable, True, fds)
