"""Benchmark: false alarms on published skills, per author: how many an import holds and how
many ``lint`` flags, and the rules behind both.

Every skill in the corpus is taken as benign (published by its author for others to use), so
each held or flagged one is a false alarm to explain:

- *held*: importing the skill folder from its local path into a temporary store does not leave
  it ``active`` (pending or refused, whatever the reason: what a user sees);
- *flagged*: ``lint`` of the folder reports an error or a warning of a security rule (a shape
  rule such as ``name-dirname`` or ``field-type`` is lint's business, not an alarm).

Corpus layout: ``DIR/<author>/<skill>/SKILL.md`` (a skill nested deeper counts for the author
folder it is under). The corpus is not in the repository (third-party files): gather one, e.g.
with ``git archive`` of each published skill folder.

Printed: per author and overall, skills, held and flagged (count and %), then the rules behind
them (how many skills each rule holds or flags), the CPU and wall seconds of the run, and with
``--list`` every held or flagged skill with the reason its review screen gives.

Usage: python benchmarks/bench_published.py --corpus DIR [--exclude AUTHOR ...] [--list] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards._importer.pipeline import import_source
from chimera_cards._scan.codescan import lint_skill_paths
from chimera_cards._scan.findings import SHAPE_RULES
from chimera_cards._store.facade import Store
from chimera_cards.errors import UsageError

FLAG_SEVERITIES = ("error", "warning")


@dataclass
class Result:
    """What the import and lint made of one published skill."""

    author: str
    skill: str
    held: bool
    flagged: bool
    reason: str = ""  # the held version's reason, as the review screen shows it
    hold_rules: list[str] = field(default_factory=list)  # what holds it: error rules, "refused"
    flag_rules: list[str] = field(default_factory=list)  # security error/warning rules


def find_skills(root: Path, exclude: set[str]) -> list[tuple[str, Path]]:
    """(author, skill folder) for every SKILL.md under ``root``, in path order."""
    out = []
    for card in sorted(root.rglob("SKILL.md")):
        rel = card.parent.relative_to(root)
        if len(rel.parts) < 2 or rel.parts[0] in exclude or not card.is_file():
            continue
        out.append((rel.parts[0], card.parent))
    return out


def measure(skills: list[tuple[str, Path]]) -> list[Result]:
    """Lint and import each skill (a fresh temporary store for the whole corpus)."""
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-published-") as tmp,
        Store(Path(tmp) / "store.db") as store,
    ):
        for author, folder in skills:
            report = lint_skill_paths([folder])
            flags = sorted(
                {
                    f.rule
                    for f in report.findings
                    if f.rule not in SHAPE_RULES and f.severity in FLAG_SEVERITIES
                }
            )
            try:
                imported = import_source(store, folder, jobs=1)
            except (
                UsageError
            ) as exc:  # the folder is not read as a skill at all: the user sees this
                results.append(
                    Result(author, folder.name, True, bool(flags), str(exc), ["no-skill"], flags)
                )
                continue
            held = [r for r in imported if r.outcome == "refused" or r.status != "active"]
            holds = sorted(
                {
                    f["rule"]
                    for r in held
                    for f in (r.findings or [])
                    if f.get("severity") == "error" and f.get("rule") not in SHAPE_RULES
                }
                | {"refused" for r in held if r.outcome == "refused"}
            )
            reason = "; ".join(r.reason or r.outcome for r in held)
            results.append(
                Result(author, folder.name, bool(held), bool(flags), reason, holds, flags)
            )
    return results


def _pct(count: int, total: int) -> str:
    return f"{count:4d} ({100 * count / total:5.1f}%)" if total else "   0"


def table(results: list[Result]) -> list[str]:
    """The per-author table and the rules behind it."""
    authors = sorted({r.author for r in results}, key=str.lower)
    lines = [f"{'author':<18} {'skills':>6} {'held':>13} {'flagged':>13}"]
    for author in [*authors, None]:
        rows = [r for r in results if author is None or r.author == author]
        if author is None:
            lines.append("-" * 53)
        lines.append(
            f"{author or 'ALL':<18} {len(rows):>6} {_pct(sum(r.held for r in rows), len(rows)):>13}"
            f" {_pct(sum(r.flagged for r in rows), len(rows)):>13}"
        )
    held = Counter(rule for r in results if r.held for rule in r.hold_rules)
    flagged = Counter(rule for r in results for rule in r.flag_rules)
    lines.append("rules behind held skills (skills each rule holds): " + _counts(held))
    lines.append("rules behind flagged skills (skills each rule flags): " + _counts(flagged))
    return lines


def _counts(counter: Counter) -> str:
    return ", ".join(f"{rule} {n}" for rule, n in counter.most_common()) or "none"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="DIR/<author>/<skill>/")
    parser.add_argument("--exclude", action="append", default=[], help="an author to leave out")
    parser.add_argument("--list", action="store_true", help="list every held or flagged skill")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"error: {args.corpus}: not a folder", file=sys.stderr)
        return 2
    skills = find_skills(args.corpus, set(args.exclude))
    if not skills:
        print(f"error: {args.corpus}: no DIR/<author>/<skill>/SKILL.md found", file=sys.stderr)
        return 2
    wall, cpu = time.perf_counter(), time.process_time()
    results = measure(skills)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if args.json:
        print(json.dumps({"results": [asdict(r) for r in results], "cpu": cpu, "wall": wall}))
        return 0
    print(f"corpus: {args.corpus} ({len(results)} skills, {len({r.author for r in results})} "
          f"authors)")  # fmt: skip
    for line in table(results):
        print(line)
    print(f"lint + import of every skill: {cpu:.2f} s CPU, {wall:.2f} s wall")
    if args.list:
        for r in results:
            if r.held or r.flagged:
                what = "held" if r.held else "flagged"
                print(f"  {what:7} {r.author}/{r.skill}: flags {', '.join(r.flag_rules) or '-'}"
                      f"{'; ' + r.reason if r.held else ''}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
