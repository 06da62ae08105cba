"""``chimera-cards scan`` and ``scanner``: thin click skins over scan/report.py and
scan/external.py (other scanners as SARIF plug-ins)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chimera_cards._cli.common import (
    SECONDS,
    echo_json,
    json_option,
    report_format_option,
    reports_errors,
    store_option,
)
from chimera_cards._cli.plain import open_store
from chimera_cards._scan.external import (
    ScannerConfig,
    configured_scanners,
    parse_scanner,
    remove_scanner,
    resolve_scanners,
    save_scanner,
)
from chimera_cards._scan.findings import DEFAULT_PROFILE, PROFILES, SEVERITIES
from chimera_cards.errors import UsageError

if TYPE_CHECKING:
    from chimera_cards._scan.report import ScanReport

SCANNERS_FILE_ENV = "CHIMERA_CARDS_SCANNERS_FILE"

scanner_option = click.option(
    "--scanner",
    "scanner_names",
    multiple=True,
    metavar="NAME",
    help="Also run this scanner (a preset such as 'cisco', or one configured with "
    "`chimera-cards scanner set` or in --scanners-file); repeatable.",
)
scanners_file_option = click.option(
    "--scanners-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    envvar=SCANNERS_FILE_ENV,
    help=f"YAML or JSON file of scanners ('scanners: {{NAME: {{command: ...}}}}'); "
    f"default ${SCANNERS_FILE_ENV}.",
)


def scanners_for(
    names: Sequence[str],
    scanners_file: Path | None,
    store_path: Path | None,
    *,
    named_store_must_exist: bool = False,
) -> list[ScannerConfig]:
    """The scanners the options name, read from the file, the store (if there is one yet) and
    the presets. Nothing is created; with ``named_store_must_exist`` a --store that is not a
    store is an error even when no scanner is named (a command that only reads it)."""
    from chimera_cards._store.location import default_store_path

    if store_path is not None and named_store_must_exist:
        with open_store(store_path) as store:
            return resolve_scanners(names, store=store, config_file=scanners_file)
    if not names:
        return []
    path = store_path or default_store_path()
    if not path.exists():
        return resolve_scanners(names, config_file=scanners_file)
    with open_store(path) as store:
        return resolve_scanners(names, store=store, config_file=scanners_file)


def format_text(report: ScanReport) -> str:
    lines = [
        f"{f.path}:{f.line or 0}: {f.severity} [{f.rule}] {f.message}" for f in report.findings
    ]
    for r in report.runs:
        if r.run.ok:
            tool = " ".join(t for t in (r.run.tool, r.run.tool_version) if t)
            lines.append(
                f"scanner {r.run.scanner} ({tool}) on {r.folder}: ok, {r.run.seconds:.1f} s"
            )
        else:
            lines.append(f"scanner {r.run.scanner} on {r.folder}: FAILED ({r.run.reason})")
    cards = len(report.lint.files)
    lines.append(
        f"{cards} card{'s' if cards != 1 else ''}: {report.errors} error(s), "
        f"{report.warnings} warning(s)"
        + (f", {len(report.failed)} scanner run(s) failed" if report.failed else "")
    )
    return "\n".join(lines)


@click.command("scan")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@scanner_option
@scanners_file_option
@click.option(
    "--profile",
    type=click.Choice(PROFILES),
    default=None,
    help=f"The card profile for our lint. [default: {DEFAULT_PROFILE}]",
)
@report_format_option
@store_option
@json_option
@reports_errors
def scan_cmd(
    paths: tuple[str, ...],
    scanner_names: tuple[str, ...],
    scanners_file: Path | None,
    profile: str | None,
    fmt: str,
    store_path: Path | None,
    as_json: bool,
) -> None:
    """Scan skills with our scan and any other scanners that write SARIF.

    PATHS: SKILL.md files, skill folders, folders of them. Each --scanner runs over each skill
    folder; a scanner that fails or times out counts as an error (fail closed). --format sarif
    writes one SARIF 2.1.0 log with a run per tool. Exit 0 when no errors, 1 when errors were
    found, 2 on usage errors.
    """
    from chimera_cards._scan.report import scan_paths  # the whole scan: only when one runs

    scanners = scanners_for(scanner_names, scanners_file, store_path, named_store_must_exist=True)
    report = scan_paths(paths, scanners=scanners, profile=profile)
    if as_json or fmt == "json":
        echo_json(report.to_dict())
    elif fmt == "sarif":
        click.echo(json.dumps(report.to_sarif(), indent=2))
    else:
        click.echo(format_text(report))
    sys.exit(1 if report.errors else 0)


@click.group("scanner")
def scanner_group() -> None:
    """Other scanners (any command that writes SARIF) that scan and import can run."""


def _levels(pairs: Sequence[str]) -> dict[str, str]:
    levels = {}
    for pair in pairs:
        level, eq, severity = pair.partition("=")
        if not eq:
            raise UsageError(f"--level {pair!r}: give SARIF-LEVEL=SEVERITY, e.g. note=warning")
        levels[level.strip()] = severity.strip()
    return levels


@scanner_group.command("set")
@click.argument("name")
@click.option("--command", "command", default=None, help="The command line, with {dir}.")
@click.option("--preset", default=None, help="Start from a preset's settings (e.g. cisco).")
@click.option("--timeout", type=SECONDS, default=None, help="Seconds before it counts as failed.")
@click.option(
    "--level",
    "levels",
    multiple=True,
    metavar="LEVEL=SEVERITY",
    help=f"Map a SARIF level (error, warning, note, none) to a severity "
    f"({', '.join(SEVERITIES)}); repeatable. An error holds the version.",
)
@click.option(
    "--on-import",
    is_flag=True,
    help="Run it on every import into this store (update too), not only when named.",
)
@store_option
@json_option
@reports_errors
def scanner_set(name, command, preset, timeout, levels, on_import, store_path, as_json) -> None:
    """Configure scanner NAME in the store: a command line with {dir} (and {output} if it writes
    its SARIF log to a file rather than printing it)."""
    settings: dict = {"on_import": True} if on_import else {}
    if command is not None:
        settings["command"] = command
    if preset is not None:
        settings["preset"] = preset
    if timeout is not None:
        settings["timeout"] = timeout
    if levels:
        settings["levels"] = _levels(levels)
    config = parse_scanner(name, settings)
    with open_store(store_path, create=True) as store:
        save_scanner(store, config)
    if as_json:
        echo_json(config.to_dict())
    else:
        when = " (on every import)" if config.on_import else ""
        click.echo(f"scanner {name}: {' '.join(config.command)}{when}")


@scanner_group.command("remove")
@click.argument("name")
@store_option
@json_option
@reports_errors
def scanner_remove(name, store_path, as_json) -> None:
    """Forget scanner NAME configured in the store."""
    with open_store(store_path) as store:
        if not remove_scanner(store, name):
            raise UsageError(f"no scanner named {name!r} is configured in this store")
    if as_json:
        echo_json({"removed": name})
    else:
        click.echo(f"removed scanner {name}")


@scanner_group.command("list")
@scanners_file_option
@store_option
@json_option
@reports_errors
def scanner_list(scanners_file, store_path, as_json) -> None:
    """List the scanners a name can mean: presets, the store's, and a scanners file's."""
    from chimera_cards._store.location import default_store_path

    path = store_path or default_store_path()
    if store_path is not None or path.exists():
        with open_store(path) as store:
            found = configured_scanners(store, scanners_file)
    else:
        found = configured_scanners(None, scanners_file)
    if as_json:
        echo_json([{**c.to_dict(), "defined_in": where} for c, where in found])
        return
    for config, where in found:
        when = ", on every import" if config.on_import and where == "store" else ""
        click.echo(f"{config.name} ({where}{when}): {' '.join(config.command)}")
