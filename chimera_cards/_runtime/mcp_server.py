"""An MCP server for the Skills extension (``io.modelcontextprotocol/skills``) over a catalog.

Built on the official ``mcp`` Python SDK (the optional extra ``mcp``). Every request asks the
catalog afresh: ``skills/list``, ``skills/get`` and ``resources/list`` re-read and re-hash the
skills they describe, and each ``resources/read`` re-reads and re-hashes the whole skill the file
belongs to before it serves one byte of it. A skill the gate no longer passes is absent: not
listed, and a read or ``skills/get`` of it answers ``-32602`` (unknown), as for a skill that
never existed. No result may be cached by a client (``ttlMs`` 0).

Resource names, MIME types and contents follow ``agentskills-mcp-server`` (the Agent Skills SDK's
server) for the same skills: ``skill://<name>/<path>``, each file named by its last path segment
(``SKILL.md`` by the skill's name, with its description), ``text/markdown`` for ``SKILL.md``,
the type ``mimetypes`` guesses for the rest (``text/plain`` for unknown text), and text content
only where UTF-8 decoding cannot change a byte.
"""

from __future__ import annotations

import base64
import mimetypes
import re
import socket
import sys
from collections.abc import Callable
from typing import Any, TextIO
from urllib.parse import quote, unquote

from chimera_cards._runtime.catalog import Catalog, ServedFile, ServedSkill
from chimera_cards.errors import UsageError

EXTENSION_ID = "io.modelcontextprotocol/skills"
# The base protocol revision the Skills extension is specified against.
PROTOCOLS = frozenset({"2026-07-28"})
PAGE_SIZE = 100
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class MissingMcpError(UsageError):
    """The ``mcp`` package (the optional extra ``mcp``) is not installed."""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingMcpError(
            "serve --mcp needs the MCP SDK: pip install 'chimera-cards[mcp]'"
        ) from None


def file_uri(name: str, path: str) -> str:
    """``skill://<name>/<path>``, each part percent-encoded as the Skills extension's examples."""
    return f"skill://{quote(name, safe='')}/{quote(path, safe='/')}"


def parse_uri(uri: str) -> tuple[str, str] | None:
    """(skill name, file path) of a ``skill://`` URI, or None when it names no skill file."""
    prefix = "skill://"
    if not uri.startswith(prefix):
        return None
    name, _, path = uri[len(prefix) :].partition("/")
    name, path = unquote(name), unquote(path)
    if not name or not path or "\x00" in path:
        return None
    return name, path


def content_of(data: bytes) -> str | bytes:
    """Text only when UTF-8 decoding cannot change a byte (and no NUL); otherwise the bytes."""
    if b"\x00" in data:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def mime_type_of(file: ServedFile) -> str:
    """``text/markdown`` for SKILL.md, else the guessed type (unknown text: ``text/plain``)."""
    if file.path.rsplit("/", 1)[-1] == "SKILL.md":
        return "text/markdown"
    guessed = mimetypes.guess_type(file.path)[0] or "application/octet-stream"
    if guessed == "application/octet-stream" and isinstance(content_of(file.data), str):
        return "text/plain"
    return guessed


def skill_entry(skill: ServedSkill) -> dict[str, Any]:
    """The extension's ``Skill`` entry: SKILL.md's URI, its frontmatter, every file's digest."""
    return {
        "uri": file_uri(skill.name, "SKILL.md"),
        "frontmatter": dict(skill.frontmatter),
        "resources": [
            {
                "uri": file_uri(skill.name, f.path),
                "digest": f"sha256:{f.sha256}",
                "size": len(f.data),
            }
            for f in skill.files
        ],
    }


def _resource_rows(skill: ServedSkill) -> list[dict[str, Any]]:
    rows = []
    for file in skill.files:
        row: dict[str, Any] = {
            "uri": file_uri(skill.name, file.path),
            "name": file.path.rsplit("/", 1)[-1],
            "mime_type": mime_type_of(file),
            "description": None,
        }
        if file.path == "SKILL.md":
            row["name"] = skill.frontmatter["name"]
            row["description"] = skill.frontmatter["description"]
        rows.append(row)
    return rows


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


# A cursor is ours only as we write it: "offset:" and up to this many ASCII digits.
_CURSOR = re.compile(r"offset:([0-9]{1,12})")


