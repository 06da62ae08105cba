"""The scripted model server alone, over real HTTP: each wire format, the script, the record."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from wire.model_server import Request, ScriptedModelServer, ToolCall, Turn, call, fitting, say


def post(url: str, body: dict[str, Any], *, gzipped: bool = False) -> tuple[int, str, bytes]:
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "x-api-key": "k"}
    if gzipped:
        data, headers["Content-Encoding"] = gzip.compress(data), "gzip"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


def sse(raw: bytes) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) of each server-sent event."""
    events = []
    for block in raw.decode().split("\n\n"):
        name, data = None, None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        if data is not None:
            events.append((name, data if data == "[DONE]" else json.loads(data)))
    return events


TOOL = {"name": "Write", "description": "write", "input_schema": {"type": "object"}}


def test_anthropic_stream_plays_text_then_a_tool_use_in_the_sse_event_order() -> None:
    turns = [Turn("writing", (ToolCall("Write", {"file_path": "a.py", "content": "x"}),))]
    with ScriptedModelServer(turns) as server:
        body = {"model": "m", "stream": True, "tools": [TOOL], "messages": []}
        status, kind, raw = post(server.url + "/v1/messages?beta=true", body)
    assert (status, kind) == (200, "text/event-stream")
    events = sse(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "writing"}
    assert events[4][1]["content_block"]["type"] == "tool_use"
    partial = events[5][1]["delta"]
    assert partial["type"] == "input_json_delta"
    assert json.loads(partial["partial_json"]) == {"file_path": "a.py", "content": "x"}
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_without_stream_answers_one_message_and_the_script_then_ends_turns() -> None:
    with ScriptedModelServer([call("Read", file_path="x")], final_text="over") as server:
        body = {"model": "m", "tools": [TOOL], "messages": []}
        first = json.loads(post(server.url + "/v1/messages", body)[2])
        second = json.loads(post(server.url + "/v1/messages", body)[2])
    assert first["stop_reason"] == "tool_use"
    assert first["content"][0]["input"] == {"file_path": "x"}
    assert second["stop_reason"] == "end_turn"
    assert second["content"] == [{"type": "text", "text": "over"}]
    assert server.turns_played == 1


def test_a_request_without_tools_takes_no_turn_and_a_json_side_question_gets_json() -> None:
    with ScriptedModelServer([say("the scripted turn")]) as server:
        side = post(server.url + "/v1/messages", {"model": "m", "messages": []})
        schema = {
            "type": "OBJECT",
            "properties": {"score": {"type": "INTEGER"}, "why": {"type": "STRING"}},
            "required": ["score", "why"],
        }
        router = {"contents": [], "generationConfig": {"responseJsonSchema": schema}}
        routed = post(server.url + "/v1beta/models/g:generateContent", router)
        main = post(server.url + "/v1/messages", {"tools": [TOOL], "messages": []})
    assert json.loads(side[2])["content"][0]["text"] == "ok"
    text = json.loads(routed[2])["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text) == {"score": 1, "why": ""}
    assert json.loads(main[2])["content"][0]["text"] == "the scripted turn"
    assert [r.agent for r in server.requests] == [False, False, True]


def test_a_callable_turn_answers_from_the_tool_result_it_received() -> None:
    def echo(request: Request) -> Turn:
        return say("you said " + (request.tool_results[-1] if request.tool_results else "nothing"))

    with ScriptedModelServer([echo]) as server:
        history = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read"}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "RESULT_42"}],
            },
        ]
        reply = json.loads(
            post(server.url + "/v1/messages", {"tools": [TOOL], "messages": history})[2]
        )
    assert reply["content"][0]["text"] == "you said RESULT_42"


def test_a_turn_that_raises_is_reported_and_the_server_keeps_serving() -> None:
    def broken(request: Request) -> Turn:
        raise ValueError("scripted bug")

    with ScriptedModelServer([broken, say("still here")]) as server:
        post(server.url + "/v1/messages", {"tools": [TOOL], "messages": []})
        reply = json.loads(post(server.url + "/v1/messages", {"tools": [TOOL], "messages": []})[2])
    assert reply["content"][0]["text"] == "still here"
    assert len(server.errors) == 1 and "scripted bug" in server.errors[0]


