r"""A rigorous upper bound of :math:`\kappa=\sup_{\theta\in S^2}|(\bar\Phi^\top\nu)(\theta)|/\omega(\theta)` (c = 1),
vectorised, for n in the hundreds.

:func:`numerics.flat.certify_sphere` (mpmath, ``method="mpmath"``) enumerates the candidates one by one at 20
digits: about n³ mpmath operations, 300 s at n = 32. This module bounds the same supremum in float64
midpoint–radius interval arithmetic (:mod:`numerics.rob.bracket_ia`: every quantity is a pair (mid, rad) with
|exact − mid| ≤ rad, rounding of every operation included), so that the bound holds for the float64 inputs as
given, and every sign is decided by a ball that excludes 0 or not decided at all.

**The argument.** Write :math:`t_l=x_l\cdot\theta` and :math:`c_l` the slope of sample l's side (``plus`` if
:math:`t_l>0`, :math:`-`\ ``minus`` otherwise). On the closure of a cell P of the arrangement of great circles
:math:`x_l^\perp` the squared ratio is

.. math:: r_P(\theta)=\frac{n^2(\sum_l c_l\nu_l t_l)^2}{4\,\tilde B_P\,\sum_l c_l^2t_l^2},\qquad
          \tilde B_P=\sum_l c_l^2|x_l|^2,

a ratio of quadratic forms, homogeneous of degree 0 (so a vertex :math:`x_i\times x_k` need not be normalised).
On the sphere its only critical points with a nonzero value are :math:`\pm\tilde M_P^{-1}v_P`
(:math:`v_P=\sum c_l\nu_lx_l`, :math:`\tilde M_P=\sum c_l^2x_lx_l^\top`), with value
:math:`n^2v^\top\tilde M^{-1}v/(4\tilde B)`; on a great circle :math:`x_i^\perp` (basis E) likewise
:math:`\pm EN_2^{-1}a` with :math:`a=E^\top v`, :math:`N_2=E^\top\tilde ME`. So the supremum over the closed cell
is the largest of: the interior value, unless both critical points are *provably* outside the cell (some sign
of :math:`x_l\cdot t` provably opposite to P's); for each circle through one of the cell's vertices the circle
value, unless both its critical points are provably outside; and the values at the cell's vertices. Every cell
of an arrangement of ≥ 2 distinct great circles has a vertex, and every vertex :math:`\pm x_i\times x_k` is
enumerated with the sign patterns of the cells around it: the circles whose balls do not decide their side are
decided in rationals, and where three or more pass exactly through the vertex the patterns are the sectors of
their lines in the tangent plane, also in rationals. So every cell is reached from its vertices. Where a
determinant is not provably positive, Cauchy–Schwarz on the cell (:func:`_cs_bound`) bounds :math:`r_P` on the
whole sphere and is used instead; a cell with two live samples drops its interior candidate when its other
vertices are provably on one side of its critical circle (:func:`_two_live_side`). The result is an upper bound
of κ; the largest candidate's midpoint, a float, is reported beside it as the supremum found (how tight the
bound is).

Rows of vertex × pattern are processed in blocks (memory O(block · n)); the patterns are deduplicated as packed
bits. Two samples parallel to within rounding but not exactly (a vertex ball containing 0) raise
:class:`Degenerate` (the caller falls back to the mpmath enumeration).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from numerics.rob.bracket_ia import U, gamma_n, round_up
from numerics.rob.exact import cross as exact_cross

__all__ = ["SphereBound", "Degenerate", "sphere_sup_bound", "candidate_bound"]

BLOCK_ROWS = 4096
MAX_VIOLATORS = 4096   # directions returned for an exchange step, the most violated first


class Degenerate(ValueError):
    """Too many circles meet one vertex's ball to enumerate its sign patterns here."""


@dataclass(frozen=True)
class SphereBound:
    kappa_upper: float      # rigorous: κ ≤ kappa_upper for the float64 inputs as given
    kappa_found: float      # the largest candidate's midpoint (≤ κ up to rounding): the bound's tightness
    cells: int              # distinct sign patterns examined
    vertices: int
    violators: tuple        # (ratio, unit direction) of candidates inside their cells whose ratio exceeds 1


# --- elementwise midpoint–radius operations (|exact − mid| ≤ rad) --------------------------------------------
def _add(a, b):
    m = a[0] + b[0]
    return m, round_up(a[1] + b[1] + U * np.abs(m))


