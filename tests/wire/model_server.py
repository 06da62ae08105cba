"""A scripted model server on 127.0.0.1 that speaks the APIs agent CLIs call, and records them.

The wire tests point a real agent CLI (Claude Code, Codex CLI, Gemini CLI) at this server instead
of the vendor's: every byte the model would have received arrives here, so a test asserts on what
reached the model (``server.saw(marker)``), not on what a tool said it did.

The server plays a script: a list of turns, each the model's whole reply to one agent request
(text and/or tool calls), in order. A turn may be a callable that gets the recorded request and
returns the turn, for replies that depend on what the agent sent (a tool result, the tools it
offers). When the script is spent, every further agent request gets a plain end of turn.

An *agent request* is a generation request that offers tools: the agent's main loop. Requests that
offer none (Gemini CLI's model router, title or summary side questions) do not take a scripted
turn: they get ``side_reply``, or, when they ask for JSON with a schema, the smallest object that
fits it. Everything else an agent calls at start-up (token counting, model lists) gets an answer
that lets it carry on offline; unknown paths get a 404 and are recorded like the rest.

Three wire formats, chosen by the request path:

- Anthropic Messages: ``POST /v1/messages`` (SSE when ``stream`` is true, else one JSON message),
  ``/v1/messages/count_tokens``. Claude Code speaks it with ``ANTHROPIC_BASE_URL``.
- OpenAI Responses ``POST /v1/responses`` (SSE or JSON) and Chat Completions
  ``/v1/chat/completions``. Codex CLI speaks Responses through a custom model provider whose
  ``base_url`` is ``server.url + "/v1"``.
- Gemini ``…/models/M:generateContent``, ``:streamGenerateContent`` (SSE), ``:countTokens``.
  Gemini CLI speaks it with ``GOOGLE_GEMINI_BASE_URL`` and an API key.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import itertools
import json
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model makes: the tool's name and its arguments.

    ``input`` is the JSON object of arguments; for a free-form tool (Codex's custom tools take raw
    text) pass a str.
    """

    name: str
    input: dict[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """The model's whole reply to one request: some text, then tool calls (maybe none)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Refuse:
    """Instead of a reply, an HTTP error in the API's own error shape (an expired key, a bad
    request, an overloaded server): what the agent does with it is part of its behaviour."""

    status: int = 400
    message: str = "scripted refusal"


def say(text: str) -> Turn:
    """A turn of text only: the model ends its turn."""
    return Turn(text=text)


def call(name: str, /, **arguments: Any) -> Turn:
    """A turn that calls one tool with keyword arguments: ``call("Write", file_path=…)``."""
    return Turn(tool_calls=(ToolCall(name, dict(arguments)),))


@dataclass
class Request:
    """One request as it reached the server."""

    method: str
    path: str  # with the query string
    headers: dict[str, str]  # names lower-cased
    raw: bytes  # the body as sent (maybe compressed)
    body: bytes  # the body decoded (gzip or deflate undone)
    json: Any  # the parsed body, or None
    api: str  # "anthropic", "openai", "gemini" or "other"
    agent: bool  # a generation request that offers tools: it took a turn of the script

    @property
    def text(self) -> str:
        """Everything in the request as one searchable text: request line, headers, the body's
        bytes, and every JSON string decoded (so an escaped character still matches)."""
        parts = [self.method, self.path, *(f"{k}: {v}" for k, v in self.headers.items())]
        parts.append(self.body.decode("utf-8", "replace"))
        if self.json is not None:
            parts.extend(_strings(self.json))
        return "\n".join(parts)

    @property
    def strings(self) -> str:
        """Every string of the JSON body, decoded, one per line (empty when not JSON)."""
        return "\n".join(_strings(self.json)) if self.json is not None else ""

    def saw(self, marker: str) -> bool:
        return marker in self.text or marker.encode() in self.raw

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offers the model, in order (Codex's tools in an
        ``additional_tools`` input item and inside namespaces included)."""
        body = self.json if isinstance(self.json, dict) else {}
        tools = list(body.get("tools") or [])
        if self.api == "openai" and isinstance(body.get("input"), list):
            for item in body["input"]:
                if isinstance(item, dict) and isinstance(item.get("tools"), list):
                    tools += item["tools"]
        return list(_names(self.api, tools))

    @property
    def tool_results(self) -> list[str]:
        """The text of every tool result in the request's history, in order, whatever the API."""
        return list(_tool_results(self.api, self.json))

    @property
    def system(self) -> str:
        """The system prompt (instructions), as one text; empty when there is none."""
        body = self.json if isinstance(self.json, dict) else {}
        key = {"anthropic": "system", "openai": "instructions", "gemini": "systemInstruction"}
        return "\n".join(_strings(body.get(key.get(self.api, ""), "")))


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _names(api: str, tools: list[Any]) -> Iterator[str]:
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if api == "gemini":
            yield from (f.get("name", "") for f in tool.get("functionDeclarations") or [])
        elif isinstance(tool.get("function"), dict):  # Chat Completions
            yield tool["function"].get("name", "")
        elif tool.get("type") == "namespace":
            yield from _names(api, tool.get("tools") or [])
        elif tool.get("name"):
            yield tool["name"]


