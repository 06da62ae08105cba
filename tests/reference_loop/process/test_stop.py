"""A stop that lands between two steps that belong together waits until both are done."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from reference_loop._process.stop import Stopped, signals_held, signals_raise_stopped


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_between_journaling_a_run_and_counting_it_comes_after_both(sig: int) -> None:
    journal: list[str] = []
    counted: list[str] = []
    with signals_raise_stopped(), pytest.raises(Stopped) as stopped:
        with signals_held():
            journal.append("run")
            os.kill(os.getpid(), sig)  # delivered to this thread before the next line runs
            for _ in range(1000):
                pass
            counted.append("run")
        raise AssertionError("the held stop was not delivered when the block ended")
    assert stopped.value.signum == sig
    assert journal == counted == ["run"]


def test_the_handlers_in_place_before_the_block_are_back_after_it() -> None:
    with signals_raise_stopped():
        before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
        with signals_held():
            pass
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_outside_the_main_thread_nothing_is_held_and_nothing_breaks() -> None:
    ran: list[bool] = []

    def body() -> None:
        with signals_held():
            ran.append(True)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert ran == [True]
