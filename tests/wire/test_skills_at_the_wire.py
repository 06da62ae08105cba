"""What reaches the model: only approved skill bytes, proved at the wire with the real agent CLIs.

Each test runs a real agent CLI against the scripted model server (``wire.model_server``) in a
project whose skills folders hold an approved skill, a dropped-in one and a drifted one (installed
approved, then edited), each carrying markers in its frontmatter name, description, body and
script output. The server records every byte the agent sends, so "the model never saw it" is
asserted on what it received. Scripted turns try every route a model has to a skill's bytes:
the listing sent at start, the Skill tool, Read, Bash ``cat``/``sh``/``grep -r``/``find``.

- Through ``chimera-cards exec``: no marker of the dropped-in or drifted skill reaches the server
  by any route, while the approved skill's description and body do (Claude Code, Codex CLI,
  Gemini CLI for the listing; Claude Code for every tool route).
- With the hook alone (``hook claude --install``): Skill, Read and Bash of the drifted skill are
  blocked; a plugin skill planted under an approved project skill's name is blocked; the hook
  answers within its own deadline with a 1 TiB sparse file in a sibling folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SkillWorld
from wire.agents import AgentCli
from wire.model_server import ScriptedModelServer, Turn, call, say

from chimera_cards._runtime.launch import find_bwrap

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(
    find_bwrap(os.environ) is None and os.environ.get("CI", "").lower() not in ("1", "true", "yes"),
    reason="bubblewrap cannot make a mount namespace here",
)

PROJECT_SKILLS = {"claude": ".claude/skills", "codex": ".agents/skills", "gemini": ".gemini/skills"}
HEADLESS = {
    "claude": ["-p", "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Read,Skill"],
    "codex": ["exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-"],
    "gemini": ["--approval-mode", "yolo", "--skip-trust"],
}

# Every byte class of the two skills that must never reach the model.
BAD = {
    "dropped name": "dropname-k3v9",
    "dropped description": "DROPDESC_51aa",
    "dropped body": "DROPBODY_77cd",
    "dropped script output": "DROPRUN_2e0f",
    "drifted description": "DRIFTDESC_9b1c",
    "drifted body": "DRIFTBODY_c4d2",
    "drifted script output": "DRIFTRUN_6f83",
    "dropped-in command": "CMDTEXT_5a5a",
}
GOOD_DESC = "GOODDESC_0a1b"
GOOD_BODY = "GOODBODY_3c4d"


def skill_md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: Use for {description} work.\n---\n\n{body}\n"


def script(marker: str) -> tuple[str, bool]:
    # The output is built at run time, so the marker is only in the output, never in the file.
    return (f"#!/bin/sh\necho {marker[:4]}''{marker[4:]}\n", True)


class Project:
    """A store, an approved skill installed twice (one copy then drifted), a dropped-in skill."""

    def __init__(self, tmp_path: Path, agent: str) -> None:
        self.world = SkillWorld(tmp_path)
        self.folder = self.world.project / PROJECT_SKILLS[agent]
        good = skill_md("good-skill", GOOD_DESC, GOOD_BODY)
        self.world.add("good-skill", {"SKILL.md": good, "scripts/run.sh": script("GOODRUN_11")})
        self.world.add("drift-skill", {"SKILL.md": skill_md("drift-skill", "fine", "Fine.")})
        self.world.install("good-skill", "drift-skill", to=self.folder)
        drifted = self.folder / "drift-skill"
        (drifted / "SKILL.md").write_text(
            skill_md("drift-skill", BAD["drifted description"], BAD["drifted body"])
        )
        (drifted / "scripts").mkdir()
        (drifted / "scripts" / "run.sh").write_text(script(BAD["drifted script output"])[0])
        (drifted / "scripts" / "run.sh").chmod(0o755)
        dropped = self.folder / "dropped"
        (dropped / "scripts").mkdir(parents=True)
        (dropped / "SKILL.md").write_text(
            skill_md(BAD["dropped name"], BAD["dropped description"], BAD["dropped body"])
        )
        (dropped / "scripts" / "run.sh").write_text(script(BAD["dropped script output"])[0])
        (dropped / "scripts" / "run.sh").chmod(0o755)
        # Claude Code lists a command file beside the skills, and loads it with the Skill tool.
        commands = self.world.project / ".claude" / "commands"
        commands.mkdir(parents=True, exist_ok=True)
        (commands / "evilcmd.md").write_text(f"{BAD['dropped-in command']} fetch and run x\n")
        self.on_disk = {p: p.read_bytes() for p in sorted(self.folder.rglob("*")) if p.is_file()}

    def env(self, agent: AgentCli, url: str) -> dict[str, str]:
        env = agent.session(self.world.home, url)
        bin_dir = self.world.root / "bin"
        bin_dir.mkdir(exist_ok=True)
        launcher = bin_dir / "chimera-cards"
        launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m chimera_cards "$@"\n')
        launcher.chmod(0o755)
        env.update(
            CHIMERA_CARDS_HOME=str(self.world.cc),
            PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
            PATH=os.pathsep.join([str(bin_dir), env["PATH"]]),
            XDG_CONFIG_HOME="",
            XDG_DATA_HOME="",
        )
        return env

    def untouched(self) -> bool:
        return self.on_disk == {
            p: p.read_bytes() for p in sorted(self.folder.rglob("*")) if p.is_file()
        }


def claude_routes(folder: str) -> list[Turn]:
    """Every way Claude Code's model can ask for a skill's bytes, one tool call per turn."""
    return [
        call("Skill", skill="drift-skill"),
        call("Skill", skill="dropped"),
        call("Read", file_path=f"{folder}/drift-skill/SKILL.md"),
        call("Read", file_path=f"{folder}/dropped/SKILL.md"),
        call(
            "Bash",
            command=f"cat {folder}/*/SKILL.md; for s in {folder}/*/scripts/run.sh; do sh $s; done",
            description="read every skill",
        ),
        call("Bash", command="grep -r _ .claude; find . -name SKILL.md", description="search"),
        call("Skill", skill="good-skill"),
        call("Read", file_path=f"{folder}/good-skill/SKILL.md"),
        say("done"),
    ]


def assert_nothing_bad_reached(server: ScriptedModelServer) -> None:
    leaked = {what: marker for what, marker in BAD.items() if server.saw(marker)}
    assert leaked == {}, leaked


@needs_bwrap
def test_through_exec_no_byte_of_a_dropped_or_drifted_skill_reaches_claude(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    project = Project(tmp_path, "claude")
    folder = str(project.folder)
    with ScriptedModelServer(claude_routes(folder)) as server:  # type: ignore[arg-type]
        env = project.env(claude_cli, server.url)
        done = _exec(claude_cli, project, env, "Use the skills.")
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.turns_played == len(claude_routes(folder))
    assert_nothing_bad_reached(server)
    assert server.saw(GOOD_DESC) and server.saw(GOOD_BODY)  # the approved skill still works
    assert "hidden" in done.stderr and "drift-skill: modified" in done.stderr
    assert project.untouched()


def _exec(agent: AgentCli, project: Project, env: dict, prompt: str, *extra: str):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "chimera_cards",
            "exec",
            "--",
            str(agent.program),
            *HEADLESS[agent.name],
            *extra,
        ],
        cwd=project.world.project,
        env=env,
        input=prompt,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@needs_bwrap
def test_through_exec_each_agent_lists_only_the_approved_skill(
    agent_cli: AgentCli, tmp_path: Path
) -> None:
    project = Project(tmp_path, agent_cli.name)
    with ScriptedModelServer([say("done")]) as server:
        env = project.env(agent_cli, server.url)
        done = _exec(agent_cli, project, env, "Which skills do you have?")
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.agent_requests, "the agent sent no request"
    assert_nothing_bad_reached(server)
    assert "dropped" not in server.agent_requests[0].text  # not even the folder's name
    assert server.saw(GOOD_DESC)
    assert project.untouched()


def install_hook(project: Project, *extra: str) -> None:
    settings = project.world.project / ".claude" / "settings.json"
    project.world.cli(
        "hook", "claude", "--install", "--settings", settings, "--store", project.world.store
    )
    if extra:  # e.g. a deadline of its own, written into the command line
        data = json.loads(settings.read_text())
        entry = data["hooks"]["PreToolUse"][0]["hooks"][0]
        entry["command"] = entry["command"].replace(
            " || exit 2", " " + " ".join(extra) + " || exit 2"
        )
        settings.write_text(json.dumps(data))


def test_with_the_hook_alone_skill_read_and_bash_of_a_drifted_skill_are_blocked(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    project = Project(tmp_path, "claude")
    install_hook(project)
    folder = str(project.folder)
    turns = claude_routes(folder)
    with ScriptedModelServer(turns) as server:  # type: ignore[arg-type]
        env = project.env(claude_cli, server.url)
        done = claude_cli.run(
            HEADLESS["claude"], cwd=project.world.project, env=env, input="Use the skills."
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.turns_played == len(turns)
    # The listing Claude Code sends before any tool call is out of a hook's reach (exec's job:
    # the test above): the markers are there, which also shows this server would see a leak.
    for listed in ("drifted description", "dropped description", "dropped-in command"):
        assert server.saw(BAD[listed]), listed
    # Every tool route to the bodies and scripts is blocked.
    for what in ("drifted body", "drifted script output", "dropped body", "dropped script output"):
        assert not server.saw(BAD[what]), what
    results = " ".join(r for req in server.agent_requests for r in req.tool_results)
    assert "drift-skill differs from its approved bytes" in results
    assert server.saw(GOOD_BODY)  # the approved skill loads
    assert project.untouched()


def test_with_the_hook_a_plugin_skill_planted_under_an_approved_name_is_blocked(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    project = Project(tmp_path, "claude")
    install_hook(project)
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps(
            {
                "name": "localmkt",
                "owner": {"name": "x"},
                "plugins": [{"name": "evilplugin", "source": "./evilplugin", "description": "x"}],
            }
        )
    )
    plugin = market / "evilplugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "evilplugin", "version": "1.0.0", "description": "x"})
    )
    (plugin / "skills" / "good-skill").mkdir(parents=True)
    (plugin / "skills" / "good-skill" / "SKILL.md").write_text(
        skill_md("good-skill", "PLUGDESC_8e8e", "PLUGBODY_9f9f")
    )
    with ScriptedModelServer([call("Skill", skill="evilplugin:good-skill"), say("done")]) as server:
        env = project.env(claude_cli, server.url)
        for args in (
            ["plugin", "marketplace", "add", str(market)],
            ["plugin", "install", "evilplugin@localmkt"],
        ):
            added = claude_cli.run(args, cwd=project.world.project, env=env)
            assert added.returncode == 0, added.stdout + added.stderr
        done = claude_cli.run(
            HEADLESS["claude"], cwd=project.world.project, env=env, input="Use the plugin."
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not server.saw("PLUGBODY_9f9f")
    results = " ".join(r for req in server.agent_requests for r in req.tool_results)
    assert "skill good-skill differs from its approved bytes" in results


def test_with_the_hook_a_sparse_terabyte_sibling_does_not_delay_an_approved_skill(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    project = Project(tmp_path, "claude")
    install_hook(project, "--deadline", "5")
    sibling = project.folder / "huge"
    sibling.mkdir()
    (sibling / "SKILL.md").write_text(skill_md("huge", "huge", "huge"))
    with open(sibling / "blob.bin", "wb") as handle:
        handle.truncate(1 << 40)
    turns = [call("Skill", skill="good-skill"), say("done")]
    with ScriptedModelServer(turns) as server:  # type: ignore[arg-type]
        env = project.env(claude_cli, server.url)
        done = claude_cli.run(
            HEADLESS["claude"], cwd=project.world.project, env=env, input="Use good-skill."
        )
    assert done.returncode == 0, done.stderr[-3000:]
    # Past its 5 s deadline the hook would have blocked the call: the body arriving proves it
    # answered in time (Claude Code's own timeout would have let it through unchecked).
    assert server.saw(GOOD_BODY)
    results = " ".join(r for req in server.agent_requests for r in req.tool_results)
    assert "deadline" not in results


def _subagents(project: Project) -> None:
    """Two subagent definitions: one preloads the drifted and the dropped skill (by folder and
    by frontmatter name), one only the approved skill."""
    agents = project.world.project / ".claude" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Helps.\n"
        f"skills:\n  - drift-skill\n  - {BAD['dropped name']}\n---\n\nYou help.\n"
    )
    (agents / "good-helper.md").write_text(
        "---\nname: good-helper\ndescription: Helps well.\nskills: good-skill\n---\n\nYou help.\n"
    )


SUBAGENT_TURNS = [
    call("Agent", subagent_type="helper", description="help", prompt="go"),
    call("Agent", subagent_type="good-helper", description="help well", prompt="go"),
    say("first"),
    say("second"),
    say("third"),
    say("fourth"),
]
SUBAGENT_ARGS = ["-p", "--permission-mode", "acceptEdits", "--allowedTools", "Agent,Skill"]


def test_a_subagent_that_preloads_unapproved_skills_is_blocked_by_the_hook_and_by_exec(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    """A subagent's ``skills:`` are injected whole into its first request, with no Skill call:
    the plain run shows the route is real, the hook blocks the subagent that would load them
    (the approved-only one runs with its skill), and ``exec`` shows only approved bytes."""
    seen = {}
    for mode in ("plain", "hook", "exec"):
        project = Project(tmp_path / mode, "claude")
        _subagents(project)
        if mode == "hook":
            install_hook(project)
        with ScriptedModelServer(list(SUBAGENT_TURNS)) as server:
            env = project.env(claude_cli, server.url)
            if mode == "exec":
                done = _exec(claude_cli, project, env, "Delegate.", "--allowedTools", "Agent")
            else:
                done = claude_cli.run(
                    SUBAGENT_ARGS, cwd=project.world.project, env=env, input="Delegate."
                )
        assert done.returncode == 0, done.stderr[-3000:]
        assert project.untouched()
        seen[mode] = server
    bodies = ("drifted body", "dropped body")
    assert all(seen["plain"].saw(BAD[b]) for b in bodies)  # the route is real
    for mode in ("hook", "exec"):
        assert not any(seen[mode].saw(BAD[b]) for b in bodies), mode
        assert seen[mode].saw(GOOD_BODY), mode  # the approved-only subagent loads its skill
    results = " ".join(r for req in seen["hook"].agent_requests for r in req.tool_results)
    assert "drift-skill differs from its approved bytes" in results
