"""CLI for the gate at run time: serve (MCP), hook (Claude Code), prompt, and the installed view.

Thin click skins over ``chimera_cards._runtime``; the decisions live there.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from chimera_cards._cli.common import (
    echo_json,
    file_option,
    folder_option,
    json_option,
    reports_errors,
    runs_without_click,
    store_option,
)
from chimera_cards.errors import ChimeraError, UsageError

_trust_file_option = file_option(
    "--trust-file",
    help="Judge approvals against this trust file's keys and threshold, not the store's.",
)


@click.command("serve")
@click.option("--mcp", "mcp_", is_flag=True, help="Serve the MCP Skills extension.")
@folder_option(
    "--from",
    "from_dir",
    help="Serve the skills in this agent folder that check calls ok (default: the store).",
)
@click.option("--agent", default=None, help="Like --from, that agent's skills folder.")
@click.option("--global", "global_", is_flag=True, help="With --agent: its user-wide folder.")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio, or streamable HTTP on --host/--port.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address (http).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="TCP port (0: a free one).")
@_trust_file_option
@store_option
@reports_errors
def serve_cmd(
    mcp_, from_dir, agent, global_, transport, host, port, trust_file, store_path
) -> None:
    """Serve approved skills to agents: only versions that verify now, re-hashed on every read.

    A pending, rejected, revoked or tampered version is absent; an approval or a tamper shows on
    the next request, without a restart. With --from, only folders check calls ok are served.
    """
    if not mcp_:
        raise UsageError("say what to serve: --mcp (the MCP Skills extension)")
    if transport == "stdio" and (host != "127.0.0.1" or port != 0):
        raise UsageError("--host and --port go with --transport http")
    from chimera_cards._runtime.catalog import Catalog, FolderCatalog, StoreCatalog
    from chimera_cards._runtime.mcp_server import build_server, run_http, run_stdio

    if agent is not None:
        if from_dir is not None:
            raise UsageError("give --from DIR or --agent AGENT, not both")
        from chimera_cards._cli.plain import target_dir

        from_dir = target_dir(None, agent, global_)
    elif global_:
        raise UsageError("--global goes with --agent")
    from chimera_cards._install.policy import trust_file_policy
    from chimera_cards._store.location import existing_store_path

    store_file = existing_store_path(store_path)
    policy = trust_file_policy(trust_file)
    if from_dir is not None:
        if not from_dir.is_dir():
            raise UsageError(f"{from_dir}: no such folder")
        from chimera_cards._bundles.folderscan import find_skill_folders

        if not find_skill_folders(from_dir):  # as check: more likely a wrong path than a choice
            raise ChimeraError(f"no skill folders in {from_dir}")
        catalog: Catalog = FolderCatalog(store_file, from_dir, policy)
    else:
        catalog = StoreCatalog(store_file, policy)

    def log(line: str) -> None:
        print(f"note: {line}", file=sys.stderr, flush=True)

    server = build_server(catalog, log=log)
    if transport == "stdio":
        run_stdio(server)
    else:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the server quietly
            run_http(server, host=host, port=port)


@click.command("prompt")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option("--agent", default=None, help="This agent's skills folder.")
@click.option("--global", "global_", is_flag=True, help="With --agent: its user-wide folder.")
@_trust_file_option
@store_option
@json_option
@reports_errors
def prompt_cmd(dirs, agent, global_, trust_file, store_path, as_json) -> None:
    """Print <available_skills> for every installed skill whose bytes check calls ok.

    The same block `agentskills to-prompt` prints for those folders; a skill that is modified,
    revoked or unknown is left out and named in one `note:` line on stderr.
    """
    from chimera_cards._cli.plain import open_store, target_dir
    from chimera_cards._install.policy import trust_file_policy
    from chimera_cards._runtime.to_prompt import available, render

    if agent is not None:
        if dirs:
            raise UsageError("give folders or --agent, not both")
        directories = [target_dir(None, agent, global_)]
    else:
        if global_:
            raise UsageError("--global goes with --agent")
        if not dirs:
            raise UsageError("give one or more skills folders, or --agent AGENT")
        for d in dirs:
            if not d.is_dir():
                raise UsageError(f"{d}: no such folder")
        directories = list(dirs)
    with open_store(store_path) as store:
        shown, left_out = available(store, directories, trust_file_policy(trust_file))
    if not shown and not left_out:
        # As check: a folder holding no skill at all is more likely a wrong path than a choice.
        raise ChimeraError(f"no skill folders in {', '.join(str(d) for d in directories)}")
    if as_json:
        echo_json(
            {
                "skills": [s.to_dict() for s in shown],
                "left_out": [s.to_dict() for s in left_out],
            }
        )
    else:
        click.echo(render(shown))
        if left_out:
            click.echo(
                "note: not shown: " + "; ".join(f"{s.name} ({s.state})" for s in left_out),
                err=True,
            )


@click.group("hook")
def hook_group() -> None:
    """The commands agents' hooks run before a skill loads (Claude Code, Gemini CLI)."""