def _sub(a, b):
    m = a[0] - b[0]
    return m, round_up(a[1] + b[1] + U * np.abs(m))


def _mul(a, b):
    m = a[0] * b[0]
    return m, round_up(np.abs(a[0]) * b[1] + a[1] * np.abs(b[0]) + a[1] * b[1] + U * np.abs(m))


def _rowsum(a, axis=-1):
    """Σ over ``axis`` of a ball array: any summation order errs by ≤ γ_k Σ|terms|."""
    k = a[0].shape[axis]
    m = np.sum(a[0], axis=axis)
    return m, round_up(np.sum(a[1], axis=axis) + gamma_n(k) * np.sum(np.abs(a[0]), axis=axis), k + 2)


def _upper_ratio(num, den):
    """Upper end of num/den for balls with num ≥ 0 exactly and den provably > 0 (callers check den)."""
    hi = round_up(num[0] + num[1])
    lo = (den[0] - den[1]) * (1 - 4 * U)
    return round_up(hi / lo)


def _pos(a):
    return a[0] > a[1]


def _neg(a):
    return a[0] < -a[1]


def _exact(x):
    x = np.asarray(x, float)
    return x, np.zeros_like(x)


def _cross(a, b):
    """Ball cross product of exact float vectors a (..., 3) and b (..., 3)."""
    A, B = _exact(a), _exact(b)
    comp = []
    for i, j in ((1, 2), (2, 0), (0, 1)):
        comp.append(_sub(_mul((A[0][..., i], A[1][..., i]), (B[0][..., j], B[1][..., j])),
                         _mul((A[0][..., j], A[1][..., j]), (B[0][..., i], B[1][..., i]))))
    return np.stack([c[0] for c in comp], -1), np.stack([c[1] for c in comp], -1)


def _exact_cross(a, b):
    """x × y in rationals (the float inputs are exact dyadic rationals): :func:`numerics.rob.exact.cross`."""
    return exact_cross([Fraction(float(t)) for t in a], [Fraction(float(t)) for t in b])


def _matvec_rows(X, w):
    """x_l · w_p for exact X (n, 3) and ball rows w (P, 3): a (P, n) ball."""
    m = w[0] @ X.T
    r = round_up(w[1] @ np.abs(X).T + gamma_n(3) * (np.abs(w[0]) @ np.abs(X).T), 8)
    return m, r


class _Forms:
    """Per-sample pieces of r_P shared by every block."""

    def __init__(self, X, nu, plus: float, minus: float):
        self.X, self.nu, self.n = X, nu, X.shape[0]
        self.plus, self.minus = float(plus), float(minus)
        self.sq = _rowsum(_mul(_exact(X), _exact(X)))            # |x_l|² balls
        self.nu2 = _mul(_exact(nu), _exact(nu))
        self.bases = np.stack([_circle_basis(x) for x in X])    # each circle's plane basis (exact)

    def weights(self, A):
        """Per row of the active-set matrix A (bool): the slopes c (exact floats: plus or −minus), and the balls
        of c² and c·ν (their products round)."""
        c = np.where(A, self.plus, -self.minus)
        return c, _mul(_exact(c), _exact(c)), _mul(_exact(c), _exact(self.nu[None, :]))

    def B(self, A):
        """B̃ = Σ_l c_l²|x_l|² per row (balls)."""
        _, cc, _ = self.weights(A)
        return _rowsum(_mul(cc, (self.sq[0][None, :], self.sq[1][None, :])))

    def sums(self, A):
        """Per pattern row: v (3 balls), M̃ (3×3 balls), B̃, and Σ_{c≠0} ν² (balls)."""
        _, cc, cnu = self.weights(A)
        v = [_rowsum(_mul(cnu, _exact(self.X[None, :, k]))) for k in range(3)]
        M = {}
        for a in range(3):
            for b in range(a, 3):
                xx = _mul(_exact(self.X[:, a]), _exact(self.X[:, b]))
                M[a, b] = M[b, a] = _rowsum(_mul(cc, (xx[0][None, :], xx[1][None, :])))
        return v, M, self.B(A), _s2(self, A)


def _scale(a, s: float):
    m = a[0] * s
    return m, round_up(a[1] * s + U * np.abs(m))


