r"""The width-2n interpolant (rob.width_2n; SPEC §3).

:func:`width_2n` — the interpolant's unit profile, exact interpolation under max x_i·x_j ≤ 1 − s, the
cap-disjointness threshold cos(2 arccos(1 − s)) = 2(1 − s)² − 1 and Lip = √((2 − s)/s) on each cap.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero
from proofs.rob.definitions import relu


@dataclass(frozen=True)
class Width2n:
    checks: dict
    lipschitz: sp.Expr  # √((2−s)/s) as derived
    threshold: sp.Expr  # 2(1−s)² − 1 as derived
    s: sp.Symbol


def width_2n() -> Width2n:
    s = sp.Symbol("s", positive=True)
    q = sp.Symbol("q", positive=True)  # a nonnegative gap
    rho = sp.Symbol("rho", real=True)
    phi = (relu(rho - (1 - s)) - relu(rho - 1)) / s  # one unit's profile in ρ = x_i·x
    checks = {
        "phi(1) = 1 (the unit reproduces its own label), 0 < s <= 1": is_zero(
            phi.subs(rho, 1).subs(s, 1 / (1 + q)) - 1) and is_zero(phi.subs({rho: 1, s: 1}) - 1),
        "phi(rho) = 0 for rho <= 1 - s (separation gives exact interpolation)": is_zero(
            phi.subs(rho, 1 - s - q)) and is_zero(phi.subs(rho, 1 - s)),
    }
    # cap of unit i: {x: x_i·x > 1 − s}, angular radius arccos(1 − s); caps i, j are disjoint iff the
    # angle between x_i and x_j is >= twice that, i.e. x_i·x_j <= cos(2 arccos(1 − s)).
    threshold = sp.expand(sp.expand_trig(sp.cos(2 * sp.acos(1 - s))))
    checks["threshold = 2(1-s)^2 - 1"] = is_zero(threshold - (2 * (1 - s) ** 2 - 1))
    # Lip on one cap: f = (y/s)(u·x − t) + const there, g = (y/s) u, |y| = 1, t = 1 − s > 0. The great
    # sphere {g·x = 0} misses the cap, so the max of ‖g‖² − (g·x)² is at the cap's rim u·x = t.
    y = sp.Symbol("y", real=True)
    g2 = (y / s) ** 2
    tangential2 = g2 - (y / s * (1 - s)) ** 2  # ‖g‖² − (g·x)² at u·x = 1 − s
    lip2 = sp.factor(sp.simplify(tangential2.subs(y, 1)))
    checks["Lip^2 = (2 - s)/s on each cap (|y| = 1)"] = is_zero(lip2 - (2 - s) / s)
    lip = sp.sqrt((2 - s) / s)
    checks["s = 1/4 gives sqrt(7)"] = is_zero(lip.subs(s, sp.Rational(1, 4)) - sp.sqrt(7))
    return Width2n(checks, lip, sp.expand(2 * (1 - s) ** 2 - 1), s)
