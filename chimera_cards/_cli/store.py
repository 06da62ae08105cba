"""CLI for the card store: import, lock, list, show, export, audit, verify.

Thin click skins over ``importer``, ``lockfile`` and ``store``; the decisions live there.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chimera_cards._bundles.bundle import IGNORED_NAMES, SKILL_FILE, find_bundle_dirs
from chimera_cards._bundles.digests import parse_digest
from chimera_cards._cards.card import CardReadError
from chimera_cards._cli.common import (
    SECONDS,
    echo_json,
    file_option,
    json_option,
    renamed,
    reports_errors,
    store_option,
)
from chimera_cards._cli.plain import open_store
from chimera_cards._cli.scan import scanner_option, scanners_file_option, scanners_for
from chimera_cards._importer.lockfile import read_lockfile, write_lockfile
from chimera_cards._retrieve.export import export_card, select_version
from chimera_cards._sources.gitsource import is_git_source
from chimera_cards._sources.locate import locate
from chimera_cards._store.rows import STATUSES, Version
from chimera_cards._store.verify import verify_store
from chimera_cards._util.integrity import digest_keys, expected_hex
from chimera_cards._util.urls import DEFAULT_TIMEOUT, is_url
from chimera_cards.errors import UsageError

if TYPE_CHECKING:
    from chimera_cards._importer.pipeline import ImportResult


def _holds_a_skill(folder: str) -> bool:
    """Whether ``find_bundle_dirs(folder)`` finds anything, answered at the first skill folder
    directly inside it when there is one (the usual collection) instead of walking it all; the
    import walks it anyway."""
    if os.path.lexists(os.path.join(folder, SKILL_FILE)):
        return True
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name in IGNORED_NAMES:
                    continue
                if (entry.is_symlink() or entry.is_dir(follow_symlinks=False)) and os.path.lexists(
                    os.path.join(entry.path, SKILL_FILE)
                ):
                    return True
    except OSError:
        pass
    return bool(find_bundle_dirs(folder))


def _single_card_source(source: str) -> bool:
    path = Path(source)
    return is_url(source) or path.is_file() or (path / "SKILL.md").exists()


def _result_line(result: ImportResult) -> str:
    short = (result.sha256 or "")[:12]
    if result.outcome == "present":
        line = f"already present {result.name} {short} {result.status}"
    else:
        line = f"imported {result.name} {short} {result.status} ({result.provenance})"
    if result.reason and result.status != "active":
        line += f": {result.reason}"
    return line


def _error_line(result: ImportResult) -> str:
    message = result.error or "refused"
    return message if message.startswith(result.source) else f"{result.source}: {message}"


@click.command("import")
@click.argument("source")
@file_option(
    "--lockfile",
    help="Refuse any skill whose name and digest are not pinned in this lockfile.",
)
@click.option(
    "--digest",
    default=None,
    metavar="DIGEST",
    help="Pin the skill: it must have this digest, or nothing is stored. Our bundle digest "
    "(HEX or digest:HEX), npx's computedHash (npx:HEX), a skill_digest (sha256-...), or the "
    "SKILL.md file's own SHA-256 (skill_md:HEX, or skill_md:sha256-BASE64 as SRI writes it), "
    "as `hash --format` prints them.",
)
@renamed("--sha256", "--digest skill_md:HEX")
@renamed("--integrity", "--digest skill_md:sha256-BASE64")
@click.option(
    "--ref",
    default=None,
    metavar="REF",
    help="Read SOURCE as a git repository at this branch, tag or commit.",
)
@click.option(
    "--skill",
    "skill",
    default=None,
    metavar="NAME",
    help="Import only this skill out of a collection, archive or repository.",
)
@click.option(
    "--plugin",
    default=None,
    metavar="NAME",
    help="Import only this plugin's skills out of a Claude Code marketplace.",
)
@click.option(
    "--list",
    "list_only",
    is_flag=True,
    help="Show the skills SOURCE holds (name, folder, plugin, digest); import nothing.",
)
@click.option("--taint", is_flag=True, help="Mark the import tainted (held pending for review).")
@click.option(
    "--timeout",
    type=SECONDS,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds allowed for fetching a URL.",
)
@scanner_option
@scanners_file_option
@store_option
@json_option
@reports_errors
def import_cmd(
    source,
    digest,
    ref,
    skill,
    plugin,
    list_only,
    lockfile,
    taint,
    timeout,
    scanner_names,
    scanners_file,
    store_path,
    as_json,
) -> None:
    """Import SOURCE: skill folders, an archive, a git repository, or a URL.

    SOURCE: a skill folder, a folder of skills, a SKILL.md, an archive (.zip, .skill, .tar.gz;
    path or URL), a git repository (path or URL; --ref), owner/repo[@skill] or a code host's
    web URL (…/tree/REF/PATH), a site publishing /.well-known/agent-skills, or a SKILL.md URL.

    Every file of each skill is stored as one bundle. One line per skill. Exit 0 when every skill
    imported (or was already present), 1 when any was refused, 2 for a usage error.

    Each --scanner runs over every new skill's files; its findings are stored with the version
    (shown by `review`), and an error among them, or a scanner that fails, holds it pending.
    """
    # Usage errors first, so a bad invocation does not even create a store file.
    _refuse_unreadable_source(source, ref)
    sha256, digest = _skill_md_pin(digest)
    scanners = scanners_for(scanner_names, scanners_file, store_path)
    if digest:
        parse_digest(digest, "--digest")
    if lockfile is not None:
        from chimera_cards._importer.npxlock import is_npx_lock, read_npx_lock

        read_npx_lock(lockfile) if is_npx_lock(lockfile) else read_lockfile(lockfile)
    if list_only:
        _list_source(source, ref=ref, plugin=plugin, skill=skill, timeout=timeout, as_json=as_json)
        return
    # A big import keeps many objects alive until it ends (bundles, candidates, results), which
    # the cycle collector would scan again and again for nearly no cycles (~50 ms of 2,000
    # cards): it is paused for the import (and its workers, forked meanwhile) and then resumed.
    from chimera_cards._importer.pipeline import import_source  # the scan with it: only here

    collecting = gc.isenabled()
    gc.disable()
    try:
        with open_store(store_path, create=True) as store:
            results = import_source(
                store,
                source,
                sha256=sha256,
                digest=digest,
                lockfile=lockfile,
                taint=taint,
                timeout=timeout,
                ref=ref,
                skill=skill,
                plugin=plugin,
                scanners=scanners,
            )
    finally:
        if collecting:
            gc.enable()
    if as_json:
        payload = [r.to_dict() for r in results]
        echo_json(payload[0] if _single_card_source(source) and len(payload) == 1 else payload)
    # The lines of a run of imported cards are written at once (one echo per card costs more
    # than formatting it), each run before the refusal that ends it.
    lines: list[str] = []
    for result in results:
        if result.ok:
            if not as_json:
                lines.append(_result_line(result))
            continue
        if lines:
            click.echo("\n".join(lines))
            lines = []
        click.echo(f"error: {_error_line(result)}", err=True)
    if lines:
        click.echo("\n".join(lines))
    refused = [r.exit_code for r in results if not r.ok]
    if refused:
        raise SystemExit(max(1, *refused) if len(results) == 1 else 1)


def _refuse_unreadable_source(source: str, ref: str | None) -> None:
    """A usage error for a SOURCE that cannot name anything to import, before a store exists."""
    if not source.strip():  # Path("") is the current folder: never import that unasked
        raise UsageError("SOURCE is empty: give a skill folder, a SKILL.md, an archive, a URL")
    local = not is_url(source) and not is_git_source(source) and not source.startswith("npm:")
    if local and ref is None and locate(source) is None:
        if not Path(source).exists() and not Path(source).is_symlink():
            raise CardReadError(f"{source}: no such file or directory")
        if Path(source).is_dir() and not _holds_a_skill(source):
            raise UsageError(
                f"{source}: no cards found (expected a SKILL.md, a skill folder, "
                "or a folder of them)"
            )


def _skill_md_pin(digest: str | None) -> tuple[str | None, str | None]:
    """(the SKILL.md SHA-256 to pin, the other digest to pin) from ``--digest``: a
    ``skill_md:`` value pins the SKILL.md file's bytes, any other one the skill's digest."""
    kind, sep, value = (digest or "").partition(":")
    if not sep or kind.strip().lower() != "skill_md":
        return None, digest
    value = value.strip()
    if value.lower().startswith("sha256-"):
        return expected_hex(None, value), None
    return expected_hex(value, None), None


def _list_source(source, *, ref, plugin, skill, timeout, as_json) -> None:
    from chimera_cards._sources.find import list_source

    entries = list_source(source, ref=ref, plugin=plugin, skill=skill, timeout=timeout)
    if as_json:
        echo_json([e.to_dict() for e in entries])
        return
    width = max((len(e.name) for e in entries), default=0)

    def row(e, indent: str = "") -> str:
        state = f"error: {e.error}" if e.error else f"{(e.digest or '')[:12]}  {e.files} files"
        return f"{indent}{e.name:<{width}}  {state}  {e.folder or '.'}"

    # A marketplace's skills under each plugin that exposes them, as Claude Code groups them
    # (a skill two plugins list is shown under both); anything else, one line each.
    groups: dict[str, list] = {}
    for e in entries:
        for name in e.plugins:
            groups.setdefault(name, []).append(e)
    for e in entries:
        if not e.plugins:
            click.echo(row(e))
    for name, members in sorted(groups.items()):
        click.echo(f"plugin {name}: {len(members)} skill(s)")
        for e in members:
            click.echo(row(e, "  "))
    remote = any(e.network for e in entries)
    note = " (from the network: they would arrive tainted, pending review)" if remote else ""
    click.echo(f"{len(entries)} skill(s) in {source}{note}")


@click.command("lock")
@file_option(
    "-o",
    "--output",
    help="Lockfile to write (default: cards.lock; skills-lock.json with --format npx).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["chimera", "npx"]),
    default="chimera",
    show_default=True,
    help="chimera: `name digest:DIGEST` lines; npx: the skills-lock.json npx skills reads "
    "(its computedHash, with our digest beside it).",
)
@store_option
@json_option
@reports_errors
def lock_cmd(output, fmt, store_path, as_json) -> None:
    """Write a lockfile pinning every active skill to its bundle digest (every file)."""
    if output is None:
        output = Path("skills-lock.json" if fmt == "npx" else "cards.lock")
    with open_store(store_path) as store:
        active = store.versions(status="active")
        pins = {v.name: v.digest for v in active}
        if fmt == "npx":
            from chimera_cards._importer.npxlock import npx_lock_entries, write_npx_lock

            latest = {v.name: v for v in active}  # oldest first: the newest of each name
            entries = npx_lock_entries(store, [latest[n] for n in sorted(latest)])
    if fmt == "npx":
        write_npx_lock(output, entries)
    else:
        write_lockfile(output, pins)
    if as_json:
        echo_json({"path": str(output), "format": fmt, "pins": pins})
    else:
        click.echo(f"wrote {len(pins)} card{'s' if len(pins) != 1 else ''} to {output}")


def _version_row(v: Version, width: int) -> str:
    origin = v.final_url if v.final_url and v.final_url != v.origin else v.origin
    return (
        f"{v.name:<{width}}  {v.status:<8} {v.provenance:<7} {v.sha256[:12]}  "
        f"{v.imported_at}  {origin}"
    )


@click.command("list")
@click.option("--status", type=click.Choice(STATUSES), default=None, help="Only this status.")
@click.option(
    "--installed",
    is_flag=True,
    help="Instead: every skill folder of every agent (project and user-wide), with its state.",
)
@store_option
@json_option
@reports_errors
def list_cmd(status, installed, store_path, as_json) -> None:
    """List every stored version (name, status, provenance, digest, import time, origin).

    With --installed: every skill folder of every agent, with agent, folder, version and state.
    """
    if installed:
        if status is not None:
            raise UsageError("--status lists stored versions; it does not go with --installed")
        from chimera_cards._cli.runtime import list_installed

        list_installed(store_path, as_json)
        return
    with open_store(store_path) as store:
        found = store.versions(status=status)
    if as_json:
        echo_json([v.to_dict() for v in found])
        return
    width = max((len(v.name) for v in found), default=0)
    # Skills imported from a marketplace are listed under their plugin, after the rest.
    plugin_of = {v.id: str(v.source.get("plugin") or "") for v in found}
    shown = ""
    for v in sorted(found, key=lambda v: (plugin_of[v.id] != "", plugin_of[v.id])):
        if plugin_of[v.id] != shown:
            shown = plugin_of[v.id]
            click.echo(f"plugin {shown}:")
        click.echo(("  " if shown else "") + _version_row(v, width))


@click.command("show")
@click.argument("name")
@click.option(
    "--digest",
    "sha_prefix",
    default=None,
    metavar="DIGEST",
    help="A version's digest (or its first 6+ hex digits); default the active one.",
)
@renamed("--version", "--digest")
@store_option
@json_option
@reports_errors
def show_cmd(name, sha_prefix, store_path, as_json) -> None:
    """Show one card version: metadata, origin, findings, and the history of its versions."""
    from chimera_cards._scan.codescan import finding_id

    with open_store(store_path) as store:
        version = select_version(store, name, sha_prefix)
        history = store.versions(name=name)
        files = store.bundle_files(version.digest)
        size = sum(f.size for f in files)
        from chimera_cards._review.decisions import accepted_findings  # cryptography: only for show

        accepted = accepted_findings(store, version.name, version.sha256)
        scanners = store.scanner_results(version.id)
    if as_json:
        echo_json(
            {
                **version.to_dict(),
                "size": size,
                "manifest": [f.to_dict() for f in files],
                "accepted": accepted,
                "scanners": scanners,
                "history": [
                    {k: v for k, v in h.to_dict().items() if k != "findings"} for h in history
                ],
            }
        )
        return
    fields = [
        ("name", version.name),
        ("digest", version.digest),
        ("status", version.status),
        ("provenance", version.provenance),
        ("origin", version.origin),
    ]
    if version.final_url and version.final_url != version.origin:
        fields.append(("final url", version.final_url))
    fields += [
        ("imported", version.imported_at),
        ("size", f"{size} bytes in {len(files)} file{'s' if len(files) != 1 else ''}"),
    ]
    if version.reason:
        fields.append(("reason", version.reason))
    for label, value in fields:
        click.echo(f"{label + ':':<12}{value}")
    click.echo(f"findings:   {len(version.findings) or 'none'}")
    for bf in files:
        mode = "755" if bf.executable else "644"
        click.echo(f"  {mode} {bf.size:>9} {bf.sha256[:12]}  {bf.path}")
    for f in version.findings:
        fid = finding_id(f)
        where = f"{f.get('path') or 'SKILL.md'}:{f.get('line') or '-'}"
        mark = " (accepted in a signed approval)" if fid in accepted else ""
        click.echo(f"  {where:<9} {f.get('severity', ''):<8} {fid}: {f.get('message', '')}{mark}")
    _show_scanners(scanners, accepted)
    click.echo(f"history:    {len(history)} version{'s' if len(history) != 1 else ''}")
    for h in history:
        mark = "*" if h.sha256 == version.sha256 else " "
        click.echo(
            f"  {mark} {h.imported_at}  {h.sha256[:12]}  {h.status:<8} {h.provenance:<7} "
            f"{h.reason}".rstrip()
        )


def _show_scanners(runs: list[dict], accepted: list[str]) -> None:
    from chimera_cards._scan.codescan import finding_id
    from chimera_cards._scan.hiddenchars import (
        reveal,  # a scanner may quote the skill's hidden text
    )

    for run in runs:
        held = [f for f in run["findings"] if f.get("severity") in ("error", "warning")]
        state = run["status"] if run["status"] == "ok" else f"FAILED ({reveal(run['reason'])})"
        click.echo(f"scanner:    {run['scanner']} {state}, {len(held)} error/warning finding(s)")
        for f in held:
            fid = finding_id(f)
            where = f"{f.get('path') or 'SKILL.md'}:{f.get('line') or '-'}"
            mark = " (accepted in a signed approval)" if fid in accepted else ""
            message = reveal(str(f.get("message", "")))
            click.echo(f"  {where:<9} {f.get('severity', ''):<8} {fid}: {message}{mark}")


@click.command("export")
@click.argument("name")
@click.option(
    "-o",
    "--output",
    "directory",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory; the skill's folder is written to DIR/NAME/.",
)
@click.option(
    "--digest",
    "sha_prefix",
    default=None,
    metavar="DIGEST",
    help="Export the version with this digest (or its first 6+ hex digits), not the active one.",
)
@renamed("--version", "--digest")
@click.option(
    "--unapproved",
    is_flag=True,
    help="Also export a version that is not approved (pending, rejected, retired).",
)
@store_option
@json_option
@reports_errors
def export_cmd(name, directory, sha_prefix, unapproved, store_path, as_json) -> None:
    """Write a skill's whole folder byte-identical, exec bits kept, plus approvals.jsonl.

    Its active, approved version by default.
    """
    with open_store(store_path) as store:
        result = export_card(store, name, directory, sha_prefix=sha_prefix, unapproved=unapproved)
    if as_json:
        echo_json(result.to_dict())
        return
    n = len(result.bundle_files)
    click.echo(
        f"exported {result.name} {result.sha256[:12]} ({n} file{'s' if n != 1 else ''}) "
        f"to {Path(result.path).parent}"
    )
    for extra in result.files:
        click.echo(f"  with {extra}")


@click.command("audit")
@click.argument("what", required=False, type=click.Choice(["head"]))
@click.option(
    "--reset",
    is_flag=True,
    help="With `head`: re-anchor the head file to the log as it is now (after looking into a "
    "rollback); the reset is itself recorded in the log.",
)
@store_option
@json_option
@reports_errors
def audit_cmd(what, reset, store_path, as_json) -> None:
    """Print the append-only audit log (each entry holds the hash of the one before it).

    `audit head` prints the hash of its newest entry: keep it elsewhere (a CI log, a commit)
    and give it to `verify --expect-head` to prove nothing was cut off the log's end.
    """
    if reset and what != "head":
        raise UsageError("--reset goes with `audit head`")
    if what == "head":
        _audit_head(reset, store_path, as_json)
        return
    with open_store(store_path) as store:
        entries = store.audit_entries()
    if as_json:
        echo_json([digest_keys(e.to_dict()) for e in entries])
        return
    for e in entries:
        subject = (
            f" {e.name} {e.sha256[:12]}"
            if e.name and e.sha256
            else (f" {e.name}" if e.name else "")
        )
        detail = " ".join(f"{k}={v}" for k, v in e.detail.items() if v not in (None, "", []))
        click.echo(f"{e.seq:>5} {e.ts} {e.event}{subject}  {detail}".rstrip())


def _audit_head(reset: bool, store_path, as_json: bool) -> None:
    with open_store(store_path) as store:
        previous = None
        if reset:
            previous, _ = store.reset_anchor()
        anchor = store.audit_anchor()
        problems = store.anchor_problems()
        head_file = str(store.head_file)
    if as_json:
        echo_json(
            {
                **anchor.to_dict(),
                "head_file": head_file,
                "problems": [{"kind": k, "message": m} for k, m in problems],
                **({"previous": _anchor_json(previous)} if reset else {}),
            }
        )
        return
    click.echo(anchor.head)
    if reset:
        click.echo(f"re-anchored {head_file} (it held {_anchor_json(previous)})", err=True)


def _anchor_json(value) -> object:
    return value.to_dict() if hasattr(value, "to_dict") else value


@click.command("verify")
@click.option(
    "--expect-head",
    "expect_head",
    default=None,
    metavar="HEX",
    help="An audit head kept elsewhere (`audit head` printed it): fail unless the log holds it.",
)
@store_option
@json_option
@reports_errors
def verify_cmd(expect_head, store_path, as_json) -> None:
    """Re-hash every blob, check every version against the audit log, walk the hash chain.

    Also compares the schema (tables, indexes, triggers, views) with the one this code creates,
    and the log's end with the heads kept outside it (the head file, --expect-head). Exit 1
    naming each problem if anything was tampered with. The outcome is itself audited.
    """
    with open_store(store_path) as store:
        report = verify_store(store, expect_head=expect_head)
    if as_json:
        echo_json(report.to_dict())
    else:
        for problem in report.problems:
            click.echo(f"FAIL {problem.kind}: {problem.message}")
        verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
        click.echo(
            f"{verdict}: {report.blobs} blobs ({report.bytes} bytes), {report.versions} "
            f"versions, {report.audit_entries} audit entries"
        )
    if not report.ok:
        raise SystemExit(1)


COMMANDS = [import_cmd, lock_cmd, list_cmd, show_cmd, export_cmd, audit_cmd, verify_cmd]
