"""Every malformed parameter a client can send ``serve --mcp`` is answered -32602 (invalid
params) and said in exactly one ``error:`` line on the server's stderr, never a traceback and
never -32603: cursors that are not ours (non-ASCII digits, 5,000 digits, a negative offset, not
base64, not a string), URIs of the wrong type or shape, missing parameters. The server answers
the next good request as before."""

from __future__ import annotations

import asyncio
import base64
import sys

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK (extra 'mcp') is not installed")

from conftest import SkillWorld  # noqa: E402
from mcp import Client, MCPError, StdioServerParameters  # noqa: E402
from mcp.types import Request, RequestParams  # noqa: E402
from pydantic import ConfigDict, TypeAdapter  # noqa: E402

pytestmark = pytest.mark.slow


class AnyParams(RequestParams):
    """Parameters as a careless or hostile client sends them: any key, any type."""

    model_config = ConfigDict(extra="allow")


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii")


BAD: list[tuple[str, dict]] = [
    ("skills/list", {"cursor": _b64("offset:\u00b2")}),  # a superscript digit
    ("skills/list", {"cursor": _b64("offset:" + "9" * 5000)}),
    ("skills/list", {"cursor": _b64("offset:-1")}),
    ("skills/list", {"cursor": _b64("offset:\u0661")}),  # an Arabic-Indic digit
    ("skills/list", {"cursor": _b64("offset: 1")}),
    ("skills/list", {"cursor": _b64("page:1")}),
    ("skills/list", {"cursor": "!!!not base64"}),
    ("skills/list", {"cursor": ""}),
    ("skills/list", {"cursor": "\u00e9t\u00e9"}),
    ("skills/list", {"cursor": 5}),
    ("skills/list", {"cursor": ["offset:0"]}),
    ("skills/list", {"cursor": {"offset": 0}}),
    ("skills/get", {}),
    ("skills/get", {"uri": 5}),
    ("skills/get", {"uri": None}),
    ("skills/get", {"uri": "skill://" + "a" * 100_000 + "/SKILL.md"}),
    ("skills/get", {"uri": "skill://pdf-tools/SKILL.md\x00"}),
    ("skills/get", {"uri": "skill://pdf-tools/SKILL.md\nerror: forged"}),
    ("skills/get", {"uri": "skill://%ff%fe/SKILL.md"}),
    ("skills/get", {"uri": "skill://pdf-tools/scripts/run.sh"}),
    ("resources/read", {}),
    ("resources/read", {"uri": 5}),
    ("resources/read", {"uri": "::::"}),
    ("resources/read", {"uri": "skill://pdf-tools/%2e%2e/%2e%2e/etc/passwd"}),
    ("resources/read", {"uri": "skill://pdf-tools/" + "x" * 70_000}),
    ("resources/read", {"uri": "skill://%ff/SKILL.md"}),
    ("resources/list", {"cursor": 7}),
]


def test_every_malformed_parameter_is_invalid_params_with_one_stderr_line(tmp_path):
    world = SkillWorld(tmp_path)
    world.add("pdf-tools", {"scripts/run.sh": ("#!/bin/sh\necho run\n", True)})
    errlog = tmp_path / "stderr.txt"
    params = StdioServerParameters(
        command="sh",
        args=[
            "-c",
            'exec "$0" -m chimera_cards serve --mcp --store "$1" 2>>"$2"',
            sys.executable,
            str(world.store),
            str(errlog),
        ],
        env=world.env,
        cwd=str(world.project),
    )
    codes: list[int | None] = []

    async def session() -> list[dict]:
        async with Client(params) as client:
            for method, raw in BAD:
                try:
                    await client.session.send_request(
                        Request(method=method, params=AnyParams(**raw)), TypeAdapter(dict)
                    )
                    codes.append(None)
                except MCPError as exc:
                    codes.append(exc.error.code)
            good = await client.session.send_request(
                Request(method="skills/list", params=AnyParams()), TypeAdapter(dict)
            )
            return good["skills"]

    skills = asyncio.run(asyncio.wait_for(session(), timeout=120))
    assert [s["frontmatter"]["name"] for s in skills] == ["pdf-tools"]  # still serving
    assert codes == [-32602] * len(BAD), list(zip(BAD, codes, strict=True))
    lines = errlog.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(BAD), lines
    for (method, _), line in zip(BAD, lines, strict=True):
        assert line.startswith(f"error: {method}: "), line
        assert len(line) < 400
    assert "Traceback" not in errlog.read_text(encoding="utf-8")
