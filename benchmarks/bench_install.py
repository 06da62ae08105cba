"""Benchmark: installing approved skills into an agent folder, and checking them, from the CLI.

Generates N skills (default 200) with skillgen (SKILL.md, scripts with the exec bit,
references, an asset; ~60 KB per skill) and stores them as a team's CI store holds them:
imported tainted, then approved with a signed statement by a key on the trust list, so every
``check`` and ``install`` depends on Ed25519 signatures. Then measures in the same run,
wall-clock best of --repeat (with the median, and the CPU time of the process and its
children, which other sessions' load on a shared machine barely moves):

- install: ``chimera-cards install NAME... --to DIR`` as a process and ``install()``
  in-process (gate, read bundles from the store, re-hash, temp folder, receipt, atomic swap),
  next to ``cp -r`` of the same skill folders; and the write step alone (``write_skill`` of
  bundles already in memory). Neither install nor cp fsyncs. Before every timed write the
  previous outputs are deleted and ``sync`` flushes all dirty pages, so no run pays for the
  writeback of an earlier one (without this the ratio swung 0.4x-2.2x between runs); the order
  of cp and install rotates from round to round.
- check: ``chimera-cards check DIR`` as a process (what CI runs; Python start-up included), and
  ``check()`` in-process, next to ``sha256sum`` over the same files. The signature verdicts are
  remembered in the store when the approvals are stored (as ``import`` and ``approve`` do); the
  process is also timed with that memo emptied before every run (the first check after a trust
  change), and with ``--trust-file`` (always verifies every signature).

The processes run with a bytecode cache, as a pip-installed package has one (pip compiles it
at install time); a development checkout with PYTHONDONTWRITEBYTECODE set recompiles every
module on every run, which the "no bytecode cache" line shows.

Floors printed for reference: ``python -c pass`` and ``python -c 'import click'``.
Targets (install issue): check <= 2x sha256sum; install <= 2x cp -r.
Usage: python benchmarks/bench_install.py [--skills N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skillgen import generate

from chimera_cards._bundles.bundle import read_bundle_dir
from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.disk import write_skill
from chimera_cards._install.installer import install
from chimera_cards._install.receipt import record_installs
from chimera_cards._install.verify import check
from chimera_cards._review.decisions import add_trust, approve
from chimera_cards._review.trustfile import TrustFile, write_trust_file
from chimera_cards._store.facade import Store
from chimera_cards._trust.keys import generate_key, load_private_key


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its finished children."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed_rounds(
    fns: dict[str, Callable[[], None]],
    repeat: int,
    before: Callable[[], None] | None = None,
) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of each function per round. Rounds interleave the functions (so all
    of them see the same machine load) and rotate their order; ``before`` runs untimed."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    names = list(fns)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            if before is not None:
                before()
            cpu, start = cpu_seconds(), time.perf_counter()
            fns[name]()
            times[name].append((time.perf_counter() - start, cpu_seconds() - cpu))
    return times


def line(label: str, runs: list[tuple[float, float]], base: list | None = None, note="") -> str:
    """Best wall time (and its ratio to the baseline's best), median wall, best CPU time."""
    wall, cpu = [w for w, _ in runs], [c for _, c in runs]
    text = f"{label:<34} {min(wall) * 1000:8.1f} ms"
    text += f"  {min(wall) / min(w for w, _ in base):5.2f}x" if base else " " * 8
    text += f"  median {statistics.median(wall) * 1000:7.1f}  cpu {min(cpu) * 1000:7.1f}"
    if base:
        text += f" {min(cpu) / min(c for _, c in base):5.2f}x"
    return f"{text}  {note}" if note else text


class Bench:
    """One generated, approved set of skills and the ways of running the tool on it."""

    def __init__(self, work: Path, skills: int, repeat: int) -> None:
        self.work, self.repeat = work, repeat
        self.src = work / "src"
        self.files, total = generate(self.src, skills)
        self.names = sorted(p.name for p in self.src.iterdir())
        self.db = work / "cards.db"
        key = generate_key("alice", work / "keys" / "alice.key")
        private = load_private_key(key.keyfile)
        with Store(self.db) as store:
            add_trust(store, "alice", key.public)
            results = import_source(store, str(self.src), taint=True)
            assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
            for r in results:
                decision = approve(store, r.name, r.sha256, private)
                assert decision.status == "active", (r.name, decision.status)
        self.trust_file = work / "team.trust"
        write_trust_file(self.trust_file, TrustFile(1, {"alice": key.public}))
        self.bundles = {n: read_bundle_dir(self.src / n) for n in self.names}
        self.exe = str(Path(sys.executable).parent / "chimera-cards")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env = env | {
            "CHIMERA_CARDS_HOME": str(work),
            "PYTHONPYCACHEPREFIX": str(work / "pycache"),
        }
        self.no_cache = {**self.env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": ""}
        self.outputs: list[Path] = []
        print(
            f"{skills} skills, {self.files} files, {total / 1e6:.1f} MB, each approved by a "
            f"signed statement; best of {repeat}, ratio = best / best of the baseline"
        )
        self.run([self.exe, "--help"])  # fills the bytecode cache

    def run(self, argv: list[str], env: dict | None = None) -> None:
        done = subprocess.run(argv, check=False, env=env or self.env, stdout=subprocess.DEVNULL)
        assert done.returncode == 0, (argv[:3], done.returncode)

    def fresh(self, tag: str) -> Path:
        target = self.work / f"{tag}-{time.perf_counter_ns()}"
        self.outputs.append(target)
        return target

    def settle(self) -> None:
        """Delete earlier outputs and flush every dirty page: each timed write starts clean."""
        while self.outputs:
            shutil.rmtree(self.outputs.pop(), ignore_errors=True)
        os.sync()

    def install_rounds(self) -> None:
        names, src = self.names, self.src

        def cp() -> None:
            target = self.fresh("cp")
            target.mkdir()
            self.run(["cp", "-r", *(str(src / n) for n in names), str(target)])

        def install_cli() -> None:
            target = self.fresh("cli")
            self.run([self.exe, "install", *names, "--to", str(target), "--store", str(self.db)])

        def install_api() -> None:
            with Store(self.db) as store:
                install(store, names, self.fresh("install"))

        def write_only() -> None:
            target = self.fresh("write")
            written = {}
            for name in names:
                # A new folder has no leftovers to recover (install lists its folder once).
                receipt = write_skill(
                    target, self.bundles[name], name=name, store="b", record=False, hidden=()
                )
                written[name] = receipt.index_entry()
            record_installs(target, written)

        fns = {"cp": cp, "cli": install_cli, "api": install_api, "write": write_only}
        t = timed_rounds(fns, self.repeat, before=self.settle)
        self.settle()
        print(line("cp -r", t["cp"]))
        print(line("install (CLI)", t["cli"], t["cp"], "target <= 2x"))
        print(line("install (in-process)", t["api"], t["cp"], "target <= 2x"))
        print(line("write only (in-process)", t["write"], t["cp"]))

    def check_rounds(self) -> None:
        installed = self.work / "installed"
        with Store(self.db) as store:
            install(store, self.names, installed)
        paths = [
            str(p)
            for p in sorted(installed.rglob("*"))
            if p.is_file() and not p.name.startswith(".chimera")
        ]
        assert len(paths) == self.files
        os.sync()
        argv = [self.exe, "check", str(installed), "--store", str(self.db)]

        def check_api() -> None:
            with Store(self.db) as store:
                report = check(store, [installed])
            assert report.ok and len(report.states) == len(self.names)

        def forget() -> None:
            with Store(self.db) as store:
                store.forget_verdicts()

        fns = {
            "sum": lambda: self.run(["sha256sum", *paths]),
            "cli": lambda: self.run(argv),
            "api": check_api,
            "pass": lambda: self.run([sys.executable, "-c", "pass"]),
            "click": lambda: self.run([sys.executable, "-c", "import click"]),
        }
        t = timed_rounds(fns, self.repeat)
        cold = timed_rounds({"cold": lambda: self.run(argv)}, self.repeat, before=forget)
        self.run(argv)  # the memo holds every verdict again
        other = {
            "file": lambda: self.run([*argv, "--trust-file", str(self.trust_file)]),
            "nocache": lambda: self.run(argv, self.no_cache),
        }
        extra = timed_rounds(other, self.repeat)
        print(line("sha256sum", t["sum"]))
        print(line("check (CLI)", t["cli"], t["sum"], "target <= 2x"))
        print(line("check (in-process)", t["api"], t["sum"]))
        print(line("check (CLI), memo emptied first", cold["cold"], t["sum"]))
        print(line("check (CLI) --trust-file", extra["file"], t["sum"]))
        print(line("check (CLI), no bytecode cache", extra["nocache"], t["sum"]))
        print(line("floor: python -c pass", t["pass"]))
        print(line("floor: python -c 'import click'", t["click"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-install-"))
    try:
        bench = Bench(work, args.skills, args.repeat)
        bench.install_rounds()
        bench.check_rounds()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