def _tool_results(api: str, body: Any) -> Iterator[str]:
    if not isinstance(body, dict):
        return
    if api == "anthropic":
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    yield "\n".join(_strings(block.get("content", "")))
    elif api == "openai":
        items = body.get("input") if isinstance(body.get("input"), list) else []
        for item in items:
            if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
                yield "\n".join(_strings(item.get("output", "")))
        for message in body.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "tool":
                yield "\n".join(_strings(message.get("content", "")))
    elif api == "gemini":
        for content in body.get("contents") or []:
            for part in content.get("parts") or [] if isinstance(content, dict) else []:
                if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                    yield "\n".join(_strings(part["functionResponse"].get("response", {})))


TurnSource = Turn | Refuse | Callable[[Request], Turn | Refuse]


def _api_of(path: str) -> str:
    if path.startswith(("/v1/messages", "/messages")):
        return "anthropic"
    if path.endswith(("/responses", "/chat/completions", "/v1/models")):
        return "openai"
    if "/models" in path:
        return "gemini"
    return "other"


def _generates(method: str, api: str, path: str) -> bool:
    if method != "POST":
        return False
    if api == "anthropic":
        return path.rstrip("/").endswith("/messages")
    if api == "openai":
        return path.endswith(("/responses", "/chat/completions"))
    return api == "gemini" and path.lower().endswith("generatecontent")


def _schema_of(api: str, body: Any) -> dict[str, Any] | None:
    """The JSON schema a side request asks its answer to fit, if any."""
    if not isinstance(body, dict):
        return None
    if api == "gemini":
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if schema is None and config.get("responseMimeType") == "application/json":
            return {"type": "object"}
        return schema if isinstance(schema, dict) else None
    if api == "openai":
        fmt = (body.get("text") or {}).get("format") or {}
        return fmt.get("schema") if fmt.get("type") == "json_schema" else None
    fmt = (body.get("output_config") or {}).get("format") or {}
    return fmt.get("schema") if isinstance(fmt, dict) and fmt.get("type") == "json_schema" else None


def fitting(schema: dict[str, Any]) -> Any:
    """The smallest value that fits a JSON schema (required properties only)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: fitting(props.get(name) or {}) for name in schema.get("required") or []}
    return {"array": [], "string": "", "integer": 1, "number": 1, "boolean": False}.get(kind)


class ScriptedModelServer:
    """An HTTP server on 127.0.0.1 (a free port) that plays ``turns`` and records every request.

    ``with ScriptedModelServer([call("Write", file_path="a.py", content="…"), say("done")]) as
    srv:`` start the agent with ``srv.url`` as its base URL, then read ``srv.requests`` or ask
    ``srv.saw(marker)``.
    """

    def __init__(
        self,
        turns: Iterable[TurnSource] = (),
        *,
        side_reply: str = "ok",
        final_text: str = "Done.",
        model: str = "scripted-model",
    ) -> None:
        self.script: list[TurnSource] = list(turns)
        self.side_reply = side_reply
        self.final_text = final_text
        self.model = model
        self.requests: list[Request] = []
        self.errors: list[str] = []  # a turn that raised, a body that could not be decoded
        self._next = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ScriptedModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"owner": self})
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        # A short poll interval: stopping the server waits for one poll.
        serve = functools.partial(self._httpd.serve_forever, poll_interval=0.05)
        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL, no path: ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL (Codex: + "/v1")."""
        return f"http://127.0.0.1:{self.port}"

    def saw(self, marker: str) -> bool:
        """Whether ``marker`` is anywhere in any request received so far."""
        return any(r.saw(marker) for r in self.requests)

    def count(self, marker: str) -> int:
        """How many requests carry ``marker``."""
        return sum(r.saw(marker) for r in self.requests)

    @property
    def agent_requests(self) -> list[Request]:
        """The requests that took a turn of the script, in order."""
        return [r for r in self.requests if r.agent]

    @property
    def turns_played(self) -> int:
        """How many scripted turns have been played."""
        return self._next

    def add(self, *turns: TurnSource) -> None:
        """Append turns to the script (between two agent runs, say)."""
        with self._lock:
            self.script.extend(turns)

    def _record(self, request: Request) -> Turn | Refuse | None:
        """Record ``request``; for an agent request, the turn it gets."""
        with self._lock:
            self.requests.append(request)
            if not request.agent:
                return None
            if self._next >= len(self.script):
                return say(self.final_text)
            source = self.script[self._next]
            self._next += 1
            number = self._next
        if isinstance(source, Turn | Refuse):
            return source
        try:
            return source(request)
        except Exception as exc:  # the test's own turn code: report it, keep serving
            self.errors.append(f"scripted turn {number} raised {exc!r}")
            return say(f"scripted turn {number} failed: {exc!r}")

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"


