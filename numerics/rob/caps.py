r"""Pairwise disjoint caps on S^{d−1} (any d ≥ 3): the closed form per cap, decided exactly.

Cap j is {w_j·x + b_j > 0} with b_j ≤ 0 (t_j = −b_j/‖w_j‖ ∈ [0, 1)). Two open caps are disjoint iff
u_j·u_k ≤ t_j t_k − r_j r_k (r = √(1 − t²)), i.e. in the exact rationals of the canonical form

    w_j·w_k − b_j b_k ≤ 0  and  (w_j·w_k − b_j b_k)² ≥ (‖w_j‖² − b_j²)(‖w_k‖² − b_k²),

tangent caps (equality) included. Then the cells are the caps and the outside. The outside gives ‖v‖: the
great sphere {v·x = 0} contains antipodal pairs, which no cap with t ≥ 0 can hold both of, so it meets the
closure of the outside. Cap j, with g = v + a_j w_j, gives ‖g‖² if the great sphere {g·x = 0} meets the
closed cap (‖P g‖² ≥ t²‖g‖², P the projection onto w_j^⊥), else the value at the boundary point where
|g·x| is smallest: ‖g‖² − (|t g·u| − r‖P g‖)², an element a + b√D of a quadratic field.
"""

from __future__ import annotations

from fractions import Fraction

from numerics.rob import exact as E

__all__ = ["caps_disjoint_exact", "lipschitz_disjoint_caps"]


def caps_disjoint_exact(Wq, bq) -> bool:
    m = len(Wq)
    n2 = [E.dot(w, w) for w in Wq]
    for j in range(m):
        for k in range(j + 1, m):
            s = E.dot(Wq[j], Wq[k]) - bq[j] * bq[k]
            if s > 0 or s * s < (n2[j] - bq[j] ** 2) * (n2[k] - bq[k] ** 2):
                return False
    return True


def lipschitz_disjoint_caps(Wq, bq, aq, vq):
    """(Lip² as an exact.QNum, index of the maximising cap or −1 for the outside)."""
    best, arg = E.QNum(E.dot(vq, vq)), -1
    for j, (w, b, a) in enumerate(zip(Wq, bq, aq, strict=True)):
        g = tuple(vi + a * wi for vi, wi in zip(vq, w, strict=True))
        gg = E.dot(g, g)
        nw2 = E.dot(w, w)
        gw = E.dot(g, w)
        pg2 = gg - gw * gw / nw2          # ‖P g‖²
        t2 = b * b / nw2
        if pg2 >= t2 * gg:
            val = E.QNum(gg)
        else:
            # |t g·u| − r‖Pg‖ = (|b gw| − √((nw2 − b²)(nw2 gg − gw²)))/nw2 =: (A − √B)/nw2, A > √B here
            A = abs(b * gw)
            B = (nw2 - b * b) * (nw2 * gg - gw * gw)
            # (A − √B)² = A² + B − 2A√B
            val = E.QNum(gg - (A * A + B) / (nw2 * nw2), Fraction(2) * A / (nw2 * nw2), B)
        if val.cmp(best) > 0:
            best, arg = val, j
    return best, arg
