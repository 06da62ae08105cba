"""Benchmark: the gate at run time, what an agent waits for on each skill it loads or lists.

Generates N skills (default 50) with skillgen (~10 files, ~60 KB each), imports them from a local
path (clean: usable without a signature, so the numbers are the gate's reading and re-hashing,
not Ed25519) and installs them into a Claude Code skills folder. Then, best of --repeat with the
median beside it:

- ``chimera-cards hook claude`` as a process for one Skill call (what Claude Code runs before the
  skill loads: start-up, the store, check of the skills folder), next to ``chimera-cards check``
  of that folder and the floor ``python -c pass``;
- in-process, the catalog: every skill of the store re-read and re-hashed (``skills/list``), one
  skill (a ``resources/read``), and the same for the agent folder (``--from``);
- over the MCP SDK's in-process client: a ``skills/list`` and a ``resources/read`` round trip.

Usage: python benchmarks/bench_runtime.py [--skills N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from skillgen import generate

from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.installer import install
from chimera_cards._runtime.catalog import FolderCatalog, StoreCatalog
from chimera_cards._store.facade import Store

CLI = [sys.executable, "-m", "chimera_cards"]


def best(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def row(label: str, timing: tuple[float, float]) -> None:
    print(f"{label:<44} {timing[0] * 1000:8.1f} ms   median {timing[1] * 1000:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files, size = generate(root / "src", args.skills)
        db = root / "cards.db"
        skills = root / "project" / ".claude" / "skills"
        with Store(db) as store:
            names = [r.name for r in import_source(store, root / "src")]
            install(store, names, skills)
        print(f"{len(names)} skills, {files} files, {size / 1e6:.1f} MB; repeat {args.repeat}")
        env = {
            **os.environ,
            "CHIMERA_CARDS_HOME": str(root),
            "CLAUDE_PROJECT_DIR": str(skills.parent.parent),
        }
        payload = json.dumps(
            {
                "session_id": "s",
                "cwd": str(skills.parent.parent),
                "hook_event_name": "PreToolUse",
                "tool_name": "Skill",
                "tool_input": {"skill": names[0]},
            }
        ).encode()

        def hook() -> None:
            done = subprocess.run(
                [*CLI, "hook", "claude"], input=payload, env=env, capture_output=True, check=False
            )
            assert done.returncode == 0, done.stderr

        def check() -> None:
            done = subprocess.run(
                [*CLI, "check", str(skills)], env=env, capture_output=True, check=False
            )
            assert done.returncode == 0, done.stderr

        row(
            "floor: python -c pass",
            best(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), args.repeat),
        )
        row("chimera-cards check (the folder)", best(check, args.repeat))
        row("chimera-cards hook claude (one Skill call)", best(hook, args.repeat))
        store_catalog = StoreCatalog(db)
        folder_catalog = FolderCatalog(db, skills)
        row("store catalog: every skill re-hashed", best(store_catalog.skills, args.repeat))
        row(
            "store catalog: one skill re-hashed",
            best(lambda: store_catalog.get(names[0]), args.repeat),
        )
        row("folder catalog: every skill re-read", best(folder_catalog.skills, args.repeat))
        row(
            "folder catalog: one skill re-read",
            best(lambda: folder_catalog.get(names[0]), args.repeat),
        )
        mcp_rows(store_catalog, names[0], args.repeat)


def mcp_rows(catalog: StoreCatalog, name: str, repeat: int) -> None:
    try:
        from mcp import Client
        from mcp.types import Request, RequestParams
        from pydantic import TypeAdapter
    except ImportError:
        print("MCP SDK not installed: no round-trip rows")
        return
    from chimera_cards._runtime.mcp_server import build_server

    server = build_server(catalog)

    async def run() -> tuple[tuple[float, float], tuple[float, float]]:
        async with Client(server) as client:
            lists, reads = [], []
            for _ in range(repeat):
                start = time.perf_counter()
                await client.session.send_request(
                    Request(method="skills/list", params=RequestParams()), TypeAdapter(dict)
                )
                lists.append(time.perf_counter() - start)
                start = time.perf_counter()
                await client.read_resource(f"skill://{name}/SKILL.md")
                reads.append(time.perf_counter() - start)
            return (min(lists), statistics.median(lists)), (min(reads), statistics.median(reads))

    listed, read = asyncio.run(run())
    row("MCP skills/list round trip (in-process)", listed)
    row("MCP resources/read round trip (in-process)", read)


if __name__ == "__main__":
    main()
