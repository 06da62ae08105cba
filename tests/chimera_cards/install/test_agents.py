"""The agent table: every agent's folders resolve under a fake HOME, home variables move the
user folders, detection looks only at the fake HOME, and the CLI lists and prints them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from chimera_cards._cli.app import main
from chimera_cards._install.agents import (
    AGENTS,
    UnknownAgentError,
    agent_locations,
    detect,
    find_agent,
    project_dir,
    user_dir,
)


@pytest.fixture
def home(tmp_path) -> Path:
    fake = tmp_path / "home"
    fake.mkdir()
    return fake


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def test_the_required_agents_are_in_the_table():
    names = {a.name for a in AGENTS}
    assert {
        "claude-code",
        "codex",
        "cursor",
        "gemini-cli",
        "github-copilot",
        "goose",
        "opencode",
        "universal",
    } <= names
    assert len(names) == len(AGENTS)  # one row per agent


def test_names_and_aliases_never_collide():
    keys = [k for a in AGENTS for k in (a.name, *a.aliases)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("name", "project", "user"),
    [
        ("claude", ".claude/skills", ".claude/skills"),
        ("codex", ".agents/skills", ".agents/skills"),
        ("pi", ".agents/skills", ".agents/skills"),
        ("cursor", ".agents/skills", ".cursor/skills"),
        ("gemini", ".agents/skills", ".gemini/skills"),
        ("copilot", ".agents/skills", ".copilot/skills"),
        ("goose", ".goose/skills", ".config/goose/skills"),
        ("opencode", ".agents/skills", ".config/opencode/skills"),
        ("agents", ".agents/skills", ".config/agents/skills"),
    ],
)
def test_folders_resolve_under_the_fake_home(home, tmp_path, name, project, user):
    agent = find_agent(name)
    assert project_dir(agent, tmp_path / "proj") == tmp_path / "proj" / project
    assert user_dir(agent, env_for(home)) == home / user


def test_claude_config_dir_moves_the_claude_user_folder(home, tmp_path):
    moved = tmp_path / "elsewhere"
    agent = find_agent("claude-code")
    assert user_dir(agent, env_for(home, CLAUDE_CONFIG_DIR=str(moved))) == moved / "skills"
    # A blank variable is as good as unset, as the agents themselves treat it.
    assert user_dir(agent, env_for(home, CLAUDE_CONFIG_DIR="  ")) == home / ".claude/skills"


def test_codex_home_moves_codex_detection_but_not_its_user_folder(home, tmp_path):
    # Current Codex (and npx) read user skills from ~/.agents/skills, wherever CODEX_HOME is.
    moved = tmp_path / "codex-home"
    agent = find_agent("codex")
    env = env_for(home, CODEX_HOME=str(moved))
    assert user_dir(agent, env) == home / ".agents/skills"
    assert not detect(agent, env)
    moved.mkdir()
    assert detect(agent, env)


def test_xdg_config_home_moves_config_based_folders(home, tmp_path):
    xdg = tmp_path / "xdg"
    env = env_for(home, XDG_CONFIG_HOME=str(xdg))
    assert user_dir(find_agent("goose"), env) == xdg / "goose/skills"
    assert user_dir(find_agent("opencode"), env) == xdg / "opencode/skills"
    # XDG: a relative value is invalid and ignored.
    env = env_for(home, XDG_CONFIG_HOME="relative/dir")
    assert user_dir(find_agent("goose"), env) == home / ".config/goose/skills"


def test_detection_looks_only_at_the_agents_home(home):
    env = env_for(home)
    assert not any(loc.detected for loc in agent_locations(env, home) if loc.name != "codex")
    (home / ".claude").mkdir()
    (home / ".config" / "goose").mkdir(parents=True)
    detected = {loc.name for loc in agent_locations(env, home) if loc.detected}
    assert {"claude-code", "goose"} <= detected
    assert "cursor" not in detected


def test_an_unknown_agent_is_a_usage_error_listing_the_known_ones():
    with pytest.raises(UnknownAgentError) as info:
        find_agent("vim")
    assert info.value.exit_code == 2
    assert "claude-code" in str(info.value)


def test_agents_command_marks_detected_agents(home):
    (home / ".cursor").mkdir()
    result = CliRunner().invoke(main, ["agents"], env=env_for(home, XDG_CONFIG_HOME=""))
    assert result.exit_code == 0, result.output
    lines = {line[2:].split()[0]: line for line in result.stdout.splitlines()}
    assert lines["cursor"].startswith("* ")
    assert lines["claude-code"].startswith("  ")
    assert str(home / ".cursor/skills") in lines["cursor"]


def test_agents_json_lists_every_agent(home):
    result = CliRunner().invoke(main, ["agents", "--json"], env=env_for(home))
    data = json.loads(result.stdout)
    assert [d["name"] for d in data] == [a.name for a in AGENTS]
    assert {"name", "project", "user", "detected", "aliases"} <= set(data[0])


def test_path_prints_the_store_and_agent_folders(home, tmp_path):
    env = env_for(home, CHIMERA_CARDS_HOME=str(tmp_path / "cc"))
    result = CliRunner().invoke(main, ["path"], env=env)
    assert result.stdout == f"{tmp_path / 'cc' / 'cards.db'}\n"
    result = CliRunner().invoke(main, ["path", "--agent", "claude", "--global"], env=env)
    assert result.stdout == f"{home / '.claude/skills'}\n"


def test_path_with_an_unknown_agent_is_one_error_line(home):
    result = CliRunner().invoke(main, ["path", "--agent", "nope"], env=env_for(home))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown agent 'nope'")
    assert len(result.stderr.splitlines()) == 1
