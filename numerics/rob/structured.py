r"""Structured two-layer ReLU nets (Corollaries 1.6–1.7; SPEC §3, rob.structured): their realized kinks k(f) and,
for vector outputs, the exact ℓ2-operator Lipschitz constant on a ball.

The suite's choices, as SPEC states them:

* :func:`conv1d` — one filter h of width s, stride 1, no padding: unit j is ReLU(h·x_{j..j+s−1} + β), so its
  hyperplane is the j-th shift of one vector; m = d − s + 1 units.
* :func:`tied` — groups of units that share one weight vector and differ in bias.
* :func:`low_rank` — W = U Vᵀ (the product as float64 computes it: the net as given).
* :class:`VectorNet` — f: R^d → R^K, f_k(x) = Σ_j A_kj ReLU(w_j·x + b_j) + V_k·x + c_k.

k(f) (:func:`kink_hyperplanes`, :func:`kink_count`) is the number of distinct hyperplanes at which f is not
differentiable on the domain: for a vector output, the union over outputs of each output's canonical kinks
(:func:`numerics.rob.canonicalize`, exact rationals). Each hyperplane is normalised exactly (max_i |w_i| = 1 and the
first nonzero entry of w positive); flipping an orientation moves an affine part into (V, c), exactly, since
a·ReLU(z) = a·ReLU(−z) + a·z.

:func:`vector_lipschitz_ball` is Lip(f) for the ℓ2 operator norm on B_R: the largest ‖J‖₂ over the cells of the
kink arrangement that meet the ball (:func:`numerics.rob.ball.ball_cells`, every decision certified), J = V +
Σ_{j active} A_{:,j} w_jᵀ constant on a cell. For K ≤ 2, ‖J‖₂² = λ_max(JJᵀ) = (T + √(T² − 4Δ))/2 with T, Δ the
trace and determinant of the rational 2×2 matrix JJᵀ, so the value is an exact number a + b√D
(:class:`numerics.rob.exact.QNum`): candidate cells are kept by interval enclosures and compared exactly. For K ≥ 3
the value is λ_max of the rational K×K matrix JJᵀ as an algebraic number (:class:`LargestEigenvalue`: the largest
root of the squarefree part of its characteristic polynomial, enclosed by arb's certified root isolation); two cells
are compared by enclosures refined until disjoint, and equality is decided exactly through the polynomials' gcd.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb, ctx, fmpq, fmpq_mat, fmpz_poly

from numerics.rob import exact as E
from numerics.rob.ball import ball_cells
from numerics.rob.canonical import canonicalize
from numerics.rob.interval import Interval, from_fractions, matmul
from numerics.rob.net import Ball, Sphere

__all__ = ["conv1d", "tied", "low_rank", "VectorNet", "kink_hyperplanes", "kink_count", "VectorLipschitz",
           "vector_lipschitz_ball", "LargestEigenvalue", "largest_eigenvalue"]

F0 = Fraction(0)


def _finite(name, x) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has NaN or infinite entries")
    return a


def _entries(name, x) -> np.ndarray:
    """float64 entries (finite), or exact ones (Fractions, SymPy rationals) kept as an object array."""
    a = np.asarray(x)
    if a.dtype == object:
        if any(isinstance(e, float) and not np.isfinite(e) for e in a.ravel()):
            raise ValueError(f"{name} has NaN or infinite entries")
        return a
    return _finite(name, a)


def conv1d(h, bias: float, a, d: int, v=None, c: float = 0.0) -> tuple:
    """The net Σ_j a_j ReLU(h·x_{j..j+s−1} + bias) + v·x + c on R^d (one filter, stride 1, no padding):
    (W, b, a, v, c) with W's rows the d − s + 1 shifts of h."""
    h = _finite("h", h).ravel()
    s = len(h)
    if not (1 <= s <= d):
        raise ValueError(f"conv1d: the filter width s = {s} must be between 1 and d = {d}")
    m = d - s + 1
    a = _finite("a", a).ravel()
    if len(a) != m:
        raise ValueError(f"conv1d: a has {len(a)} entries, but d − s + 1 = {m} shifts")
    W = np.zeros((m, d))
    for j in range(m):
        W[j, j:j + s] = h
    v = np.zeros(d) if v is None else _finite("v", v).ravel()
    if len(v) != d:
        raise ValueError(f"conv1d: v has {len(v)} entries, d = {d}")
    return W, np.full(m, float(bias)), a, v, float(c)


