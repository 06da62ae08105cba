"""Docs that run: the ``console`` examples of a Markdown page, executed and compared.

A ```` ```console ```` block is a shell session: a line starting with ``$ `` is a command (a line
ending in ``\\`` continues it), the lines below it up to the next command are the output it must
print (stdout and stderr together, as a terminal shows them). A line that is only ``…`` stands for
any number of output lines. Blocks of any other language (``sh``, ``text``) are not run.

Every command of a page runs, in page order, in ONE bash process (so ``export`` and ``cd`` carry
over, as in the reader's terminal) whose home, store and working folder are fresh: a new ``$HOME``
(shown as ``~``), a working folder holding copies of the project's ``skills/`` and
``docs/examples/`` (shown as ``/tmp/story``), and an HTTP server on a free 127.0.0.1 port serving
``docs/examples/`` (shown as port 8765). The page is written with the shown values; commands get
the real ones, output is mapped back.

Before comparing, both sides are normalised for what differs from run to run and nothing else:
hex digests (``<hex:N>`` keeps the length, so a 12-digit short form cannot stand for a full one),
SRI and base64 key text, ISO timestamps, durations (``8.1 s``), ports on 127.0.0.1 and
temporary folders other than the working folder. Everything else, spacing inside lines included,
must match; trailing spaces and trailing blank lines are not compared.

Sybil finds the blocks (its Markdown fence lexer) and runs the examples; ``run_document`` is the
entry the tests call.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Region
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

__all__ = [
    "SHOWN_HOME",
    "SHOWN_PORT",
    "SHOWN_WORKDIR",
    "ConsoleCommand",
    "ConsoleSession",
    "compare",
    "console_parser",
    "normalise",
    "parse_console",
    "run_document",
]

REPO = Path(__file__).resolve().parent.parent
SHOWN_WORKDIR = "/tmp/story"
SHOWN_HOME = "~"
SHOWN_PORT = "8765"
ELLIPSIS = "…"
COMMAND_TIMEOUT = 180.0

_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_SRI = re.compile(r"\bsha(256|384|512)-[A-Za-z0-9+/]{20,}={0,2}")
_B64_KEY = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{43}=(?![A-Za-z0-9+/=])")
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{12,}(?![0-9A-Za-z])")
_HEX_CUT = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{6,}…")
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)? ?(?:s|ms|min)\b")
_LOOPBACK_PORT = re.compile(r"\b127\.0\.0\.1:\d+\b")
_TEMP_DIR = re.compile(r"/tmp/(?!story\b)[\w.-]+")


def normalise(text: str) -> str:
    """``text`` with run-to-run values replaced by placeholders (see the module docstring).

    Args:
        text: output already mapped back to the shown paths and port.
    Returns:
        The text with timestamps, SRI strings, base64 keys and hex digests replaced.
    """
    text = _TIMESTAMP.sub("<time>", text)
    text = _SRI.sub(lambda m: f"sha{m.group(1)}-<b64>", text)
    text = _B64_KEY.sub("<b64>", text)
    text = _HEX_CUT.sub("<hex…>", text)
    text = _DURATION.sub("<duration>", text)
    text = _LOOPBACK_PORT.sub("127.0.0.1:<port>", text)
    text = _TEMP_DIR.sub("/tmp/<temp>", text)
    return _HEX.sub(lambda m: f"<hex:{len(m.group(0))}>", text)


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def compare(expected: str, actual: str) -> bool:
    """Whether ``actual`` output matches the ``expected`` text shown in a page.

    Args:
        expected: the page's output lines (``…`` lines match any number of lines).
        actual: what the command printed, mapped back to shown paths and port.
    Returns:
        True when every line matches after normalisation.
    """
    want = [normalise(line) for line in _lines(expected)]
    got = [normalise(line) for line in _lines(actual)]

    @functools.cache
    def match(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(got)
        if want[i] == ELLIPSIS:
            return match(i + 1, j) or (j < len(got) and match(i, j + 1))
        return j < len(got) and want[i] == got[j] and match(i + 1, j + 1)

    return match(0, 0)


@dataclass(frozen=True)
class ConsoleCommand:
    """One ``$`` command of a console block and the output the page shows for it."""

    command: str
    expected: str
    line: int


def parse_console(source: str, first_line: int = 1) -> list[tuple[int, ConsoleCommand]]:
    """The commands of one console block, each with its offset into ``source``.

    Args:
        source: the block's text (between the fences).
        first_line: the page line number of the block's first line.
    Returns:
        (character offset in source, command) pairs, in order.
    Raises:
        ValueError: output lines before the first command.
    """
    commands: list[tuple[int, ConsoleCommand]] = []
    lines = source.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    offset, index = 0, 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    while index < len(lines):
        line = lines[index]
        if not line.startswith("$ "):
            if line.strip():
                raise ValueError(f"line {first_line + index}: output before any '$ ' command")
            index += 1
            continue
        start, number = starts[index], first_line + index
        parts = [line[2:]]
        while parts[-1].endswith("\\") and index + 1 < len(lines):
            index += 1
            parts.append(lines[index])
        index += 1
        output = []
        while index < len(lines) and not lines[index].startswith("$ "):
            output.append(lines[index])
            index += 1
        commands.append((start, ConsoleCommand("\n".join(parts), "\n".join(output), number)))
    return commands


NOT_RUN = re.compile(r"<!-- not run: (\S[^\n]*?) -->\n+\Z")


def not_run_reason(text: str, block_start: int) -> str | None:
    """The reason a page gives for not running the console block that starts at ``block_start``
    (an ``<!-- not run: REASON -->`` comment right above the fence), else None."""
    found = NOT_RUN.search(text, 0, block_start)
    return found.group(1) if found else None


def console_blocks(document: Document) -> Iterator:
    """The ``console`` fenced blocks of a page that are run (not marked ``not run``)."""
    for lexed in FencedCodeBlockLexer("console")(document):
        if not_run_reason(document.text, lexed.start) is None:
            yield lexed


def console_parser(document: Document) -> Iterator[Region]:
    """Sybil parser: one region per ``$`` command of every ``console`` fenced block."""
    for lexed in console_blocks(document):
        source = lexed.lexemes["source"]
        base = lexed.start + source.offset
        first_line = document.text.count("\n", 0, base) + 1
        for offset, command in parse_console(str(source), first_line):
            start = base + offset
            yield Region(start, start + len(command.command) + 2, command, _evaluate)


def _evaluate(example) -> str | None:
    session: ConsoleSession = example.namespace["session"]
    command: ConsoleCommand = example.parsed
    output, code = session.run(command.command)
    if compare(command.expected, output):
        return None
    import difflib

    diff = difflib.unified_diff(
        _lines(command.expected), _lines(output), "shown", "printed", lineterm=""
    )
    return (
        f"{example.path}:{command.line}: $ {command.command}\n(exit {code}) output differs:\n"
        + "\n".join(diff)
    )


@dataclass
class ConsoleSession:
    """One bash process in a fresh home and working folder, with the docs' example server."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    _bash: subprocess.Popen | None = None
    _server: http.server.ThreadingHTTPServer | None = None

    @property
    def workdir(self) -> Path:
        return self.root / "story"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def start(self) -> ConsoleSession:
        self.workdir.mkdir(parents=True)
        self.home.mkdir()
        shutil.copytree(REPO / "skills", self.workdir / "skills", symlinks=True)
        examples = REPO / "docs" / "examples"
        if examples.is_dir():
            shutil.copytree(examples, self.workdir / "docs" / "examples", symlinks=True)
        (self.workdir / "docs" / "examples").mkdir(parents=True, exist_ok=True)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

        handler = functools.partial(Quiet, directory=str(self.workdir / "docs" / "examples"))
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("CHIMERA_CARDS", "XDG_", "PYTEST", "GIT_", "LLM_"))
            and key != "CI"  # a reader's terminal: pytest words its output as it does there
        }
        bindir = str(Path(sys.executable).parent)
        env.update(
            HOME=str(self.home),
            PATH=bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
            TERM="dumb",
            LC_ALL="C.UTF-8",
            PAGER="cat",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(self.env)
        self._bash = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=env,
            start_new_session=True,
        )
        return self

    def _to_real(self, text: str) -> str:
        text = text.replace(SHOWN_WORKDIR, str(self.workdir))
        return re.sub(rf"(?<=:){SHOWN_PORT}\b", str(self.port), text)

    def _to_shown(self, text: str) -> str:
        text = text.replace(str(self.workdir), SHOWN_WORKDIR).replace(str(self.home), SHOWN_HOME)
        return re.sub(rf"(?<=:){self.port}\b", SHOWN_PORT, text)

    def run(self, command: str, timeout: float = COMMAND_TIMEOUT) -> tuple[str, int]:
        """Run one command in the session; its output (mapped to shown values) and exit code."""
        assert self._bash is not None and self._bash.stdin and self._bash.stdout
        marker = f"__docs_console_{uuid.uuid4().hex}__"
        # The next command sees this one's exit status in $?, as in a reader's terminal.
        script = (
            f"{{\n{self._to_real(command)}\n}} </dev/null 2>&1\n__rc=$?\n"
            f"printf '\\n{marker}%s\\n' $__rc\n(exit $__rc)\n"
        )
        self._bash.stdin.write(script.encode())
        self._bash.stdin.flush()
        out = self._bash.stdout
        buffer = b""
        deadline = time.monotonic() + timeout
        pattern = re.compile(rb"\n" + marker.encode() + rb"(\d+)\n")
        while True:
            found = pattern.search(buffer)
            if found:
                text = buffer[: found.start()].decode("utf-8", "replace")
                return self._to_shown(text), int(found.group(1))
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{command!r} still running after {timeout:g} s")
            ready, _, _ = select.select([out], [], [], left)
            if ready:
                chunk = os.read(out.fileno(), 65536)
                if not chunk:
                    raise RuntimeError(f"the shell ended during {command!r}: {buffer[-2000:]!r}")
                buffer += chunk

    def stop(self) -> None:
        if self._bash is not None:
            import signal

            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._bash.pid, signal.SIGKILL)
            self._bash.wait(timeout=10)
            for stream in (self._bash.stdin, self._bash.stdout):
                if stream is not None:
                    stream.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def run_document(path: Path, tmp: Path | None = None) -> list[str]:
    """Run every console example of ``path`` in one fresh session; the failure messages.

    Args:
        path: a Markdown page.
        tmp: where the fresh home and working folder go (default: a new temporary folder).
    Returns:
        One message per example whose output differs (empty when the page is right).
    """
    document = Document.parse(str(path), console_parser)
    owned = tmp is None
    root = Path(tempfile.mkdtemp(prefix="docs-console-")) if tmp is None else tmp
    session = ConsoleSession(root).start()
    failures: list[str] = []
    try:
        document.namespace["session"] = session
        for example in _examples(document):
            message = example.region.evaluator(example)
            if message:
                failures.append(message)
    finally:
        session.stop()
        if owned:
            shutil.rmtree(root, ignore_errors=True)
    return failures