def _hook_command(agent: str, display: str, settings: str, event: str) -> click.Command:
    @click.command(agent)
    @click.option(
        "--install",
        "install_",
        is_flag=True,
        help=f"Write the hooks into {settings} (merged; other hooks are kept).",
    )
    @file_option(
        "--settings",
        "settings_path",
        help=f"With --install: this settings file (default: ./{settings}).",
    )
    @click.option(
        "--global",
        "global_",
        is_flag=True,
        help="With --install: the user-wide settings file (every project of this user).",
    )
    @click.option(
        "--managed",
        is_flag=True,
        help="With --install: the administrator's settings file, which no project can turn "
        "off (/etc/...).",
    )
    @click.option(
        "--event",
        type=click.Choice(["auto", "pre-tool-use", "session-start", "user-prompt"]),
        default="auto",
        help="Which hook event the input is (default: its hook_event_name).",
    )
    @click.option("--fail-open", is_flag=True, help="Warn instead of blocking when the hook fails.")
    @click.option(
        "--deadline",
        default=None,
        metavar="SECONDS",
        help="Block past this many seconds (default 10).",
    )
    @_trust_file_option
    @store_option
    @click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="With --install: print what was written as JSON (a hook run answers the agent in "
        "its own JSON).",
    )
    @reports_errors
    def command(
        install_,
        settings_path,
        global_,
        managed,
        event,
        fail_open,
        deadline,
        trust_file,
        store_path,
        as_json,
    ) -> None:
        from chimera_cards._runtime import agent_hooks

        for flag, given in (("--global", global_), ("--managed", managed)):
            if given and (not install_ or settings_path is not None):
                raise UsageError(f"{flag} goes with --install, instead of --settings")
        if global_ and managed:
            raise UsageError("--global or --managed, not both")
        if install_:
            path = settings_path or (
                agent_hooks.user_settings(agent)
                if global_
                else agent_hooks.MANAGED_SETTINGS[agent]
                if managed
                else Path(settings)
            )
            added = agent_hooks.install_hooks(
                path, agent, store=store_path, trust_file=trust_file, fail_open=fail_open
            )
            if as_json:
                echo_json({"settings": str(path), "added": list(added)})
                return
            for line in added:
                click.echo(f"added {line} -> {path}")
            if not added:
                click.echo(f"unchanged {path}: the hooks are there")
            return
        if as_json:
            raise UsageError("--json goes with --install (a hook run answers in the agent's JSON)")
        from chimera_cards._cli.plain import hook_body

        sys.exit(hook_body(agent, store_path, trust_file, fail_open, event, deadline))

    command.help = (
        f"Run as {display}'s {event} hook: block a skill whose bytes are not approved.\n\n"
        "Reads the hook's JSON on stdin. Exit 2 (the call is blocked; the one stderr line is "
        "shown to the model) unless check would call the skill ok. Bad input, a missing store "
        "or any failure blocks too, unless --fail-open. As a SessionStart hook it reports drift."
    )
    from chimera_cards._cli.plain import hook_body

    only = ("install_", "settings_path", "global_", "managed", "as_json")
    return runs_without_click(hook_body, click_only=only, agent=agent)(command)