def tied(Wg, biases, a, v=None, c: float = 0.0) -> tuple:
    """Groups of tied units: group g has weight vector Wg[g] and one unit per bias in biases[g]; ``a`` lists the
    outer weights group by group (as many as units)."""
    Wg = _finite("Wg", Wg)
    if Wg.ndim != 2 or len(biases) != len(Wg):
        raise ValueError(f"tied: Wg must be G×d with one bias list per group; got {Wg.shape} and {len(biases)} lists")
    rows = [(Wg[g], float(bb)) for g in range(len(Wg)) for bb in np.ravel(biases[g])]
    a = _finite("a", a).ravel()
    if len(a) != len(rows):
        raise ValueError(f"tied: a has {len(a)} entries for {len(rows)} units")
    d = Wg.shape[1]
    v = np.zeros(d) if v is None else _finite("v", v).ravel()
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), a, v, float(c)


def low_rank(U, V, b, a, v=None, c: float = 0.0) -> tuple:
    """W = U Vᵀ (m×r times r×d, as float64 computes the product)."""
    U, V = _finite("U", U), _finite("V", V)
    if U.ndim != 2 or V.ndim != 2 or U.shape[1] != V.shape[1]:
        raise ValueError(f"low_rank: U (m×r) and V (d×r) must share r; got {U.shape} and {V.shape}")
    W = U @ V.T
    d = W.shape[1]
    v = np.zeros(d) if v is None else _finite("v", v).ravel()
    return W, _finite("b", b).ravel(), _finite("a", a).ravel(), v, float(c)


@dataclass(frozen=True)
class VectorNet:
    """f_k(x) = Σ_j A[k, j] ReLU(W_j·x + b_j) + V[k]·x + c[k], k < K."""

    W: np.ndarray
    b: np.ndarray
    A: np.ndarray
    V: np.ndarray
    c: np.ndarray

    def __post_init__(self):
        W, b, A, V, c = (np.atleast_1d(_entries(n, x)) for n, x in zip("WbAVc", (self.W, self.b, self.A, self.V,
                                                                              self.c), strict=True))
        A, V = np.atleast_2d(A), np.atleast_2d(V)
        m, d = W.shape if W.ndim == 2 else (0, V.shape[1])
        K = A.shape[0]
        if W.ndim != 2 or b.shape != (m,) or A.shape != (K, m) or V.shape != (K, d) or c.shape != (K,):
            raise ValueError(f"VectorNet: shapes W {W.shape}, b {b.shape}, A {A.shape}, V {V.shape}, c {c.shape} do "
                             "not fit W m×d, b (m,), A K×m, V K×d, c (K,)")
        for k, x in zip("WbAVc", (W, b, A, V, c), strict=True):
            object.__setattr__(self, k, x)

    @property
    def K(self) -> int:
        return self.A.shape[0]

    def output(self, k: int) -> tuple:
        """Output k as a scalar net (W, b, a, v, c)."""
        if self.W.dtype == object or self.A.dtype == object:
            return ([list(r) for r in self.W], list(self.b), list(self.A[k]), list(self.V[k]), self.c[k])
        return self.W, self.b, self.A[k], self.V[k], float(self.c[k])

    def __call__(self, X) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, float))
        W, b, A, V, c = (np.asarray(t, float) for t in (self.W, self.b, self.A, self.V, self.c))
        return np.maximum(X @ W.T + b, 0) @ A.T + X @ V.T + c


