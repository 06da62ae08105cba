"""CLI for putting approved skills where agents read them: install, uninstall, check, sync,
agents, path (re-fetching them, ``update`` and ``outdated``, is ``cli/update.py``).

Thin click skins over ``agents`` and ``install``; the decisions live there. ``check`` is what CI
runs on every push, so this module imports nothing that check does not need (no network, no
Markdown, no signing library); the bodies of ``check`` and ``install`` are in ``cli/plain.py``,
which the console entry also runs without click.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from chimera_cards._cli import plain
from chimera_cards._cli.common import (
    echo_json,
    file_option,
    folder_option,
    json_option,
    reports_errors,
    runs_without_click,
    store_option,
)
from chimera_cards._cli.plain import open_store, target_dir
from chimera_cards._importer.lockfile import read_lockfile
from chimera_cards._install.disk import check_name, remove_skill
from chimera_cards._install.sync import apply_sync, plan_sync
from chimera_cards._store.location import default_store_path  # one definition of "home"
from chimera_cards.errors import UsageError


def _target_options(fn):
    fn = click.option(
        "--global", "global_", is_flag=True, help="With --agent: its user-wide folder."
    )(fn)
    fn = click.option(
        "--agent",
        multiple=True,
        help="For this agent (see `chimera-cards agents`); repeat for several, '*' for every "
        "agent detected here.",
    )(fn)
    return folder_option(
        "--to",
        help="The skills folder (each skill goes to DIR/NAME/).",
    )(fn)


@runs_without_click(plain.install_body)
@click.command("install")
@click.argument("names", nargs=-1, required=True)
@_target_options
@click.option(
    "--force",
    is_flag=True,
    help="Replace folders and links this tool did not make, and installed folders changed "
    "since (the changes are lost).",
)
@click.option(
    "--link",
    is_flag=True,
    help="As npx skills does: one copy in .agents/skills, a link to it in each other agent's "
    "folder.",
)
@store_option
@json_option
@reports_errors
def install_cmd(names, to, agent, global_, force, link, store_path, as_json) -> None:
    """Write each NAME's approved bundle, byte for byte, into an agent's skills folder.

    Pending, rejected or retired versions are refused; nothing is written unless every NAME can
    be installed.
    """
    plain.install_body(names, to, agent, global_, force, link, store_path, as_json, echo=click.echo)


@click.command("uninstall")
@click.argument("names", nargs=-1, required=True)
@_target_options
@click.option("--force", is_flag=True, help="Remove a folder even if this tool did not install it.")
@json_option
@reports_errors
def uninstall_cmd(names, to, agent, global_, force, as_json) -> None:
    """Remove skill folders (and links) this tool installed; a link's target is left alone."""
    directories = plain.target_dirs(to, agent, global_)
    for name in names:
        check_name(name)
    done = []
    for directory in directories:
        for name in names:
            remove_skill(directory, name, force=force)
            done.append({"name": name, "path": str(directory / name)})
    if as_json:
        echo_json(done)
        return
    for d in done:
        click.echo(f"removed {d['name']} from {d['path']}")


@runs_without_click(plain.check_body)
@click.command("check")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--agent",
    multiple=True,
    help="Check this agent's skills folder (repeat for several; '*': every detected agent).",
)
@click.option("--global", "global_", is_flag=True, help="With --agent: its user-wide folder.")
@click.option("--all", "all_", is_flag=True, help="Every agent folder that exists here.")
@file_option(
    "--trust-file",
    help="Judge approvals against this trust file's keys and threshold, not the store's.",
)
@file_option(
    "--lockfile",
    help="Also verify it: our lockfile's digests (a folder it does not pin is unpinned, a pin "
    "with no folder missing), or npx's skills-lock.json computedHash.",
)
@store_option
@json_option
@click.option(
    "--format",
    "fmt",
    default=None,
    metavar="[text|json|sarif]",
    help="text (default), json (same as --json), or sarif (SARIF 2.1.0, for code scanning).",
)
@reports_errors
def check_cmd(dirs, agent, global_, all_, trust_file, lockfile, store_path, as_json, fmt) -> None:
    """One line per skill folder: ok, modified (naming files), revoked, unknown, missing or
    unpinned (with --lockfile).

    A folder that is a link is checked at its target (`ok NAME -> .agents/skills/NAME`); a
    link leaving the project is reported, never followed. Without a store every folder is
    unknown. Exit 0 only when every skill is ok: the command to run in CI on `.claude/skills`.
    """
    plain.check_body(
        dirs,
        agent,
        global_,
        all_,
        trust_file,
        lockfile,
        store_path,
        as_json,
        fmt,
        echo=click.echo,
    )


