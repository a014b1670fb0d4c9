"""Where a certified routine leaves its float filter for exact arithmetic (SPEC §5, ``suite.predicates``).

Each exact fall-back branch calls :func:`reach` with its site name when it runs; :data:`SITES` names every such
branch with what decides it there. ``suite.predicates`` feeds exact-tie inputs and checks, with :data:`reached`,
that every site ran (and that its answers agree with exact rational arithmetic). Counting is a dictionary
increment: negligible next to the exact arithmetic it records.
"""

from __future__ import annotations

from collections import Counter

SITES = {
    "rob.ball/sub_flats_exact": "B_R recursion: a flat's parametrisation the interval filter cannot decide (a "
                                "hyperplane tangent to, or a flat through, the ball's boundary), computed exactly",
    "rob.bracket/farkas_exact": "branch and bound: an infeasibility certificate the interval test cannot prove "
                                "(repeated, opposite or tangent hyperplanes), checked in exact rationals",
    "rob.bracket/zoom_exact": "branch and bound: a pattern of margin ~0 at a point where the hyperplanes nearly "
                              "meet (concurrent in the net's intent, ~1e-17 apart as float64); the common point "
                              "and the rows' residuals there computed exactly, a rescaled LP proposes a point "
                              "(checked exactly) or a certificate (checked exactly)",
    "rob.bracket/zero_gradient_exact": "branch and bound: a leaf pattern whose interval gradient contains 0 (units "
                                       "that cancel exactly, ±10⁶ sums): its gradient in rationals, so that an exact "
                                       "0 adds 0 to the upper end",
    "rob.bracket/needle_closed_exact": "branch and bound: a needle between two rows equal up to rounding, closed by "
                                       "the cell's other rows: the needle SOCP's multipliers snapped and spread over "
                                       "the cell's own rows, the ball's Farkas test T ≤ 0, T² ≥ R²‖N‖² in rationals",
    "rob.bracket/beyond_exact": "branch and bound: a cell that rows meant to touch (or meet on) the sphere leave "
                                "~1e-17 beyond it or exactly at it: the exact foot q of the rows' flat, ‖q‖ ≥ R and "
                                "q = Σ y s W with y ≥ 0, decided in rationals (tangent flats included)",
    "rob.bracket/pinched_exact": "branch and bound, sphere: a closed cell meeting the closed ball at one point p of S "
                                 "only (‖p‖ = R exactly, the flat of the tight rows), with y ≥ 0, Σ y s W = p exactly",
    "rob.bracket/cap_bound_arb": "branch and bound, sphere: a row cutting a cap at S's edge (~1e-17 deep): τ on the "
                                 "cap bounded from the exact gradient and rows in one-sided arb",
    "rob.bracket/needle_point_exact": "lower end, ball: an exact point inside the needle between two rows equal up to "
                                      "rounding (a band ~1e-17 wide), placed half way across it in rationals",
    "rob.bracket/cap_point_exact": "lower end, ball: an exact point strictly inside a cap ~1e-17 deep that a plane "
                                   "meant tangent cuts off, placed in rationals between the plane and the sphere",
    "rob.bracket/sphere_point_exact": "lower end, sphere: an exact rational point of S within 2⁻²⁴⁰ of an arb "
                                      "target (inverse stereographic image), for bands, micro-cells and cap rims of S "
                                      "far below a float's resolution",
    "rob.s2/order_exact": "S² arrangement: points on a kink circle too close for the float order (coincident "
                          "vertices, many circles through one point), ordered exactly",
    "rob.s2/locate_exact": "S² arrangement: a point whose arc the float position cannot decide, located exactly",
    "rob.cap_graph/overlap_exact": "S^{d−1} cap-overlap graph: whether two open caps meet, when the interval test "
                                   "cannot tell (exactly tangent caps), decided in rationals",
    "flat.moments/kink_exact": "flat: a pre-activation θ_j·x_i whose float rounding bound reaches 0 (a sample on a "
                               "direction's kink, or within rounding of it): the dot product in rationals, so σ(0) "
                               "and σ′(0) are taken exactly where θ_j·x_i = 0 (Υ, ω and Φ̄ of the flattest solver)",
    "flat.duality/unique_exact": "flattest outer weights: a square Φ̄ (as many live directions as samples) whose "
                                 "float certificate falls short (near-duplicate samples): nonsingular in exact "
                                 "rationals, so the interpolator is unique; solved exactly, Υ* enclosed in arb",
    "flat.sphere_cert/mpmath_enumeration": "sup over S² of |Φ̄ᵀν|/ω: two samples parallel to within rounding but "
                                           "not exactly (a vertex ball containing 0), which the interval routine "
                                           "refuses: the candidate-by-candidate enumeration in mpmath",
    "rob.lemmas/op_compare_exact": "Op against a threshold c that its certified enclosure contains (Op = c exactly): "
                                   "cI − XᵀX tested for definiteness in exact rationals",
}

reached: Counter = Counter()


def reach(site: str) -> None:
    """Record that the exact fall-back ``site`` ran (``site`` must be one of :data:`SITES`)."""
    reached[site] += 1


def reset() -> None:
    reached.clear()
