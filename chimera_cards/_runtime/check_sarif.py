"""``check --format sarif``: a check report as SARIF 2.1.0, for CI code scanning.

One result per problem, placed where a reviewer looks: each changed or added file of a modified
skill at that file, a removed file or a flipped exec bit at the skill's ``SKILL.md`` (the file
is no longer there to point at), a revoked or unknown skill at its ``SKILL.md``, a missing one at
its folder. Paths under the base folder (the repository root, by default the current folder) are
relative, so code scanning can show them inline; others are absolute ``file://`` URIs.
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera_cards import __version__
from chimera_cards._bundles.bundle import SKILL_FILE

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

# rule id -> (the state it reports, a one-line description)
RULES = {
    "skill-modified": ("modified", "A skill folder's bytes differ from its approved bundle."),
    "skill-revoked": ("revoked", "A skill folder holds a bundle that no longer passes the gate."),
    "skill-unknown": ("unknown", "A skill folder holds bytes that are no bundle in the store."),
    "skill-missing": ("missing", "A skill recorded as installed here is gone."),
    "skill-unpinned": ("unpinned", "A skill folder the lockfile checked against does not pin."),
}
_RULE_OF = {state: rule for rule, (state, _) in RULES.items()}


def _uri(path: Path, base: Path) -> dict:
    absolute = Path(os.path.abspath(path))
    try:
        return {"uri": absolute.relative_to(base).as_posix(), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": absolute.as_uri()}


def _result(rule: str, text: str, where: Path, base: Path) -> dict:
    return {
        "ruleId": rule,
        "ruleIndex": list(RULES).index(rule),
        "level": "error",
        "message": {"text": text},
        "locations": [{"physicalLocation": {"artifactLocation": _uri(where, base)}}],
    }


def check_sarif(report, base: str | os.PathLike | None = None) -> dict:
    """The SARIF log of a ``check`` report.

    Args:
        report: an ``install.CheckReport``.
        base: the folder paths are made relative to (default: the current folder).
    Returns:
        The SARIF 2.1.0 document (one run, no results when every skill is ok).
    """
    root = Path(os.path.abspath(base if base is not None else os.getcwd()))
    results: list[dict] = []
    for state in report.states:
        if state.ok:
            continue
        folder = Path(state.path)
        rule = _RULE_OF.get(state.state, "skill-unknown")
        if state.state == "modified" and state.diff is not None:
            diff = state.diff
            for path in (*diff.changed, *diff.added):
                verb = "changed" if path in diff.changed else "added"
                text = f"skill {state.name}: {path} {verb} since it was approved"
                results.append(_result(rule, text, folder / path, root))
            for path in diff.removed:
                text = f"skill {state.name}: {path} removed since it was approved"
                results.append(_result(rule, text, folder / SKILL_FILE, root))
            for path in diff.mode_changed:
                text = f"skill {state.name}: exec bit of {path} flipped since it was approved"
                results.append(_result(rule, text, folder / path, root))
            for problem in state.problems:
                results.append(_result(rule, f"skill {state.name}: {problem}", folder, root))
            if not diff and not state.problems:
                results.append(_result(rule, f"skill {state.name}: {state.detail}", folder, root))
            continue
        where = folder if state.state == "missing" else folder / SKILL_FILE
        text = f"skill {state.name} is {state.state}: {state.detail}"
        results.append(_result(rule, text, where, root))
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "chimera-cards",
                        "version": __version__,
                        "rules": [
                            {
                                "id": rule,
                                "name": rule.replace("-", " "),
                                "shortDescription": {"text": text},
                                "defaultConfiguration": {"level": "error"},
                            }
                            for rule, (_, text) in RULES.items()
                        ],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
                "results": results,
            }
        ],
    }