hook_group.add_command(
    _hook_command("claude", "Claude Code", ".claude/settings.json", "PreToolUse")
)
hook_group.add_command(_hook_command("gemini", "Gemini CLI", ".gemini/settings.json", "BeforeTool"))


def list_installed(store_path: Path | None, as_json: bool) -> None:
    """``chimera-cards list --installed``: every agent's skill folders, project and user-wide.

    Exit 1 when any folder is not ok (as ``check``), so a script can branch on it.
    """
    from chimera_cards._cli.plain import open_store
    from chimera_cards._runtime.installed import installed_skills

    with open_store(store_path) as store:
        rows = installed_skills(store, root=Path.cwd())
    if as_json:
        echo_json([r.to_dict() for r in rows])
    else:
        folder = None
        for row in rows:
            if row.folder != folder:
                folder = row.folder
                shown = ", ".join(row.agents[:3]) + (
                    f" and {len(row.agents) - 3} more" if len(row.agents) > 3 else ""
                )
                click.echo(f"{folder} ({row.scope}: {shown})")
            text = f"  {row.state:<8} {row.name}  {row.version or '-'}"
            click.echo(f"{text}  {row.detail}" if row.detail else text)
    if any(r.state != "ok" for r in rows):
        raise SystemExit(1)


@click.command(
    "exec",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--agent",
    default="any",
    metavar="AGENT",
    help="The agent started: any, claude, codex, gemini (all agents' folders are judged).",
)
@click.option("--dry-run", is_flag=True, help="Judge and print the view; start nothing.")
@click.option("--keep-commands", is_flag=True, help="Show .claude/commands as they are.")
@_trust_file_option
@store_option
@json_option
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@reports_errors
def exec_cmd(agent, dry_run, keep_commands, trust_file, store_path, as_json, command) -> None:
    """Run COMMAND seeing only the skills check calls ok: exec -- claude"""
    # Every skills folder an agent reads from here (project, above and nested; user; managed;
    # Claude Code plugins) is judged as check judges it; COMMAND then runs in a private mount
    # namespace (bubblewrap) where each is read-only and holds copies of the ok skills only.
    import os

    from chimera_cards._cli.plain import open_store
    from chimera_cards._runtime import launch

    if agent not in ("any", "claude", "codex", "gemini"):
        raise UsageError(f"--agent {agent!r}: one of any, claude, codex, gemini")
    argv = list(command)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    from chimera_cards._install.policy import trust_file_policy

    policy = trust_file_policy(trust_file)
    store_file = store_path
    if store_file is None:
        from chimera_cards._store.location import default_store_path

        store_file = default_store_path()
    if not store_file.is_file() and store_path is not None:
        raise UsageError(f"--store {store_path}: no store there")
    guard = launch.guard_args(argv, agent, store_file if store_file.is_file() else None, trust_file)
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(open_store(store_file)) if store_file.is_file() else None
        prepared = launch.prepare(
            argv if argv or not dry_run else ["true"],
            store=store,
            policy=policy,
            env=os.environ,
            cwd=os.getcwd(),
            keep_commands=keep_commands,
            guard=guard,
        )
    view = prepared.view
    if dry_run:
        if as_json:
            echo_json({**view.to_dict(), "wrapped": prepared.wrapped})
        else:
            for line in _view_lines(prepared):
                click.echo(line)
        return
    for line in _view_lines(prepared):
        click.echo(f"chimera-cards exec: {line}", err=True)
    launch.exec_agent(prepared, os.environ)


def _view_lines(prepared) -> list[str]:
    view = prepared.view
    lines = [f"hidden {h.line()}" for h in view.hidden]
    if not prepared.wrapped:
        lines.append("note: no private view (bubblewrap cannot run here); every folder is ok now")
    if not lines or prepared.wrapped:
        shown = sum(len(m.shown) for m in view.mounts)
        lines.append(f"view: {shown} approved skill(s) shown, {len(view.hidden)} hidden")
    return lines
