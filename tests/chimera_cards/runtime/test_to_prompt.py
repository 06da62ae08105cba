"""``chimera-cards prompt``: ``<available_skills>`` for every installed skill ``check`` calls ok,
byte for byte what the reference validator's ``agentskills to-prompt`` prints for those folders; the
folders left out are named with their state (modified apart from unknown apart from missing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SkillWorld, card_text

AGENTSKILLS = Path(sys.executable).parent / "agentskills"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not AGENTSKILLS.exists(), reason="skills-ref (the `agentskills` command) is not installed"
    ),
]


def to_prompt(*folders: Path) -> str:
    result = subprocess.run(
        [str(AGENTSKILLS), "to-prompt", *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


@pytest.fixture
def world(tmp_path):
    w = SkillWorld(tmp_path)
    w.add("pdf-tools", {"scripts/run.sh": ("#!/bin/sh\necho run\n", True)})
    w.add("release-notes", {"references/style.md": "Short lines.\n"})
    w.add("tricky-text", {"x.md": "x\n"})
    tricky = w.src / "tricky-text" / "SKILL.md"
    text = card_text(
        "tricky-text",
        description="Escapes <b>&</b> \"quotes\" and 'apostrophes'; wraps\nacross lines.",
    )
    tricky.write_text(text)
    w.cli("import", w.src / "tricky-text", "--json")  # a clean local import: usable as is
    w.install("pdf-tools", "release-notes", "tricky-text")
    return w


def skills(world: SkillWorld) -> Path:
    return world.project / ".claude" / "skills"


def test_the_block_is_byte_identical_to_agentskills_to_prompt(world):
    ok = [skills(world) / n for n in ("pdf-tools", "release-notes", "tricky-text")]
    ours = world.cli("prompt", skills(world)).stdout
    assert ours == to_prompt(*ok)
    assert "&lt;b&gt;&amp;&lt;/b&gt; &quot;quotes&quot;" in ours


def test_modified_unknown_and_missing_folders_are_left_out_and_told_apart(world):
    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"echo changed\n")
    hand = skills(world) / "hand-made"
    hand.mkdir()
    (hand / "SKILL.md").write_text("---\nname: hand-made\ndescription: mine\n---\nbody\n")
    shutil.rmtree(skills(world) / "tricky-text")
    result = world.cli("prompt", skills(world))
    assert result.stdout == to_prompt(skills(world) / "release-notes")
    assert result.stderr.splitlines() == [
        "note: not shown: hand-made (unknown); pdf-tools (modified); tricky-text (missing)"
    ]


def test_nothing_ok_is_an_empty_block_as_to_prompt_prints_it(world):
    for name in ("pdf-tools", "release-notes", "tricky-text"):
        (skills(world) / name / "SKILL.md").write_bytes(b"---\nname: x\ndescription: y\n---\n")
    assert world.cli("prompt", skills(world)).stdout == "<available_skills>\n</available_skills>\n"


def test_agent_option_reads_that_agents_folder(world, monkeypatch):
    monkeypatch.chdir(world.project)
    assert (
        world.cli("prompt", "--agent", "claude").stdout == world.cli("prompt", skills(world)).stdout
    )
    result = world.cli("prompt", "--agent", "claude", "--json")
    assert '"left_out": []' in result.stdout


def test_match_tells_modified_from_missing_from_not_installed(tmp_path, monkeypatch):
    world = SkillWorld(tmp_path)
    for name in ("pdf-alpha", "pdf-beta", "pdf-gamma", "pdf-delta"):
        world.add(name)
    folder = world.install("pdf-alpha", "pdf-beta", "pdf-gamma")
    (folder / "pdf-beta" / "SKILL.md").write_bytes(b"---\nname: pdf-beta\ndescription: x\n---\n")
    shutil.rmtree(folder / "pdf-gamma")
    result = world.cli("match", "test", "card", "--format", "skills-xml", "--to", folder)
    assert "<name>\npdf-alpha\n</name>" in result.stdout
    assert result.stderr.splitlines() == [
        f"note: approved but not installed in {folder}: pdf-delta (see `chimera-cards install`)",
        f"note: recorded as installed but its folder is gone in {folder}: pdf-gamma "
        "(see `chimera-cards sync`)",
        f"note: installed but modified since it was approved in {folder}: pdf-beta "
        "(see `chimera-cards check`)",
    ]