def _cs_bound(forms, B, s2):
    """Cauchy–Schwarz on the cell: each z_l = c_l t_l has a fixed sign on the closed cell, so ν_l z_l = e_l|ν_l z_l|
    with e_l fixed, and (Σ ν_l z_l)² ≤ max(Σ_{e>0} ν_l², Σ_{e<0} ν_l²)·Σ z_l² over the live samples:
    r_P ≤ n²·s2/(4 B̃) with s2 that maximum (``s2`` is its ball, :func:`_s2`). 0 where s2 = 0 exactly (no live sample, or
    ν = 0 on them: then the numerator vanishes); inf where B̃ is not provably > 0 otherwise."""
    num = _scale(s2, forms.n * forms.n / 4.0)
    ok = _pos(B)
    out = np.full(B[0].shape, np.inf)
    if np.any(ok):
        out[ok] = _upper_ratio((num[0][ok], num[1][ok]), (B[0][ok], B[1][ok]))
    out[(s2[0] == 0) & (s2[1] == 0)] = 0.0
    return out


def _s2(forms, A, zero=None):
    """A ball whose upper end bounds max(Σ_{live, e>0} ν², Σ_{live, e<0} ν²) per row, e_l the sign of ν_l z_l.
    Live: c ≠ 0 and not in ``zero``, a mask of samples with t_l = 0 exactly on the whole candidate set, which
    add nothing to the numerator or the denominator. Radius 0 where no live sample is left (exactly 0)."""
    c = np.where(A, forms.plus, -forms.minus)
    live = c != 0
    if zero is not None:
        live = live & ~zero
    # z_l = c_l t_l has the sign of c_l on the active side (t ≥ 0) and the opposite one on the other (t ≤ 0), so
    # ν_l z_l has the sign e_l = sign(ν_l c_l)·(±1): group the samples by e_l
    e = np.sign(forms.nu)[None, :] * np.sign(c) * np.where(A, 1.0, -1.0)
    pos = (live & (e > 0)).astype(float)
    neg = (live & (e < 0)).astype(float)
    a = _rowsum((pos * forms.nu2[0][None, :], pos * forms.nu2[1][None, :]))
    b = _rowsum((neg * forms.nu2[0][None, :], neg * forms.nu2[1][None, :]))
    hi = a[0] + a[1] >= b[0] + b[1]   # the ball with the larger upper end: only upper ends are used
    m, r = np.where(hi, a[0], b[0]), np.where(hi, a[1], b[1])
    none = ~np.any(live & (forms.nu[None, :] != 0), axis=1)
    return np.where(none, 0.0, m), np.where(none, 0.0, r)


def _det3(M):
    t1 = _sub(_mul(M[1, 1], M[2, 2]), _mul(M[1, 2], M[2, 1]))
    t2 = _sub(_mul(M[1, 0], M[2, 2]), _mul(M[1, 2], M[2, 0]))
    t3 = _sub(_mul(M[1, 0], M[2, 1]), _mul(M[1, 1], M[2, 0]))
    return _add(_sub(_mul(M[0, 0], t1), _mul(M[0, 1], t2)), _mul(M[0, 2], t3))


def _adj3_vec(M, v):
    """adj(M) v for a symmetric ball matrix M: the (unnormalised) critical direction M⁻¹v · det M."""
    C = {}
    for i in range(3):
        for j in range(3):
            r = [k for k in range(3) if k != j]
            c = [k for k in range(3) if k != i]
            # adj(M)_{ij} = (−1)^{i+j} · minor_{ji}
            mn = _sub(_mul(M[r[0], c[0]], M[r[1], c[1]]), _mul(M[r[0], c[1]], M[r[1], c[0]]))
            C[i, j] = mn if (i + j) % 2 == 0 else (-mn[0], mn[1])
    return [_add(_add(_mul(C[i, 0], v[0]), _mul(C[i, 1], v[1])), _mul(C[i, 2], v[2])) for i in range(3)]


def _dot3(a, b):
    return _add(_add(_mul(a[0], b[0]), _mul(a[1], b[1])), _mul(a[2], b[2]))


def _provably_outside(signs_m, signs_r, A):
    """Per row: some sample's x_l·t is provably on the side opposite to the pattern's (a point outside the closed
    cell; every sample's circle bounds the cell, whatever its slopes). ``signs`` are (P, n) balls."""
    pos, neg = signs_m > signs_r, signs_m < -signs_r
    return np.any((A & neg) | (~A & pos), axis=1)


