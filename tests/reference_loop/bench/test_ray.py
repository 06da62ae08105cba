"""The bench on a real Ray cluster on 127.0.0.1: a head and a second node, each declaring one
agent session; the scripted bench must give the same outcome per cell as the local executor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import TESTS_DIR
from test_bench import make_task
from test_resume import _table

ray = pytest.importorskip("ray", reason="the ray extra is not installed")
from ray.cluster_utils import Cluster  # noqa: E402

ROOT = TESTS_DIR.parent


def _bench(args: list[str]) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{TESTS_DIR}"}
    proc = subprocess.run(
        [sys.executable, "-c", "from reference_loop._cli.app import main; main()", "bench", *args],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    # Two CPUs but one agent session per node: the session cap, not the CPUs, limits the runs.
    # The nodes' workers import this checkout, as the bench's driver does.
    saved = dict(os.environ)
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{TESTS_DIR}"
    try:
        c = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 2, "resources": {"agent_sessions": 1}},
        )
        c.add_node(num_cpus=2, resources={"agent_sessions": 1})
        c.wait_for_nodes()
        try:
            yield c
        finally:
            c.shutdown()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _runs(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return [{k: v for k, v in r.items() if k != "wall"} for r in data["runs"]]


@pytest.mark.slow
def test_the_scripted_bench_on_a_two_node_cluster_matches_the_local_executor_per_cell(
    cluster: Any, tmp_path: Path
) -> None:
    make_task(tmp_path / "tasks", "value-four")
    make_task(tmp_path / "tasks", "value-four-b")
    common = ["--tasks", str(tmp_path / "tasks"), "--seeds", "2", "--arms", "none,last,accumulate"]
    code, local_table, err = _bench([*common, "--out", str(tmp_path / "local.json")])
    assert code == 0, err
    code, ray_table, err = _bench(
        [
            *common,
            "--executor",
            "ray",
            "--address",
            cluster.address,
            "--sessions",
            "1",
            "--out",
            str(tmp_path / "ray.json"),
        ]
    )
    assert code == 0, err
    assert "bench 12/12:" in err and "Traceback" not in err
    assert _runs(tmp_path / "ray.json") == _runs(tmp_path / "local.json")
    assert len(_runs(tmp_path / "ray.json")) == 12
    assert _table(ray_table) == _table(local_table)


@pytest.mark.slow
def test_never_more_agent_sessions_at_once_than_the_cluster_declares(
    cluster: Any, tmp_path: Path
) -> None:
    # Four CPUs in the cluster, two agent sessions: at most two agents may overlap.
    log = tmp_path / "sessions.log"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import time\n"
        f"log = {str(log)!r}\n"
        "start = time.time()\n"
        "time.sleep(1.0)\n"
        "open('value.py', 'w').write('VALUE = 4\\n')\n"
        "with open(log, 'a') as fh: fh.write(f'{start} {time.time()}\\n')\n"
    )
    for name in ("t1", "t2", "t3"):
        make_task(tmp_path / "tasks", name)
    code, _, err = _bench(
        [
            "--tasks",
            str(tmp_path / "tasks"),
            "--attempter",
            f"cmd:{sys.executable} {agent}",
            "--seeds",
            "2",
            "--arms",
            "accumulate",
            "--executor",
            "ray",
            "--address",
            cluster.address,
            "--sessions",
            "1",
        ]
    )
    assert "Traceback" not in err and code in (0, 1), err
    spans = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    assert len(spans) == 6
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert most <= 2, spans


@pytest.mark.slow
def test_address_without_ray_executor_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = _bench(["--address", "127.0.0.1:1", "--seeds", "1"])
    assert code == 2
    assert err.strip() == "error: --address and --sessions need --executor ray"