def test_saw_finds_a_marker_in_a_gzipped_body_and_behind_json_escapes() -> None:
    with ScriptedModelServer() as server:
        post(server.url + "/v1/messages", {"system": "Zip MARK_GZ here"}, gzipped=True)
        post(server.url + "/v1/messages", {"system": 'quote "MARK_Q"\n<tag>'})
        status, _, _ = post(server.url + "/v1/messages/count_tokens", {"messages": []})
    assert status == 200
    assert server.saw("MARK_GZ")
    assert server.saw('"MARK_Q"\n<tag>')  # matched on the decoded string, not the escaped bytes
    assert not server.saw("MARK_ABSENT")
    assert server.count("MARK_Q") == 1
    assert server.requests[0].raw != server.requests[0].body  # the raw bytes are kept as sent


def test_responses_api_streams_function_and_custom_tool_calls_and_finds_codex_tools() -> None:
    turn = Turn(
        "", (ToolCall("exec_command", {"cmd": "ls"}), ToolCall("apply_patch", "*** Begin Patch"))
    )
    nested = {
        "type": "additional_tools",
        "tools": [{"type": "namespace", "name": "functions", "tools": [{"name": "exec"}]}],
    }
    with ScriptedModelServer([turn]) as server:
        body = {"model": "m", "stream": True, "input": [nested]}
        status, kind, raw = post(server.url + "/v1/responses", body)
    assert (status, kind) == (200, "text/event-stream")
    events = sse(raw)
    names = [name for name, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    done = [data["item"] for name, data in events if name == "response.output_item.done"]
    assert done[0]["type"] == "function_call" and json.loads(done[0]["arguments"]) == {"cmd": "ls"}
    assert done[1]["type"] == "custom_tool_call" and done[1]["input"] == "*** Begin Patch"
    assert server.requests[0].tool_names == ["exec"]
    assert server.requests[0].agent


def test_chat_completions_and_gemini_stream_tool_calls() -> None:
    with ScriptedModelServer([call("shell", command="ls"), call("write_file", path="p")]) as server:
        chat = {"stream": True, "tools": [{"type": "function", "function": {"name": "shell"}}]}
        chunks = sse(post(server.url + "/v1/chat/completions", chat)[2])
        gemini = {"tools": [{"functionDeclarations": [{"name": "write_file"}]}], "contents": []}
        path = "/v1beta/models/g:streamGenerateContent?alt=sse"
        streamed = sse(post(server.url + path, gemini)[2])
    assert chunks[-1][1] == "[DONE]"
    calls = chunks[0][1]["choices"][0]["delta"]["tool_calls"]
    assert calls[0]["function"]["name"] == "shell"
    part = streamed[0][1]["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"name": "write_file", "args": {"path": "p"}}}
    assert [r.api for r in server.requests] == ["openai", "gemini"]


def test_an_unknown_path_is_recorded_and_answered_404() -> None:
    with ScriptedModelServer() as server:
        status, _, _ = post(server.url + "/api/hello", {"MARK_PATH": 1})
    assert status == 404
    assert server.saw("/api/hello") and server.saw("MARK_PATH")


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (
            {"type": "object", "properties": {"a": {"enum": ["x", "y"]}}, "required": ["a"]},
            {"a": "x"},
        ),
        ({"type": "array"}, []),
        ({"type": "boolean"}, False),
    ],
)
def test_fitting_makes_the_smallest_value_a_schema_accepts(schema: dict, value: object) -> None:
    assert fitting(schema) == value


def test_the_server_is_gone_after_the_block() -> None:
    with ScriptedModelServer() as server:
        url = server.url
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/v1/models", timeout=2)
    with pytest.raises(RuntimeError):
        _ = server.url
