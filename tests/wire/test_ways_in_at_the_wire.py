"""Ways in past ``exec`` and the hook, proved at the wire with the real agent CLIs.

``test_skills_at_the_wire`` plants skills in the folders an agent reads by default. These plant
them where an agent is *pointed* at: a folder named on its command line (Claude Code's
``--add-dir``, Codex CLI's ``-C``), a variable that moves its home or adds plugins
(``GEMINI_CLI_HOME``, ``CLAUDE_CODE_PLUGIN_DIRS``), a local marketplace (Claude Code loads the
plugin from the marketplace's folder, not the cache copy), a listed plugin skill deep in the
plugin or under ``hooks/``, a nested ``.claude/skills`` inside ``node_modules``, a linked
Gemini CLI extension.

Each agent runs one session that tries every such route (a module-scoped server and project,
so the CLIs start few times): once plainly, the control, which must show every marker (else the
route is not real and the test could not fail), and once through ``chimera-cards exec``, where
no marker may reach the server while the approved skill's still does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from wire.agents import AgentCli
from wire.model_server import ScriptedModelServer, Turn, call, say
from wire.test_skills_at_the_wire import (
    BAD,
    GOOD_BODY,
    GOOD_DESC,
    HEADLESS,
    Project,
    install_hook,
    skill_md,
)

from chimera_cards._runtime.launch import find_bwrap

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_bwrap(os.environ) is None
        and os.environ.get("CI", "").lower() not in ("1", "true", "yes"),
        reason="bubblewrap cannot make a mount namespace here",
    ),
]


def plant(folder: Path, name: str, marker: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md(name, f"D{marker}", f"B{marker}"))


@dataclass
class Session:
    """What the server received in the plain run and in the run through exec."""

    plain: ScriptedModelServer
    through_exec: ScriptedModelServer
    exec_stderr: str

    def leaked(self, marker: str) -> tuple[bool, bool]:
        """(whether the plain run showed the marker, whether the exec run did)."""
        both = (f"D{marker}", f"B{marker}")
        return (
            any(self.plain.saw(m) for m in both),
            any(self.through_exec.saw(m) for m in both),
        )


def _run_both(agent: AgentCli, project: Project, argv: list[str], turns, env_extra) -> Session:
    servers = []
    stderr = ""
    for wrapped in (False, True):
        server = ScriptedModelServer(list(turns))
        with server:
            env = project.env(agent, server.url)
            env.update(env_extra)
            command = [str(agent.program), *argv]
            if wrapped:
                command = [sys.executable, "-m", "chimera_cards", "exec", "--", *command]
            done = subprocess.run(
                command,
                cwd=project.world.project,
                env=env,
                input="Use every skill you have.",
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.agent_requests, done.stderr[-3000:]
        if wrapped:
            stderr = done.stderr
        servers.append(server)
    return Session(servers[0], servers[1], stderr)


# -- Claude Code ---------------------------------------------------------------------------------

CLAUDE_ROUTES = {
    "add-dir": "ADDDIR_71",
    "node-modules": "NODEMOD_72",
    "marketplace-hooks-folder": "MKTHOOKS_73",
    "marketplace-deep-listing": "MKTDEEP_74",
    "plugin-dirs-variable": "ENVPLUG_75",
}


def _marketplace(root: Path, plugin: str, listed: dict[str, str]) -> Path:
    """A local marketplace with one plugin whose entry lists skill folders (path -> marker)."""
    market = root / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    entry = {"name": plugin, "source": f"./{plugin}", "description": "x", "skills": list(listed)}
    (market / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "localmkt", "owner": {"name": "x"}, "plugins": [entry]})
    )
    (market / plugin / ".claude-plugin").mkdir(parents=True)
    (market / plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": plugin, "version": "1.0.0", "description": "x"})
    )
    for path, marker in listed.items():
        plant(market / plugin / path, Path(path).name, marker)
    return market


@pytest.fixture(scope="module")
def claude_session(claude_cli: AgentCli, tmp_path_factory) -> Session:
    root = tmp_path_factory.mktemp("claude-ways")
    project = Project(root, "claude")
    extra = root / "extra"
    plant(extra / ".claude" / "skills" / "evil-adddir", "evil-adddir", CLAUDE_ROUTES["add-dir"])
    package = project.world.project / "node_modules" / "pkg"
    plant(package / ".claude" / "skills" / "evil-nm", "evil-nm", CLAUDE_ROUTES["node-modules"])
    (package / "index.js").write_text("module.exports = 1\n")
    market = _marketplace(
        root,
        "evilplugin",
        {
            "./hooks/evil-hooks": CLAUDE_ROUTES["marketplace-hooks-folder"],
            "./a/b/c/d/evil-deep": CLAUDE_ROUTES["marketplace-deep-listing"],
        },
    )
    plugin_dir = root / "envplug"
    (plugin_dir / ".claude-plugin").mkdir(parents=True)
    (plugin_dir / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "envplug", "version": "1.0.0"})
    )
    plant(plugin_dir / "skills" / "evil-env", "evil-env", CLAUDE_ROUTES["plugin-dirs-variable"])
    with ScriptedModelServer([]) as server:
        env = project.env(claude_cli, server.url)
        for args in (
            ["plugin", "marketplace", "add", str(market)],
            ["plugin", "install", "evilplugin@localmkt"],
        ):
            added = claude_cli.run(args, cwd=project.world.project, env=env)
            assert added.returncode == 0, added.stdout + added.stderr
    turns: list[Turn] = [
        call("Read", file_path=str(package / "index.js")),
        call("Skill", skill="evil-nm"),
        call("Skill", skill="evil-adddir"),
        call("Skill", skill="evilplugin:evil-hooks"),
        call("Skill", skill="evilplugin:evil-deep"),
        call("Skill", skill="envplug:evil-env"),
        call("Skill", skill="good-skill"),
        say("done"),
    ]
    argv = [*HEADLESS["claude"], "--add-dir", str(extra)]
    return _run_both(claude_cli, project, argv, turns, {"CLAUDE_CODE_PLUGIN_DIRS": str(plugin_dir)})


def test_exec_hides_a_skills_folder_in_a_directory_given_with_add_dir(claude_session):
    assert claude_session.leaked(CLAUDE_ROUTES["add-dir"]) == (True, False)


def test_exec_hides_a_nested_skills_folder_inside_node_modules(claude_session):
    assert claude_session.leaked(CLAUDE_ROUTES["node-modules"]) == (True, False)


def test_exec_hides_a_local_marketplace_skill_listed_under_the_plugins_hooks_folder(
    claude_session,
):
    assert claude_session.leaked(CLAUDE_ROUTES["marketplace-hooks-folder"]) == (True, False)
    assert "market/evilplugin/hooks/evil-hooks: unknown" in claude_session.exec_stderr


def test_exec_hides_a_plugin_skill_listed_five_folders_deep(claude_session):
    assert claude_session.leaked(CLAUDE_ROUTES["marketplace-deep-listing"]) == (True, False)


def test_exec_hides_a_plugin_given_by_the_claude_code_plugin_dirs_variable(claude_session):
    assert claude_session.leaked(CLAUDE_ROUTES["plugin-dirs-variable"]) == (True, False)


def test_through_exec_the_approved_skill_still_reaches_claude(claude_session):
    assert claude_session.through_exec.saw(GOOD_DESC)


# -- Gemini CLI ----------------------------------------------------------------------------------

GEMINI_ROUTES = {
    "linked-extension": "GLINK_82",
    "home-moved-by-the-projects-env-file": "GDOTENV_83",
}


@pytest.fixture(scope="module")
def gemini_session(gemini_cli: AgentCli, tmp_path_factory) -> Session:
    root = tmp_path_factory.mktemp("gemini-ways")
    project = Project(root, "gemini")
    source = root / "extsrc"
    source.mkdir()
    (source / "gemini-extension.json").write_text(json.dumps({"name": "evilext", "version": "1"}))
    plant(source / "skills" / "evil-link", "evil-link", GEMINI_ROUTES["linked-extension"])
    with ScriptedModelServer([]) as server:
        env = project.env(gemini_cli, server.url)
        linked = gemini_cli.run(
            ["extensions", "link", str(source), "--consent"], cwd=project.world.project, env=env
        )
        assert linked.returncode == 0, linked.stdout + linked.stderr
    # A home named only in the project's own .gemini/.env, which Gemini CLI loads; it holds the
    # same settings (auth, no telemetry) and the extension record.
    by_file = root / "home-from-env-file"
    shutil.copytree(project.world.home / ".gemini", by_file / ".gemini")
    plant(
        by_file / ".gemini" / "skills" / "evil-dotenv",
        "evil-dotenv",
        GEMINI_ROUTES["home-moved-by-the-projects-env-file"],
    )
    (project.world.project / ".gemini").mkdir(exist_ok=True)
    (project.world.project / ".gemini" / ".env").write_text(f"GEMINI_CLI_HOME={by_file}\n")
    return _run_both(gemini_cli, project, HEADLESS["gemini"], [say("done")], {})


def test_exec_hides_skills_under_a_home_the_projects_env_file_moves_gemini_cli_to(
    gemini_session,
):
    marker = GEMINI_ROUTES["home-moved-by-the-projects-env-file"]
    assert gemini_session.leaked(marker) == (True, False)


def test_exec_hides_the_skills_of_a_linked_gemini_extension(gemini_session):
    assert gemini_session.leaked(GEMINI_ROUTES["linked-extension"]) == (True, False)


# -- Codex CLI -----------------------------------------------------------------------------------


def test_exec_hides_the_skills_of_the_folder_codex_is_pointed_at_with_dash_c(
    codex_cli: AgentCli, tmp_path: Path
) -> None:
    project = Project(tmp_path, "codex")
    other = tmp_path / "other"
    plant(other / ".agents" / "skills" / "evil-cd", "evil-cd", "CODEXCD_91")
    argv = ["exec", "-C", str(other), *HEADLESS["codex"][1:]]
    session = _run_both(codex_cli, project, argv, [say("done")], {})
    assert session.leaked("CODEXCD_91") == (True, False)


# -- the hook alone ------------------------------------------------------------------------------


def test_with_the_hook_a_local_marketplace_plugin_edited_after_install_is_blocked(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    # The plugin's skill is approved and installed; then its marketplace folder (which Claude
    # Code loads it from) is edited. The cache copy still holds the approved bytes.
    project = Project(tmp_path, "claude")
    install_hook(project)
    body = "---\nname: mkt-skill\ndescription: Use for markets.\n---\n\nMKTOK_11\n"
    project.world.add("mkt-skill", {"SKILL.md": body})
    market = _marketplace(tmp_path, "okplugin", {"./skills/mkt-skill": "unused"})
    (market / "okplugin" / "skills" / "mkt-skill" / "SKILL.md").write_text(body)
    with ScriptedModelServer([]) as server:
        env = project.env(claude_cli, server.url)
        for args in (
            ["plugin", "marketplace", "add", str(market)],
            ["plugin", "install", "okplugin@localmkt"],
        ):
            added = claude_cli.run(args, cwd=project.world.project, env=env)
            assert added.returncode == 0, added.stdout + added.stderr
        # Untouched, the approved plugin skill loads (its cache and marketplace copies agree).
        server.add(call("Skill", skill="okplugin:mkt-skill"), say("d"))
        done = claude_cli.run(
            HEADLESS["claude"], cwd=project.world.project, env=env, input="Use the plugin."
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.saw("MKTOK_11")
        server.add(call("Skill", skill="okplugin:mkt-skill"), say("d"))
        (market / "okplugin" / "skills" / "mkt-skill" / "SKILL.md").write_text(
            body.replace("MKTOK_11", "MKTEDIT_12")
        )
        done = claude_cli.run(
            HEADLESS["claude"], cwd=project.world.project, env=env, input="Use the plugin."
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not server.saw("MKTEDIT_12")
    results = " ".join(r for req in server.agent_requests for r in req.tool_results)
    assert "mkt-skill differs from its approved bytes" in results


def test_with_the_hook_a_prompts_slash_skill_and_at_mention_of_unapproved_bytes_are_blocked(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    # A leading /name loads that skill into the prompt, @path attaches the file: no tool call
    # is made, so only a hook on the prompt itself sees them.
    project = Project(tmp_path, "claude")
    install_hook(project)
    prompts = {
        "slash drifted": ("/drift-skill", BAD["drifted body"]),
        "mention dropped": (f"Look at @{project.folder}/dropped/SKILL.md", BAD["dropped body"]),
        "slash approved": ("/good-skill", GOOD_BODY),
    }
    seen = {}
    for what, (prompt, marker) in prompts.items():
        with ScriptedModelServer([say("done")]) as server:
            env = project.env(claude_cli, server.url)
            done = claude_cli.run(
                HEADLESS["claude"], cwd=project.world.project, env=env, input=prompt
            )
        seen[what] = server.saw(marker)
        if what != "slash approved":  # Claude Code prints the hook's reason on stdout
            said = done.stdout + done.stderr
            assert "not an approved skill" in said or "differs from its approved bytes" in said, (
                said
            )
    assert seen == {"slash drifted": False, "mention dropped": False, "slash approved": True}
    assert project.untouched()


def test_a_project_that_disables_all_hooks_cannot_turn_off_the_hook_in_managed_settings(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    # The project's own settings (.claude/settings.local.json, which a repository can ship)
    # say disableAllHooks. A hook in the project's settings is then off, and the drifted body
    # loads; the same hook installed into Claude Code's managed settings, which only the
    # machine's administrator writes, still runs. /etc/claude-code is made in a private mount
    # namespace (a copy of /etc bound over it), so the machine's own /etc is not touched.
    bwrap = find_bwrap(os.environ)
    assert bwrap is not None
    project = Project(tmp_path, "claude")
    local = project.world.project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}))
    etc = tmp_path / "etc"
    shutil.copytree("/etc", etc, symlinks=True, ignore_dangling_symlinks=True,
                    copy_function=_copy_readable)  # fmt: skip
    in_view = [bwrap, "--dev-bind", "/", "/", "--bind", str(etc), "/etc"]
    leaked = {}
    for where in ("project", "managed"):
        settings = project.world.project / ".claude" / "settings.json"
        settings.unlink(missing_ok=True)
        if where == "project":
            install_hook(project)
        else:  # `hook claude --install --managed`, run where /etc is the copy
            installed = subprocess.run(
                [*in_view, sys.executable, "-m", "chimera_cards", "hook", "claude", "--install",
                 "--managed", "--store", str(project.world.store)],
                cwd=project.world.project, env={**project.world.env, "PYTHONPATH": str(ROOT)},
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            assert installed.returncode == 0, installed.stderr
            assert "/etc/claude-code/managed-settings.json" in installed.stdout
            assert (
                "chimera-cards hook claude"
                in (etc / "claude-code" / "managed-settings.json").read_text()
            )
        turns = [call("Skill", skill="drift-skill"), say("done")]
        with ScriptedModelServer(turns) as server:  # type: ignore[arg-type]
            env = project.env(claude_cli, server.url)
            done = subprocess.run(
                [*in_view, str(claude_cli.program), *HEADLESS["claude"]],
                cwd=project.world.project, env=env, input="Use drift-skill.",
                capture_output=True, text=True, timeout=240, check=False,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        leaked[where] = server.saw(BAD["drifted body"])
    assert leaked == {"project": True, "managed": False}
    assert not os.path.exists("/etc/claude-code/managed-settings.json") or (
        "chimera-cards" not in Path("/etc/claude-code/managed-settings.json").read_text()
    )


def _copy_readable(source: str, target: str) -> None:
    with contextlib.suppress(OSError):  # a file this user cannot read (shadow): left out
        shutil.copy2(source, target)


def test_with_the_hook_gemini_clis_prompt_at_file_of_unapproved_bytes_is_blocked(
    gemini_cli: AgentCli, tmp_path: Path
) -> None:
    # Gemini CLI inlines an @path's file (a folder: all its files) into the prompt by calling
    # its read_many_files tool directly: no BeforeTool hook runs. The BeforeAgent entry gets
    # the prompt. Control: without that entry the bytes reach the model.
    project = Project(tmp_path, "gemini")
    settings = project.world.project / ".gemini" / "settings.json"
    project.world.cli(
        "hook", "gemini", "--install", "--settings", settings, "--store", project.world.store
    )
    folder = project.folder
    bad = f"Compare @{folder}/dropped/SKILL.md and @{folder}/drift-skill please"
    markers = (BAD["dropped body"], BAD["drifted body"])

    def run(prompt: str) -> tuple[ScriptedModelServer, subprocess.CompletedProcess]:
        with ScriptedModelServer([say("done")]) as server:
            env = project.env(gemini_cli, server.url)
            # --skip-trust alone trusts the folder after the project's settings (and hooks)
            # were passed over (measured with 0.61.0); the variable trusts it from the start.
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
            done = gemini_cli.run(
                HEADLESS["gemini"], cwd=project.world.project, env=env, input=prompt
            )
        return server, done

    installed = json.loads(settings.read_text())
    without = {**installed, "hooks": {k: v for k, v in installed["hooks"].items()
                                      if k != "BeforeAgent"}}  # fmt: skip
    settings.write_text(json.dumps(without))
    control, _ = run(bad)
    assert all(control.saw(m) for m in markers)  # the route is real
    settings.write_text(json.dumps(installed))
    guarded, done = run(bad)
    assert not any(guarded.saw(m) for m in markers)
    said = done.stdout + done.stderr
    assert "not an approved skill" in said or "differs from its approved bytes" in said, said
    approved, done = run(f"Summarize @{folder}/good-skill/SKILL.md")
    assert approved.saw(GOOD_BODY), done.stderr[-2000:]
    assert project.untouched()


def test_with_the_hook_a_claude_md_import_of_an_unapproved_skill_blocks_the_prompt(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    # CLAUDE.md imports (``@path``) are read at the start of the session, with no tool call,
    # into the first request. Control: without the prompt hook the imported body arrives.
    project = Project(tmp_path, "claude")
    install_hook(project)
    settings = project.world.project / ".claude" / "settings.json"
    installed = json.loads(settings.read_text())
    rules = project.world.project / ".claude" / "rules"
    rules.mkdir()
    (project.world.project / "CLAUDE.md").write_text("Follow @.claude/rules/style.md\n")
    (rules / "style.md").write_text("And these: @../skills/dropped/SKILL.md\n")  # two levels

    def run() -> tuple[ScriptedModelServer, subprocess.CompletedProcess]:
        with ScriptedModelServer([say("done")]) as server:
            env = project.env(claude_cli, server.url)
            done = claude_cli.run(
                HEADLESS["claude"], cwd=project.world.project, env=env, input="hello"
            )
        return server, done

    settings.write_text(json.dumps({"hooks": {k: v for k, v in installed["hooks"].items()
                                              if k != "UserPromptSubmit"}}))  # fmt: skip
    control, _ = run()
    assert control.saw(BAD["dropped body"])  # the route is real
    settings.write_text(json.dumps(installed))
    guarded, done = run()
    assert not guarded.saw(BAD["dropped body"])
    assert "memory file imports" in done.stdout + done.stderr, done.stdout + done.stderr
    (rules / "style.md").write_text("And these: @../skills/good-skill/SKILL.md\n")
    approved, done = run()
    assert approved.saw(GOOD_BODY), done.stdout + done.stderr
    assert project.untouched()
