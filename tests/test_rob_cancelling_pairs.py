"""Exactly cancelling pairs in the certified bracket's node bound (numerics.rob.bracket_net.BracketNet).

Units j, k with parallel hyperplanes of one orientation (W_k = λW_j, λ > 0) and α_k = −α_j have nested on-sets, so
the pair's gradients are {0, α_big} (both off; the unit with the larger on-set alone; both on = 0), not the four
points of two free generators. The node bound keeps one generator for the pair while both are free. Judged: the
pairs found (exact), the bracket against exact constants on nets made of such pairs (S², B₁ ⊂ R³), and the root
bound against the same net with the pairing switched off.
"""

from __future__ import annotations

import time
from fractions import Fraction as Fr

import numpy as np
import pytest

from numerics import rob as K
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_net import BracketNet
from numerics.rob.exact import QNum


def _cancelling(seed, d, m, delta=1e-3):
    """The bench's cancelling net: units h..2h copy units 0..h with b shifted by ~delta and a negated."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((m, d)) / np.sqrt(d)
    b = 0.1 * rng.standard_normal(m)
    a = rng.standard_normal(m) / np.sqrt(m)
    v = 0.01 * rng.standard_normal(d)
    h = m // 4
    W[h:2 * h] = W[:h]
    b[h:2 * h] = b[:h] + delta * rng.standard_normal(h)
    a[h:2 * h] = -a[:h]
    return W, b, a, v


def test_the_pairs_are_found_exactly_with_their_larger_on_set():
    W = [[1, 2], [2, 4], [1, 2], [-1, -2], [3, 1], [3, 1], [0, 1], [0, 1]]
    b = [Fr(1, 10), Fr(3, 10), 0, 0, 1, 1, 0, Fr(1, 2)]
    a = [1, Fr(-1, 2), 1, 1, 2, -2, 1, 1]
    W = [[Fr(t) for t in r] for r in W]
    ab = BracketNet._cancelling_pairs(W, [Fr(t) for t in b], [Fr(t) for t in a])
    # 0 and 1: W₁ = 2W₀, α₁ = −α₀, offsets 1/10 and 3/20: 0's on-set is the smaller → absorbed by 1
    assert ab[0] == 1 and ab[1] == -1
    # 2 and 3: opposite orientation (λ < 0) → not a pair; 6, 7: same α sign → not a pair
    assert ab[2] == ab[3] == ab[6] == ab[7] == -1
    # 4 and 5: coincident and cancelling → always 0: each absorbed by the other
    assert ab[4] == 5 and ab[5] == 4


def test_free_generators_drop_the_absorbed_unit_only_while_its_partner_is_free():
    W, b, a, v = _cancelling(0, 4, 16)
    net = BracketNet(W, b, a, v, False, 1.0)
    pairs = [(j, k) for j, k in enumerate(net.absorbed_by) if k >= 0]
    assert len(pairs) == 4
    j, k = pairs[0]
    assert j not in net.free_generators(np.arange(16)) and k in net.free_generators(np.arange(16))
    rest = np.array([u for u in range(16) if u != k])
    assert j in net.free_generators(rest)                 # k fixed: j is a free generator again


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bracket_holds_the_exact_constant_on_cancelling_nets(seed):
    W, b, a, v = _cancelling(seed, 3, 12, delta=0.05)
    for dom, sphere in ((K.Sphere(3), True), (K.Ball(3, 1.0), False)):
        L = K.lipschitz((W, b, a, v, 0.0), dom)
        assert L.exact
        br = certified_bracket(W, b, a, v, sphere=sphere, rel_gap=1e-3, time_limit=30)
        assert QNum(Fr(br.lower) ** 2).cmp(L.value2) <= 0 <= QNum(Fr(br.upper) ** 2).cmp(L.value2)
        assert br.status in ("gap reached", "exhausted")


def test_the_pairing_lowers_the_root_bound(monkeypatch):
    W, b, a, v = _cancelling(0, 16, 64)
    net = BracketNet(W, b, a, v, True, 1.0)
    net.deadline = time.perf_counter() + 30
    net.nAup = np.sqrt(np.sum((np.abs(net.Am) + net.Ar) ** 2, axis=1)) * (1 + 1e-12)   # as certified_bracket sets it
    order = np.arange(64)
    V0 = np.random.default_rng(0).standard_normal((65, 8))
    V0 /= np.linalg.norm(V0, axis=1, keepdims=True)
    paired, _ = net.node_bound(v.copy(), np.zeros(16), order, V0.copy(), iters=100)
    net.absorbed_by = -np.ones(64, int)                   # the pairing off: two generators per pair
    plain, _ = net.node_bound(v.copy(), np.zeros(16), order, V0.copy(), iters=100)
    assert paired < 0.95 * plain
