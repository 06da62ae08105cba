"""The worker pool: real forked processes, results in order, errors and deaths reported, and no
worker left behind once the map is finished or abandoned."""

from __future__ import annotations

import os
import signal

import pytest
from conftest import live_children

from chimera_cards._util.workers import WorkerError, parallel_map, usable_cpus


def _square_all(chunk: list[int]) -> list[tuple[int, int]]:
    return [(n * n, os.getpid()) for n in chunk]


def _fail_on_seven(chunk: list[int]) -> list[int]:
    if 7 in chunk:
        raise ValueError("seven")
    return chunk


def _die_on_seven(chunk: list[int]) -> list[int]:
    if 7 in chunk:
        os.kill(os.getpid(), signal.SIGKILL)
    return chunk


CHUNKS = [[n, n + 1] for n in range(0, 40, 2)]


def test_results_come_back_in_order_and_match_the_serial_map():
    before = live_children()
    pooled = list(parallel_map(_square_all, CHUNKS, workers=2))
    serial = list(parallel_map(_square_all, CHUNKS, workers=1))
    assert [[v for v, _ in chunk] for chunk in pooled] == [[v for v, _ in c] for c in serial]
    assert [v for chunk in pooled for v, _ in chunk] == [n * n for n in range(40)]
    # The work ran in other processes, and none of them outlives the map.
    assert {pid for chunk in pooled for _, pid in chunk} - {os.getpid()}
    assert {pid for chunk in serial for _, pid in chunk} == {os.getpid()}
    assert live_children() <= before


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux affinity")
def test_usable_cpus_follows_the_affinity_mask():
    assert usable_cpus() == len(os.sched_getaffinity(0))


def test_an_exception_in_a_worker_reaches_the_caller_after_the_chunks_before_it():
    results = parallel_map(_fail_on_seven, CHUNKS, workers=2)
    assert next(results) == [0, 1]
    assert next(results) == [2, 3]
    assert next(results) == [4, 5]
    with pytest.raises(ValueError, match="seven"):
        next(results)


def test_a_worker_that_dies_is_a_worker_error_and_the_pool_is_gone():
    before = live_children()
    results = parallel_map(_die_on_seven, CHUNKS, workers=2)
    with pytest.raises(WorkerError, match="died"):
        list(results)
    assert live_children() <= before


def test_abandoning_the_map_stops_the_workers():
    before = live_children()
    results = parallel_map(_square_all, CHUNKS * 50, workers=2)
    next(results)
    results.close()  # type: ignore[attr-defined]
    assert live_children() <= before


def test_workers_ignore_ctrl_c_so_only_the_caller_handles_it():
    [[disposition]] = list(parallel_map(_sigint_of_worker, [[0]], workers=2))
    assert disposition == signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


def _sigint_of_worker(chunk: list[int]) -> list[object]:
    return [signal.getsignal(signal.SIGINT)]
