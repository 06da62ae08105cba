"""EventLog: structured events to a sink and a JSONL file, with a counter callers can assert on."""

from __future__ import annotations

import json

import pytest

from reference_loop._core.events import EVENT_KINDS, EventLog
from reference_loop.errors import LoopError, LoopUsageError


def test_required_event_kinds_exist():
    for kind in (
        "attempt_started",
        "attempt_finished",
        "workspace_restored",
        "history_injected",
        "signature_repeated",
        "replanned",
        "escalated",
        "run_finished",
    ):
        assert kind in EVENT_KINDS


def test_events_go_to_sink_and_jsonl_and_are_counted(tmp_path):
    seen = []
    path = tmp_path / "events.jsonl"
    with EventLog(sink=seen.append, jsonl_path=path) as log:
        log.emit("attempt_started", attempt=1)
        log.emit("history_injected", attempt=2, records=1, chars=120)
        log.emit("history_injected", attempt=3, records=2, chars=240)
    assert [e.kind for e in seen] == ["attempt_started", "history_injected", "history_injected"]
    assert log.count("history_injected") == 2 and log.count("escalated") == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[1] == {
        **lines[1],
        "kind": "history_injected",
        "attempt": 2,
        "records": 1,
        "chars": 120,
        "seq": 2,
    }
    assert [e.data["attempt"] for e in log.events("history_injected")] == [2, 3]


def test_jsonl_line_is_flushed_as_it_happens(tmp_path):
    path = tmp_path / "e.jsonl"
    log = EventLog(jsonl_path=path)
    log.emit("run_started", task="t")
    assert json.loads(path.read_text())["kind"] == "run_started"
    log.close()


def test_unknown_kind_is_refused():
    with pytest.raises(LoopError):
        EventLog().emit("made_up")


def test_unwritable_events_file_is_one_clear_error(tmp_path):
    with pytest.raises(LoopUsageError) as exc:
        EventLog(jsonl_path=tmp_path / "missing" / "e.jsonl")
    assert exc.value.exit_code == 2