def _interior(forms, A, v, M, B, s2, missed):
    """Upper bound of each pattern's interior supremum (0 where both critical points are provably outside),
    the critical direction's midpoint, and whether it may lie in the cell."""
    det = _det3(M)
    bound = _cs_bound(forms, B, s2)
    t = _adj3_vec(M, v)
    val = _dot3(v, t)   # vᵀ adj(M) v = det(M) · vᵀM⁻¹v ≥ 0 when det > 0
    good = _pos(det) & _pos(B)
    if np.any(good):
        num = _scale((np.abs(val[0][good]), val[1][good]), forms.n * forms.n / 4.0)
        den = _mul((B[0][good], B[1][good]), (det[0][good], det[1][good]))
        ok = den[0] > den[1]
        sub = np.full(num[0].shape, np.inf)
        sub[ok] = _upper_ratio((num[0][ok], num[1][ok]), (den[0][ok], den[1][ok]))
        bound[good] = np.minimum(bound[good], sub)
    tm = np.stack([t[k][0] for k in range(3)], -1)
    tr = np.stack([t[k][1] for k in range(3)], -1)
    sg = _matvec_rows(forms.X, (tm, tr))
    out_plus = _provably_outside(sg[0], sg[1], A)
    out_minus = _provably_outside(-sg[0], sg[1], A)
    inside = (~(out_plus & out_minus) | ~good) & ~missed   # without det > 0, ±adj(M)v need not be critical
    # a direction for the dictionary: the critical point on the side not provably outside
    dirs = np.where(out_plus[:, None], -tm, tm)
    return np.where(inside, bound, 0.0), dirs, inside


def _circle_basis(x):
    """Two exact-float vectors spanning x^⊥: x × e_a and x × e_b, a, b ≠ argmax|x| (independent since x_argmax ≠ 0)."""
    j = int(np.argmax(np.abs(x)))
    a, b = [k for k in range(3) if k != j]
    E = np.zeros((3, 2))
    for col, e in enumerate((a, b)):
        ev = np.zeros(3)
        ev[e] = 1.0
        E[:, col] = np.cross(x, ev)   # entries are ±x_k or 0: exact
    return E


def _edges(forms, A, circles, B):
    """Upper bound of each (pattern row, circle i) pair's supremum over the great circle x_i^⊥, 0 where both of
    its critical points are provably outside the closed cell; and a direction for the dictionary."""
    X = forms.X
    E = forms.bases[circles]                                          # (P, 3, 2), exact
    p = np.einsum("lk,pkc->plc", X, E)                               # x_l·e_c: 3 products, exact inputs
    pr = round_up(gamma_n(3) * np.einsum("lk,pkc->plc", np.abs(X), np.abs(E)), 6)
    c, cc, cnu = forms.weights(A)
    a = [_rowsum(_mul(cnu, (p[:, :, k], pr[:, :, k]))) for k in range(2)]
    N = {}
    for i in range(2):
        for j in range(i, 2):
            pp = _mul((p[:, :, i], pr[:, :, i]), (p[:, :, j], pr[:, :, j]))
            N[i, j] = N[j, i] = _rowsum(_mul(cc, pp))
    det = _sub(_mul(N[0, 0], N[1, 1]), _mul(N[0, 1], N[1, 0]))
    w = [_sub(_mul(N[1, 1], a[0]), _mul(N[0, 1], a[1])), _sub(_mul(N[0, 0], a[1]), _mul(N[0, 1], a[0]))]
    val = _add(_mul(a[0], w[0]), _mul(a[1], w[1]))                  # aᵀ adj(N₂) a
    own = np.zeros(A.shape, bool)
    own[np.arange(len(circles)), circles] = True                     # t_i = 0 on the whole circle
    bound = _cs_bound(forms, B, _s2(forms, A, zero=own))
    good = _pos(det) & _pos(B)
    if np.any(good):
        num = _scale((np.abs(val[0][good]), val[1][good]), forms.n * forms.n / 4.0)
        den = _mul((B[0][good], B[1][good]), (det[0][good], det[1][good]))
        ok = den[0] > den[1]
        sub = np.full(num[0].shape, np.inf)
        sub[ok] = _upper_ratio((num[0][ok], num[1][ok]), (den[0][ok], den[1][ok]))
        bound[good] = np.minimum(bound[good], sub)
    for r in np.flatnonzero(~good):   # rank ≤ 1 exactly? (the live samples' projections on the circle parallel)
        exact = _rank1_circle_value(forms, A[r], int(circles[r]), E[r])
        if exact is not None:
            bound[r] = min(bound[r], exact)
    # x_l · (E w) = p_l · w
    sm = p[:, :, 0] * w[0][0][:, None] + p[:, :, 1] * w[1][0][:, None]
    sr = round_up(np.abs(p[:, :, 0]) * w[0][1][:, None] + pr[:, :, 0] * (np.abs(w[0][0]) + w[0][1])[:, None]
                  + np.abs(p[:, :, 1]) * w[1][1][:, None] + pr[:, :, 1] * (np.abs(w[1][0]) + w[1][1])[:, None]
                  + 2 * U * (np.abs(p[:, :, 0] * w[0][0][:, None]) + np.abs(p[:, :, 1] * w[1][0][:, None])), 8)
    rows = np.arange(len(circles))
    sr[rows, circles] = np.inf   # the circle itself: t_i = 0 there, no constraint
    out_plus = _provably_outside(sm, sr, A)
    out_minus = _provably_outside(-sm, sr, A)
    inside = ~(out_plus & out_minus) | ~good
    d = np.einsum("pkc,pc->pk", E, np.stack([w[0][0], w[1][0]], -1))
    d = np.where(out_plus[:, None], -d, d)
    # on the circle the cell's side of x_i is not visible to a dictionary: step 1e-7 into the cell
    xi = X[circles] / np.linalg.norm(X[circles], axis=1)[:, None]
    side = np.where(A[rows, circles], 1.0, -1.0)[:, None]
    d = d + 1e-7 * np.linalg.norm(d, axis=1)[:, None] * side * xi
    return np.where(inside, bound, 0.0), d, inside


