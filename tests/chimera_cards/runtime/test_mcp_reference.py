"""``serve --mcp`` against the Agent Skills SDK's own server, ``agentskills-mcp-server``, on the
same skills: for every approved skill, the same resource names, MIME types and contents, and the
same ``skills/list`` entries (URI, frontmatter, every file's digest and size). Both run as real
stdio processes, read through the MCP SDK's client.

The reference server needs Python 3.12 or newer; ``.ci/py312`` provides one in CI and runs this
file there (on 3.11 it is skipped, saying so).
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip(
    "agentskills_mcp_server",
    reason="agentskills-mcp-server needs Python >= 3.12 (CI runs this file under .ci/py312)",
)

from conftest import SkillWorld
from mcp import Client, StdioServerParameters
from mcp.types import Request, RequestParams
from pydantic import TypeAdapter

pytestmark = pytest.mark.slow

APPROVED = {
    "pdf-tools": {
        "scripts/run.sh": ("#!/bin/sh\necho run\n", True),
        "references/guide.md": "# Guide\n\nRead me first.\n",
        "references/deep/nested.md": "nested\n",
        "assets/logo.png": bytes(range(256)),
        "assets/data.json": '{"a": 1}\n',
        "notes": "no extension, plain text\n",
        "blob": b"\x00\x01binary",
    },
    "release-notes": {"templates/note.txt": "Release {version}\n"},
}


async def snapshot(params: StdioServerParameters) -> dict:
    async with Client(params) as client:
        listed = await client.session.send_request(
            Request(method="skills/list", params=RequestParams()), TypeAdapter(dict)
        )
        resources = (await client.list_resources()).resources
        rows = {}
        for r in resources:
            (content,) = (await client.read_resource(r.uri)).contents
            body = content.blob if hasattr(content, "blob") else content.text
            rows[r.uri] = {
                "name": r.name,
                "description": r.description,
                "mime_type": r.mime_type,
                "content": (type(content).__name__, content.mime_type, body),
            }
        entries = sorted(listed["skills"], key=lambda e: e["uri"])
        return {"skills": entries, "resources": rows}


def test_same_resources_and_entries_as_agentskills_mcp_server(tmp_path):
    world = SkillWorld(tmp_path)
    for name, files in APPROVED.items():
        world.add(name, files)
    world.add("still-pending", {"x.md": "x\n"}, approve=False)

    config = tmp_path / "reference.json"
    config.write_text(
        json.dumps(
            {
                "name": "reference",
                "skills": [
                    {"id": name, "provider": "fs", "options": {"root": str(world.src)}}
                    for name in sorted(APPROVED)
                ],
            }
        )
    )
    reference = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentskills_mcp_server", "--config", str(config)],
        env=world.env,
    )
    ours = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chimera_cards", "serve", "--mcp", "--store", str(world.store)],
        env=world.env,
    )

    async def both():
        return await snapshot(reference), await snapshot(ours)

    theirs, mine = asyncio.run(asyncio.wait_for(both(), timeout=120))
    assert sorted(theirs["resources"]) == sorted(mine["resources"])
    assert len(mine["resources"]) == sum(len(f) + 1 for f in APPROVED.values())
    for uri, row in theirs["resources"].items():
        assert mine["resources"][uri] == row, uri
    assert theirs["skills"] == mine["skills"]