def _examples(document: Document) -> Iterable:
    return document.examples()


_CONSOLE_BLOCK = re.compile(r"^```console\n(.*?)^```", re.M | re.S)


def update_document(path: Path, tmp: Path | None = None) -> int:
    """Rewrite the shown output of every example of ``path`` with what the command printed
    (mapped to the shown paths and port), so one page's digests, keys and times come from one
    run; an output that elides lines with ``…`` is kept while it matches. For a writer after a
    change of output: read the diff before committing it.

    Returns:
        How many examples were rewritten.
    """
    text = path.read_text(encoding="utf-8")
    owned = tmp is None
    root = Path(tempfile.mkdtemp(prefix="docs-console-")) if tmp is None else tmp
    session = ConsoleSession(root).start()
    edits: list[tuple[int, int, str]] = []
    try:
        for block in _CONSOLE_BLOCK.finditer(text):
            if not_run_reason(text, block.start()) is not None:
                continue
            source = block.group(1)
            commands = parse_console(source)
            out = []
            for _, command in commands:
                printed, _ = session.run(command.command)
                # A shown output that elides lines keeps its text while it matches; every other
                # is what this run printed, so its digests and keys agree with each other.
                if ELLIPSIS in _lines(command.expected) and compare(command.expected, printed):
                    body = command.expected + "\n"
                else:  # the printed lines, and the blank line that set this output apart
                    gap = "\n" if command.expected.endswith("\n") else ""
                    body = "".join(f"{line}\n" for line in _lines(printed)) + gap
                out.append(f"$ {command.command}\n{body}")
            first = commands[0][0] if commands else 0
            edits.append((block.start(1) + first, block.end(1), "".join(out)))
    finally:
        session.stop()
        if owned:
            shutil.rmtree(root, ignore_errors=True)
    changed = 0
    for start, end, new in reversed(edits):
        if text[start:end] != new:
            changed += 1
            text = text[:start] + new + text[end:]
    path.write_text(text, encoding="utf-8")
    return changed


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Run or update the console examples of pages.")
    parser.add_argument("--update", action="store_true", help="rewrite outputs that differ")
    parser.add_argument("pages", nargs="+", type=Path)
    args = parser.parse_args()
    status = 0
    for page in args.pages:
        if args.update:
            print(f"{page}: {update_document(page)} block(s) rewritten")
        else:
            failures = run_document(page)
            print("\n\n".join(failures) or f"{page}: ok")
            status |= bool(failures)
    sys.exit(status)