def _two_live_side(forms, A, w, T):
    """For rows whose pattern has exactly two live samples a, b: where the vertex lies against the critical
    circle C = {θ : ν_b t_a − ν_a t_b = 0} of r_P (bit 1: provably > 0, bit 2: provably < 0); 3 for the other
    rows and for vertices with t_a = t_b = 0 exactly (their image (t_a, t_b) is 0 and does not span the image
    cone). A cell all of whose other vertices are on one side has an image cone {(t_a, t_b)} that misses the
    critical ray, so its supremum is at a vertex (the interior candidate is dropped)."""
    c = np.where(A, forms.plus, -forms.minus)
    live = c != 0
    out = np.full(len(A), 3, np.int64)
    two = np.flatnonzero(live.sum(axis=1) == 2)
    if len(two) == 0:
        return out
    ab = np.nonzero(live[two])[1].reshape(len(two), 2)
    a, b = ab[:, 0], ab[:, 1]
    rows = two
    ta = (T[0][rows, a], T[1][rows, a])
    tb = (T[0][rows, b], T[1][rows, b])
    # r_P depends on z = (c_a t_a, c_b t_b) through its direction; the critical ray is z ∝ (ν_a, ν_b), and
    # ν_b z_a − ν_a z_b tells the side of it
    za, zb = _mul(_exact(c[rows, a]), ta), _mul(_exact(c[rows, b]), tb)
    val = _sub(_mul(_exact(forms.nu[b]), za), _mul(_exact(forms.nu[a]), zb))
    flag = np.where(_pos(val), 1, 0) | np.where(_neg(val), 2, 0)
    zero = (ta[0] == 0) & (ta[1] == 0) & (tb[0] == 0) & (tb[1] == 0)
    out[rows] = np.where(zero, 3, flag)
    return out


def _rank1_circle_value(forms, A_row, circle: int, E):
    """In rationals: if the live samples' projections p_l = Eᵀx_l on the plane of circle x_i^⊥ are all parallel
    (N₂ of rank ≤ 1 exactly), r_P is constant on the circle wherever its denominator is not 0; that constant
    rounded up (None when N₂ has rank 2: then det N₂ > 0 and the caller's bound stands)."""
    c = np.where(A_row, forms.plus, -forms.minus)
    live = [l for l in range(forms.n) if c[l] != 0 and l != circle]
    Ef = [[Fraction(float(t)) for t in row] for row in E]
    p = {l: [sum(Fraction(float(forms.X[l, k])) * Ef[k][j] for k in range(3)) for j in range(2)] for l in live}
    nz = [l for l in live if any(p[l])]
    if not nz:
        return 0.0
    ref = p[nz[0]]
    if any(p[l][0] * ref[1] - p[l][1] * ref[0] != 0 for l in nz):
        return None
    cf = {l: Fraction(float(c[l])) for l in live}
    lin = sum(cf[l] * Fraction(float(forms.nu[l])) * (p[l][0] * ref[0] + p[l][1] * ref[1]) for l in nz)
    q = sum(cf[l] ** 2 * (p[l][0] * ref[0] + p[l][1] * ref[1]) ** 2 for l in nz)
    B = sum(Fraction(float(c[l])) ** 2 * sum(Fraction(float(t)) ** 2 for t in forms.X[l]) for l in range(forms.n))
    val = Fraction(forms.n ** 2) * lin * lin / (4 * B * q)
    f = float(val)
    return float(np.nextafter(f, np.inf)) if Fraction(f) < val else f


