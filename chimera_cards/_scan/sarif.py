"""SARIF 2.1.0 in and out: read another scanner's log into findings, write ours as a log.

SARIF is the format code-scanning tools share (GitHub code scanning, IDEs and most security
scanners read and write it), so it is how the review becomes the one place a team reads every
tool's findings. Reading is strict about the shape a finding needs (a rule, a message, a level
SARIF allows) and lenient about everything else SARIF may carry; a log that is not SARIF at all
is a ``SarifError``, which the caller treats as a failed scan (fail closed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlsplit

from chimera_cards._scan.findings import ERROR, INFO, RULES, WARNING, Finding
from chimera_cards.errors import ChimeraError

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# A scanner's log is read into memory: bounded, so a runaway tool cannot exhaust it.
MAX_SARIF_BYTES = 64 * 1024 * 1024
# SARIF level -> our severity, unless a scanner's configuration says otherwise.
DEFAULT_LEVELS: dict[str, str] = {"error": ERROR, "warning": WARNING, "note": INFO, "none": INFO}
_LEVELS = frozenset(DEFAULT_LEVELS)
_LEVEL_OF = {ERROR: "error", WARNING: "warning", INFO: "note"}
# A result of these kinds reports something that is not a problem.
_NOT_PROBLEMS = frozenset({"pass", "notApplicable"})
INFORMATION_URI = "https://github.com/brcampidelli/chimera-cards"


class SarifError(ChimeraError):
    """Text that is not a SARIF 2.1.0 log this module can read."""

    exit_code = 1


@dataclass
class SarifResult:
    """One result of a SARIF log, in the terms a finding needs."""

    rule: str
    level: str  # a SARIF level: error | warning | note | none
    message: str
    path: str | None = None  # relative to the scanned folder where the log allows it
    line: int | None = None
    suppressed: bool = False  # the tool itself suppressed it (its own policy, a comment)
    properties: dict = field(default_factory=dict)


@dataclass
class SarifLog:
    """What a SARIF log says: the tool, its version and its results (every run's)."""

    tool: str
    version: str | None
    results: list[SarifResult]


def _text(value: object) -> str | None:
    if isinstance(value, dict):
        for key in ("text", "markdown"):
            if isinstance(value.get(key), str):
                return value[key]
    return None


def _relative(uri: str, base: str | None) -> str:
    """A result's file as a path inside the scanned folder when it is one, else as given."""
    parts = urlsplit(uri)
    path = unquote(parts.path) if parts.scheme in ("", "file") else uri
    if base and os.path.isabs(path):
        rel = os.path.relpath(path, base)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return PurePosixPath(*rel.split(os.sep)).as_posix()
    return path.removeprefix("./")


def _location(result: dict, base: str | None) -> tuple[str | None, int | None]:
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations or not isinstance(locations[0], dict):
        return None, None
    physical = locations[0].get("physicalLocation")
    if not isinstance(physical, dict):
        return None, None
    artifact = physical.get("artifactLocation")
    uri = artifact.get("uri") if isinstance(artifact, dict) else None
    region = physical.get("region")
    line = region.get("startLine") if isinstance(region, dict) else None
    path = _relative(uri, base) if isinstance(uri, str) and uri else None
    ok_line = line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
    return path, ok_line


def _rule_levels(driver: dict) -> tuple[list[str | None], dict[str, str]]:
    """Each rule's id by index, and its default level by id."""
    ids: list[str | None] = []
    levels: dict[str, str] = {}
    rules = driver.get("rules")
    for rule in rules if isinstance(rules, list) else []:
        rid = rule.get("id") if isinstance(rule, dict) else None
        ids.append(rid if isinstance(rid, str) else None)
        config = rule.get("defaultConfiguration") if isinstance(rule, dict) else None
        level = config.get("level") if isinstance(config, dict) else None
        if isinstance(rid, str) and level in _LEVELS:
            levels[rid] = level
    return ids, levels


def _result(raw: object, ids: list[str | None], levels: dict[str, str], base: str | None):
    if not isinstance(raw, dict):
        raise SarifError("a result is not an object")
    rule = raw.get("ruleId")
    index = raw.get("ruleIndex")
    if not isinstance(rule, str) and isinstance(index, int) and 0 <= index < len(ids):
        rule = ids[index]
    if not isinstance(rule, str) or not rule:
        rule = "result"  # SARIF allows a result without a rule; it is still a finding
    message = _text(raw.get("message"))
    if message is None:
        raise SarifError(f"result of rule {rule!r} has no message text")
    if raw.get("kind") in _NOT_PROBLEMS:
        return None
    level = raw.get("level", levels.get(rule, "warning"))
    if level not in _LEVELS:
        raise SarifError(f"result of rule {rule!r} has level {level!r} (not a SARIF level)")
    if raw.get("kind") not in (None, "fail", "open", "review") and "level" not in raw:
        level = "none"  # "informational": SARIF's level for it is none
    path, line = _location(raw, base)
    suppressions = raw.get("suppressions")
    suppressed = isinstance(suppressions, list) and any(
        isinstance(s, dict) and s.get("status", "accepted") == "accepted" for s in suppressions
    )
    props = raw.get("properties")
    bag = props if isinstance(props, dict) else {}
    return SarifResult(rule, level, message, path, line, suppressed, bag)


def read_sarif(data: bytes | str, *, base: str | os.PathLike | None = None) -> SarifLog:
    """Read a SARIF 2.1.0 log.

    Args:
        data: the log's bytes or text.
        base: the folder that was scanned: absolute file paths inside it become relative.
    Returns:
        The tool (of the first run), its version and every run's results, in order.
    Raises:
        SarifError: not JSON, too large, not version 2.1.0, or a run or result without the
            parts SARIF requires.
    """
    if len(data) > MAX_SARIF_BYTES:
        raise SarifError(f"SARIF log over {MAX_SARIF_BYTES} bytes")
    try:
        log = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SarifError(f"not JSON ({exc})") from None
    if not isinstance(log, dict) or log.get("version") != SARIF_VERSION:
        got = log.get("version") if isinstance(log, dict) else type(log).__name__
        raise SarifError(f"not a SARIF {SARIF_VERSION} log (version {got!r})")
    runs = log.get("runs")
    if not isinstance(runs, list):
        raise SarifError("SARIF log has no runs")
    base_dir = os.fspath(base) if base is not None else None
    tool, version, results = "", None, []
    for run in runs:
        driver = run.get("tool", {}).get("driver") if isinstance(run, dict) else None
        if not isinstance(driver, dict) or not isinstance(driver.get("name"), str):
            raise SarifError("a SARIF run has no tool.driver.name")
        if not tool:
            tool = driver["name"]
            v = driver.get("semanticVersion") or driver.get("version")
            version = v if isinstance(v, str) else None
        ids, levels = _rule_levels(driver)
        raw_results = run.get("results") or []
        if not isinstance(raw_results, list):
            raise SarifError("a SARIF run's results is not a list")
        for raw in raw_results:
            found = _result(raw, ids, levels, base_dir)
            if found is not None:
                results.append(found)
    return SarifLog(tool or "unknown", version, results)


def to_sarif(
    findings: Iterable[Finding],
    *,
    tool: str = "chimera-cards",
    version: str | None = None,
    rules: Mapping[str, str] | None = None,
    base: str | os.PathLike | None = None,
) -> dict:
    """Our findings as a SARIF 2.1.0 log (one run), ready for ``json.dumps``.

    Args:
        findings: the findings (their paths as the scan gave them).
        tool: the driver's name.
        version: the driver's version (default: this package's).
        rules: rule id -> one-line description (default: every rule the scans know).
        base: paths under this folder are written relative to it (SARIF's %SRCROOT%).
    Returns:
        The log: every rule that has a finding in ``tool.driver.rules``, each result pointing at
        its rule by index, with the finding's id as a partial fingerprint so a code-scanning
        service tracks the same finding across runs.
    """
    if version is None:
        from chimera_cards import __version__ as version
    if rules is None:
        from chimera_cards._scan.codescan import CODE_RULES
        from chimera_cards._scan.detectgrade import DETECT_RULES

        rules = {**RULES, **CODE_RULES, **DETECT_RULES}
    base_dir = os.fspath(base) if base is not None else None
    findings = list(findings)
    used = sorted({f.rule for f in findings})
    index = {rule: i for i, rule in enumerate(used)}
    rule_list = [
        {"id": rule, **({"shortDescription": {"text": rules[rule]}} if rule in rules else {})}
        for rule in used
    ]
    results: list[dict] = []
    for f in findings:
        result: dict = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _LEVEL_OF.get(f.severity, "warning"),
            "message": {"text": f.message},
            "partialFingerprints": {"chimeraFindingId/v1": f.id},
        }
        if f.path:
            physical: dict = {"artifactLocation": _artifact(f.path, base_dir)}
            if f.line:
                physical["region"] = {"startLine": f.line}
            result["locations"] = [{"physicalLocation": physical}]
        results.append(result)
    driver = {
        "name": tool,
        "version": version,
        "informationUri": INFORMATION_URI,
        "rules": rule_list,
    }
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def _artifact(path: str, base: str | None) -> dict:
    if base is not None and os.path.isabs(path):
        rel = os.path.relpath(path, base)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            posix = PurePosixPath(*rel.split(os.sep)).as_posix()
            return {"uri": quote(posix, safe="/"), "uriBaseId": "%SRCROOT%"}
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path.replace(os.sep, "/"), safe="/")}
