"""Benchmark: where the time of parsing and linting one card goes.

Generates N cards like ``bench_store.py`` does (~4 KB, Chimera-shaped, ASCII prose) in memory and
prints the CPU time per card of ``parse_card`` and ``lint_card(strict=False)`` (what import runs),
then of their parts, so a change to one part can be judged against the whole in the same run.
Times are this process's CPU time, best of --repeat runs (the machine is shared).
Usage: python benchmarks/bench_parse.py [--cards N] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import card_bytes

from chimera_cards._cards import card as card_module
from chimera_cards._scan import hidden
from chimera_cards._scan import lint as lint_module

clock = time.process_time  # the figure quoted: steady under load
wall_clock = time.perf_counter  # printed beside it


def per_card(repeat: int, count: int, fn) -> tuple[float, float]:
    """Best-of-``repeat`` CPU and wall time of ``fn()``, in microseconds per card."""
    runs = [_timed(fn) for _ in range(repeat)]
    return min(c for c, _ in runs) / count * 1e6, min(w for _, w in runs) / count * 1e6


def _timed(fn) -> tuple[float, float]:
    start, wall = clock(), wall_clock()
    fn()
    return clock() - start, wall_clock() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = parser.parse_args()
    rng = random.Random(7)
    raw = [card_bytes(index, rng) for index in range(args.cards)]
    paths = [f"/cards/bench-card-{index:05d}/SKILL.md" for index in range(args.cards)]
    cards = [card_module.parse_card(data, path=path) for data, path in zip(raw, paths, strict=True)]
    size = sum(map(len, raw)) / len(raw)
    print(
        f"{args.cards} cards of {size:.0f} bytes; "
        f"microseconds per card, CPU (wall beside it), best of {args.repeat}"
    )

    def row(label: str, fn, whole: float | None = None) -> float:
        cost, wall = per_card(args.repeat, args.cards, fn)
        share = f"  {cost / whole:5.0%} of the line above" if whole else ""
        print(f"  {label:48s} {cost:8.1f} us  (wall {wall:8.1f} us){share}")
        return cost

    parse = row(
        "parse_card",
        lambda: [card_module.parse_card(d, path=p) for d, p in zip(raw, paths, strict=True)],
    )
    row(
        "  frontmatter YAML (_load_frontmatter)",
        lambda: [card_module._load_frontmatter(c.frontmatter_text, 2) for c in cards],
        parse,
    )
    row(
        "  the same on the pure-Python YAML path",
        lambda: [
            card_module._load_frontmatter(c.frontmatter_text, 2, libyaml=False) for c in cards
        ],
        parse,
    )
    row(
        "  sections (markdown-it block parse)",
        lambda: [card_module._sections(c.body, c.body_line) for c in cards],
        parse,
    )
    lint = row(
        "lint_card(strict=False)", lambda: [lint_module.lint_card(c, strict=False) for c in cards]
    )
    row("  scan_hidden(body)", lambda: [hidden.scan_hidden(c.body) for c in cards], lint)
    row(
        "  scan_hidden(body, fast=False): every regex at every offset",
        lambda: [hidden.scan_hidden(c.body, fast=False) for c in cards],
        lint,
    )
    row(
        "  scan_hidden(frontmatter)",
        lambda: [hidden.scan_hidden(c.frontmatter_text) for c in cards],
        lint,
    )
    row(
        "  YAML-escaped scalars",
        lambda: [hidden._escaped_scalar_findings(c, []) for c in cards],
        lint,
    )
    total = parse + lint
    print(f"parse + lint: {total:.1f} us per card = {1e6 / total:.0f} cards/s on one core")


if __name__ == "__main__":
    main()