def _vertex_values(forms, A, w, T):
    """Upper bound of r_P at the vertex w for each row (pattern A_p, vertex ball w_p, T = x_l·w_p balls).

    Where the denominator is not provably positive the pattern's Cauchy–Schwarz bound over the samples with
    t_l ≠ 0 is used; a vertex where every live t_l is exactly 0 (0/0: the vertex ⊥ every live sample, e.g.
    x_a × x_b of a cell with live samples a, b) then gets 0: near it r_P depends only on the direction of
    (t_l)_live, whose values over the cell are those of its other vertices and its critical points, which are
    candidates of their own."""
    c, cc, cnu = forms.weights(A)
    lin = _rowsum(_mul(cnu, T))
    q = _rowsum(_mul(cc, _mul(T, T)))
    B = _rowsum(_mul(cc, (forms.sq[0][None, :], forms.sq[1][None, :])))
    num = _mul(lin, lin)
    num = _scale((np.abs(num[0]), num[1]), forms.n * forms.n / 4.0)
    den = _mul(B, q)
    out = np.full(len(c), np.inf)
    ok = den[0] > den[1]
    out[ok] = _upper_ratio((num[0][ok], num[1][ok]), (den[0][ok], den[1][ok]))
    # where the denominator is not provably positive (a vertex ⊥ every live sample: 0/0, the limit depends on the
    # way in), the pattern's Cauchy–Schwarz bound holds on the whole sphere
    out = np.minimum(out, _cs_bound(forms, B, _s2(forms, A, zero=(T[0] == 0) & (T[1] == 0))))
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = lin[0] ** 2 * forms.n ** 2 / 4.0 / np.where(den[0] > 0, den[0], np.inf)
    return out, mid


def _exact_sector_patterns(X, i: int, k: int, sg: int, undecided, positive):
    """The sign patterns of the cells whose closure contains the vertex w = sg·(x_i × x_k), in rationals.

    Each undecided sample l gets the exact sign of x_l·w; those with x_l·w = 0 (the set O, i and k among them)
    have x_l ∈ w^⊥, and near w the pattern on O is that of (x_l·δ) for a direction δ ∈ w^⊥: the cells at w are
    the sectors of the lines x_l^⊥ in that plane. Each sector is next to a boundary ray δ = ±(w × x_m), m ∈ O;
    off the ray by ε(w × δ), samples with x_l·δ = 0 take the sign of ε·x_l·(w × δ). Returns (patterns (q, n)
    bool, O as an index array, each pattern's edge circles at w: the lines of its two bounding rays); samples
    outside the undecided set keep their interval sign."""
    F = [[Fraction(float(t)) for t in row] for row in X]
    w = tuple(sg * t for t in _exact_cross(X[i], X[k]))

    def dot(a, b):
        return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

    def cross(a, b):
        return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])

    base = np.array(positive, bool)   # the samples the interval signs decided
    on = []
    for l in undecided:
        e = dot(F[l], w)
        if e == 0:
            on.append(int(l))
        base[l] = e > 0
    pats: dict = {}
    for m in on:
        for ray in (cross(w, F[m]), tuple(-t for t in cross(w, F[m]))):
            rho = cross(w, ray)
            through = [l for l in on if dot(F[l], ray) == 0]   # the lines along this ray: edges of both sectors
            for eps in (1, -1):
                key = tuple(dot(F[l], ray) > 0 if dot(F[l], ray) != 0 else eps * dot(F[l], rho) > 0 for l in on)
                pats.setdefault(key, set()).update(through)
    out, edges = [], []
    for p in sorted(pats):
        A = base.copy()
        A[on] = p
        out.append(A)
        edges.append(np.array(sorted(pats[p]), np.int64))
    return np.array(out, bool), np.array(on, np.int64), edges


