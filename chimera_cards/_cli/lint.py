"""``chimera-cards lint`` and ``hash``: thin click skins over lint.py and sources.py."""

from __future__ import annotations

import json
import sys

import click

from chimera_cards._cli.common import echo_json, report_format_option, reports_errors
from chimera_cards._scan.codescan import lint_skill_paths
from chimera_cards._scan.findings import DEFAULT_PROFILE, PROFILES
from chimera_cards._scan.lint import LintReport
from chimera_cards._scan.sarif import to_sarif as findings_to_sarif
from chimera_cards._scan.summary import SEVERITY_ORDER, at_least, summarise, without_licence_urls
from chimera_cards._sources.find import hash_paths


def to_sarif(report: LintReport) -> dict:
    """The report as a SARIF 2.1.0 log (``scan.sarif.to_sarif``): one run, the rules used."""
    return findings_to_sarif(report.findings)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if word == "info" or n == 1 else f"{n} {word}s"


def _counts(errors: int, warnings: int, infos: int) -> str:
    return f"{_count(errors, 'error')}, {_count(warnings, 'warning')}, {_count(infos, 'info')}"


def format_text(report: LintReport, min_severity: str = "warning") -> str:
    """One line per skill with its counts, its findings at ``min_severity`` or above indented
    below it (errors first), and a total that says what was left out."""
    lines = []
    for skill in summarise(report.files, report.findings):
        counts = _counts(skill.count("error"), skill.count("warning"), skill.count("info"))
        lines.append(f"{skill.path}: {counts}")
        lines += [
            f"  {f.path}:{f.line or 0}: {f.severity} [{f.rule}] {f.message}"
            for f in skill.shown(min_severity)
        ]
    cards = len(report.files)
    total = f"{cards} skill{'s' if cards != 1 else ''}: " + _counts(
        report.errors, report.warnings, report.infos
    )
    hidden = [
        word
        for word, n in (("warnings", report.warnings), ("info", report.infos))
        if n and not at_least(word.rstrip("s"), min_severity)
    ]
    if hidden:
        how = "-v shows it" if hidden == ["info"] else f"--min-severity {hidden[-1].rstrip('s')}"
        total += f" ({' and '.join(hidden)} not shown; {how})"
    lines.append(total)
    return "\n".join(lines)


_LEGACY_PROFILE = {"strict": "chimera", "lenient": "agent-skills"}


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--profile",
    type=click.Choice(PROFILES),
    default=None,
    help=f"agent-skills (default): the Agent Skills specification; chimera: also the five "
    f"sections and Chimera's frontmatter. [default: {DEFAULT_PROFILE}]",
)
@click.option(
    "--strict", "legacy", flag_value="strict", help="Deprecated: same as --profile chimera."
)
@click.option(
    "--lenient", "legacy", flag_value="lenient", help="Deprecated: same as --profile agent-skills."
)
@report_format_option
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--min-severity",
    type=click.Choice(SEVERITY_ORDER),
    default=None,
    help="List findings of this severity and above (text default: warning; json and sarif "
    "list everything unless given). Counts always count everything.",
)
@click.option("-v", "--verbose", is_flag=True, help="List info findings too (--min-severity info).")
@reports_errors
def lint(
    paths: tuple[str, ...],
    profile: str | None,
    legacy: str | None,
    fmt: str,
    as_json: bool,
    min_severity: str | None,
    verbose: bool,
) -> None:
    """Lint skills: a SKILL.md file (the card alone), a skill folder, or a folder of them.

    A folder is linted as import would store it: the card, every other text file's
    hidden-instruction scan, scripts as code, binaries listed; each finding names its file.
    Exit 0 when no errors, 1 when errors were found, 2 on usage errors or unreadable input.
    The hidden-instruction scan runs in every profile.
    """
    if legacy is not None:
        alias = _LEGACY_PROFILE[legacy]
        if profile is not None and profile != alias:
            raise click.UsageError(f"--{legacy} means --profile {alias}; give one or the other")
        click.echo(f"note: --{legacy} is deprecated; use --profile {alias}", err=True)
        profile = alias
    profile = profile or DEFAULT_PROFILE
    if verbose and min_severity not in (None, "info"):
        raise click.UsageError(f"-v lists info; it contradicts --min-severity {min_severity}")
    found = lint_skill_paths(paths, profile=profile)
    # A licence's own URLs are not places the skill points to: never reported or counted.
    report = LintReport(files=found.files, findings=without_licence_urls(found.findings))
    if as_json or fmt in ("json", "sarif"):
        if min_severity is not None:
            listed = [f for f in report.findings if at_least(f.severity, min_severity)]
            report = LintReport(files=report.files, findings=listed)
        if fmt == "sarif" and not as_json:
            click.echo(json.dumps(to_sarif(report), indent=2))
        else:
            skills = [s.to_dict() for s in summarise(report.files, report.findings)]
            echo_json({"profile": profile, **report.to_dict(), "skills": skills})
    else:
        click.echo(format_text(report, "info" if verbose else min_severity or "warning"))
    sys.exit(1 if report.errors else 0)


@click.command("hash")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print each skill's hashes and its manifest.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["chimera", "digest", "npx", "skill_digest", "all"]),
    default="chimera",
    show_default=True,
    help="chimera: the SKILL.md file's SHA-256 and our bundle digest; digest, npx (npx skills' "
    "computedHash), skill_digest (the Agent Skills proposal): that digest alone, prefixed; "
    "all: the three digests.",
)
@reports_errors
def hash_(paths: tuple[str, ...], as_json: bool, fmt: str) -> None:
    """Print each skill's SKILL.md SHA-256 and its bundle digest over every file.

    PATHS: skill folders, collections, archives, SKILL.md files.

    Each is printed as `import --digest` takes it, prefixed: `skill_md:HEX` pins SKILL.md
    alone, `digest:HEX` the whole skill (and so do the other digests --format prints).
    docs/bundles.md defines each digest.
    """
    results = hash_paths(list(paths))
    if as_json:
        payload = [r.to_dict() for r in results]
        echo_json(payload[0] if len(paths) == 1 and len(payload) == 1 else payload)
        return
    for r in results:
        named = {
            "digest": f"digest:{r.digest}",
            "npx": f"npx:{r.npx}",
            "skill_digest": f"skill_digest:{r.skill_digest}",
        }
        if fmt == "chimera":
            click.echo(f"skill_md:{r.sha256}  digest:{r.digest}  {r.path}")
        elif fmt == "all":
            click.echo(f"{'  '.join(named.values())}  {r.path}")
        else:
            click.echo(f"{named[fmt]}  {r.path}")


COMMANDS = [lint, hash_]
