"""Benchmark: lint throughput (MB/s) on adversarial bodies against a plain body, in one run.

Each adversarial body is the worst input found for one rule of the hidden-instruction scan
(the same shapes as the linearity test in tests/chimera_cards/scan/test_lint.py); the plain
body is realistic ASCII prose with Markdown. Prints MB/s of ``scan_hidden`` (CPU time, best of
--repeat) per body, and for the worst one the ratio to the plain body, plus the time at half and
full size so a quadratic rule shows as a 4x step instead of 2x.
Usage: python benchmarks/bench_lint.py [--mib 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from chimera_cards._scan.hidden import scan_hidden

clock = time.process_time  # the figure the target is checked on: steady under load
wall_clock = time.perf_counter  # printed beside it


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def bodies(size: int) -> dict[str, str]:
    return {
        "pipe-to-shell: curl curl curl": _fill("curl ", size),
        "pipe-to-shell: curl | then spaces": "curl |" + _fill(" ", size - 6),
        "pipe-to-shell: sh <( repeated": _fill("sh <(", size),
        "override-phrase: < / repeated": _fill("< / ", size),
        "override-phrase: ignore the the": "ignore " + _fill("the ", size - 7),
        "html-comment: <!-- repeated": _fill("<!--", size),
        "markdown-comment: one per line": _fill("[x]: # (\n", size),
        "base64-blob: one run": _fill("A", size),
        "base64-blob: split pieces": _fill("aB3dEf9hJ2kL5mN8 ", size),
        "url: data: repeated": _fill("data:x ", size),
        "hidden-zero-width: one per line": _fill("\u200b\n", size),
        "hidden-variation-selector: a+VS": _fill("a\ufe01", size),
        "hidden-tag: one run": _fill("\U000e0041", size),
        "phrases: emphasis everywhere": _fill("i*g*n*o*r*e ", size),
        "phrases: Cyrillic look-alikes": _fill("\u0456gnore previous ", size),
    }


PLAIN = (
    "## Do\n\nRun the project's own gate command before you claim a fix works, and keep the "
    "**exact** output with the claim. See `make check` and https://example.com/docs.\n\n"
    "- one step\n- another step with a [link](https://example.com)\n\n"
)


def best(repeat: int, text: str) -> float:
    """Best CPU seconds of ``repeat`` scans of ``text`` (the wall time goes to ``WALL``)."""
    times, walls = [], []
    for _ in range(repeat):
        start, wall = clock(), wall_clock()
        scan_hidden(text)
        times.append(clock() - start)
        walls.append(wall_clock() - wall)
    WALL[text[:64], len(text)] = min(walls)
    return min(times)


WALL: dict[tuple[str, int], float] = {}  # (head, size) -> best wall seconds, for the printout


def _wall_rate(text: str) -> float:
    return len(text.encode()) / 1e6 / WALL[text[:64], len(text)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=1.0, help="size of each body in MiB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per body (best kept)")
    args = parser.parse_args()
    size = int(args.mib * (1 << 20))
    plain = _fill(PLAIN, size)
    plain_s = best(args.repeat, plain)
    mb = len(plain.encode()) / 1e6
    print(
        f"bodies of {args.mib:g} MiB; MB/s of scan_hidden, CPU time and wall time "
        f"(best of {args.repeat} each)"
    )
    print(f"  {'':40s} {'CPU':>13} {'wall':>13}")
    print(
        f"  {'plain Markdown prose (baseline)':40s} {mb / plain_s:8.2f} MB/s "
        f"{_wall_rate(plain):8.2f} MB/s"
    )
    rates = {}
    for name, text in bodies(size).items():
        seconds = best(args.repeat, text)
        rates[name] = (len(text.encode()) / 1e6 / seconds, seconds)
        print(f"  {name:40s} {rates[name][0]:8.2f} MB/s {_wall_rate(text):8.2f} MB/s")
    worst = min(rates, key=lambda n: rates[n][0])
    half = best(args.repeat, bodies(size // 2)[worst])
    print(
        f"worst case: {worst}: {rates[worst][0]:.2f} MB/s = "
        f"{rates[worst][0] / (mb / plain_s):.2f}x "
        f"the plain body; full/half size time {rates[worst][1] / half:.2f} (linear 2, quadratic 4)"
    )


if __name__ == "__main__":
    main()
