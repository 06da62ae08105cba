"""Structured events from a loop run: to a sink, optionally to a JSONL file, and counted.

The counter is what makes the card's check binary: a caller asserts how many history injections
happened, and a run that should have injected but counted zero is void, not a pass.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reference_loop.errors import LoopError, LoopUsageError

EVENT_KINDS = (
    "run_started",
    "attempt_started",
    "attempt_finished",
    "attempt_stopped",  # the attempter said the tests contradict the task; the run ends there
    "workspace_restored",
    "history_injected",
    "cards_injected",  # approved skill cards put in an attempt's prompt (reference_loop.cards)
    "protected_violation",  # an attempt changed a protected path; reverted before verifying
    "integrity_violation",  # an attempt gamed its check (class, paths); it fails
    "verdict_baseline",  # what the verdicts rest on: evidence kind, pinned tests, containment
    "signature_repeated",
    "replanned",
    "escalated",
    "run_finished",
)


@dataclass
class Event:
    seq: int
    kind: str
    ts: float
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind, "ts": self.ts, **self.data}


class EventLog:
    """Collects events in order; each goes to ``sink`` and to ``jsonl_path`` as it happens."""

    def __init__(
        self, sink: Callable[[Event], None] | None = None, jsonl_path: str | Path | None = None
    ) -> None:
        self.sink = sink
        self._events: list[Event] = []
        self._counts: Counter[str] = Counter()
        self._file: IO[str] | None = None
        if jsonl_path is not None:
            try:
                # Held open for the recorder's life and closed by close(): not a with-block.
                self._file = open(jsonl_path, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                raise LoopUsageError(
                    f"cannot write events file {jsonl_path}: {exc.strerror}"
                ) from exc

    def emit(self, kind: str, **data: Any) -> Event:
        if kind not in EVENT_KINDS:
            raise LoopError(f"unknown event kind {kind!r}")
        event = Event(seq=len(self._events) + 1, kind=kind, ts=time.time(), data=data)
        self._events.append(event)
        self._counts[kind] += 1
        if self._file is not None:
            # One line per event, flushed, so a crashed run still leaves its trail.
            self._file.write(json.dumps(event.to_dict(), default=str) + "\n")
            self._file.flush()
        if self.sink is not None:
            self.sink(event)
        return event

    def count(self, kind: str) -> int:
        return self._counts[kind]

    def events(self, kind: str | None = None) -> list[Event]:
        return [e for e in self._events if kind is None or e.kind == kind]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
