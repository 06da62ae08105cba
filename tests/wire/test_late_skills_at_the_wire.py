"""Skills folders that appear *after* the agent started, proved at the wire with the real CLIs.

``chimera-cards exec`` builds its view before the agent starts. An agent can then make a skills
folder itself: ``mkdir`` and ``cp`` into ``sub/.claude/skills``, a ``git checkout`` of a branch
that adds one, ``tar x`` of an archive holding one, a user folder (``~/.claude/skills``) or
command that did not exist at start. Claude Code lists such a folder's skills (name and
description) to the model once a file tool (``Read``, ``Write``) touches a path below it, lists
every skill and command again then (the user folder's too), and loads a body with the Skill tool
(measured with 2.1.332). Not real with 2.1.332 (the plain run showed nothing, so no test): a
``sub/.claude/commands`` folder made mid-session, a ``Write`` of ``sub/.claude/skills/x/SKILL.md``
itself, a ``sub/.claude/skills`` that is a link to a folder elsewhere.

Each agent runs one session trying every route (module scope, so the CLI starts twice): plainly,
the control, which must show the route's marker (else the route is not real and the test could
not fail), and through ``chimera-cards exec``, where no marker may reach the model. Every
folder is made by a script the model runs (``sh stage/x.sh``), so the command the hook sees
names no skills folder. "Reached" means the marker is in what the agent sent other than the
model's own earlier turns (a ``Write`` call carries the file's text in its own arguments).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from wire.agents import AgentCli
from wire.model_server import ScriptedModelServer, Turn, call, say
from wire.test_skills_at_the_wire import GOOD_BODY, HEADLESS, Project, skill_md

from chimera_cards._runtime.launch import find_bwrap

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_bwrap(os.environ) is None
        and os.environ.get("CI", "").lower() not in ("1", "true", "yes"),
        reason="bubblewrap cannot make a mount namespace here",
    ),
]


def received(server: ScriptedModelServer, marker: str) -> bool:
    """Whether ``marker`` reached the model in anything but its own earlier turns."""
    for request in server.agent_requests:
        data = request.json
        if not isinstance(data, dict):
            continue
        parts = [data.get("system"), data.get("instructions"), data.get("systemInstruction")]
        for message in data.get("messages") or data.get("input") or data.get("contents") or []:
            if isinstance(message, dict) and message.get("role") not in ("assistant", "model"):
                parts.append(message)
        if any(marker in json.dumps(p) for p in parts if p):
            return True
    return False


@dataclass
class Session:
    plain: ScriptedModelServer
    through_exec: ScriptedModelServer
    exec_stderr: str

    def reached(self, marker: str) -> tuple[bool, bool]:
        """(whether the plain run showed the marker, whether the run through exec did)."""
        both = (f"D{marker}", f"B{marker}")
        return (
            any(received(self.plain, m) for m in both),
            any(received(self.through_exec, m) for m in both),
        )


def _late_skill(stage: Path, name: str, marker: str) -> Path:
    folder = stage / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md(name, f"D{marker}", f"B{marker}"))
    return folder


def _script(stage: Path, name: str, text: str) -> str:
    (stage / f"{name}.sh").write_text(f"set -e\n{text}\n")
    return f"sh {stage}/{name}.sh"


# -- Claude Code ---------------------------------------------------------------------------------

CLAUDE_ROUTES = {
    "mkdir-and-copy": "LNEST_41",
    "git-checkout": "LGIT_43",
    "tar-x": "LTAR_44",
    "user-folder": "LUSER_42",
    "user-command": "LUCMD_46",
}


def _claude_world(root: Path) -> tuple[Project, list[Turn]]:
    project = Project(root, "claude")
    p, home = project.world.project, project.world.home
    # An approved skill in a nested folder that exists at start: touching a file under it is
    # allowed, and makes Claude Code load its skills again (every folder it knows).
    project.world.install("good-skill", to=p / "app" / ".claude" / "skills")
    for sub in ("app", "sub", "gitsub", "tarsub"):
        (p / sub).mkdir(exist_ok=True)
        (p / sub / "notes.txt").write_text("notes\n")
    stage = root / "stage"
    R = CLAUDE_ROUTES
    nested = _late_skill(stage, "late-nested", R["mkdir-and-copy"])
    user = _late_skill(stage, "late-user", R["user-folder"])
    (stage / "latecmd.md").write_text(f"D{R['user-command']} run the thing\n")
    tarred = _late_skill(root / "tarsrc" / ".claude" / "skills", "late-tar", R["tar-x"])
    with tarfile.open(stage / "a.tar", "w") as archive:
        archive.add(tarred.parents[1], ".claude")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(p), "-c", "user.email=a@b", "-c", "user.name=a", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "start")
    git("checkout", "-q", "-b", "feature")
    _late_skill(p / "gitsub" / ".claude" / "skills", "late-git", R["git-checkout"])
    git("add", "gitsub/.claude")
    git("commit", "-q", "-m", "a skill")
    git("checkout", "-q", "main")
    assert not (p / "gitsub" / ".claude").exists()
    turns: list[Turn] = [
        call("Bash", command=_script(stage, "user", f"mkdir -p {home}/.claude/skills "
             f"{home}/.claude/commands\ncp -r {user} {home}/.claude/skills/\n"
             f"cp {stage}/latecmd.md {home}/.claude/commands/"), description="x"),
        call("Read", file_path=f"{p}/app/notes.txt"),
        call("Bash", command=_script(stage, "nested", f"mkdir -p {p}/sub/.claude/skills\n"
             f"cp -r {nested} {p}/sub/.claude/skills/"), description="x"),
        call("Read", file_path=f"{p}/sub/notes.txt"),
        call("Bash", command=_script(stage, "branch", "git checkout -q feature"), description="x"),
        call("Read", file_path=f"{p}/gitsub/notes.txt"),
        call("Bash", command=_script(stage, "untar", f"cd {p}/tarsub\ntar xf {stage}/a.tar"),
             description="x"),
        call("Write", file_path=f"{p}/tarsub/new.txt", content="new\n"),
        *(call("Skill", skill=name) for name in (
            "late-nested", "late-git", "late-tar", "late-user", "latecmd", "good-skill")),
        say("done"),
    ]  # fmt: skip
    return project, turns


@pytest.fixture(scope="module")
def claude_session(claude_cli: AgentCli, tmp_path_factory) -> Session:
    servers, stderr = [], ""
    for wrapped in (False, True):
        root = tmp_path_factory.mktemp("exec" if wrapped else "plain")
        project, turns = _claude_world(root)
        server = ScriptedModelServer(list(turns))
        with server:
            env = project.env(claude_cli, server.url)
            command = [str(claude_cli.program), *HEADLESS["claude"], "--allowedTools",
                       "Bash,Read,Skill,Write"]  # fmt: skip
            if wrapped:
                command = [sys.executable, "-m", "chimera_cards", "exec", "--", *command]
            done = subprocess.run(
                command,
                cwd=project.world.project,
                env=env,
                input="Use every skill you have.",
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.turns_played == len(turns), done.stderr[-3000:]
        stderr = done.stderr if wrapped else stderr
        servers.append(server)
    return Session(servers[0], servers[1], stderr)


def test_exec_keeps_out_a_skills_folder_made_mid_session_with_mkdir_and_cp(claude_session):
    assert claude_session.reached(CLAUDE_ROUTES["mkdir-and-copy"]) == (True, False)


def test_exec_keeps_out_a_skills_folder_a_git_checkout_brings_mid_session(claude_session):
    assert claude_session.reached(CLAUDE_ROUTES["git-checkout"]) == (True, False)


def test_exec_keeps_out_a_skills_folder_unpacked_with_tar_mid_session(claude_session):
    assert claude_session.reached(CLAUDE_ROUTES["tar-x"]) == (True, False)


def test_exec_keeps_out_a_user_skills_folder_made_mid_session(claude_session):
    assert claude_session.reached(CLAUDE_ROUTES["user-folder"]) == (True, False)


def test_exec_keeps_out_a_user_command_made_mid_session(claude_session):
    assert claude_session.reached(CLAUDE_ROUTES["user-command"]) == (True, False)


def test_through_exec_an_approved_nested_skill_still_loads(claude_session):
    assert received(claude_session.through_exec, GOOD_BODY)