class _Accumulator:
    """Vertex rows → the running bound, the distinct patterns, their edge circles and the two-live side flags."""

    def __init__(self, forms):
        self.forms, self.best, self.found = forms, 0.0, 0.0
        self.patterns, self.sides, self.edge_keys, self.violators = {}, {}, set(), []

    def vertex_rows(self, A, w, T, on):
        forms = self.forms
        val, mid = _vertex_values(forms, A, w, T)
        self.best = max(self.best, float(np.max(val)))
        self.found = max(self.found, float(np.max(mid)))
        packed = np.packbits(A, axis=1)
        side = _two_live_side(forms, A, w, T)
        for r in range(len(A)):
            key = packed[r].tobytes()
            if key not in self.patterns:
                self.patterns[key] = A[r]
                self.sides[key] = 3
            self.sides[key] &= int(side[r])
            for i in on[r]:
                self.edge_keys.add((key, int(i)))
        X = forms.X
        for r in np.flatnonzero(mid > 1):   # a direction just inside the cell, for an exchange step
            unit_on = X[on[r]] / np.linalg.norm(X[on[r]], axis=1)[:, None]
            nudge = np.where(A[r][on[r]], 1.0, -1.0) @ unit_on
            t = w[0][r] / np.linalg.norm(w[0][r]) + 1e-7 * nudge
            self.violators.append((float(mid[r]), t / np.linalg.norm(t)))