def _offset(cursor: object) -> int | None:
    if cursor is None:
        return 0
    if not isinstance(cursor, str) or len(cursor) > 64:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii", "strict")).decode("ascii")
    except (ValueError, UnicodeError):
        return None
    m = _CURSOR.fullmatch(text)
    return int(m.group(1)) if m is not None else None


def list_page(entries: list[dict[str, Any]], cursor: object) -> dict[str, Any] | None:
    """One ``skills/list`` result page from the cursor on (None: the cursor is not ours)."""
    offset = _offset(cursor)
    if offset is None:
        return None
    result: dict[str, Any] = {
        "resultType": "complete",
        "skills": entries[offset : offset + PAGE_SIZE],
        "ttlMs": 0,
        "cacheScope": "private",
    }
    if offset + PAGE_SIZE < len(entries):
        result["nextCursor"] = _cursor(offset + PAGE_SIZE)
    return result


def _one_line_errors(errors: TextIO | None, mcp_error: Any, validation_error: Any) -> Any:
    """Server middleware: every refused request is one ``error:`` line on ``errors`` (stderr);
    a malformed parameter is -32602 and any other failure -32603, never a traceback (the SDK
    would log one)."""

    def say(method: str, text: str) -> None:
        line = f"error: {_one_line(method)}: {_one_line(text)}"
        print(line, file=errors or sys.stderr, flush=True)

    async def middleware(ctx: Any, call_next: Any) -> Any:
        method = str(getattr(ctx, "method", "?"))
        try:
            return await call_next(ctx)
        except mcp_error as exc:
            if exc.error.code in (INVALID_PARAMS, INTERNAL_ERROR):
                say(method, exc.error.message)
            raise
        except validation_error as exc:
            where = ", ".join(".".join(str(p) for p in e["loc"]) or "params" for e in exc.errors())
            say(method, f"invalid parameters ({where})")
            raise mcp_error(INVALID_PARAMS, "Invalid request parameters") from None
        except Exception as exc:  # a fault of ours: said in one line, internal on the wire
            say(method, f"internal error ({type(exc).__name__})")
            raise mcp_error(INTERNAL_ERROR, "Internal server error") from None

    return middleware


