"""Benchmark: installing approved skills into an agent folder, and checking them.

Generates N skills (default 200) with skillgen (SKILL.md, scripts with the exec bit,
references, an asset; ~60 KB per skill), imports them into a fresh store (a clean path import,
so they are usable without review), and measures in the same run, wall-clock, best of --repeat:

- install: ``install(store, names, DIR)`` (gate, read bundles from the store, re-hash, write
  each skill to a temp folder, receipt, atomic swap), next to ``cp -r`` of the same skill
  folders; and the write step alone (``write_skill`` of bundles already in memory);
- check: ``check(store, [DIR])`` (scan and hash every installed file, look each digest up in the
  store, verify approvals), next to ``sha256sum`` over the same files; and the CLI
  ``chimera-cards check DIR`` as a subprocess (Python start-up included).

Targets (install issue): check <= 2x sha256sum; install <= 2x cp -r.
Usage: python benchmarks/bench_install.py [--skills N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillgen import generate

from chimera_cards.bundle import read_bundle_dir
from chimera_cards.importer import import_source
from chimera_cards.install import check, install, record_installs, write_skill
from chimera_cards.store import Store


def best_of(fns: dict, repeat: int) -> dict[str, float]:
    """Best wall time of each function; runs are interleaved so that all of them see the same
    machine load (other processes share these cores)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-install-"))
    try:
        src = work / "src"
        files, total = generate(src, args.skills)
        names = sorted(p.name for p in src.iterdir())
        with Store(work / "cards.db") as store:
            results = import_source(store, str(src))
            assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
            bundles = {n: read_bundle_dir(src / n) for n in names}
            print(
                f"{args.skills} skills, {files} files, {total / 1e6:.1f} MB; best of {args.repeat}"
            )

            def fresh(tag: str) -> Path:
                target = work / f"{tag}-{time.perf_counter_ns()}"
                return target

            def cp() -> None:
                target = fresh("cp")
                target.mkdir()
                subprocess.run(
                    ["cp", "-r", *(str(src / n) for n in names), str(target)], check=True
                )

            def do_install() -> None:
                install(store, names, fresh("install"))

            def do_write() -> None:
                target = fresh("write")
                written = {}
                for name in names:
                    receipt = write_skill(target, bundles[name], name=name, store="b", record=False)
                    written[name] = receipt.index_entry()
                record_installs(target, written)

            t = best_of({"cp": cp, "install": do_install, "write": do_write}, args.repeat)
            t_cp, t_install, t_write = t["cp"], t["install"], t["write"]
            print(f"cp -r          {t_cp * 1000:8.1f} ms")
            print(
                f"install        {t_install * 1000:8.1f} ms  ratio {t_install / t_cp:.2f}x  "
                "(target <= 2x)"
            )
            print(f"write only     {t_write * 1000:8.1f} ms  ratio {t_write / t_cp:.2f}x")

            installed = work / "installed"
            install(store, names, installed)
            paths = [
                str(p)
                for p in sorted(installed.rglob("*"))
                if p.is_file() and not p.name.startswith(".chimera")
            ]
            assert len(paths) == files

            def sha256sum() -> None:
                subprocess.run(["sha256sum", *paths], check=True, stdout=subprocess.DEVNULL)

            def do_check() -> None:
                report = check(store, [installed])
                assert report.ok and len(report.states) == args.skills

            exe = Path(sys.executable).parent / "chimera-cards"
            env = {**os.environ, "CHIMERA_CARDS_HOME": str(work)}

            def cli_check() -> None:
                subprocess.run(
                    [str(exe), "check", str(installed), "--store", str(work / "cards.db")],
                    check=True,
                    env=env,
                    stdout=subprocess.DEVNULL,
                )

            t = best_of({"sum": sha256sum, "check": do_check, "cli": cli_check}, args.repeat)
            t_sum, t_check, t_cli = t["sum"], t["check"], t["cli"]
            print(f"sha256sum      {t_sum * 1000:8.1f} ms")
            print(
                f"check          {t_check * 1000:8.1f} ms  ratio {t_check / t_sum:.2f}x  "
                "(target <= 2x)"
            )
            print(
                f"check (CLI)    {t_cli * 1000:8.1f} ms  ratio {t_cli / t_sum:.2f}x  "
                "(includes Python start-up)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