def sphere_sup_bound(nu, X, plus: float = 1.0, minus: float = 0.0, *, block: int = BLOCK_ROWS) -> SphereBound:
    """Rigorous upper bound of sup over S² of |Σ_l ν_l σ(x_l·θ)| / ω(θ) for σ of slopes (plus, −minus); see the
    module text. X (n, 3) with at least two non-parallel rows, float64 inputs taken as exact."""
    X = np.ascontiguousarray(X, float)
    nu = np.ascontiguousarray(nu, float)
    n = X.shape[0]
    forms = _Forms(X, nu, plus, minus)
    iu, ku = np.triu_indices(n, 1)
    W = _cross(X[iu], X[ku])                                         # (pairs, 3) balls
    nonzero = np.any(np.abs(W[0]) > W[1], axis=1)
    for j in np.flatnonzero(~nonzero):   # the ball contains 0: parallel exactly (one circle twice: no vertex)?
        if any(_exact_cross(X[iu[j]], X[ku[j]])):
            raise Degenerate("two samples are parallel to within rounding but not exactly (a vertex ball "
                             "contains 0)")
    iu, ku, W = iu[nonzero], ku[nonzero], (W[0][nonzero], W[1][nonzero])
    if len(iu) == 0:
        raise Degenerate("every sample is parallel to one line: the arrangement has no vertex")
    # both antipodal vertices
    sgn = np.concatenate([np.ones(len(iu), np.int64), -np.ones(len(iu), np.int64)])
    iu, ku = np.concatenate([iu, iu]), np.concatenate([ku, ku])
    W = (np.concatenate([W[0], -W[0]]), np.concatenate([W[1], W[1]]))
    acc = _Accumulator(forms)
    step = max(1, block // 4)
    for s in range(0, len(iu), step):
        sl = slice(s, s + step)
        T = _matvec_rows(X, (W[0][sl], W[1][sl]))                    # (P, n)
        rows = np.arange(T[0].shape[0])
        for ix in (iu[sl], ku[sl]):                                  # x_i·(x_i × x_k) = 0 exactly
            T[0][rows, ix] = 0.0
            T[1][rows, ix] = 0.0
        und = ~(_pos(T) | _neg(T))
        und[rows, iu[sl]] = und[rows, ku[sl]] = True
        cnt = und.sum(axis=1)
        generic = np.flatnonzero(cnt == 2)
        if len(generic):
            idx = np.nonzero(und[generic])[1].reshape(len(generic), 2)
            base = _pos((T[0][generic], T[1][generic]))
            for bits in range(4):
                A = base.copy()
                A[np.arange(len(generic)), idx[:, 0]] = bool(bits & 1)
                A[np.arange(len(generic)), idx[:, 1]] = bool(bits & 2)
                acc.vertex_rows(A, (W[0][sl][generic], W[1][sl][generic]), (T[0][generic], T[1][generic]), idx)
        for r in np.flatnonzero(cnt > 2):   # a third circle's ball meets the vertex: decide it exactly
            i, k, sg = int(iu[sl][r]), int(ku[sl][r]), int(sgn[sl][r])
            A, on, edges = _exact_sector_patterns(X, i, k, sg, np.flatnonzero(und[r]),
                                                  _pos((T[0][r], T[1][r])))
            Tr = (np.repeat(T[0][r:r + 1], len(A), 0), np.repeat(T[1][r:r + 1], len(A), 0))
            Tr[0][:, on] = 0.0
            Tr[1][:, on] = 0.0
            acc.vertex_rows(A, (np.repeat(W[0][sl][r:r + 1], len(A), 0), np.repeat(W[1][sl][r:r + 1], len(A), 0)),
                            Tr, edges)
    best, found, patterns, sides, edge_keys, violators = (acc.best, acc.found, acc.patterns, acc.sides,
                                                          acc.edge_keys, acc.violators)
    keys = list(patterns)
    index = {k: j for j, k in enumerate(keys)}
    P = np.stack([patterns[k] for k in keys]) if keys else np.zeros((0, n), bool)
    Bm, Br = np.zeros(len(P)), np.zeros(len(P))   # each pattern's B̃, kept for its edges
    for s in range(0, len(P), block):
        A = P[s:s + block]
        v, M, B, s2 = forms.sums(A)
        Bm[s:s + block], Br[s:s + block] = B
        # dropped only when every vertex of a two-live cell is PROVED on one side of its critical circle (1 or 2);
        # 3 (no two-live row: three or more live samples, or no information) and 0 (mixed or undecided) keep it
        missed = np.array([sides[k] in (1, 2) for k in keys[s:s + block]], bool)
        val, dirs, inside = _interior(forms, A, v, M, B, s2, missed)
        best = max(best, float(np.max(val, initial=0.0)))
        found = max(found, _harvest(violators, forms, A, dirs, inside))
    ek = sorted(edge_keys)
    for s in range(0, len(ek), block):
        chunk = ek[s:s + block]
        rows = np.array([index[k] for k, _ in chunk], np.int64)
        circles = np.array([i for _, i in chunk])
        val, dirs, inside = _edges(forms, P[rows], circles, (Bm[rows], Br[rows]))
        best = max(best, float(np.max(val, initial=0.0)))
        found = max(found, _harvest(violators, forms, P[rows], dirs, inside))
    violators.sort(key=lambda t: -t[0])
    kup = round_up(math.sqrt(best)) if math.isfinite(best) else math.inf
    return SphereBound(float(kup), math.sqrt(max(found, 0.0)), len(P), len(iu),
                       tuple((math.sqrt(r), t) for r, t in violators[:MAX_VIOLATORS]))


def candidate_bound(nu, X, pattern, plus: float = 1.0, minus: float = 0.0, circle: int | None = None) -> float:
    """The bound :func:`sphere_sup_bound` uses for one candidate of r_P (the squared ratio): the interior critical
    value of the cell with active set ``pattern`` (bools, one per sample; ``circle`` None), or the critical value
    on its edge along the great circle x_circle^⊥. Every dropping test is off (the interior candidate is bounded
    as if the cell held it), so a check can compare each candidate with an exact value from outside the module."""
    forms = _Forms(np.ascontiguousarray(X, float), np.ascontiguousarray(nu, float), plus, minus)
    A = np.array([pattern], bool)
    if circle is None:
        v, M, B, s2 = forms.sums(A)
        return float(_interior(forms, A, v, M, B, s2, np.array([False]))[0][0])
    return float(_edges(forms, A, np.array([int(circle)]), forms.B(A))[0][0])


def _ratio_at(forms, A, dirs):
    """Float ratio r_P at the given directions with each row's own pattern (a candidate's value; not rigorous)."""
    c = np.where(A, forms.plus, -forms.minus)
    t = dirs @ forms.X.T
    lin = np.sum(c * forms.nu[None, :] * t, axis=1)
    q = np.sum(c * c * t * t, axis=1)
    B = np.sum(c * c * forms.sq[0][None, :], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = forms.n ** 2 * lin ** 2 / (4 * B * q)
    return np.where(np.isfinite(r), r, 0.0)


def _consistent(forms, A, dirs):
    t = dirs @ forms.X.T
    return np.all(np.where(A, t >= 0, t <= 0), axis=1)


def _harvest(violators, forms, A, dirs, inside) -> float:
    """The float ratio at each candidate direction that lies in its own cell: the largest (the supremum found), and
    every one above 1 appended to ``violators`` for an exchange step."""
    ok = inside & _consistent(forms, A, dirs)
    r = _ratio_at(forms, A[ok], dirs[ok])
    for j in np.flatnonzero(r > 1):
        d = dirs[ok][j]
        violators.append((float(r[j]), d / np.linalg.norm(d)))
    return float(np.max(r, initial=0.0))