def _skill_at(one: Callable[[str], ServedSkill | None], uri: object) -> ServedSkill | None:
    """The served skill whose ``SKILL.md`` is ``uri`` exactly, or None (for anything else,
    a URI that is no string included)."""
    if not isinstance(uri, str):
        return None
    parsed = parse_uri(uri)
    skill = one(parsed[0]) if parsed is not None and parsed[1] == "SKILL.md" else None
    return skill if skill is not None and uri == file_uri(skill.name, "SKILL.md") else None


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _one_line(text: str) -> str:
    """``text`` with control characters escaped (a request cannot add lines), shortened."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in _shorten(text))
    return shown


def served_file(catalog: Catalog, uri: str) -> ServedFile | None:
    """The file ``uri`` names, re-read and re-hashed with its whole skill now, if it is served."""
    parsed = parse_uri(uri)
    skill = catalog.get(parsed[0]) if parsed is not None else None
    file = skill.file(parsed[1]) if skill is not None and parsed is not None else None
    if skill is None or file is None or uri != file_uri(skill.name, file.path):
        return None
    return file


def build_server(
    catalog: Catalog,
    *,
    name: str = "chimera-cards",
    log: Callable[[str], None] | None = None,
    errors: TextIO | None = None,
) -> Any:
    """An ``MCPServer`` serving ``catalog`` through the Skills extension (and plain resources).

    Args:
        catalog: where skills come from; asked afresh on every request.
        name: the server's display name.
        log: called with one line per skill left out (why), e.g. a stderr writer.
        errors: where a refused request is said in one ``error:`` line (default stderr); the
            client gets -32602 for any malformed parameter, never a traceback anywhere.
    Returns:
        The server (``mcp.server.MCPServer``); run it with ``run_stdio`` or ``run_http``.
    Raises:
        MissingMcpError: the ``mcp`` package is not installed.
    """
    _require_mcp()
    from mcp import MCPError
    from mcp.server import MCPServer
    from mcp.server.caching import CacheHint
    from mcp.server.extension import Extension, MethodBinding
    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.types import RequestParams
    from mcp.types import Resource as MCPResource
    from pydantic import ValidationError

    def flush_notes() -> None:
        notes, catalog.notes[:] = list(catalog.notes), []
        if log is not None:
            for line in notes:
                log(line)

    def current() -> list[ServedSkill]:
        try:
            return catalog.skills()
        finally:
            flush_notes()

    def one(skill_name: str) -> ServedSkill | None:
        try:
            return catalog.get(skill_name)
        finally:
            flush_notes()

    class ListParams(RequestParams):
        cursor: Any = None  # checked by list_page: anything not ours is -32602

    class GetParams(RequestParams):
        uri: Any = None  # checked below, so every malformed one gets the same answer

    class SkillsExtension(Extension):
        identifier = EXTENSION_ID

        def methods(self) -> tuple[MethodBinding, ...]:
            return (
                MethodBinding("skills/list", ListParams, self.list_skills, PROTOCOLS),
                MethodBinding("skills/get", GetParams, self.get_skill, PROTOCOLS),
            )

        async def list_skills(self, context: Any, params: ListParams) -> dict[str, Any]:
            result = list_page([skill_entry(s) for s in current()], params.cursor)
            if result is None:
                raise MCPError(INVALID_PARAMS, "Invalid skills cursor")
            return result

        async def get_skill(self, context: Any, params: GetParams) -> dict[str, Any]:
            skill = _skill_at(one, params.uri)
            if skill is None:
                raise MCPError(INVALID_PARAMS, f"Unknown skill URI: {_shorten(repr(params.uri))}")
            return {
                "resultType": "complete",
                "skill": skill_entry(skill),
                "ttlMs": 0,
                "cacheScope": "private",
            }

    class SkillsServer(MCPServer):
        async def list_resources(self) -> list[MCPResource]:
            return [
                MCPResource(
                    uri=row["uri"],
                    name=row["name"],
                    description=row["description"],
                    mime_type=row["mime_type"],
                )
                for skill in current()
                for row in _resource_rows(skill)
            ]

        async def list_resource_templates(self) -> list[Any]:
            return []

        async def read_resource(self, uri: Any, context: Any = None) -> list[ReadResourceContents]:
            text = str(uri)
            parsed = parse_uri(text)
            skill = one(parsed[0]) if parsed is not None else None
            file = skill.file(parsed[1]) if skill is not None and parsed is not None else None
            if skill is None or file is None or text != file_uri(skill.name, file.path):
                raise ResourceNotFoundError(f"Unknown skill resource: {_shorten(text)}")
            return [
                ReadResourceContents(content=content_of(file.data), mime_type=mime_type_of(file))
            ]

    fresh = CacheHint(ttl_ms=0, scope="private")
    return SkillsServer(
        name=name,
        instructions=(
            "Skills served here are only those approved in a chimera-cards store, re-hashed on "
            "every read."
        ),
        extensions=[SkillsExtension()],
        middleware=[_one_line_errors(errors, MCPError, ValidationError)],
        # The SDK's own log would print a multi-line record (a traceback, even) for a refused
        # read; the middleware above says each refusal in one line instead.
        log_level="CRITICAL",
        cache_hints={"resources/list": fresh, "resources/read": fresh},
    )


def run_stdio(server: Any) -> None:
    """Serve over stdin/stdout until the client closes the stream."""
    import anyio

    anyio.run(server.run_stdio_async)


def run_http(
    server: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    announce: TextIO | None = None,
) -> None:
    """Serve streamable HTTP on ``host:port`` (port 0: a free one) until interrupted.

    Args:
        server: from ``build_server``.
        host: a loopback address; anything else is refused (no authentication is offered).
        port: the TCP port; 0 picks a free one.
        path: the MCP endpoint path.
        announce: where to write ``listening on http://HOST:PORT/mcp`` once bound (stderr).
    Raises:
        UsageError: a non-loopback host, or the port cannot be bound.
    """
    import ipaddress

    import anyio
    import uvicorn

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(f"--host {host}: only a loopback address is served (no authentication)")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    bound = sock.getsockname()[1]
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print(f"listening on http://{shown}:{bound}{path}", file=announce or sys.stderr, flush=True)
    anyio.run(lambda: web.serve(sockets=[sock]))
