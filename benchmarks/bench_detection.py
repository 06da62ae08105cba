"""Benchmark: how much of a labelled corpus of skills the scan flags and holds, how many benign
skills it flags, and how fast, beside cisco-ai-skill-scanner's static scan when it is installed.

For every sample skill folder:

- *flagged*: the scan (``lint`` of the whole bundle) reports an error or a warning from a
  security rule (shape rules such as ``name-dirname`` are left out: they say nothing about an
  attack);
- *held*: importing the folder from its local path into a temporary store leaves the version
  pending for an error of a security rule (or refuses it), so nothing becomes active without a
  review (pending for a shape rule alone is listed apart);
- *cisco*: cisco-ai-skill-scanner (offline, static analyzers only) reports a finding of MEDIUM
  severity or above (*cisco high+*: HIGH or CRITICAL, what the ``cisco`` preset holds).

Malicious samples are counted per technique (detected/total); benign samples count as false
alarms when flagged. Seconds per skill are the scan's in-process wall and CPU time after one
untimed warm-up scan; for cisco, the wall and CPU time of one ``scan-all`` over the corpus divided
by the number of skills (its start-up paid once), and the mean of its own per-skill durations
(which leave out its start-up: the fairest of the three ratios).

Corpora (``--corpus DIR``, default ``benchmarks/detection``):

- ``labels.csv`` in DIR (this project's format: skill,label,technique,severity,note; the skill
  folders in DIR/skills/ or DIR/);
- skill folders that carry an ``_expected.json`` with ``expected_safe`` (cisco's evals):
  the technique is the folder above the skill;
- otherwise a path component says the label (``malicious``/``malware``/``bad`` or
  ``benign``/``safe``/``good``/``clean``), or ``--label`` gives one label to every skill (e.g.
  ``--label benign`` for a folder of published skills).

*Whole scan*: one ``lint_skill_paths`` over every sample folder at once, the best of
``--repeat`` runs (CPU and wall seconds, after one untimed warm-up), beside the wall and CPU
seconds of cisco's one ``scan-all`` over the same folders (start-up included): the figure the
"at least 20x faster" goal is judged by. ``--speed`` prints only these (no imports, no
detection table), e.g. ``--speed --corpus ../shared/corpus/agent-skills --label benign``.

Usage: python benchmarks/bench_detection.py [--corpus DIR] [--label benign|malicious]
       [--strip REGEX] [--no-cisco] [--cisco-command skill-scanner] [--json] [--list]
       [--speed] [--repeat N]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chimera_cards._importer.pipeline import import_source
from chimera_cards._scan.codescan import lint_skill_paths
from chimera_cards._scan.findings import SHAPE_RULES
from chimera_cards._store.facade import Store

DEFAULT_CORPUS = Path(__file__).resolve().parent / "detection"
MALICIOUS, BENIGN = "malicious", "benign"
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
CISCO_FLAG = frozenset({"MEDIUM", "HIGH", "CRITICAL"})
# What the `cisco` preset holds: its SARIF level error (HIGH and CRITICAL) maps to our error.
CISCO_HOLD = frozenset({"HIGH", "CRITICAL"})
CISCO_TIMEOUT = 1800.0
_MALICIOUS_WORDS = {"malicious", "malware", "bad", "attacks", "unsafe", "mal"}
_BENIGN_WORDS = {"benign", "safe", "good", "clean", "ben"}
_GENERIC_FOLDERS = {
    "skills", ".claude", ".codex", ".agents", ".openclaw", "test_skills", "evals", "tests"
}  # fmt: skip
# SkillFortifyBench files samples as claude_mal_A01_001 / openclaw_ben_cat2_007.
_ATTACK_CODE = re.compile(r"(?:^|_)(A\d{1,3}|cat\d{1,3})(?:_|$)")


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
    shape_held: bool = False  # ours: pending for a shape rule alone (not counted as held)
    cpu: float = 0.0  # ours: CPU seconds of the scan (the machine may be shared)


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
    # The names of the folders above the skill, as words: "malicious", "test-malicious",
    # "safe_skills" all say a label (the skill's own name does not: "clean-code" is no label).
    words = {w for part in rel.parts[:-1] for w in re.split(r"[-_. ]+", part.lower()) if w}
    if words & _MALICIOUS_WORDS:
        return MALICIOUS
    if words & _BENIGN_WORDS:
        return BENIGN
    return None


def _technique(rel: Path) -> str:
    """The technique a peer corpus files a skill under: an attack or category code in a folder
    name (SkillFortifyBench's ``claude_mal_A01_001``, ``claude_ben_cat2_007``), else the nearest
    folder above the skill that is not a generic one (``skills``, ``.claude``)."""
    for part in rel.parts[:-1]:
        code = _ATTACK_CODE.search(part)
        if code:
            return code.group(1)
    for part in reversed(rel.parts[:-1]):
        if part.lower() not in _GENERIC_FOLDERS:
            return part
    return "unlabelled"


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
        technique = _technique(rel)
        expected = folder / "_expected.json"
        found: str | None = None
        if expected.is_file():
            data = json.loads(expected.read_text(encoding="utf-8"))
            found = BENIGN if data.get("expected_safe") else MALICIOUS
            patterns = data.get("threat_patterns") or []
            if found == MALICIOUS and technique in {"malicious", "unlabelled"} and patterns:
                technique = str(patterns[0])
        found = found or _label_from_path(rel) or label
        if found is None:
            continue
        samples.append(Sample(folder.name, folder, found, technique))
    return samples


# --- our scan ----------------------------------------------------------------------------------


def _security(findings) -> list:
    return [f for f in findings if f.rule not in SHAPE_RULES]


def _held_for_security(result) -> bool:
    """Pending because of an error from a security rule: a peer corpus whose folder names differ
    from its skills' names is held for that alone, which says nothing about detection."""
    return result.status == "pending" and any(
        f.get("severity") == "error" and f.get("rule") not in SHAPE_RULES for f in result.findings
    )


def run_ours(samples: list[Sample]) -> dict[Path, Outcome]:
    """Scan every sample, then import each from its path into a temporary store.

    Args:
        samples: the samples.
    Returns:
        An Outcome per sample path.
    """
    out: dict[Path, Outcome] = {}
    # Once untimed: grammars, regexes and imports are loaded on first use, as cisco's own
    # per-skill durations leave out its start-up.
    lint_skill_paths([samples[0].path])
    for s in samples:
        start, cpu = time.perf_counter(), time.process_time()
        report = lint_skill_paths([s.path])
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        found = [f for f in _security(report.findings) if f.severity in ("error", "warning")]
        top = max((f.severity for f in found), key=SEVERITY_RANK.__getitem__, default=None)
        unparsed = any(f.rule == "parse-error" for f in report.findings)
        out[s.path] = Outcome(
            bool(found), top, None, sorted({f.rule for f in found}), seconds, unparsed, cpu=cpu
        )
    with (
        tempfile.TemporaryDirectory(prefix="bench-detection-") as tmp,
        Store(Path(tmp) / "store.db") as store,
    ):
        for s in samples:
            results = import_source(store, s.path, jobs=1)
            out[s.path].held = any(r.outcome == "refused" or _held_for_security(r) for r in results)
            out[s.path].shape_held = any(
                r.status == "pending" and not _held_for_security(r) for r in results
            )
    return out


def time_whole_scan(samples: list[Sample], repeat: int) -> tuple[float, float]:
    """The best CPU and the best wall seconds of ``repeat`` scans of every sample at once.

    Args:
        samples: the samples.
        repeat: how many timed scans (one untimed scan loads grammars, regexes and imports).
    Returns:
        (CPU seconds, wall seconds).
    """
    paths = [s.path for s in samples]
    lint_skill_paths(paths)
    best_cpu = best_wall = float("inf")
    for _ in range(max(repeat, 1)):
        wall, cpu = time.perf_counter(), time.process_time()
        lint_skill_paths(paths)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall


def format_whole_scan(timing: dict) -> list[str]:
    """The whole-scan lines of the table."""
    lines = [
        f"whole scan of {timing['skills']} skills: ours {timing['whole_cpu']:.3f} s CPU, "
        f"{timing['whole_wall']:.3f} s wall (best of {timing['repeat']}, in process)"
    ]
    if "cisco_wall" in timing:
        lines.append(
            f"  cisco {timing['cisco_cpu']:.3f} s CPU, {timing['cisco_wall']:.3f} s wall "
            f"(one scan-all, start-up included); ratio cisco/ours "
            f"{timing['whole_ratio_cpu']:.1f}x CPU, {timing['whole_ratio_wall']:.1f}x wall"
        )
        lines.append(
            f"  cisco's own per-skill durations sum to {timing['cisco_own']:.3f} s (start-up "
            f"left out): {timing['whole_ratio_own']:.1f}x our wall"
        )
    return lines


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


def run_cisco(samples: list[Sample], exe: str) -> tuple[dict[Path, Outcome], float, float, float]:
    """Run ``skill-scanner scan-all -r`` once over copies of the samples (offline, static).

    Args:
        samples: the samples.
        exe: the skill-scanner command.
    Returns:
        An Outcome per sample path found in its report, the wall seconds of the run, its CPU
        seconds (start-up included), and the sum of its own per-skill durations.
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
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
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
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
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
            bool(severities & CISCO_FLAG),
            entry.get("max_severity"),
            bool(severities & CISCO_HOLD),
            rules,
            seconds,
        )
    return out, wall, cpu, own


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
        lambda: {"total": 0, "flagged": 0, "held": 0, "cisco": 0, "cisco_held": 0}
    )
    benign: dict[str, dict[str, int]] = defaultdict(
        lambda: {"total": 0, "flagged": 0, "held": 0, "cisco": 0, "cisco_held": 0}
    )
    missed, alarms, below = [], [], []
    unparsed = [s.skill for s in samples if ours[s.path].unparsed]
    shape_held = [s.skill for s in samples if ours[s.path].shape_held]
    for s in samples:
        o = ours[s.path]
        c = cisco.get(s.path) if cisco is not None else None
        row = (techniques if s.label == MALICIOUS else benign)[s.technique]
        row["total"] += 1
        row["flagged"] += o.flagged
        row["held"] += bool(o.held)
        row["cisco"] += bool(c and c.flagged)
        row["cisco_held"] += bool(c and c.held)
        if s.label == MALICIOUS and not o.flagged:
            missed.append(s.skill)
        if s.label == MALICIOUS and o.flagged and _below(s, o):
            below.append(f"{s.skill} ({o.top} < {s.severity})")
        if s.label == BENIGN and o.flagged:
            alarms.append(f"{s.skill} ({', '.join(o.rules)})")

    def total(rows: dict) -> dict[str, int]:
        keys = ("total", "flagged", "held", "cisco", "cisco_held")
        return {k: sum(r[k] for r in rows.values()) for k in keys}

    return {
        "techniques": dict(sorted(techniques.items())),
        "benign": dict(sorted(benign.items())),
        "malicious_total": total(techniques),
        "benign_total": total(benign),
        "missed": missed,
        "below_expected_severity": below,
        "benign_flagged": alarms,
        "unparsed": unparsed,
        "held_for_shape_alone": shape_held,
    }


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def format_table(summary: dict, timing: dict, cisco_ran: bool) -> str:
    """The summary as the text table the benchmark prints."""
    cols = ["technique", "flagged", "held"] + (
        ["cisco medium+", "cisco high+"] if cisco_ran else []
    )
    lines = []

    def rows(title: str, block: dict, tot: dict) -> None:
        lines.append(f"{title}:")
        lines.append("  " + " | ".join(f"{c:<22}" if i == 0 else f"{c:>13}"
                                       for i, c in enumerate(cols)))  # fmt: skip
        for name, r in [*block.items(), ("ALL", tot)]:
            cells = [_pct(r["flagged"], r["total"]), _pct(r["held"], r["total"])]
            if cisco_ran:
                cells.append(_pct(r["cisco"], r["total"]))
                cells.append(_pct(r["cisco_held"], r["total"]))
            lines.append("  " + f"{name:<22} | " + " | ".join(f"{c:>13}" for c in cells))

    rows("malicious (detected/total)", summary["techniques"], summary["malicious_total"])
    rows("benign (flagged/total)", summary["benign"], summary["benign_total"])
    lines.append(
        f"seconds per skill: ours {timing['ours_per_skill']:.4f} wall, "
        f"{timing['ours_cpu_per_skill']:.4f} CPU (scan, in process, warmed up)"
    )
    if cisco_ran:
        lines.append(
            f"  cisco {timing['cisco_wall_per_skill']:.4f} wall, "
            f"{timing['cisco_cpu_per_skill']:.4f} CPU (one scan-all / skills, start-up "
            f"included), {timing['cisco_own_per_skill']:.4f} (its own per-skill durations)"
        )
        lines.append(
            f"  speed ratio cisco/ours: {timing['ratio_own']:.1f}x (its own durations / our "
            f"wall), {timing['ratio_wall']:.0f}x (wall), {timing['ratio_cpu']:.0f}x (CPU)"
        )
    if summary["missed"]:
        lines.append("missed: " + ", ".join(summary["missed"]))
    if summary["below_expected_severity"]:
        lines.append("below expected severity: " + ", ".join(summary["below_expected_severity"]))
    if summary["unparsed"]:
        lines.append("SKILL.md did not parse (refused: held): " + ", ".join(summary["unparsed"]))
    if summary["held_for_shape_alone"]:
        lines.append(
            "pending for a shape rule alone (not counted as held): "
            + ", ".join(summary["held_for_shape_alone"])
        )
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
    ap.add_argument(
        "--speed", action="store_true", help="only the whole-scan timing (no imports, no table)"
    )
    ap.add_argument("--repeat", type=int, default=3, help="timed whole scans, best kept")
    ap.add_argument(
        "--strip",
        metavar="REGEX",
        help="remove this from every text file first (a marker a corpus puts in each sample); "
        "both tools then read the stripped copies",
    )
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"error: {args.corpus}: not a folder", file=sys.stderr)
        return 2
    samples = load_corpus(args.corpus, args.label)
    if not samples:
        print(f"error: {args.corpus}: no labelled skills (try --label)", file=sys.stderr)
        return 2
    try:
        strip = re.compile(args.strip) if args.strip else None
    except re.error as exc:
        print(f"error: --strip: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-stripped-") as tmp:
        if strip is not None:
            samples = strip_copies(samples, strip, Path(tmp))
        return _measure(args, samples)


def strip_copies(samples: list[Sample], pattern: re.Pattern, into: Path) -> list[Sample]:
    """Copies of the samples with PATTERN removed from every UTF-8 text file.

    Args:
        samples: the samples.
        pattern: what to remove.
        into: where the copies go (one folder per sample, under the skill's own name).
    Returns:
        The samples, each pointing at its copy.
    """
    out = []
    for i, s in enumerate(samples):
        dest = into / f"{i:04d}" / s.path.name
        shutil.copytree(s.path, dest, symlinks=True)
        for path in dest.rglob("*"):
            if not path.is_file() or path.is_symlink():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            stripped = pattern.sub("", text)
            if stripped != text:
                path.write_text(stripped, encoding="utf-8")
        out.append(Sample(s.skill, dest, s.label, s.technique, s.severity, s.note))
    return out


def _whole(timing: dict, whole: tuple[float, float], repeat: int, cisco_ran: bool,
           wall: float, cpu: float, own: float) -> None:  # fmt: skip
    timing.update(whole_cpu=whole[0], whole_wall=whole[1], repeat=max(repeat, 1))
    if cisco_ran:
        timing.update(
            cisco_wall=wall,
            cisco_cpu=cpu,
            cisco_own=own,
            whole_ratio_own=own / whole[1] if whole[1] else 0.0,
            whole_ratio_cpu=cpu / whole[0] if whole[0] else 0.0,
            whole_ratio_wall=wall / whole[1] if whole[1] else 0.0,
        )


def _measure_speed(args: argparse.Namespace, samples: list[Sample]) -> int:
    whole = time_whole_scan(samples, args.repeat)
    exe = None if args.no_cisco else find_cisco(args.cisco_command)
    cisco, wall, cpu, own = run_cisco(samples, exe) if exe else (None, 0.0, 0.0, 0.0)
    timing: dict = {"skills": len(samples)}
    _whole(timing, whole, args.repeat, cisco is not None, wall, cpu, own)
    if args.json:
        print(json.dumps({"corpus": str(args.corpus), "timing": timing}, indent=2))
        return 0
    print(f"corpus: {args.corpus} ({len(samples)} skills)")
    if exe is None and not args.no_cisco:
        print("cisco-ai-skill-scanner: not installed (pip install 'chimera-cards[scanners]')")
    print("\n".join(format_whole_scan(timing)))
    return 0


def _measure(args: argparse.Namespace, samples: list[Sample]) -> int:
    if args.speed:
        return _measure_speed(args, samples)
    whole = time_whole_scan(samples, args.repeat)
    ours = run_ours(samples)
    exe = None if args.no_cisco else find_cisco(args.cisco_command)
    cisco, wall, cpu, own = run_cisco(samples, exe) if exe else (None, 0.0, 0.0, 0.0)
    n = len(samples)
    ours_per = sum(o.seconds for o in ours.values()) / n
    ours_cpu = sum(o.cpu for o in ours.values()) / n
    timing = {"ours_per_skill": ours_per, "ours_cpu_per_skill": ours_cpu, "skills": n}
    if cisco is not None:
        own_per = own / max(len(cisco), 1)
        timing.update(
            cisco_wall_per_skill=wall / n,
            cisco_cpu_per_skill=cpu / n,
            cisco_own_per_skill=own_per,
            ratio_wall=(wall / n) / ours_per if ours_per else 0.0,
            ratio_cpu=(cpu / n) / ours_cpu if ours_cpu else 0.0,
            ratio_own=own_per / ours_per if ours_per else 0.0,
            cisco_reported=len(cisco),
        )
    _whole(timing, whole, args.repeat, cisco is not None, wall, cpu, own)
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
    print("\n".join(format_whole_scan(timing)))
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
