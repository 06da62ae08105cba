"""Run an ``llm`` model in a worker process that the attempter can abandon.

A model call is other people's code in our process otherwise: llama.cpp and some ``llm`` plugins
swap the process-wide stdout/stderr (not thread-safe: two threads loading models at once left the
bench's stdout pointing at /dev/null), a call cannot be interrupted once it is in native code,
and Ctrl-C cannot stop it. In a worker process all three go away: the worker's own fds 1 and 2
point at a log file, a call that outlives its timeout is answered by killing the worker, and
stopping the bench kills the worker with it.

Protocol over a ``multiprocessing`` pipe: the parent sends ``(kind, payload)``; the worker answers
``("ok", value)``, ``("error", "ExcType: first line")``, or ``("final", (kind, line))`` for an
error no retry can change (``model_errors.final_reason``: no key, a refused key, an unknown
model, a prompt over the context). Kinds: ``prompt`` (text, options) ->
reply dict, ``count`` (text, options) -> tokens or None, ``context`` (options) -> tokens or None.

Plugin modules named in ``REFERENCE_LOOP_LLM_PLUGINS`` (comma-separated import paths) are
registered with ``llm`` in the worker and the parent alike, so a plugin that is a plain module,
not an installed distribution, works in both.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from reference_loop._attempters.model_errors import FinalModelError, final_reason
from reference_loop.errors import LoopError

PLUGINS_ENV = "REFERENCE_LOOP_LLM_PLUGINS"
START_TIMEOUT = 120.0  # importing llm and its plugins; model weights load on the first call
LOG_TAIL_CHARS = 600


class WorkerTimeout(LoopError):
    """The worker did not answer in time and was killed."""


class WorkerDied(LoopError):
    """The worker exited (crashed, was killed, or the bench is stopping)."""


def load_plugin_modules(llm: Any) -> None:
    """Register the plugin modules named in ``REFERENCE_LOOP_LLM_PLUGINS`` with ``llm``."""
    for name in filter(None, (n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(","))):
        module = importlib.import_module(name)
        if not llm.plugins.pm.is_registered(module):
            llm.plugins.pm.register(module, name=f"reference-loop-env:{name}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _answer(exc: BaseException, model: Any, model_id: str) -> tuple[str, Any]:
    """The worker's answer for a failed request: final when no retry can change it."""
    problem = final_reason(exc, model, model_id)
    if problem is not None:
        return ("final", (problem.kind, problem.message))
    return ("error", _first_line(exc))


def _reply(model: Any, text: str, options: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    response = model.prompt(text, **options)
    reply = response.text()
    seconds = time.monotonic() - started
    input_tokens = output_tokens = None
    usage = getattr(response, "usage", None)
    if callable(usage):
        try:
            u = usage()
            input_tokens, output_tokens = u.input, u.output
        except Exception:  # a plugin that does not report usage
            pass
    details = getattr(response, "response_json", None) or {}
    finish = details.get("finish_reason") if isinstance(details, dict) else None
    return {
        "text": reply,
        "seconds": seconds,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "finish_reason": finish,
    }


def _serve(conn: Connection, model_id: str) -> None:
    # Started with fds 1 and 2 on the log file: the model's chatter never reaches the bench.
    # Ctrl-C reaches the whole foreground group; the parent decides when the worker stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import llm

        load_plugin_modules(llm)
        model = llm.get_model(model_id)
    except BaseException as exc:
        conn.send(_answer(exc, None, model_id))
        return
    conn.send(("ok", "ready"))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "stop":
            return
        try:
            if kind == "prompt":
                text, options = payload
                value: Any = _reply(model, text, options)
            elif kind == "count":
                text, options = payload
                counter = getattr(model, "count_tokens", None)
                value = counter(text, options) if callable(counter) else None
            elif kind == "context":
                getter = getattr(model, "context_tokens", None)
                value = getter(payload) if callable(getter) else None
            else:
                raise ValueError(f"unknown request {kind!r}")
        except Exception as exc:  # the model's failure is the answer, not the worker's end
            conn.send(_answer(exc, model, model_id))
            continue
        conn.send(("ok", value))


@dataclass
class ModelWorker:
    """One worker process serving one model; started on first use, restarted after a kill."""

    model_id: str
    process: Any = None
    conn: Connection | None = None
    log_path: str = ""
    _tmp: Any = field(default=None, repr=False)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def _start(self) -> None:
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="reference-loop-model-")
            self.log_path = os.path.join(self._tmp.name, "worker.log")
        # A plain child process (not multiprocessing's spawn, which re-runs the caller's main
        # script) that gets its end of a socket pair as an inherited descriptor.
        parent, child = multiprocessing.Pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        with open(self.log_path, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", __name__, self.model_id, str(child.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(child.fileno(),),
                env=env,
            )
        child.close()
        self.process, self.conn = proc, parent
        status, value = self._receive(START_TIMEOUT, what="start")
        if status == "final":
            self.kill()
            raise FinalModelError(value[1], kind=value[0])
        if status != "ok":
            self.kill()
            raise WorkerDied(f"the model worker could not start: {value}")

    def _receive(self, timeout: float | None, *, what: str) -> tuple[str, Any]:
        assert self.conn is not None
        try:
            ready = self.conn.poll(timeout)
        except (EOFError, OSError):
            ready = True
        if not ready:
            self.kill()
            raise WorkerTimeout(f"no answer to {what} within {timeout:g}s; the model was stopped")
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            code = self.process.poll() if self.process is not None else None
            self.kill()
            raise WorkerDied(
                f"the model worker exited during {what} (exit {code}){self.log_tail()}"
            ) from None

    def request(self, kind: str, payload: Any, *, timeout: float | None) -> Any:
        """Send one request and wait for its answer; a model-side error is a LoopError, one no
        retry can change a FinalModelError."""
        if self.process is None or self.process.poll() is not None:
            self._start()
        assert self.conn is not None
        try:
            self.conn.send((kind, payload))
        except (BrokenPipeError, OSError):
            self.kill()
            raise WorkerDied(f"the model worker is gone{self.log_tail()}") from None
        status, value = self._receive(timeout, what=kind)
        if status == "final":
            raise FinalModelError(value[1], kind=value[0])
        if status != "ok":
            raise LoopError(value)
        return value

    def log_tail(self) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as fh:
                text = fh.read().strip()
        except OSError:
            return ""
        return f"; its log ends: {text[-LOG_TAIL_CHARS:]}" if text else ""

    def kill(self) -> None:
        """Stop the worker now (SIGKILL: a native call ignores anything gentler)."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(5)
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None

    def close(self) -> None:
        """Ask the worker to exit, kill it if it does not, and remove its log folder."""
        if self.process is not None and self.conn is not None and self.process.poll() is None:
            try:
                self.conn.send(("stop", None))
                self.process.wait(2)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def main(argv: list[str]) -> None:
    """Worker entry point: ``python -m reference_loop._attempters.model_worker MODEL_ID FD``."""
    model_id, fd = argv
    _serve(Connection(int(fd)), model_id)


if __name__ == "__main__":
    main(sys.argv[1:])
