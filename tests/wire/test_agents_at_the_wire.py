"""The harness itself, proved with the real agent CLIs: what they send reaches the scripted server.

Each CLI runs one non-interactive session in a project that holds a skill whose description
carries a marker; the server must see the marker (the agent lists its skills to the model), and a
scripted tool call must really run in the workspace with its result sent back to the model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from wire.agents import HEADLESS, AgentCli, write_file
from wire.model_server import ScriptedModelServer, say

pytestmark = pytest.mark.slow

# The project skills folder each CLI reads under its own name.
PROJECT_SKILLS = {"claude": ".claude/skills", "codex": ".agents/skills", "gemini": ".gemini/skills"}


def make_skill(folder: Path, name: str, description: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", encoding="utf-8"
    )


def test_the_server_sees_a_project_skill_description_and_plays_a_tool_call(
    agent_cli: AgentCli, tmp_path: Path
) -> None:
    name = agent_cli.name
    project = tmp_path / "project"
    make_skill(
        project / PROJECT_SKILLS[name] / "wire-probe",
        "wire-probe",
        "Use when probing the wire; marker DESC_MARK_7f3a.",
        "BODY_MARK_91c2 is only in the body.",
    )
    target = project / "made-by-agent.txt"
    turns = [lambda r: write_file(name, target.name, "WRITTEN_c0de", r), say("finished")]
    with ScriptedModelServer(turns) as server:
        env = agent_cli.session(tmp_path / "home", server.url)
        done = agent_cli.run(HEADLESS[name], cwd=project, env=env, input="Write the file.")
    assert done.returncode == 0, done.stderr[-2000:]
    assert server.errors == []
    assert server.saw("DESC_MARK_7f3a")
    # Only the listing goes out before any tool call: the body stays on disk.
    assert not server.saw("BODY_MARK_91c2")
    assert target.read_text() == "WRITTEN_c0de"
    assert server.turns_played == 2
    # The tool's result went back to the model in the request that took the second turn.
    second = server.agent_requests[1]
    assert second.tool_results, second.body[:2000]
    assert "finished" in done.stdout
