"""The bench on a real Ray cluster on 127.0.0.1: a head and a second node, each declaring one
agent session, shared by every test here (start-up is most of the cost). The scripted bench must
give the same outcome per cell as the local executor; a worker killed mid-run loses no cell; a
bench stopped mid-run resumes to the same table; the session cap holds.

They skip without the ``ray`` extra, as in CI: Ray's install and start-up cost minutes there
(docs/decisions/bench-ray-tests-outside-ci.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import TESTS_DIR
from test_bench import make_task
from test_resume import _journal_lines, _table

from reference_loop._bench.journal import journal_path

# Every test here starts Ray nodes.
pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="the ray extra is not installed")
from ray.cluster_utils import Cluster  # noqa: E402

ROOT = TESTS_DIR.parent
CELL = "ray::run_packed_cell"  # a Ray worker's process title while it runs a cell


def _popen(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{TESTS_DIR}"}
    return subprocess.Popen(
        [sys.executable, "-c", "from reference_loop._cli.app import main; main()", "bench", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _bench(args: list[str]) -> tuple[int, str, str]:
    proc = _popen(args)
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


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
            head_node_args={
                "num_cpus": 2,
                "resources": {"agent_sessions": 1},
                "include_dashboard": False,
            },
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


@pytest.fixture(scope="module")
def tasks_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ray") / "tasks"
    make_task(root, "value-four")
    make_task(root, "value-four-b")
    return root


def _common(tasks_root: Path) -> list[str]:
    return ["--tasks", str(tasks_root), "--seeds", "2", "--arms", "none,last,accumulate"]


def _on_ray(cluster: Any) -> list[str]:
    return ["--executor", "ray", "--address", cluster.address, "--sessions", "1"]


@pytest.fixture(scope="module")
def local(tasks_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The same bench on the local executor: the result every Ray run must match."""
    out = tmp_path_factory.mktemp("local") / "local.json"
    code, table, err = _bench([*_common(tasks_root), "--out", str(out)])
    assert code == 0, err
    return out, table


def _runs(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return [{k: v for k, v in r.items() if k != "wall"} for r in data["runs"]]


def _cell_workers(running: str = "") -> list[int]:
    """This test's Ray workers running a cell now: descendants of this process (the cluster's
    nodes are its children) whose title says so; with ``running``, only those with a process
    under them whose command line holds it."""
    parent: dict[int, int] = {}
    argv: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            argv[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])

    def chain(pid: int) -> list[int]:
        up = []
        while pid in parent and pid > 1:
            pid = parent[pid]
            up.append(pid)
        return up

    workers = [
        pid for pid in argv if argv[pid].startswith(CELL.encode()) and os.getpid() in chain(pid)
    ]
    if not running:
        return workers
    busy = {up for pid in argv if running.encode() in argv[pid] for up in chain(pid)}
    return [w for w in workers if w in busy]


def test_the_scripted_bench_on_a_two_node_cluster_matches_the_local_executor_per_cell(
    cluster: Any, tasks_root: Path, local: tuple[Path, str], tmp_path: Path
) -> None:
    code, ray_table, err = _bench(
        [*_common(tasks_root), *_on_ray(cluster), "--out", str(tmp_path / "ray.json")]
    )
    assert code == 0, err
    assert "bench 12/12:" in err and "Traceback" not in err
    local_out, local_table = local
    assert _runs(tmp_path / "ray.json") == _runs(local_out)
    assert len(_runs(tmp_path / "ray.json")) == 12
    assert _table(ray_table) == _table(local_table)
    # Each progress line says where its cell ran: this machine, one of the cluster's two nodes.
    nodes = {n.node_id[:8] for n in cluster.list_all_nodes()}
    lines = [line for line in err.splitlines() if line.startswith("bench ")]
    assert len(lines) == 12
    ran_on = {re.search(r" on \S+ node ([0-9a-f]{8})$", line)[1] for line in lines}  # type: ignore[index]
    assert ran_on <= nodes, (ran_on, nodes)


def test_a_worker_killed_mid_run_loses_no_cell(cluster: Any, tmp_path: Path) -> None:
    # Each agent logs its start and takes two seconds; the Ray worker of the first cell seen
    # running its agent is killed (SIGKILL), so Ray must run that cell again, agent and all, and
    # every cell must come back once.
    log = tmp_path / "starts.log"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import time\n"
        f"open({str(log)!r}, 'a').write('start\\n')\n"
        "time.sleep(2.0)\n"
        "open('value.py', 'w').write('VALUE = 4\\n')\n"
    )
    for name in ("t1", "t2", "t3"):
        make_task(tmp_path / "tasks", name)
    out = tmp_path / "killed.json"
    proc = _popen(
        [
            "--tasks",
            str(tmp_path / "tasks"),
            "--attempter",
            f"cmd:{sys.executable} {agent}",
            "--seeds",
            "2",
            "--arms",
            "accumulate",
            *_on_ray(cluster),
            "--out",
            str(out),
        ]
    )
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        workers = _cell_workers(running=str(agent))
        if workers:
            killed = workers[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    _, err = proc.communicate(timeout=600)
    assert killed is not None, "no cell was seen running"
    assert proc.returncode in (0, 1) and "Traceback" not in err, err  # 1: the lone arm is VOID
    data = json.loads(out.read_text())
    cells = sorted((r["task"], r["arm"], r["seed"]) for r in data["runs"])
    assert cells == sorted((t, "accumulate", s) for t in ("t1", "t2", "t3") for s in (0, 1))
    assert all(r["solved"] and r["attempts"] == 1 for r in data["runs"])
    assert data["partial"] is False
    assert _journal_lines(journal_path(out)) == 6  # each cell journaled once
    assert log.read_text().count("start") >= 7  # the killed cell's agent started again


def test_a_ray_bench_stopped_mid_run_and_resumed_gives_the_local_table(
    cluster: Any, tasks_root: Path, local: tuple[Path, str], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    journal = journal_path(out)
    args = [*_common(tasks_root), *_on_ray(cluster), "--out", str(out)]
    proc = _popen(args)
    deadline = time.monotonic() + 300
    while _journal_lines(journal) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    kept = _journal_lines(journal)
    assert 3 <= kept < 12, "the stop came after the bench had finished"
    assert json.loads(out.read_text())["runs_finished"] == kept
    # The cells in flight were stopped with the bench, not left running on the cluster.
    deadline = time.monotonic() + 10
    while _cell_workers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _cell_workers() == []

    code, table, err = _bench(args)
    assert code == 0, err
    assert f"resumed: {kept} of 12 runs" in err
    assert _journal_lines(journal) == 12  # each cell once: none ran twice
    local_out, local_table = local
    assert _runs(out) == _runs(local_out)
    assert _table(table) == _table(local_table)


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


def test_address_without_ray_executor_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = _bench(["--address", "127.0.0.1:1", "--seeds", "1"])
    assert code == 2
    assert err.strip() == "error: --address and --sessions need --executor ray"


def test_an_address_no_ray_head_listens_on_is_one_error_line_at_once(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free, and nothing listens on it once closed
    out = tmp_path / "r.json"
    started = time.monotonic()
    where = ["--executor", "ray", "--address", f"127.0.0.1:{port}"]
    code, _, err = _bench(
        [*where, "--seeds", "1", "--arms", "none", "--task", "money-format", "--out", str(out)]
    )
    assert code != 0 and time.monotonic() - started < 60
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(f"error: cannot reach a Ray head at 127.0.0.1:{port}")
    )
    assert "Traceback" not in err
    assert not out.exists()
