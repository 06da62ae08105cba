"""Differential check for scan speed work: record every finding ``lint_skill_paths`` reports on
the labelled detection corpus, the test fixtures' skill folders and (when present) the shared
corpus, then compare a later run with the record. A speed change must leave it byte-identical.

Usage: python benchmarks/scan_findings_diff.py record OUT.json [DIR ...]
       python benchmarks/scan_findings_diff.py compare OUT.json [DIR ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chimera_cards._scan.codescan import lint_skill_paths

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = [
    ROOT / "benchmarks" / "detection" / "skills",
    ROOT / "tests" / "fixtures" / "lint-corpus",
    Path("/work/shared/corpus/agent-skills"),
    Path("/work/shared/corpus/chimera-skills"),
]


def _skill_dirs(roots: list[Path]) -> list[Path]:
    dirs: set[Path] = set()
    for root in roots:
        if root.is_dir():
            dirs.update(p.parent for p in root.rglob("SKILL.md") if p.is_file())
    return sorted(dirs)


def collect(roots: list[Path]) -> dict[str, list[list]]:
    """Every finding per skill folder, in report order, as [rule, severity, line, message, path]."""
    out: dict[str, list[list]] = {}
    for folder in _skill_dirs(roots):
        try:
            report = lint_skill_paths([folder])
        except Exception as exc:  # a refusal is a result too
            out[str(folder)] = [["EXC", type(exc).__name__, str(exc)]]
            continue
        out[str(folder)] = [
            [f.rule, f.severity, f.line, f.message, f.path] for f in report.findings
        ]
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("record", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, record = argv[0], Path(argv[1])
    roots = [Path(a) for a in argv[2:]] or DEFAULT_DIRS
    now = collect(roots)
    if mode == "record":
        record.write_text(json.dumps(now, indent=0, sort_keys=True), encoding="utf-8")
        print(f"recorded {sum(map(len, now.values()))} findings over {len(now)} skills")
        return 0
    then = json.loads(record.read_text(encoding="utf-8"))
    bad = 0
    for key in sorted(set(then) | set(now)):
        if then.get(key) != now.get(key):
            bad += 1
            print(f"DIFF {key}")
            a, b = then.get(key) or [], now.get(key) or []
            for row in a:
                if row not in b:
                    print(f"  - {row}")
            for row in b:
                if row not in a:
                    print(f"  + {row}")
            if sorted(map(str, a)) == sorted(map(str, b)):
                print("  (order only)")
    print(f"{len(now)} skills, {sum(map(len, now.values()))} findings, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
