"""``chimera-cards list --installed``: every skill folder of every agent, project and user-wide,
with the agents that read it, its version and ``check``'s state."""

from __future__ import annotations

import json

import pytest
from conftest import SkillWorld


@pytest.fixture
def world(tmp_path, monkeypatch):
    w = SkillWorld(tmp_path)
    w.add("pdf-tools", {"scripts/run.sh": ("#!/bin/sh\necho run\n", True)})
    w.add("release-notes", {"references/style.md": "Short lines.\n"})
    monkeypatch.chdir(w.project)
    return w


def test_every_agents_folders_are_listed_with_their_state(world):
    claude = world.install("pdf-tools", "release-notes")
    shared = world.install("pdf-tools", to=world.project / ".agents" / "skills")
    from chimera_cards._install.agents import find_agent, user_dir

    codex = world.install("release-notes", to=user_dir(find_agent("codex"), world.env))
    (claude / "release-notes" / "references" / "style.md").write_bytes(b"Long lines.\n")
    hand = shared / "hand-made"
    hand.mkdir()
    (hand / "SKILL.md").write_text("---\nname: hand-made\ndescription: mine\n---\nbody\n")

    result = world.cli("list", "--installed", "--json", ok=False)
    assert result.exit_code == 1  # something is not ok
    rows = json.loads(result.stdout)
    seen = {(r["folder"], r["name"]): r for r in rows}
    assert set(seen) == {
        (str(claude), "pdf-tools"),
        (str(claude), "release-notes"),
        (str(shared), "hand-made"),
        (str(shared), "pdf-tools"),
        (str(codex), "release-notes"),
    }
    assert [r["scope"] for r in rows] == ["project"] * 4 + ["global"]
    assert seen[(str(claude), "pdf-tools")]["state"] == "ok"
    assert seen[(str(claude), "pdf-tools")]["agents"] == ["claude-code"]
    assert seen[(str(claude), "pdf-tools")]["version"] == "0.1.0"
    assert seen[(str(claude), "release-notes")]["state"] == "modified"
    assert seen[(str(claude), "release-notes")]["detail"] == "changed references/style.md"
    assert seen[(str(shared), "hand-made")]["state"] == "unknown"
    assert {"codex", "cursor", "gemini-cli"} <= set(seen[(str(shared), "pdf-tools")]["agents"])
    assert "codex" in seen[(str(codex), "release-notes")]["agents"]

    text = world.cli("list", "--installed", ok=False).stdout.splitlines()
    at = text.index(f"{claude} (project: claude-code)")
    assert text[at + 1 : at + 3] == [
        "  ok       pdf-tools  0.1.0",
        "  modified release-notes  0.1.0  changed references/style.md",
    ]
    assert any(line.startswith(f"{shared} (project: universal, ") for line in text)
    assert text[-2].startswith(f"{codex} (global: ")
    assert text[-1] == "  ok       release-notes  0.1.0"


def test_all_ok_exits_zero_and_nothing_installed_is_an_empty_list(world):
    assert json.loads(world.cli("list", "--installed", "--json").stdout) == []
    world.install("pdf-tools")
    rows = json.loads(world.cli("list", "--installed", "--json").stdout)
    assert [(r["name"], r["state"]) for r in rows] == [("pdf-tools", "ok")]


def test_installed_does_not_go_with_status(world):
    result = world.cli("list", "--installed", "--status", "active", ok=False)
    assert result.exit_code == 2 and result.stderr.startswith("error: ")