def _oriented(w, b):
    """(w, b) scaled exactly to max |w_i| = 1 with its first nonzero entry positive; and the sign flipped."""
    s = max(abs(x) for x in w)
    first = next(x for x in w if x != 0)
    sgn = 1 if first > 0 else -1
    return tuple(x * sgn / s for x in w), b * sgn / s, s, sgn


def _merged(net, domain):
    """Every output's canonical form on the domain, merged over one list of oriented hyperplanes:
    (hyperplanes [(w, b)], A columns {key: [a_k]}, V rows, c) in exact Fractions."""
    outs = [net] if not isinstance(net, VectorNet) else [net.output(k) for k in range(net.K)]
    K = len(outs)
    cols: dict = {}
    Vq, cq = [], []
    for k, o in enumerate(outs):
        cf = canonicalize(o, domain)
        if not cf.rational:
            raise ValueError("rob.structured needs a rational canonical form (float or rational weights)")
        v, c = list(cf.vq), cf.cq
        for w, b, a in zip(cf.Wq, cf.bq, cf.aq, strict=True):
            wn, bn, s, sgn = _oriented(w, b)
            an = a * s
            if sgn < 0:   # a·ReLU(z) = a·ReLU(−z) + a·z, z = w·x + b
                v = [vi + a * wi for vi, wi in zip(v, w, strict=True)]
                c = c + a * b
            cols.setdefault((wn, bn), [F0] * K)[k] += an
        Vq.append(tuple(v))
        cq.append(c)
    return cols, Vq, cq


def kink_hyperplanes(net, domain) -> list[tuple]:
    """The distinct hyperplanes (w, b) where f (a net tuple, or a :class:`VectorNet`: any output) is not
    differentiable on the domain, exact and normalised (max |w_i| = 1, first nonzero entry positive)."""
    if isinstance(domain, Sphere) and domain.d < 3:
        raise ValueError("k(f) on S^{d−1} needs d ≥ 3 (on S¹ the canonical form is not unique)")
    cols, _, _ = _merged(net, domain)
    return [key for key, a in cols.items() if any(x != 0 for x in a)]


def kink_count(net, domain) -> int:
    """k(f): the number of distinct kink hyperplanes of f on the domain (all outputs of a :class:`VectorNet`)."""
    return len(kink_hyperplanes(net, domain))


@dataclass(frozen=True)
class LargestEigenvalue:
    """λ_max of a rational symmetric matrix, exactly: the largest real root of ``poly`` (integer coefficients, low
    degree first), the squarefree part of the characteristic polynomial (all of whose roots are real)."""

    poly: tuple

    def _roots(self, prec: int) -> list:
        """The real roots' enclosures at ``prec`` bits (arb's working precision must stay at ``prec`` while they are
        compared), in increasing order, or None if two of them still overlap."""
        with ctx.workprec(prec):
            rts = sorted((r.real for r, _ in fmpz_poly(list(self.poly)).complex_roots()), key=lambda t: t.mid())
            if any(a.overlaps(b) for a, b in zip(rts, rts[1:], strict=False)):
                return None
        return rts

    def enclosure(self, prec: int = 64) -> arb:
        """A certified enclosure of the value (the largest root isolated from the others)."""
        while prec <= 1 << 16:
            rts = self._roots(prec)
            if rts is not None:
                return rts[-1]
            prec *= 2
        raise ArithmeticError(f"roots of {self.poly} not isolated at 65536 bits")  # a squarefree poly cannot

    def _is_top_root_of(self, g: fmpz_poly, prec: int):
        """Is the largest root of ``poly`` a root of g (g divides poly)? True/False, or None at this precision."""
        if g.degree() < 1:
            return False
        with ctx.workprec(prec):
            rts = self._roots(prec)
            grt = LargestEigenvalue(tuple(int(c) for c in g.coeffs()))._roots(prec)
            if rts is None or grt is None:
                return None
            top = grt[-1]                                   # a root of poly, so ≤ poly's largest root
            if top.overlaps(rts[-1]):
                return True if len(rts) == 1 or top.lower() > rts[-2].upper() else None
            return False

    def cmp(self, other: LargestEigenvalue) -> int:
        """−1, 0, +1: exact. Enclosures refined until disjoint; equal values are recognised as a common largest
        root of both polynomials (a root of their gcd), which refinement alone could never prove."""
        if self.poly == other.poly:
            return 0
        g = fmpz_poly(list(self.poly)).gcd(fmpz_poly(list(other.poly)))
        prec = 64
        while prec <= 1 << 16:
            with ctx.workprec(prec):
                a, b = self.enclosure(prec), other.enclosure(prec)
                if a.lower() > b.upper():
                    return 1
                if b.lower() > a.upper():
                    return -1
                e1, e2 = self._is_top_root_of(g, prec), other._is_top_root_of(g, prec)
                if e1 is True and e2 is True:
                    return 0
            prec *= 2
        raise ArithmeticError("comparison of two algebraic numbers undecided at 65536 bits")

    def __float__(self) -> float:
        return float(self.enclosure(64).mid())

    def sympy(self):
        """The value as a SymPy ``CRootOf`` (exact)."""
        import sympy as sp

        t = sp.Symbol("t")
        P = sp.Poly(list(reversed(self.poly)), t)
        return sp.CRootOf(P, sp.degree(P, t) - 1)


