"""Benchmark: how much of a labelled corpus of skills the scan flags and holds, how many benign
skills it flags, and how fast, beside cisco-ai-skill-scanner's static scan when it is installed.

For every sample skill folder:

- *flagged*: the scan (``lint`` of the whole bundle) reports an error or a warning from a
  security rule (shape rules such as ``name-dirname`` are left out: they say nothing about an
  attack);
- *held*: importing the folder from its local path into a temporary store leaves the version
  pending (or refuses it), so nothing becomes active without a review;
- *cisco*: cisco-ai-skill-scanner (offline, static analyzers only) reports a finding of MEDIUM
  severity or above.

Malicious samples are counted per technique (detected/total); benign samples count as false
alarms when flagged. Seconds per skill are the scan's in-process time; for cisco, the wall time
of one ``scan-all`` over the corpus divided by the number of skills (its start-up paid once),
and the mean of its own per-skill durations.

Corpora (``--corpus DIR``, default ``benchmarks/detection``):

- ``labels.csv`` in DIR (this project's format: skill,label,technique,severity,note; the skill
  folders in DIR/skills/ or DIR/);
- skill folders that carry an ``_expected.json`` with ``expected_safe`` (cisco's evals):
  the technique is the folder above the skill;
- otherwise a path component says the label (``malicious``/``malware``/``bad`` or
  ``benign``/``safe``/``good``/``clean``), or ``--label`` gives one label to every skill (e.g.
  ``--label benign`` for a folder of published skills).

Usage: python benchmarks/bench_detection.py [--corpus DIR] [--label benign|malicious]
       [--no-cisco] [--cisco-command skill-scanner] [--json] [--list]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards.importer.pipeline import import_source
from chimera_cards.scan.codescan import lint_skill_paths
from chimera_cards.store.facade import Store

DEFAULT_CORPUS = Path(__file__).resolve().parent / "detection"
MALICIOUS, BENIGN = "malicious", "benign"
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
# Rules about a card's shape, not about an attack: a peer corpus whose folder names differ from
# the skills' names would otherwise count as "detected" everywhere.
SHAPE_RULES = frozenset(
    {
        "parse-error",
        "name-missing",
        "name-format",
        "name-dirname",
        "description-missing",
        "description-length",
        "field-type",
        "frontmatter-unknown-key",
        "chimera-field-missing",
        "kind-value",
        "stage-value",
        "topic-value",
        "provenance-value",
        "status-value",
        "section-missing",
        "section-empty",
        "section-order",
        "section-duplicate",
        "section-unknown",
    }
)
CISCO_FLAG = frozenset({"MEDIUM", "HIGH", "CRITICAL"})
CISCO_TIMEOUT = 1800.0
_MALICIOUS_WORDS = {"malicious", "malware", "bad", "attacks", "unsafe"}
_BENIGN_WORDS = {"benign", "safe", "good", "clean"}


@dataclass
class Sample:
    """One labelled skill folder."""

    skill: str
    path: Path
    label: str  # malicious | benign
    technique: str
    severity: str | None = None  # malicious: the least it must get; benign: the most it may
    note: str = ""


@dataclass
class Outcome:
    """What one tool made of one sample."""

    flagged: bool
    top: str | None  # highest severity among the security findings (ours) or cisco's max
    held: bool | None = None
    rules: list[str] = field(default_factory=list)
    seconds: float = 0.0
    unparsed: bool = False  # ours: the SKILL.md did not parse (a corpus problem, listed apart)


# --- corpora ---------------------------------------------------------------------------------


def _skill_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("SKILL.md") if p.is_file())


def _from_labels(root: Path) -> list[Sample]:
    samples = []
    base = root / "skills" if (root / "skills").is_dir() else root
    with open(root / "labels.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            folder = base / row["skill"]
            if not (folder / "SKILL.md").is_file():
                raise SystemExit(f"error: {folder}: labelled in labels.csv but has no SKILL.md")
            samples.append(
                Sample(
                    row["skill"],
                    folder,
                    row["label"],
                    row["technique"],
                    row.get("severity") or None,
                    row.get("note", ""),
                )
            )
    return samples


def _label_from_path(rel: Path) -> str | None:
    words = {part.lower() for part in rel.parts}
    if words & _MALICIOUS_WORDS:
        return MALICIOUS
    if words & _BENIGN_WORDS or any(w.startswith("safe-") for w in words):
        return BENIGN
    return None


def load_corpus(root: Path, label: str | None = None) -> list[Sample]:
    """The labelled samples of a corpus folder (see the module docstring for the formats).

    Args:
        root: the corpus folder.
        label: one label for every skill that no other source labels.
    Returns:
        The samples, in path order.
    """
    if (root / "labels.csv").is_file():
        return _from_labels(root)
    samples = []
    for folder in _skill_dirs(root):
        rel = folder.relative_to(root)
        technique = rel.parent.name or "unlabelled"
        expected = folder / "_expected.json"
        found: str | None = None
        if expected.is_file():
            data = json.loads(expected.read_text(encoding="utf-8"))
            found = BENIGN if data.get("expected_safe") else MALICIOUS
            patterns = data.get("threat_patterns") or []
            if found == MALICIOUS and technique in {"malicious", "."} and patterns:
                technique = str(patterns[0])
        found = found or _label_from_path(rel) or label
        if found is None:
            continue
        samples.append(Sample(folder.name, folder, found, technique))
    return samples


# --- our scan ----------------------------------------------------------------------------------


def _security(findings) -> list:
    return [f for f in findings if f.rule not in SHAPE_RULES]


def run_ours(samples: list[Sample]) -> dict[Path, Outcome]:
    """Scan every sample, then import each from its path into a temporary store.

    Args:
        samples: the samples.
    Returns:
        An Outcome per sample path.
    """
    out: dict[Path, Outcome] = {}
    for s in samples:
        start = time.perf_counter()
        report = lint_skill_paths([s.path])
        seconds = time.perf_counter() - start
        found = [f for f in _security(report.findings) if f.severity in ("error", "warning")]
        top = max((f.severity for f in found), key=SEVERITY_RANK.__getitem__, default=None)
        unparsed = any(f.rule == "parse-error" for f in report.findings)
        out[s.path] = Outcome(
            bool(found), top, None, sorted({f.rule for f in found}), seconds, unparsed
        )
    with (
        tempfile.TemporaryDirectory(prefix="bench-detection-") as tmp,
        Store(Path(tmp) / "store.db") as store,
    ):
        for s in samples:
            results = import_source(store, s.path, jobs=1)
            out[s.path].held = any(r.outcome == "refused" or r.status == "pending" for r in results)
    return out


# --- cisco-ai-skill-scanner ------------------------------------------------------------------


def find_cisco(command: str | None) -> str | None:
    """The cisco-ai-skill-scanner command, if installed (beside this Python first)."""
    if command:
        return shutil.which(command)
    beside = Path(sys.executable).parent / "skill-scanner"
    return str(beside) if beside.exists() else shutil.which("skill-scanner")


def _cisco_env() -> dict[str, str]:
    # Static analyzers only: no key for any LLM or cloud service reaches it.
    drop = ("API_KEY", "TOKEN", "SKILL_SCANNER_LLM", "VIRUSTOTAL", "AI_DEFENSE")
    return {k: v for k, v in os.environ.items() if not any(d in k.upper() for d in drop)}


def run_cisco(samples: list[Sample], exe: str) -> tuple[dict[Path, Outcome], float, float]:
    """Run ``skill-scanner scan-all -r`` once over copies of the samples (offline, static).

    Args:
        samples: the samples.
        exe: the skill-scanner command.
    Returns:
        An Outcome per sample path found in its report, the wall seconds of the run, and the sum
        of its own per-skill durations.
    """
    with tempfile.TemporaryDirectory(prefix="bench-cisco-") as tmp:
        # Each sample in a folder of its own under its own name (two corpora may share a name).
        copies: dict[Path, Path] = {}
        for i, s in enumerate(samples):
            dest = Path(tmp) / "skills" / f"{i:04d}" / s.path.name
            shutil.copytree(s.path, dest, symlinks=True)
            copies[dest.resolve()] = s.path
        report = Path(tmp) / "report.json"
        start = time.perf_counter()
        proc = subprocess.run(
            [exe, "scan-all", str(Path(tmp) / "skills"), "--recursive", "--format", "json",
             "--output-json", str(report)],
            capture_output=True,
            text=True,
            timeout=CISCO_TIMEOUT,
            env=_cisco_env(),
            check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if not report.is_file():
            raise SystemExit(f"error: skill-scanner wrote no report: {proc.stderr.strip()[-500:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
    out: dict[Path, Outcome] = {}
    own = 0.0
    for entry in data.get("results", []):
        sample = copies.get(Path(entry.get("skill_path", "")).resolve())
        if sample is None:
            continue
        severities = {str(f.get("severity", "")).upper() for f in entry.get("findings", [])}
        seconds = float(entry.get("scan_duration_seconds") or 0.0)
        own += seconds
        rules = sorted(
            {str(f.get("rule_id")) for f in entry.get("findings", [])
             if str(f.get("severity", "")).upper() in CISCO_FLAG}
        )  # fmt: skip
        out[sample] = Outcome(
            bool(severities & CISCO_FLAG), entry.get("max_severity"), None, rules, seconds
        )
    return out, wall, own


# --- figures ---------------------------------------------------------------------------------


def _below(sample: Sample, outcome: Outcome) -> bool:
    """A malicious sample whose highest finding is below the severity its label asks for."""
    if sample.label != MALICIOUS or sample.severity not in SEVERITY_RANK:
        return False
    got = SEVERITY_RANK.get(outcome.top or "", -1)
    return got < SEVERITY_RANK[sample.severity]


def summarise(
    samples: list[Sample],
    ours: dict[Path, Outcome],
    cisco: dict[Path, Outcome] | None,
) -> dict:
    """The figures the table prints, as data.

    Args:
        samples: the samples.
        ours: our outcomes.
        cisco: cisco's outcomes (None: not run).
    Returns:
        A dict: per technique counts, totals, benign flagged, misses and false alarms by name.
    """
    techniques: dict[str, dict[str, int]] = defaultdict(
        lambda: {"total": 0, "flagged": 0, "held": 0, "cisco": 0}
    )
    benign: dict[str, dict[str, int]] = defaultdict(
        lambda: {"total": 0, "flagged": 0, "held": 0, "cisco": 0}
    )
    missed, alarms, below = [], [], []
    unparsed = [s.skill for s in samples if ours[s.path].unparsed]
    for s in samples:
        o = ours[s.path]
        c = cisco.get(s.path) if cisco is not None else None
        row = (techniques if s.label == MALICIOUS else benign)[s.technique]
        row["total"] += 1
        row["flagged"] += o.flagged
        row["held"] += bool(o.held)
        row["cisco"] += bool(c and c.flagged)
        if s.label == MALICIOUS and not o.flagged:
            missed.append(s.skill)
        if s.label == MALICIOUS and o.flagged and _below(s, o):
            below.append(f"{s.skill} ({o.top} < {s.severity})")
        if s.label == BENIGN and o.flagged:
            alarms.append(f"{s.skill} ({', '.join(o.rules)})")

    def total(rows: dict) -> dict[str, int]:
        return {k: sum(r[k] for r in rows.values()) for k in ("total", "flagged", "held", "cisco")}

    return {
        "techniques": dict(sorted(techniques.items())),
        "benign": dict(sorted(benign.items())),
        "malicious_total": total(techniques),
        "benign_total": total(benign),
        "missed": missed,
        "below_expected_severity": below,
        "benign_flagged": alarms,
        "unparsed": unparsed,
    }


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def format_table(summary: dict, timing: dict, cisco_ran: bool) -> str:
    """The summary as the text table the benchmark prints."""
    cols = ["technique", "flagged", "held"] + (["cisco medium+"] if cisco_ran else [])
    lines = []

    def rows(title: str, block: dict, tot: dict) -> None:
        lines.append(f"{title}:")
        lines.append("  " + " | ".join(f"{c:<22}" if i == 0 else f"{c:>13}"
                                       for i, c in enumerate(cols)))  # fmt: skip
        for name, r in [*block.items(), ("ALL", tot)]:
            cells = [_pct(r["flagged"], r["total"]), _pct(r["held"], r["total"])]
            if cisco_ran:
                cells.append(_pct(r["cisco"], r["total"]))
            lines.append("  " + f"{name:<22} | " + " | ".join(f"{c:>13}" for c in cells))

    rows("malicious (detected/total)", summary["techniques"], summary["malicious_total"])
    rows("benign (flagged/total)", summary["benign"], summary["benign_total"])
    lines.append(f"seconds per skill: ours {timing['ours_per_skill']:.4f} (scan, in process)")
    if cisco_ran:
        lines.append(
            f"  cisco {timing['cisco_wall_per_skill']:.4f} (wall of one scan-all / skills), "
            f"{timing['cisco_own_per_skill']:.4f} (its own per-skill durations)"
        )
        lines.append(
            f"  speed ratio cisco/ours: {timing['ratio_wall']:.0f}x (wall), "
            f"{timing['ratio_own']:.0f}x (its own durations)"
        )
    if summary["missed"]:
        lines.append("missed: " + ", ".join(summary["missed"]))
    if summary["below_expected_severity"]:
        lines.append("below expected severity: " + ", ".join(summary["below_expected_severity"]))
    if summary["unparsed"]:
        lines.append("SKILL.md did not parse: " + ", ".join(summary["unparsed"]))
    if summary["benign_flagged"]:
        lines.append("benign flagged: " + "; ".join(summary["benign_flagged"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--label", choices=(MALICIOUS, BENIGN), help="label for unlabelled skills")
    ap.add_argument("--no-cisco", action="store_true", help="do not run cisco-ai-skill-scanner")
    ap.add_argument("--cisco-command", help="the skill-scanner command (default: found)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--list", action="store_true", help="print each sample's outcome too")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"error: {args.corpus}: not a folder", file=sys.stderr)
        return 2
    samples = load_corpus(args.corpus, args.label)
    if not samples:
        print(f"error: {args.corpus}: no labelled skills (try --label)", file=sys.stderr)
        return 2
    ours = run_ours(samples)
    exe = None if args.no_cisco else find_cisco(args.cisco_command)
    cisco, wall, own = run_cisco(samples, exe) if exe else (None, 0.0, 0.0)
    n = len(samples)
    ours_per = sum(o.seconds for o in ours.values()) / n
    timing = {"ours_per_skill": ours_per, "skills": n}
    if cisco is not None:
        timing.update(
            cisco_wall_per_skill=wall / n,
            cisco_own_per_skill=own / max(len(cisco), 1),
            ratio_wall=(wall / n) / ours_per if ours_per else 0.0,
            ratio_own=(own / max(len(cisco), 1)) / ours_per if ours_per else 0.0,
            cisco_reported=len(cisco),
        )
    summary = summarise(samples, ours, cisco)
    if args.json:
        per = [
            {**asdict(s), "path": str(s.path), "ours": asdict(ours[s.path]),
             "cisco": asdict(cisco[s.path]) if cisco and s.path in cisco else None}
            for s in samples
        ] if args.list else None  # fmt: skip
        print(json.dumps({"corpus": str(args.corpus), "summary": summary, "timing": timing,
                          "samples": per}, indent=2))  # fmt: skip
        return 0
    print(f"corpus: {args.corpus} ({n} skills)")
    if exe is None and not args.no_cisco:
        print("cisco-ai-skill-scanner: not installed (pip install 'chimera-cards[scanners]')")
    print(format_table(summary, timing, cisco is not None))
    if args.list:
        for s in samples:
            o = ours[s.path]
            c = cisco.get(s.path) if cisco else None
            print(
                f"  {s.label:<9} {s.technique:<20} {s.skill:<28} "
                f"ours={o.top or '-':<7} held={'yes' if o.held else 'no ':<3} "
                + (f"cisco={(c.top if c else '?')}" if cisco is not None else "")
                + f"  {','.join(o.rules)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
