r"""Named degenerate nets for the certified Lipschitz bracket: float64 nets whose constant lives in, or is held
by, a cell that no float solver resolves — the draws of the seeded hunts (``python -m checks.rob.bracket_hunt``) that
the bracket left open before its exact constructions and certificates existed
(:mod:`numerics.rob.bracket_needle`, :mod:`numerics.rob.bracket_sphere_cells`). Each net is (W, b, a, v) with
f(x) = v·x + Σ_j a_j ReLU(W_j·x + b_j); every float is an exact binary rational, so each net has one exact constant,
which :func:`exact_constant` computes by the exact routines (the S² arrangement, the ball's recursion over flats).

Used by ``suite.predicates`` (SPEC §5: the exact fall-backs behind a certified number, reached on exact-tie inputs
and checked against exact arithmetic) and by the tests of the routines. :data:`CASES` says, per net, what float
rounding made of it and which exact routine of the bracket decides it:

=================  ======  ================================================================================
net                domain  what rounding did / the routine that decides it
=================  ======  ================================================================================
CANCEL             S²      units ±10⁶ on one plane through 0, rows equal only up to rounding: a lune ~1e-16 wide
                           holds the constant / an exact point of S in the needle's band (sphere needle points)
NEAR_PARALLEL      S²      planes 1e-12 apart: the sliver's τ = √600 on S, not ‖g‖ = 35 / a leaf of margin ≤ 0
                           bounded on S
THROUGH_POINT      S²      planes meant to meet at a point of S / the same
AXIS               S²      a cell whose closure meets the ball only where a line touches S / the pinch and the
                           flat tangent to S (``pinched_empty``, ``beyond_empty``)
MICRO_IN           S²      six planes through a point of S, a micro-cell ~1e-17 across holding the constant / the
                           sphere's zoom
MICRO_OUT          S²      the same micro-cell just beyond S / ``beyond_empty``
SLAB               S²      exactly parallel rows whose open slab holds ±10⁶ / the needle with D = 0
CAP                S²      a plane meant to touch S cutting a cap ~1e-17 deep / ``cap_bound``, ``cap_rim_points``
BALL_CUT           B⁴      a plane meant tangent cutting a cap ~5e-17 deep / the ball's cap points
BALL_MISS          B⁴      the same, missing the ball after rounding / the exact certificates at margin ≤ 1e-6
BALL_EDGE_POINT    B⁴      five planes through a point of S / the zoom at the sphere's edge
NEEDLE_D6          B⁶      two facing rows equal up to rounding, closed by the cell's other rows / ``needle_closed``
ZERO_S7, ULP_S7    S⁷      units ±10⁶ on one plane cancelling exactly, and one ulp from it (constants by hand) /
                           the exact gradient where its interval enclosure contains 0
NEEDLE_IN_CAP_B6   B⁶      (exact rationals) a needle of two near-parallel rows inside a cap ~1e-6 deep /
                           ``needle_point``, its SOCP point pulled in along the plane
SMALL_CAP_S2       S²      (exact rationals) units ±10⁶ cancelling to 2⁻²⁰ on a cap: a constant ~9.4e-7 /
                           the relaxation on cell ∩ S with g scaled by a power of two
=================  ======  ================================================================================
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

CANCEL = (
    [
     [0.6, 0.8, 0.0],
     [1.8, 2.4, 0.0]],
    [0.0, 0.0],
    [1000000.0, -333333.3333333333],
    [0.0, 0.0, 0.0])

NEAR_PARALLEL = (
    [
     [2.788381742738589, 2.091286307053942, -6.070539419087137],
     [5.576763485472996, 4.18257261412099, -12.14107883817168]],
    [5.0, 10.00000000001],
    [-2.5, 2.5],
    [0.0, 0.0, 0.0])

THROUGH_POINT = (
    [
     [0.0, -1.0, 0.0],
     [0.0, 0.0, 1.0],
     [0.0, 1.6666666666666667, 0.0],
     [0.7738095238095238, -0.23809523809523808, 0.9523809523809523],
     [0.0, 2.0, 0.0]],
    [-0.19047619047619047, -0.7619047619047619, 1.1428571428571428, -1.25, -2.0],
    [-3.0, -2.25, -0.5, 3.0, -3.0],
    [-0.25, -0.5, 0.0])

AXIS = (
    [
     [-0.5, 0.0, -0.5],
     [-1.0, 0.0, 1.0],
     [-1.0, 0.0, 1.0],
     [-0.5, 0.0, -0.5]],
    [-0.5, 0.75, -1.0, -0.5],
    [-0.6, -2.625, -2.0, 3.0],
    [0.0, 0.0, 0.0])

MICRO_IN = (
    [
     [0.2962962962962963, 0.037037037037037035, 0.14814814814814814],
     [-1.0, 0.0, 0.0],
     [0.32, 0.0, -0.09333333333333334],
     [0.0, 0.0, 1.6],
     [1.3262544243181345, -1.0656497485313912, -1.0513989801362547],
     [-0.03643556110764106, -0.3724755361232563, 0.3315636060795336],
     [0.8960176991150443, 0.35398230088495575, 0.7964601769911505]],
    [0.049058844395092574, 0.07287112221528212, -0.08521063224373655, -0.7142857142857143, 0.0, 0.5,
     0.19916110690405517],
    [2.0, -1.0, 2.25, 0.2857142857142857, 0.8, 1.0, -0.1875],
    [0.0, 0.0, 0.0])

MICRO_OUT = (
    [
     [-1.0, 0.0, 0.0],
     [0.0, 0.0, 1.6],
     [1.3262544243181345, -1.0656497485313912, -1.0513989801362547],
     [-0.03643556110764106, -0.3724755361232563, 0.3315636060795336],
     [0.8960176991150443, 0.35398230088495575, 0.7964601769911505],
     [1.2, 0.0, -0.35],
     [0.2962962962962963, 0.037037037037037035, 0.14814814814814814]],
    [0.07287112221528212, -0.7142857142857143, 0.0, 0.5, 0.19916110690405517, -0.3195398709140121,
     0.049058844395092574],
    [-1.0, 0.2857142857142857, 0.8, 2.25, -0.1875, 2.25, 2.0],
    [0.0, 0.0, 0.375])

SLAB = (
    [
     [0.0, 0.0, 5.25],
     [0.375, 0.0, -1.0],
     [0.0, 0.0, -0.5],
     [0.0, -1.4285714285714286, 1.5625],
     [0.0, 0.0, 3.0]],
    [1.5, -1.3333333333333333, 0.5, -1.5, 0.8571428571428571],
    [-571428.5708571429, -2.5714285714285716, -0.6875, -1.25, 1000000.0],
    [0.0, 0.0, 0.0])

CAP = (
    [
     [0.0, 0.16407599309153714, -0.29015544041450775],
     [0.0, -1.3333333333333333, 1.0]],
    [-0.3333333333333333, -2.3125],
    [-2.6666666666666665, 2.5],
    [0.0, 0.0, 0.0])

BALL_CUT = (
    [
     [-0.38461538461538464, 0.0, 0.0, 0.9230769230769231]],
    [-1.0],
    [3.0],
    [0.0, 0.0, 0.0, 0.0])

BALL_MISS = (
    [
     [0.47058823529411764, 0.0, 0.0, 0.8823529411764706]],
    [-1.0],
    [-0.5],
    [0.0, 0.0, 0.0, 0.0])

BALL_EDGE_POINT = (
    [
     [0.0, 0.0, -0.0945945945945946, 0.032432432432432434],
     [1.875, -2.0, -2.0, -1.0],
     [4.797658640415059, 2.622322735133697, 8.331249168551285, 0.8343754157243581],
     [-0.3125, 0.0, -1.6, 0.0],
     [-1.0, 0.0, 0.0, 0.0],
     [-0.08376963350785341, -0.06382448267265022, 0.09573672400897532, 0.30142109199700823],
     [-0.3333333333333333, -0.25, -1.6, 1.3333333333333333]],
    [0.0761030313271899, 5.428571428571429, -10.0, 1.482926699481176, 0.4797658640415059, -0.04798383532687, 2.25],
    [-1.2857142857142858, -1.0, 1.5, 0.25, -1.5, 1.0, 0.5],
    [0.0, 0.0, 0.0, 0.0])

NEEDLE_D6 = (
    [
     [0.06912539911688775, -0.11850068420037901, 0.08690050174694461, 0.38907120050463556, -0.06912539911688775,
       -0.033857338342965435],
     [1.4285714285714286, 0.0, 0.0, 0.0, 0.0, 0.0],
     [0.0, -0.42174629324546953, 0.0, -0.8594179022515102, -0.2723778143876991, 0.09665019220208676],
     [0.48387779381821433, -0.8295047894026532, 0.6083035122286122, 2.723498403532449, -0.48387779381821433,
       -0.23700136840075803],
     [0.0, 0.8434925864909391, 0.0, 1.7188358045030203, 0.5447556287753982, -0.19330038440417352],
     [0.0, -0.8434925864909391, 0.0, -1.7188358045030203, -0.5447556287753982, 0.19330038440417352],
     [0.0, 2.530477759472817, 0.0, 5.156507413509061, 1.6342668863261944, -0.5799011532125206],
     [0.0, -0.04217462932454695, 0.0, -0.08594179022515101, -0.027237781438769905, 0.009665019220208676],
     [0.16129259793940476, -0.276501596467551, 0.2027678374095374, 0.907832801177483, -0.16129259793940476,
       -0.07900045613358601],
     [0.08064629896970238, -0.1382507982337755, 0.1013839187047687, 0.4539164005887415, -0.08064629896970238,
       -0.03950022806679301],
     [-0.6, 1.0, 1.0, -2.0, 0.0, -1.0],
     [0.0, -0.21087314662273476, 0.0, -0.4297089511257551, -0.13618890719384955, 0.04832509610104338]],
    [-0.21428571428571427, 0.625, -0.9999999999990905, 2.5714285714285716, 1.4285714285714286, 1.0, -3.0,
     0.09999999999990905, -0.25, -0.0625, -0.3333333333333333, -0.28125],
    [1.125, -2.0, -2.0, 0.5, 2.0, 1.125, -0.5625, -1.75, 2.0, -1.0, -0.5, -1.0],
    [0.0, 0.0, -0.6666666666666666, 0.0, 0.0, 0.0])

# B⁶, exact rationals (not floats: the Farkas and zoom steps, which need exact float rows, are off): the ball hunt's
# near_parallel draw of seed 1 — W₁ = 2W₀ tilted by 1e-9, both planes ~1e-6 from touching S (a cap ~9.5e-7 deep), so
# the needle where unit 0 alone is on (‖a₀W₀‖ = 2, the constant) lies inside the cap; the needle SOCP's point sits
# 1.7e-7 outside the ball, and the radial pull by its margin (2.5e-4) left the cap: lower end 0.32 against 2.
_Q = Fraction
NEEDLE_IN_CAP_B6 = (
    [[_Q(9000, 16901), _Q(-14400, 16901), _Q(13500, 16901), _Q(-45303, 16901), _Q(4320, 16901), _Q(5400, 16901)],
     [_Q(44999999973, 42252500000), _Q(-1791089999838, 1051083753125), _Q(2686634999757, 1681734005000),
      _Q(-4507875014592273, 840867002500000), _Q(2686634999757, 5255418765625),
      _Q(107465400999320403, 168173400500000000)],
     [_Q(0), _Q(0), _Q(-1, 5), _Q(0), _Q(0), _Q(0)]],
    [_Q(-3145725, 1048576), _Q(-125829000041943, 20971520000000), _Q(0)],
    [_Q(-2, 3), _Q(1, 3), _Q(-8, 5)],
    [_Q(0)] * 6)

# S², exact rationals: the S² hunt's cancel_1e6 draw of seed 1 — 10⁶ ReLU(w·x − 1/7) against a₂ ReLU(2w·x − 2/7) with
# 2a₂ = −10⁶ + 2⁻²⁰: the cap w·x > 1/7 carries g = 2⁻²⁰w, a constant ~9.4e-7; the relaxation bounding τ on the cap
# worked at the solver's absolute tolerance (upper end 0.1% high) until g was scaled by a power of two.
SMALL_CAP_S2 = ([[Fraction(5, 13), Fraction(12, 13), Fraction(0)], [Fraction(10, 13), Fraction(24, 13), Fraction(0)]],
                [Fraction(-1, 7), Fraction(-2, 7)], [Fraction(1000000), Fraction(-1048575999999, 2097152)],
                [Fraction(0)] * 3)

# S⁷, by hand (no exact routine there): 10⁶ ReLU(x₁ − ½) + a₂ ReLU(2x₁ − 1). With a₂ = −5·10⁵ the two cancel
# exactly, f ≡ 0 and the constant is 0; with a₂ one ulp further from 0, −(5·10⁵ + 2⁻³⁴), the cap x₁ > ½ carries
# g = (10⁶ + 2a₂)e₁ = −2⁻³³e₁, so τ = 2⁻³³(1 − x₁²)^½ there and 0 elsewhere: the constant is 2⁻³³·√3/2 (the cap's rim,
# not attained). The interval enclosure of those ±10⁶ sums (radius ~2e-10) contains 0 in both: the exact gradient
# decides.
ZERO_S7 = ([[1.0] + [0.0] * 7, [2.0] + [0.0] * 7], [-0.5, -1.0], [1e6, -5e5], [0.0] * 8)
ULP_S7 = ([[1.0] + [0.0] * 7, [2.0] + [0.0] * 7], [-0.5, -1.0], [1e6, -(5e5 + 2.0 ** -34)], [0.0] * 8)
HAND = {"ZERO_S7": Fraction(0), "ULP_S7": Fraction(3, 4) / 2 ** 66}      # the constants' squares

# name → (net, d, sphere)
CASES = {
    "CANCEL": (CANCEL, 3, True), "NEAR_PARALLEL": (NEAR_PARALLEL, 3, True), "THROUGH_POINT": (THROUGH_POINT, 3, True),
    "AXIS": (AXIS, 3, True), "MICRO_IN": (MICRO_IN, 3, True), "MICRO_OUT": (MICRO_OUT, 3, True),
    "SLAB": (SLAB, 3, True), "CAP": (CAP, 3, True), "BALL_CUT": (BALL_CUT, 4, False),
    "BALL_MISS": (BALL_MISS, 4, False), "BALL_EDGE_POINT": (BALL_EDGE_POINT, 4, False),
    "NEEDLE_D6": (NEEDLE_D6, 6, False), "ZERO_S7": (ZERO_S7, 8, True), "ULP_S7": (ULP_S7, 8, True),
    "NEEDLE_IN_CAP_B6": (NEEDLE_IN_CAP_B6, 6, False), "SMALL_CAP_S2": (SMALL_CAP_S2, 3, True),
}


@dataclass(frozen=True)
class ByHand:
    """A constant derived by hand (:data:`HAND`): its exact square and its float."""

    value2: object            # numerics.rob.exact.QNum
    upper: float
    lower: float
    exact: bool = True


def exact_constant(net, d: int, sphere: bool, name: str | None = None):
    """The net's exact Lipschitz constant on S^{d−1} (d = 3: the exact arrangement) or on B_1 ⊂ R^d (the exact
    recursion over flats), as :class:`numerics.rob.Lipschitz` (``.exact`` is True; ``.value2`` its exact square);
    for a net of :data:`HAND` (``name``), its constant derived by hand, as :class:`ByHand`."""
    from numerics import rob
    from numerics.rob.exact import QNum

    if name in HAND:
        v = math.sqrt(HAND[name])
        return ByHand(QNum(HAND[name]), v, v)
    W, b, a, v = net
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rob.KinkCoincidenceWarning)
        ref = rob.lipschitz((W, b, a, v, 0.0), rob.Sphere(d) if sphere else rob.Ball(d, 1.0))
    if not ref.exact:
        raise RuntimeError(f"no exact constant for this net on {'S' if sphere else 'B'}({d})")
    return ref