@click.command("sync")
@click.argument("names", nargs=-1)
@_target_options
@file_option(
    "--lockfile",
    help="Make the folder hold exactly the bundles this lockfile pins: what it does not pin "
    "is removed (a folder this tool did not install is named, and the sync fails).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@store_option
@json_option
@reports_errors
def sync_cmd(names, to, agent, global_, lockfile, dry_run, store_path, as_json) -> None:
    """Make a skills folder equal to the approved set: NAMEs, a --lockfile, or every usable skill.

    Installs what is missing, replaces what was upgraded, removes what this tool installed and
    is no longer approved; folders it did not install are never touched. With --lockfile the
    folder is made exactly the lock, as npm ci makes node_modules: what this tool installed and
    the lock does not pin is removed too, and exit 1 when any pin is not installed or kept, or a
    folder it did not install is not pinned, naming why for each.
    """
    from chimera_cards._install.folderlock import folder_lock

    directories = plain.target_dirs(to, agent, global_)
    if names and lockfile is not None:
        raise UsageError("give NAMEs or --lockfile, not both")
    with open_store(store_path) as store:
        pins = _sync_pins(store, lockfile) if lockfile is not None else None
        plans = []
        for directory in directories:
            if dry_run:
                plan = plan_sync(store, directory, names or None, pins)
            else:
                # One lock around the plan and its carrying out: the plan is of what is there.
                with folder_lock(directory):
                    plan = plan_sync(store, directory, names or None, pins)
                    apply_sync(store, directory, plan)
            plans.append((directory, plan))
    unmet = [(d, a) for d, plan in plans for a in plan if a.unmet]
    if as_json:
        actions = [{**a.to_dict(), "folder": str(d)} for d, plan in plans for a in plan]
        misses = [
            {"name": a.name, "kind": a.unmet, "message": a.reason, "folder": str(d)}
            for d, a in unmet
        ]
        echo_json({"dry_run": dry_run, "actions": actions, "unmet": misses})
    else:
        for directory, plan in plans:
            if len(plans) > 1:
                click.echo(f"{directory}:")
            for action in plan:
                click.echo(("would " if dry_run else "") + action.line())
    if unmet:  # a lockfile is a contract: a pin not installed or kept fails the command
        raise SystemExit(1)


def _sync_pins(store, lockfile: Path) -> dict[str, str]:
    """name -> bundle digest from our lockfile, or from npx's skills-lock.json (its entries
    mapped to the stored versions whose files hash to their computedHash)."""
    from chimera_cards._importer.npxlock import is_npx_lock, npx_pins, read_npx_lock

    if is_npx_lock(lockfile):
        return npx_pins(store, read_npx_lock(lockfile))
    return read_lockfile(lockfile)


@click.command("adopt")
@click.argument(
    "root", required=False, default=Path("."), type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--global",
    "global_",
    is_flag=True,
    help="The user-wide agent folders and ~/.agents/.skill-lock.json.",
)
@store_option
@json_option
@reports_errors
def adopt_cmd(root, global_, store_path, as_json) -> None:
    """Import every skill a project's agent folders hold, as npx skills left them.

    Each folder becomes a version whose source is what npx's lock records (update fetches from
    there, never from the folder); a remote one is held for review. Exit 1 when something could
    not be adopted (a link out, a lock entry with no folder, files npx did not record).
    """
    from chimera_cards._install.adopt import adopt, plan_adopt

    if global_ and root != Path("."):
        raise UsageError("--global adopts the user-wide folders; it takes no DIR")
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder")
    plan = plan_adopt(root, global_=global_)  # refuses before any store is made
    with open_store(store_path, create=True) as store:
        report = adopt(store, plan.root, plan)
    if as_json:
        echo_json(report.to_dict())
    else:
        for s in report.skills:
            digest = f" {s.digest[:12]}" if s.digest else ""
            status = f" {s.status}" if s.status else ""
            line = f"{s.outcome:<9} {s.name}{digest}{status}"
            if s.quirk and s.quirk not in s.reason:
                s.reason = f"{s.reason}; {s.quirk}" if s.reason else s.quirk
            if s.source:
                line += f"  from {s.source.get('source')} ({s.source.get('sourceType')})"
            click.echo(f"{line}  {s.reason}" if s.reason else line)
        waiting = report.to_review()
        if waiting:
            click.echo(f"{len(waiting)} to review and approve before agents may use them:")
            for s in waiting:
                click.echo(f"  chimera-cards review {s.name}")
                click.echo(f"  chimera-cards approve {s.name} --digest {s.digest} --key KEY")
    if not report.ok:
        raise SystemExit(1)


@click.command("agents")
@json_option
@reports_errors
def agents_cmd(as_json) -> None:
    """List the agents this tool can install for, with their project and user skill folders.

    A `*` marks the agents detected on this machine (their home folder exists).
    """
    from chimera_cards._install.agents import (
        agent_locations,  # the agents table: only for this command
    )

    found = agent_locations(os.environ, Path("."))
    if as_json:
        echo_json([a.to_dict() for a in found])
        return
    width = max(len(a.name) for a in found)
    for a in found:
        mark = "*" if a.detected else " "
        click.echo(f"{mark} {a.name:<{width}}  {a.project:<20} {a.user or '-'}")


@click.command("path")
@click.option("--agent", default=None, help="Print this agent's skills folder instead.")
@click.option("--global", "global_", is_flag=True, help="With --agent: its user-wide folder.")
@store_option
@json_option
@reports_errors
def path_cmd(agent, global_, store_path, as_json) -> None:
    """Print where the store lives (or, with --agent, where that agent reads skills)."""
    if agent is None:
        if global_:
            raise UsageError("--global goes with --agent")
        path = store_path or default_store_path()
        if path.exists() and not path.is_file():
            raise UsageError(f"{path}: not a store file")
        if not path.exists() and path.parent.exists() and not path.parent.is_dir():
            raise UsageError(f"{path}: its folder is a file")
        what = {"store": str(path), "exists": path.is_file()}
    else:
        folder = target_dir(None, agent or None, global_)
        what = {"agent": agent, "global": global_, "skills": str(folder)}
    if as_json:
        echo_json(what)
    else:
        click.echo(what.get("store") or what["skills"])


COMMANDS = [
    adopt_cmd,
    install_cmd,
    uninstall_cmd,
    check_cmd,
    sync_cmd,
    agents_cmd,
    path_cmd,
]