def largest_eigenvalue(M) -> LargestEigenvalue:
    """λ_max of the exact symmetric rational matrix ``M`` (a flint ``fmpq_mat`` or a list of rows of Fractions)."""
    if not isinstance(M, fmpq_mat):
        rows = [[fmpq(Fraction(x).numerator, Fraction(x).denominator) for x in r] for r in M]
        M = fmpq_mat(len(rows), len(rows), [x for r in rows for x in r])
    if M.nrows() != M.ncols() or M != M.transpose():
        raise ValueError("largest_eigenvalue needs a symmetric square matrix")
    p = M.charpoly()
    num = p.numer()                       # the monic rational charpoly times its denominator: integer coefficients
    zp = fmpz_poly([int(c) for c in num.coeffs()])
    sq = zp.gcd(zp.derivative())
    sf = zp if sq.degree() < 1 else zp // sq       # squarefree part: the same roots, each once
    c = [int(x) for x in sf.coeffs()]
    if c[-1] < 0:
        c = [-x for x in c]
    return LargestEigenvalue(tuple(c))


@dataclass(frozen=True)
class VectorLipschitz:
    """Lip(f) on B_R for the ℓ2 operator norm: ``value2`` = ‖J‖₂² exactly (a + b√D for K ≤ 2, a
    :class:`LargestEigenvalue` for K ≥ 3), ``value`` its float square root, the maximising cell's pattern over
    ``hyperplanes``, and the number of cells."""

    value2: E.QNum | LargestEigenvalue
    value: float
    pattern: tuple
    hyperplanes: tuple
    cells: int
    K: int


def _lam_max(J):
    """λ_max(JJᵀ) of a rational K×d matrix (K ≤ 2) as a QNum: (T + √(T² − 4Δ))/2."""
    if len(J) == 1:
        return E.QNum(E.dot(J[0], J[0]))
    a, b, c = E.dot(J[0], J[0]), E.dot(J[0], J[1]), E.dot(J[1], J[1])
    T, Dt = a + c, a * c - b * b
    disc = T * T - 4 * Dt
    return E.QNum(T / 2, Fraction(1, 2) if disc else F0, disc)


