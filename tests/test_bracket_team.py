"""The certified bracket on two processes (``certified_bracket(..., workers=2)``, :mod:`numerics.rob.bracket_team`).

Judged against constants known elsewhere (the exact ball routine's recursion over flats, the exact S² arrangement):
the two workers' parts must still enclose the constant, a worker that dies or fails must widen the bracket (its part
at its largest bound), never falsify it, and the open nodes must be dealt so that every node is in exactly one part.
"""

from __future__ import annotations

import heapq
import os

import numpy as np
import pytest

from numerics import rob as K
from numerics.rob import bracket as KB
from numerics.rob import bracket_team as KT
from numerics.rob.bracket import certified_bracket

pytestmark = pytest.mark.skipif(not KT.can_fork(), reason="needs the fork start method")


def _ball_net(seed=3, d=4, m=24):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)), 0.3 * rng.standard_normal(m), rng.standard_normal(m), 0.1 * np.ones(d)


def _exact(W, b, a, v, domain):
    L = K.lipschitz((W, b, a, v, 0.0), domain)
    assert L.exact
    return L.lower, L.upper


def test_deal_puts_every_node_in_exactly_one_part_round_robin_by_bound():
    rng = np.random.default_rng(1)
    heap = []
    for i, bd in enumerate(rng.random(37)):
        heapq.heappush(heap, (-float(bd), i, f"node{i}"))
    parts = KT.deal(list(heap), 3)
    ids = sorted(e[1] for p in parts for e in p)
    assert ids == list(range(37))
    ranked = sorted(heap)
    for i, p in enumerate(parts):
        assert p[0] == ranked[i]                                       # part i starts at rank i
        assert all(p[k] <= p[c] for k in range(len(p)) for c in (2 * k + 1, 2 * k + 2) if c < len(p))   # a heap
    assert [len(p) for p in parts] == [13, 12, 12]


@pytest.mark.parametrize("sphere", [False, True])
def test_two_workers_enclose_the_exact_constant(monkeypatch, sphere):
    monkeypatch.setattr(KB, "WARMUP", 0.0)           # deal the nodes as soon as there are enough
    if sphere:
        rng = np.random.default_rng(11)
        W, b, a = rng.standard_normal((40, 3)), 0.4 * rng.standard_normal(40), rng.standard_normal(40)
        v = np.zeros(3)
        lo, up = _exact(W, b, a, v, K.Sphere(3))
    else:
        W, b, a, v = _ball_net()
        lo, up = _exact(W, b, a, v, K.Ball(4, 1.0))
    br = certified_bracket(W, b, a, v, sphere=sphere, rel_gap=1e-6, time_limit=30, workers=2)
    crew = br.sources["workers"]
    assert [w["worker"] for w in crew] == [0, 1] and all(w["status"] != "lost" for w in crew)
    assert br.lower <= up and br.upper >= lo
    assert br.status in ("gap reached", "exhausted") and br.gap <= 1e-6
    assert br.nodes >= sum(w["nodes"] for w in crew)
    assert br.lower >= max(w["lower"] for w in crew)     # every worker's witness, evaluated again, is taken


def test_a_worker_that_dies_widens_the_bracket_and_is_named(monkeypatch):
    monkeypatch.setattr(KB, "WARMUP", 0.0)
    monkeypatch.setattr(KT.Team, "child_exit", lambda self, make: os._exit(0))      # dies without a word
    W, b, a, v = _ball_net()
    lo, up = _exact(W, b, a, v, K.Ball(4, 1.0))
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=1e-6, time_limit=20, workers=2)
    lost = br.sources["workers"][1]
    assert lost["status"] == "lost" and "unreadable" in lost["why"]
    assert br.status == "time limit"
    assert br.lower <= up and br.upper >= lo
    assert br.upper >= lost["part's largest bound"]


def test_a_worker_that_fails_widens_the_bracket(monkeypatch):
    monkeypatch.setattr(KB, "WARMUP", 0.0)
    fork = KT.Team.fork

    def fork_then_break(self, heap, stuck):
        fork(self, heap, stuck)
        if self.role > 0:                               # only the child's searches fail
            def boom(*args, **kw):
                raise RuntimeError("planted failure in a worker")
            KB.BracketNet.node_bound_source = boom
            KB.BracketNet.socp = boom

    monkeypatch.setattr(KT.Team, "fork", fork_then_break)
    W, b, a, v = _ball_net()
    lo, up = _exact(W, b, a, v, K.Ball(4, 1.0))
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=1e-6, time_limit=20, workers=2)
    lost = br.sources["workers"][1]
    assert lost["status"] == "lost" and "planted failure" in lost["why"]
    assert br.lower <= up and br.upper >= lo and br.upper >= lost["part's largest bound"]
    if br.upper == float(np.nextafter(lost["part's largest bound"], np.inf)):
        assert br.sources["upper end"] == KB.SRC_LOST


def test_one_worker_or_a_daemon_stays_on_one_process(monkeypatch):
    W, b, a, v = _ball_net()
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=1e-6, time_limit=20, workers=1)
    assert "workers" not in br.sources
    monkeypatch.setattr(KT, "can_fork", lambda: False)
    monkeypatch.setattr(KB, "can_fork", lambda: False)
    monkeypatch.setattr(KB, "WARMUP", 0.0)
    br2 = certified_bracket(W, b, a, v, sphere=False, rel_gap=1e-6, time_limit=20, workers=2)
    assert "workers" not in br2.sources and br2.status in ("gap reached", "exhausted")


