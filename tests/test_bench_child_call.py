"""The bench's child-process contender (checks.runners.bench.timing.ChildCall): a peer timed in its own process,
so that its allocations do not disturb the other contender's timing (the softmax tr-H row against BackPACK)."""

from __future__ import annotations

import time

import pytest

from checks.runners.bench.timing import ChildCall, paired


def _spin(seconds: float, value):
    """Busy for ``seconds`` of CPU (not a sleep: the child's CPU clock must see it)."""
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        pass
    return value


def _fail():
    raise ArithmeticError("planted")


def test_a_child_call_is_timed_where_it_ran_and_its_value_comes_back():
    peer = ChildCall(_spin, 0.12, {"trace": 3.5})
    try:
        summ, outs = paired(lambda: _spin(0.03, 1.0), {"peer": peer}, rounds=3)
        assert outs["peer"] == {"trace": 3.5}
        wall, cpu = peer.times
        assert 0.1 <= cpu <= wall * (1 + 1e-6) and wall < 5    # the child's own clocks: it spun 0.12 s of CPU
        s = summ["peer"]
        # ≈ 0.12/0.03 = 4 in CPU time, whatever the load (a parent-side clock would see ~0 CPU in the call); the wall
        # ratio moves with the machine's load (xdist workers beside it), so only its side is asserted
        assert 2.5 < s["cpu_ratio_median"] < 6 and s["ratio_median"] > 2.5
    finally:
        peer.close()
    assert not peer._proc.is_alive()


def test_an_error_in_the_child_is_raised_in_the_parent_and_the_child_lives_on():
    peer = ChildCall(_fail)
    try:
        with pytest.raises(RuntimeError, match="ArithmeticError: planted"):
            peer()
        assert peer._proc.is_alive()
    finally:
        peer.close()
