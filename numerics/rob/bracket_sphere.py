r"""A sphere leaf whose cell bound stays above the target: refined by cutting the cell with hyperplanes through 0.

On S^{d−1} the branch and bound bounds a leaf pattern σ (gradient g, closed cell C) by
sup_{C ∩ S} τ² ≤ ‖g‖² − t, t ≤ min_{C ∩ S} (g·x)² from Shor's relaxation with RLT cuts
(:func:`numerics.rob.bracket_sdp.sphere_cell_bound`). That relaxation is exact only when C ∩ S is small: on a
cell of a concurrent arrangement it can sit ~1.5% above the cell's true supremum (a d = 5, m = 24 net left the
bracket "gap open" at 1.45% with 50 of 60 seconds unused). Here the cell is covered by pieces
P = C ∩ {u_k·x ≥ 0, k = 1..r}: a piece is split in two by a hyperplane u·x = 0 through the origin and the
piece's centre, across the direction in which the piece's points (the SOCP maximisers of ±x_l over P ∩ ball,
pushed to the sphere) spread most, and each half is bounded by the same relaxation with the cuts among its
constraints (they enter the RLT products). The two halves cover P ∩ S, every piece's bound is proved, and a
child's bound is also capped by its parent's (its points are the parent's), so the leaf's bound — the largest over
its open pieces and the closed ones — is proved at every step; it decreases to the cell's supremum as the pieces
shrink (d = 5, m = 24: 1.3786 → 1.3689 with one split, 1.35977 against the supremum 1.35959 after 924).

The choice of cuts is a heuristic (floats); only the covering and the bounds matter for soundness: u and −u
cover every x, and the cut vectors are exact binary rationals used as such in the exact PSD check.
"""

from __future__ import annotations

import heapq
import time

import numpy as np

__all__ = ["SphereLeaf"]


class SphereLeaf:
    """One stuck leaf (pattern sg on idx) of a :class:`numerics.rob.bracket_net.BracketNet` on the sphere.

    ``bound`` is its proved upper bound of τ; :meth:`refine` splits its worst piece until the bound is at most
    ``target``, or ``pieces`` splits or ``t_end`` are spent."""

    def __init__(self, net, idx, sg, bound: float, x_hint=None):
        self.net, self.idx, self.sg = net, np.asarray(idx, int), np.asarray(sg, float)
        self.gq = net.exact_gradient(idx, sg)
        self.x_hint = x_hint
        self.heap = [(-float(bound), 0, ())]         # (−bound, tie, cuts)
        self.closed = 0.0         # the largest bound of a piece closed: below the target, or final (a cut that
                                  # lowered neither half)
        self.count = 1
        self.splits = 0

    @property
    def bound(self) -> float:
        return max(-self.heap[0][0] if self.heap else 0.0, self.closed)

    def _direction(self, cuts):
        """The cut through 0 and the piece's centre, across its widest spread (None: the piece is degenerate)."""
        net, d = self.net, self.net.d
        pts = []
        for k in range(d):
            for s in (1.0, -1.0):
                e = np.zeros(d)
                e[k] = s
                r = net.socp(self.idx, self.sg, obj=e, tfix=0.0, cuts=cuts)
                if r is not None and np.all(np.isfinite(r[1])) and np.linalg.norm(r[1]) > 1e-12:
                    pts.append(r[1] / np.linalg.norm(r[1]))
        if len(pts) < 2:
            return None
        P = np.array(pts)
        c = P.mean(axis=0)
        if np.linalg.norm(c) < 1e-12:
            return None
        c /= np.linalg.norm(c)
        Q = P - np.outer(P @ c, c)
        u = np.linalg.svd(Q, full_matrices=False)[2][0]
        u = u - (u @ c) * c
        nu = np.linalg.norm(u)
        return None if nu < 1e-12 else u / nu

    def refine(self, target: float, floor: float, pieces: int, t_end: float) -> float:
        """Split the worst piece until ``bound ≤ target`` (pieces at most ``floor`` — the lower end — are
        dropped, those at most ``target`` closed), for at most ``pieces`` splits or until ``t_end``."""
        done = 0
        while self.heap and -self.heap[0][0] > target and done < pieces and time.perf_counter() < t_end:
            nb, _, cuts = heapq.heappop(self.heap)
            u = self._direction(list(cuts))
            if u is None:                              # cannot split: keep the piece as it is
                heapq.heappush(self.heap, (nb, self.count, cuts))
                self.count += 1
                break
            done += 1
            self.splits += 1
            kids = []
            for s in (1.0, -1.0):
                child = cuts + (tuple(float(t) for t in s * u),)
                kids.append((min(self.net.sphere_cell_up(self.idx, self.sg, self.x_hint, cuts=child, gq=self.gq),
                                 -nb), child))
            if min(bd for bd, _ in kids) >= -nb * (1 - 1e-9):
                self.closed = max(self.closed, -nb)    # the cut lowered neither half: this piece is final
                continue
            for bd, child in kids:
                if bd <= floor:
                    continue
                if bd <= target:
                    self.closed = max(self.closed, bd)
                    continue
                heapq.heappush(self.heap, (-bd, self.count, child))
                self.count += 1
        return self.bound