def _lam_max_cells(rows, keys, cols, Vq, K):
    """K ≥ 3: λ_max(JJᵀ) of every cell exactly (flint rationals), the largest by certified enclosures refined
    until disjoint or proved equal. Returns (LargestEigenvalue, cell index)."""
    m, d = len(keys), len(keys[0][0])

    def q(x):
        x = Fraction(x)
        return fmpq(x.numerator, x.denominator)

    Wl = [[q(x) for x in w] for w, _ in keys]
    Al = [[q(cols[keys[j]][k]) for j in range(m)] for k in range(K)]
    V0 = fmpq_mat(K, d, [q(x) for r in Vq for x in r])
    vals, encl = [], []
    for i in range(len(rows)):
        act = [j for j in range(m) if rows[i][j]]
        J = V0
        if act:
            J = J + fmpq_mat(K, len(act), [Al[k][j] for k in range(K) for j in act]) * \
                fmpq_mat(len(act), d, [x for j in act for x in Wl[j]])
        lam = largest_eigenvalue(J * J.transpose())
        vals.append(lam)
        encl.append(lam.enclosure(64))
    top = max(range(len(vals)), key=lambda i: encl[i].lower())
    best = top
    for i in range(len(vals)):
        if i != best and not encl[i].upper() < encl[top].lower() and vals[i].cmp(vals[best]) > 0:
            best = i
    return vals[best], best


def vector_lipschitz_ball(net: VectorNet, R=1, *, time_limit=None, max_nodes: int = 10**7) -> VectorLipschitz:
    """Exact Lip(f) = max over the cells of the kink arrangement in B_R of ‖J‖₂ (any number K of outputs)."""
    if not isinstance(net, VectorNet):
        raise TypeError(f"vector_lipschitz_ball takes a VectorNet, not {type(net).__name__}")
    d = net.W.shape[1]
    cols, Vq, _ = _merged(net, Ball(d, R))
    keys = [key for key, a in cols.items() if any(x != 0 for x in a)]
    K = net.K
    if not keys:
        val = _lam_max(Vq) if K <= 2 else largest_eigenvalue([[E.dot(r, q) for q in Vq] for r in Vq])
        return VectorLipschitz(val, float(val) ** 0.5, (), (), 1, K)
    Wq = [list(w) for w, _ in keys]
    bq = [b for _, b in keys]
    packed, _ = ball_cells(Wq, bq, Fraction(R), time_limit=time_limit, max_nodes=max_nodes)
    m = len(keys)
    rows = np.unpackbits(packed, axis=1, count=m).astype(np.float64)
    if K >= 3:
        val, i = _lam_max_cells(rows, keys, cols, Vq, K)
        return VectorLipschitz(val, float(val) ** 0.5, tuple(bool(x) for x in rows[i]), tuple(keys), len(packed), K)
    # J's rows per cell, as interval enclosures: row k = V_k + Σ_j σ_j A_kj w_j
    G = []
    for k in range(K):
        Ak = from_fractions([[cols[key][k] * x for x in key[0]] for key in keys])
        G.append(matmul(Interval(rows), Ak) + from_fractions(list(Vq[k])).reshape(1, -1))
    if K == 1:
        lam = (G[0] * G[0]).sum(axis=1)
    else:
        a, b, c = (G[0] * G[0]).sum(axis=1), (G[0] * G[1]).sum(axis=1), (G[1] * G[1]).sum(axis=1)
        T = a + c
        disc = (a - c).square() + (b * 4) * b
        lam = (T + disc.sqrt()) * 0.5
    lo, hi = lam.lo(), lam.hi()
    cand = np.flatnonzero(hi >= lo.max())
    best = None
    for i in cand:
        act = np.flatnonzero(rows[i])
        J = [list(Vq[k]) for k in range(K)]
        for j in act:
            for k in range(K):
                J[k] = [x + cols[keys[j]][k] * y for x, y in zip(J[k], keys[j][0], strict=True)]
        val = _lam_max(J)
        if best is None or val.cmp(best[0]) > 0:
            best = (val, tuple(bool(x) for x in rows[i]))
    return VectorLipschitz(best[0], float(best[0]) ** 0.5, best[1], tuple(keys), len(packed), K)
