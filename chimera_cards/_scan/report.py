"""``scan``: our scan of skill folders and any other scanners' over the same folders, as one
report (text, JSON or SARIF with a run per tool)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from chimera_cards._cards.card import CARD_FILENAME, CardReadError, find_card_files
from chimera_cards._scan.codescan import lint_skill_paths
from chimera_cards._scan.external import ScannerConfig, ScannerRun, run_scanner
from chimera_cards._scan.findings import ERROR, WARNING, Finding
from chimera_cards._scan.lint import LintReport
from chimera_cards._scan.sarif import to_sarif


@dataclass
class SkillRun:
    """One other scanner's run over one skill folder."""

    folder: str
    run: ScannerRun

    def findings(self) -> list[Finding]:
        """The run's findings, each path prefixed with the folder (as ours are)."""
        return [
            replace(f, path=os.path.join(self.folder, f.path) if f.path else self.folder)
            for f in self.run.findings
        ]

    def to_dict(self) -> dict:
        data = self.run.to_dict()
        data["folder"] = self.folder
        data["findings"] = [{**f.to_dict(), "scanner": self.run.scanner} for f in self.findings()]
        return data


@dataclass
class ScanReport:
    """Our findings and every other scanner's, over the same skills."""

    lint: LintReport
    runs: list[SkillRun] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        """Ours, then each scanner's, in run order."""
        return self.lint.findings + [f for r in self.runs for f in r.findings()]

    @property
    def errors(self) -> int:
        return sum(f.severity == ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == WARNING for f in self.findings)

    @property
    def failed(self) -> list[SkillRun]:
        """Runs that did not complete (they count as errors: fail closed)."""
        return [r for r in self.runs if not r.run.ok]

    def to_dict(self) -> dict:
        return {
            **self.lint.to_dict(),
            "scanners": [r.to_dict() for r in self.runs],
            "errors": self.errors,
            "warnings": self.warnings,
        }

    def to_sarif(self) -> dict:
        """One SARIF 2.1.0 log: a run of ours, then one per other scanner, named as configured
        (the tool's own name in the driver's properties)."""
        log = to_sarif(self.lint.findings)
        by_scanner: dict[str, list[SkillRun]] = {}
        for r in self.runs:
            by_scanner.setdefault(r.run.scanner, []).append(r)
        for name, runs in by_scanner.items():
            first = next((r.run for r in runs if r.run.tool), runs[0].run)
            findings = [f for r in runs for f in r.findings()]
            extra = to_sarif(
                findings,
                tool=name,
                version=first.tool_version or "",
                rules={},
            )["runs"][0]
            driver = extra["tool"]["driver"]
            driver.pop("informationUri", None)
            if not driver["version"]:
                del driver["version"]
            if first.tool and first.tool != name:
                driver["properties"] = {"tool": first.tool}
            log["runs"].append(extra)
        return log


def _skill_folders(paths: Iterable[str | os.PathLike]) -> list[str]:
    folders: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            folders += [str(f.parent) for f in find_card_files(p)]
        elif p.name == CARD_FILENAME or p.is_file():
            folders.append(str(p.parent))
        else:
            raise CardReadError(f"{path}: no such file or directory")
    return list(dict.fromkeys(folders))


def scan_paths(
    paths: Sequence[str | os.PathLike],
    *,
    scanners: Sequence[ScannerConfig] = (),
    profile: str | None = None,
) -> ScanReport:
    """Scan skills as ``lint`` does, then run each other scanner over each skill folder.

    Args:
        paths: SKILL.md files, skill folders, folders of skill folders.
        scanners: other scanners (SARIF plug-ins), run one after another on each folder.
        profile: the card profile for our lint.
    Returns:
        The report.
    Raises:
        CardReadError: a path does not exist or holds no skill.
    """
    lint = lint_skill_paths(paths, profile=profile)
    runs = [
        SkillRun(folder, run_scanner(config, folder))
        for folder in (_skill_folders(paths) if scanners else [])
        for config in scanners
    ]
    return ScanReport(lint, runs)
