"""Where the certified bracket's bounds come from (``Bracket.sources``, SPEC §0 "certified bracket"; issue #27: "the
result reports the bound's source per node").

Judged on nets whose answer is known from elsewhere: a small ball net the tree exhausts (the upper end is the
enclosure of a pattern realised at a point, or the lower end itself); the d = 3 sphere net whose ball relaxation
stalls 1.6% above the exact S² constant (only a sphere-leaf bound can hold an upper end that close); a d = 32,
m = 256 net in a few seconds (the upper end is the zonotope's: Shor's dual, far below the triangle bound).
"""

from __future__ import annotations

import math

import numpy as np

from numerics import rob as K
from numerics.rob import bracket as KB
from numerics.rob.bracket import CLOSURES, SOURCES, certified_bracket
from numerics.rob.bracket_net import SRC_SHOR, SRC_TRIANGLE

SPHERE_LEAF = (KB.SRC_DELTA, KB.SRC_SDP, KB.SRC_PIECES)


def _well_formed(br):
    src = br.sources
    assert src["upper end"] in SOURCES
    assert set(src["nodes"]) <= set(SOURCES) and set(src["closed"]) <= set(CLOSURES)
    assert all(n > 0 for n in (*src["nodes"].values(), *src["closed"].values()))
    # the upper end is the holder's bound rounded up once, and never below the lower end
    assert br.upper == float(np.nextafter(src["upper end value"], math.inf))
    assert src["upper end value"] >= br.lower


def test_an_exhausted_ball_tree_is_held_by_a_realised_leaf_or_the_lower_end():
    rng = np.random.default_rng(0)
    W, b, a = rng.standard_normal((8, 4)), 0.2 * rng.standard_normal(8), rng.standard_normal(8)
    br = certified_bracket(W, b, a, np.zeros(4), sphere=False, rel_gap=0.0, time_limit=20)
    _well_formed(br)
    assert br.status == "exhausted" and br.gap < 1e-12
    assert br.sources["upper end"] in (KB.SRC_ENUM, KB.SRC_LOWER)
    if br.sources["upper end"] == KB.SRC_ENUM:
        assert br.sources["closed"].get(KB.KEPT_REALISED, 0) >= 1


def test_the_sphere_stall_is_held_by_a_sphere_leaf_bound(stall_net):
    """The ball relaxation of this net's best cell is 1.6% above the exact constant: an upper end within 1e-6 of it
    can only come from a bound on cell ∩ S."""
    W, b, a, v = stall_net
    L = K.lipschitz((W, b, a, v, 0.0), K.Sphere(3))
    br = certified_bracket(W, b, a, v, sphere=True, rel_gap=0.0, time_limit=20)
    _well_formed(br)
    assert br.upper <= L.upper * (1 + 1e-6)
    assert br.sources["upper end"] in SPHERE_LEAF
    assert br.sources["nodes"].get(KB.SRC_SDP, 0) >= 1


def test_a_wide_d32_bracket_is_held_by_the_zonotope_shor_dual():
    rng = np.random.default_rng(5)
    d, m = 32, 256
    W = rng.standard_normal((m, d)) / math.sqrt(d)
    b, a = 0.1 * rng.standard_normal(m), rng.standard_normal(m) / math.sqrt(m)
    br = certified_bracket(W, b, a, np.zeros(d), sphere=False, rel_gap=0.01, time_limit=4)
    _well_formed(br)
    assert br.status == "time limit" and br.gap > 0.05
    assert br.sources["upper end"] in (SRC_SHOR, KB.SRC_PARENT)
    assert br.sources["nodes"][SRC_SHOR] >= 1
    # the label is earned: the root's triangle bound ‖c₀‖ + ½Σ‖α_j‖ is far above the upper end, so it holds nothing
    tri = float(np.linalg.norm(0.5 * a @ W)) + 0.5 * float(np.sum(np.abs(a) * np.linalg.norm(W, axis=1)))
    assert tri > 1.5 * br.upper and br.sources["upper end"] != SRC_TRIANGLE


def test_the_lipschitz_result_and_its_method_carry_the_sources():
    rng = np.random.default_rng(1)
    W, b, a = rng.standard_normal((24, 8)) / math.sqrt(8), 0.1 * rng.standard_normal(24), rng.standard_normal(24)
    L = K.lipschitz((W, b, a, np.zeros(8), 0.0), K.Sphere(8), time_limit=10, rel_gap=0.01)
    assert "branch and bound" in L.method
    assert L.argmax["sources"]["upper end"] in SOURCES and L.upper_source == L.argmax["sources"]["upper end"]
