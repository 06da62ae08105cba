"""A small real scanner for the plug-in tests: reads every file under DIR and writes SARIF 2.1.0.

A line with EXFIL is an error (level given), SUSPECT a warning, NOTE a note, and DEFAULTED takes
its level from the rule's defaultConfiguration (error); URIs are absolute file: URIs, as many
tools write them. Options make it misbehave the ways real scanners do.

usage: sarif_scanner.py DIR [--out FILE] [--sleep S] [--exit N] [--garbage] [--version V]
                            [--pidfile FILE] [--child] [--suppress]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MARKS = {"EXFIL": ("demo-exfil", "error"), "SUSPECT": ("demo-suspect", "warning"),
         "NOTE": ("demo-note", "note"), "DEFAULTED": ("demo-default", None)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--out")
    ap.add_argument("--sleep", type=float, default=0)
    ap.add_argument("--exit", type=int, default=0)
    ap.add_argument("--garbage", action="store_true")
    ap.add_argument("--version", default="0.1")
    ap.add_argument("--pidfile")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--suppress", action="store_true")
    args = ap.parse_args()
    if args.pidfile:
        pids = [os.getpid()]
        if args.child:
            pids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]).pid)
        Path(args.pidfile).write_text(" ".join(map(str, pids)))
    if args.sleep:
        time.sleep(args.sleep)
    rules = [{"id": rid, **({"defaultConfiguration": {"level": "error"}} if lvl is None else {})}
             for rid, lvl in MARKS.values()]  # fmt: skip
    results = []
    root = Path(args.dir)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for word, (rid, level) in MARKS.items():
                if word in line:
                    result = {
                        "ruleId": rid,
                        "message": {"text": f"{word.lower()} in {path.name}"},
                        "locations": [{"physicalLocation": {
                            "artifactLocation": {"uri": path.resolve().as_uri()},
                            "region": {"startLine": n}}}],
                    }  # fmt: skip
                    if level is not None:
                        result["level"] = level
                    if args.suppress:
                        result["suppressions"] = [{"kind": "external"}]
                    results.append(result)
    driver = {"name": "demo-scanner", "version": args.version, "rules": rules}
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
    text = "{ this is not json" if args.garbage else json.dumps(log)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return args.exit


if __name__ == "__main__":
    raise SystemExit(main())