class _Handler(http.server.BaseHTTPRequestHandler):
    owner: ScriptedModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read ``server.requests``."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _read_body(self) -> tuple[bytes, bytes]:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "").lower()
        try:
            if encoding == "gzip":
                return raw, gzip.decompress(raw)
            if encoding == "deflate":
                return raw, zlib.decompress(raw)
        except (OSError, zlib.error, EOFError) as exc:
            self.owner.errors.append(f"cannot decode the {encoding} body of {self.path}: {exc!r}")
        if encoding not in ("", "identity", "gzip", "deflate"):
            self.owner.errors.append(f"body of {self.path} in an unknown encoding {encoding!r}")
        return raw, raw

    def _handle(self) -> None:
        raw, body = self._read_body()
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        path = urlsplit(self.path).path
        api = _api_of(path)
        generating = _generates(self.command, api, path)
        request = Request(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=raw,
            body=body,
            json=parsed,
            api=api,
            agent=False,
        )
        request.agent = generating and bool(request.tool_names)
        turn = self.owner._record(request)
        if not generating:
            self._answer_other(request, path)
            return
        if turn is None:
            schema = _schema_of(api, parsed)
            reply = self.owner.side_reply if schema is None else json.dumps(fitting(schema))
            turn = say(reply)
        if isinstance(turn, Refuse):
            self._send_json(_error_body(api, turn), status=turn.status)
            return
        {"anthropic": _anthropic, "openai": _openai, "gemini": _gemini}[api](self, request, turn)

    def _answer_other(self, request: Request, path: str) -> None:
        size = max(1, len(request.body) // 4)
        if path.endswith("/count_tokens"):
            self._send_json({"input_tokens": size})
        elif path.endswith(":countTokens"):
            self._send_json({"totalTokens": size})
        elif path.endswith("/models"):
            model = self.owner.model
            self._send_json(
                {
                    "object": "list",
                    "data": [{"id": model, "object": "model", "type": "model"}],
                    "models": [{"name": f"models/{model}", "displayName": model}],
                }
            )
        else:
            self._send_json({"error": {"message": f"no such endpoint: {path}"}}, status=404)

    def _send_json(self, value: Any, status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, data: Any, event: str | None = None) -> None:
        text = (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()


def _error_body(api: str, refusal: Refuse) -> dict[str, Any]:
    """An error as each API spells it."""
    if api == "anthropic":
        kinds = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
        kind = kinds.get(refusal.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": refusal.message}}
    if api == "gemini":
        status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}
        return {
            "error": {
                "code": refusal.status,
                "message": refusal.message,
                "status": status.get(refusal.status, "INTERNAL"),
            }
        }
    kinds = {400: "invalid_request_error", 401: "invalid_api_key"}
    kind = kinds.get(refusal.status, "server_error")
    return {"error": {"message": refusal.message, "type": kind, "code": kind}}


def _usage_in(request: Request) -> int:
    return max(1, len(request.body) // 4)


# -- Anthropic Messages ----------------------------------------------------------------------------


def _anthropic(h: _Handler, request: Request, turn: Turn) -> None:
    body = request.json if isinstance(request.json, dict) else {}
    model = body.get("model") or h.owner.model
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for tool in turn.tool_calls:
        arguments = tool.input if isinstance(tool.input, dict) else {"input": tool.input}
        blocks.append(
            {
                "type": "tool_use",
                "id": h.owner._new_id("toolu"),
                "name": tool.name,
                "input": arguments,
            }
        )
    stop_reason = "tool_use" if turn.tool_calls else "end_turn"
    usage = {"input_tokens": _usage_in(request), "output_tokens": 10}
    message = {
        "id": h.owner._new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        h._send_json(message)
        return
    h._start_sse()
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    h._event({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        h._event(
            {"type": "content_block_start", "index": index, "content_block": opened},
            "content_block_start",
        )
        h._event(
            {"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"
        )
        h._event({"type": "content_block_stop", "index": index}, "content_block_stop")
    h._event(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
        "message_delta",
    )
    h._event({"type": "message_stop"}, "message_stop")


# -- OpenAI Responses and Chat Completions ---------------------------------------------------------


def _openai(h: _Handler, request: Request, turn: Turn) -> None:
    if urlsplit(request.path).path.endswith("/chat/completions"):
        _chat_completions(h, request, turn)
        return
    body = request.json if isinstance(request.json, dict) else {}
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": h.owner._new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for tool in turn.tool_calls:
        free_form = isinstance(tool.input, str)
        item = {
            "type": "custom_tool_call" if free_form else "function_call",
            "id": h.owner._new_id("ctc" if free_form else "fc"),
            "call_id": h.owner._new_id("call"),
            "name": tool.name,
            "status": "completed",
        }
        if free_form:
            item["input"] = tool.input
        else:
            item["arguments"] = json.dumps(tool.input)
        items.append(item)
    tokens = _usage_in(request)
    response = {
        "id": h.owner._new_id("resp"),
        "object": "response",
        "model": body.get("model") or h.owner.model,
        "status": "completed",
        "output": items,
        "usage": {
            "input_tokens": tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens + 10,
        },
    }
    if not body.get("stream"):
        h._send_json(response)
        return
    h._start_sse()
    created = {**response, "status": "in_progress", "output": []}
    h._event({"type": "response.created", "response": created}, "response.created")
    for index, item in enumerate(items):
        h._event(
            {"type": "response.output_item.added", "output_index": index, "item": item},
            "response.output_item.added",
        )
        if item["type"] == "message":
            delta = {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "delta": turn.text,
            }
            h._event(delta, "response.output_text.delta")
        h._event(
            {"type": "response.output_item.done", "output_index": index, "item": item},
            "response.output_item.done",
        )
    h._event({"type": "response.completed", "response": response}, "response.completed")


def _chat_completions(h: _Handler, request: Request, turn: Turn) -> None:
    body = request.json if isinstance(request.json, dict) else {}
    calls = [
        {
            "index": i,
            "id": h.owner._new_id("call"),
            "type": "function",
            "function": {
                "name": tool.name,
                "arguments": tool.input if isinstance(tool.input, str) else json.dumps(tool.input),
            },
        }
        for i, tool in enumerate(turn.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else "stop"
    head = {
        "id": h.owner._new_id("chatcmpl"),
        "model": body.get("model") or h.owner.model,
        "created": 0,
    }
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        usage = {"prompt_tokens": _usage_in(request), "completion_tokens": 10, "total_tokens": 0}
        h._send_json({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
        return
    h._start_sse()
    chunk = {**head, "object": "chat.completion.chunk"}
    h._event({**chunk, "choices": [{"index": 0, "delta": message, "finish_reason": None}]})
    h._event({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    h.wfile.write(b"data: [DONE]\n\n")
    h.wfile.flush()


# -- Gemini generateContent ------------------------------------------------------------------------


def _gemini(h: _Handler, request: Request, turn: Turn) -> None:
    parts: list[dict[str, Any]] = []
    if turn.text:
        parts.append({"text": turn.text})
    for tool in turn.tool_calls:
        arguments = tool.input if isinstance(tool.input, dict) else {"input": tool.input}
        parts.append({"functionCall": {"name": tool.name, "args": arguments}})
    tokens = _usage_in(request)
    response = {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts or [{"text": ""}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": tokens,
            "candidatesTokenCount": 10,
            "totalTokenCount": tokens + 10,
        },
        "modelVersion": h.owner.model,
        "responseId": h.owner._new_id("gem"),
    }
    if urlsplit(request.path).path.endswith(":streamGenerateContent"):
        h._start_sse()
        h._event(response)
    else:
        h._send_json(response)
