"""The agents table against the real ``npx skills`` 1.7.4: installed for every agent it knows, in a
project and for the user, each skill lands exactly in the folders our table names."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from chimera_cards._install.agents import AGENTS, CANONICAL_PROJECT_DIR, project_dir, user_dir

NPX_AGENTS = 79


def _source(tmp_path: Path) -> Path:
    skill = tmp_path / "src" / "skills" / "probe"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: probe\ndescription: Where does it go.\n---\nx\n")
    return skill.parent.parent


def _landed(root: Path) -> set[Path]:
    """Every folder or link named ``probe`` under ``root`` (links not followed)."""
    found = set()
    for top, dirs, _files in os.walk(root):
        for name in list(dirs):
            if name == "probe":
                found.add(Path(top) / name)
                dirs.remove(name)
        for name in _files:
            if name == "probe":  # a link to a folder is listed with the files by os.walk
                found.add(Path(top) / name)
    return found


def test_the_table_has_every_agent_npx_knows():
    assert len(AGENTS) >= NPX_AGENTS
    assert len({a.name for a in AGENTS}) == len(AGENTS)


@pytest.mark.slow
def test_npx_installs_into_the_project_folders_our_table_names(skills_cli, tmp_path):
    src, project, home = _source(tmp_path), tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    # npx links into an agent's folder only where the agent's top folder is in the project.
    for agent in AGENTS:
        (project / agent.project.split("/")[0]).mkdir(exist_ok=True)
    done = skills_cli.run(["add", str(src), "--agent", "*", "-y"], project, home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"\b{NPX_AGENTS} agents\b", done.stdout), done.stdout
    ours = {project_dir(agent, project) / "probe" for agent in AGENTS}
    assert _landed(project) == ours
    for path in ours:
        assert (path / "SKILL.md").is_file(), path


@pytest.mark.slow
def test_npx_installs_into_the_user_folders_our_table_names(skills_cli, tmp_path):
    src, project, home = _source(tmp_path), tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    done = skills_cli.run(["add", str(src), "--agent", "*", "--global", "-y"], project, home)
    assert done.returncode == 0, done.stdout + done.stderr
    env = {"HOME": str(home)}
    # An agent reading .agents/skills in a project gets npx's one copy in ~/.agents/skills
    # globally; every other agent gets a link in its own user folder, where our table says.
    expected = {home / ".agents" / "skills" / "probe"}
    expected |= {
        user_dir(agent, env) / "probe"
        for agent in AGENTS
        if agent.user is not None and agent.project != CANONICAL_PROJECT_DIR
    }
    assert _landed(home) == expected
    codex = next(a for a in AGENTS if a.name == "codex")
    assert user_dir(codex, env) == home / ".agents" / "skills"