def test_the_lower_end_a_child_witnesses_is_checked_and_taken(monkeypatch):
    """The parent's own lower search is switched off (restored in the child only): the final lower end can then only
    come from the child's witness, which the parent evaluates again before taking it."""
    from numerics.rob import bracket_search as BS

    monkeypatch.setattr(KB, "WARMUP", 0.0)
    names = ("local_search", "climb", "anneal", "offer_in", "realise_on_sphere", "settle")
    saved = {n: getattr(BS.LowerSearch, n) for n in names}
    for n in names:
        monkeypatch.setattr(BS.LowerSearch, n, lambda self, *a, _n=n, **k: (np.zeros(self.d), 0.0)
                            if _n == "local_search" else (iter(()) if _n == "anneal" else None))
    fork = KT.Team.fork

    def fork_then_search(self, heap, stuck):
        fork(self, heap, stuck)
        if self.role > 0:
            for n, f in saved.items():
                setattr(BS.LowerSearch, n, f)

    monkeypatch.setattr(KT.Team, "fork", fork_then_search)
    W, b, a, v = _ball_net()
    lo, up = _exact(W, b, a, v, K.Ball(4, 1.0))
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=1e-6, time_limit=20, workers=2)
    crew = br.sources["workers"]
    assert crew[1]["lower"] > crew[0]["lower"]
    assert br.lower >= crew[1]["lower"] > 0 and br.lower <= up and br.upper >= lo


def test_a_failing_parent_stops_its_children_and_raises(monkeypatch):
    monkeypatch.setattr(KB, "WARMUP", 0.0)
    fork, pids = KT.Team.fork, []

    def fork_then_break_the_parent(self, heap, stuck):
        fork(self, heap, stuck)
        if self.role == 0:
            pids.extend(pid for pid, _, _ in self.children)

            def boom(*args, **kw):
                raise RuntimeError("planted failure in the parent")
            monkeypatch.setattr(KB.BracketNet, "node_bound_source", boom)
            monkeypatch.setattr(KB.BracketNet, "socp", boom)

    monkeypatch.setattr(KT.Team, "fork", fork_then_break_the_parent)
    W, b, a, v = _ball_net()
    with pytest.raises(RuntimeError, match="planted failure in the parent"):
        certified_bracket(W, b, a, v, sphere=False, rel_gap=1e-6, time_limit=20, workers=2)
    assert pids
    for pid in pids:                       # killed and reaped: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _concurrent_net():
    """Sixteen hyperplanes meant to pass through p ∈ B_1 ⊂ R⁴ (b = −Wp in float64: they miss p by ~1e-17)."""
    rng = np.random.default_rng([26, 4, 16])
    W = rng.standard_normal((16, 4)) / 2.0
    a = rng.standard_normal(16) / 3.0
    v = 0.01 * rng.standard_normal(4)
    p = np.random.default_rng(26).standard_normal(4)
    p *= 0.3 / np.linalg.norm(p)
    return W, -W @ p, a, v


def _tangent_net():
    """B_1 ⊂ R⁶ with three tangent hyperplanes (|b| = ‖w‖), an opposite and a repeated one (exact rationals)."""
    from fractions import Fraction as F
    W = [[1, 2, 2, 0, 0, 0], [0, 0, 0, 2, 3, 6], [1, 0, 0, 0, 0, 0], [0, 1, -1, 1, 0, 0], [3, 0, 4, 0, 0, 0],
         [0, 0, 1, 1, 1, 1]]
    b = [3, -7, F(1, 2), F(1, 3), 5, F(-1, 4)]
    W += [[-x for x in W[2]], [2 * x for x in W[3]]]
    b += [-b[2], 2 * b[3]]
    a = [1, -2, 1, F(3, 2), -1, 2, 1, -1]
    return ([[F(x) for x in w] for w in W], [F(x) for x in b], [F(x) for x in a], [F(0)] * 6)


@pytest.mark.parametrize("make", [_concurrent_net, _tangent_net], ids=["concurrent", "tangent"])
def test_two_workers_on_degenerate_arrangements(monkeypatch, make):
    """The falsifier's degenerate families, on two workers dealt from the first nodes, at rel_gap 0: the bracket
    still holds the constant decided exactly (the exact routine of B_R)."""
    from fractions import Fraction as F

    from numerics.rob import exact as E

    monkeypatch.setattr(KB, "WARMUP", 0.0)
    monkeypatch.setattr(KB, "DEAL_MIN", 1)          # small trees: deal as soon as two nodes are open
    W, b, a, v = make()
    Wq = [[F(x) for x in r] for r in W]
    bq, aq, vq = ([F(x) for x in t] for t in (b, a, v))
    ref = K.lipschitz((Wq, bq, aq, vq, F(0)), K.Ball(len(vq), 1))
    assert ref.exact
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=0.0, time_limit=30, workers=2)
    assert E.QNum(F(br.lower) ** 2).cmp(ref.value2) <= 0 <= E.QNum(F(br.upper) ** 2).cmp(ref.value2)
    assert br.status in ("gap reached", "exhausted")
    assert len(br.sources["workers"]) == 2
