r"""Evaluators for the deterministic lemmas of SPEC §4: Op, N_u(t), ‖r_{u,t}‖₁, the fitting functional, yᵀPy.

Every function takes float64 arrays (numpy) or exact rationals (:class:`fractions.Fraction`, ints, SymPy
Rationals, in nested lists); exact input gives exact output, by rational arithmetic only.

* :func:`op_norm` — Op = λ_max(Σ_i x_i x_iᵀ) (float64); :func:`op_exceeds` decides λ_max(XᵀX) ≥ c exactly
  (c rational) by an exact LDLᵀ positive-definiteness test of cI − XᵀX;
* :func:`op_enclosure` — a certified enclosure [lo, hi] ∋ Op (exact rational Gram matrix of the smaller side,
  its exact characteristic polynomial, arb root isolation); :func:`op_compare` — sign(Op − c) exactly (the
  enclosure decides, an exact rational PSD / PD test of cI − G decides what it cannot);
* :func:`occupancy` — N_u(t) = #{i : u·x_i ≥ t}; :func:`value_mass` — ‖r_{u,t}‖₁ = Σ_i ReLU(u·x_i − t);
  :func:`served` — #{i : y_i α ReLU(u·x_i − t) ≥ h};
* the bounds of SPEC §4 as coefficients of Op (a bound B = κ·Op, so B is decided against Op exactly by
  :func:`op_compare` at c = q/κ): :func:`occupancy_coefficient` (1/t²), :func:`value_mass_coefficients`
  (2 on √(n·Op), 1/t and (1 − t)/t² on Op), :func:`value_mass_rigid_coefficient` (5L/t),
  :func:`serving_coefficient` ((t + h/|α|)⁻²), :func:`serving_rigid_coefficient` (6L²/h²);
* :func:`cell_gradient` — v + s_A, s_A = Σ_{k∈A} a_k W_k, of a net on an active set A;
* :func:`fit_functional` — Σ_i [y_i f_i − f_i²/2]; :func:`mse`, :func:`clip`, :func:`well_served`
  (#{i : y_i f_i ≥ ε/4});
* :func:`projection_value` — yᵀPy, P the orthogonal projection onto col [X 1]; :func:`affine_rank` — rank [X 1];
  :func:`affine_maximiser` — (v, c) with (v·x_i + c)_i = 2Py; :func:`affine_objective` —
  Σ y_i z_i − ¼ Σ z_i², z_i = v·x_i + c.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from numerics.fallbacks import reach

__all__ = ["op_norm", "op_exceeds", "op_enclosure", "op_compare", "occupancy", "value_mass", "served",
           "occupancy_coefficient", "value_mass_coefficients", "value_mass_rigid_coefficient", "serving_coefficient",
           "serving_rigid_coefficient", "cell_gradient", "fit_functional", "mse", "clip", "well_served",
           "projection_value", "affine_rank", "affine_maximiser", "affine_objective", "is_exact"]


def is_exact(x) -> bool:
    """True when the (nested) entries are rationals rather than floats."""
    while isinstance(x, list | tuple) or (isinstance(x, np.ndarray) and x.dtype == object):
        if len(x) == 0:
            return True
        x = x[0]
    return not isinstance(x, float | np.floating | np.ndarray)


def _q(x) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if hasattr(x, "p") and hasattr(x, "q"):  # SymPy Rational
        return Fraction(int(x.p), int(x.q))
    return Fraction(x)


def _rows(X) -> list[list[Fraction]]:
    return [[_q(v) for v in row] for row in X]


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b, strict=True)), Fraction(0))


# ----------------------------------------------------------------------------------------------- Op
def op_norm(X) -> float:
    """Op = λ_max(Σ_i x_i x_iᵀ) = ‖X‖₂², float64."""
    X = np.asarray(X, float)
    if X.size == 0:
        return 0.0
    return float(np.linalg.eigvalsh(X.T @ X)[-1])


def _positive_definite(M: list[list[Fraction]]) -> bool:
    """Exact: M (symmetric, rational) is positive definite iff every LDLᵀ pivot is > 0."""
    M = [row[:] for row in M]
    k = len(M)
    for j in range(k):
        piv = M[j][j]
        if piv <= 0:
            return False
        for i in range(j + 1, k):
            f = M[i][j] / piv
            if f:
                for m in range(j, k):
                    M[i][m] -= f * M[j][m]
    return True


def op_exceeds(X, c, *, power: int = 1) -> bool:
    """Exact: Op^power ≥ c for rational X and c (power 1 or 2; Op² = λ_max((XᵀX)²))."""
    R = _rows(X)
    c = _q(c)
    d = len(R[0]) if R else 0
    if d == 0:
        return c <= 0
    G = [[sum((r[a] * r[b] for r in R), Fraction(0)) for b in range(d)] for a in range(d)]
    if power == 2:
        G = [[sum((G[a][m] * G[m][b] for m in range(d)), Fraction(0)) for b in range(d)] for a in range(d)]
    elif power != 1:
        raise ValueError("power must be 1 or 2")
    # λ_max(G) < c  ⇔  cI − G ≻ 0
    return not _positive_definite([[(c if a == b else 0) - G[a][b] for b in range(d)] for a in range(d)])


def _gram_small(R: list[list[Fraction]]) -> list[list[Fraction]]:
    """The Gram matrix of the smaller side: XᵀX (d × d) or XXᵀ (n × n); both have the nonzero eigenvalues of Op."""
    n, d = len(R), len(R[0]) if R else 0
    if d <= n:
        return [[sum((r[a] * r[b] for r in R), Fraction(0)) for b in range(d)] for a in range(d)]
    return [[_dot(R[i], R[j]) for j in range(n)] for i in range(n)]


def _semidefinite(M: list[list[Fraction]], strict: bool) -> bool:
    """Exact: M (symmetric, rational) is positive definite (``strict``) or semidefinite. Symmetric Gaussian
    elimination with the largest diagonal entry as pivot: a negative pivot, or (semidefinite case) a zero largest
    diagonal with a nonzero entry left in the remaining block, refutes it."""
    M = [row[:] for row in M]
    rest = list(range(len(M)))
    while rest:
        j = max(rest, key=lambda i: M[i][i])
        piv = M[j][j]
        if piv < 0 or (strict and piv == 0):
            return False
        if piv == 0:  # every remaining diagonal entry is 0: semidefinite iff the remaining block is 0
            return all(M[a][b] == 0 for a in rest for b in rest)
        rest.remove(j)
        for i in rest:
            f = M[i][j] / piv
            if f:
                for m in rest:
                    M[i][m] -= f * M[j][m]
    return True


def op_enclosure(X, *, prec: int = 128) -> tuple[Fraction, Fraction]:
    """A certified enclosure lo ≤ Op ≤ hi (Fractions) of Op = λ_max(XᵀX), X rational (floats are binary rationals).

    The Gram matrix of the smaller side is formed exactly (flint ``fmpq_mat``), its characteristic polynomial
    exactly, and its roots are isolated by arb (``complex_roots``, rigorous balls at ``prec`` bits). The matrix is
    symmetric, so every root is real; the largest real part's ball encloses Op."""
    import flint

    M = _flint_gram(X)
    if M is None:
        return Fraction(0), Fraction(0)
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        roots = M.charpoly().complex_roots()
        top = max((r.real for r, _ in roots), key=lambda x: float(x.mid()))
        lo, hi = (Fraction(*_man_exp(top.lower())), Fraction(*_man_exp(top.upper())))
    finally:
        flint.ctx.prec = old
    # the other roots' balls are disjoint from the top one (root isolation); Op ≥ 0 always
    return max(lo, Fraction(0)), hi


def _flint_gram(X):
    """The exact Gram matrix of the smaller side as a flint ``fmpq_mat`` (None for empty X). Float input is
    scaled by one power of two to integers (exact), so the product runs in ``fmpz_mat``."""
    import flint

    if not is_exact(X):
        A = np.asarray(X, float)
        if A.size == 0 or A.shape[-1] == 0:
            return None
        if not np.all(np.isfinite(A)):
            raise ValueError("Op: the data must be finite")
        nz = A[A != 0]
        if nz.size == 0:
            return flint.fmpq_mat(min(A.shape), min(A.shape))
        s = 52 - int(np.frexp(np.abs(nz))[1].min())
        if s + int(np.frexp(np.abs(nz))[1].max()) < 1000:
            B = A.T if A.shape[1] <= A.shape[0] else A  # rows of B: the side whose Gram is small
            M = flint.fmpz_mat([[int(v) for v in row] for row in np.ldexp(B, s)])
            return flint.fmpq_mat(M * M.transpose()) / flint.fmpz(2) ** (2 * s)
    R = _rows(X)
    if not R or not R[0]:
        return None
    G = _gram_small(R)
    k = len(G)
    return flint.fmpq_mat(k, k, [flint.fmpq(v.numerator, v.denominator) for row in G for v in row])


def _man_exp(x) -> tuple[int, int]:
    m, e = x.man_exp()
    m, e = int(m), int(e)
    return (m * 2 ** e, 1) if e >= 0 else (m, 2 ** -e)


def op_compare(X, c, *, enclosure: tuple[Fraction, Fraction] | None = None) -> int:
    """sign(Op − c), exactly: the certified enclosure decides when it excludes c, else cI − XᵀX is tested for
    positive (semi)definiteness in exact rationals (Op < c ⇔ cI − G ≻ 0, Op ≤ c ⇔ cI − G ⪰ 0)."""
    c = _q(c)
    lo, hi = enclosure if enclosure is not None else op_enclosure(X)
    if c < lo:
        return 1
    if c > hi:
        return -1
    reach("rob.lemmas/op_compare_exact")
    R = _rows(X)
    if not R or not R[0]:
        return (c < 0) - (c > 0)  # Op = 0
    G = _gram_small(R)  # XXᵀ when n < d: the same largest eigenvalue (XᵀX only adds zeros, and Op ≥ 0)
    A = [[(c if a == b else 0) - G[a][b] for b in range(len(G))] for a in range(len(G))]
    if _semidefinite(A, strict=True):
        return -1
    return 0 if _semidefinite(A, strict=False) else 1


# ------------------------------------------------------------------------------- occupancy, value mass
def occupancy(X, u, t) -> int:
    """N_u(t) = #{i : u·x_i ≥ t}."""
    if is_exact(X):
        u, t = [_q(v) for v in u], _q(t)
        return sum(1 for r in _rows(X) if _dot(u, r) >= t)
    return int(np.count_nonzero(np.asarray(X, float) @ np.asarray(u, float) >= float(t)))


def value_mass(X, u, t):
    """‖r_{u,t}‖₁ = Σ_i ReLU(u·x_i − t) (a Fraction for exact input)."""
    if is_exact(X):
        u, t = [_q(v) for v in u], _q(t)
        return sum((max(Fraction(0), _dot(u, r) - t) for r in _rows(X)), Fraction(0))
    return float(np.maximum(np.asarray(X, float) @ np.asarray(u, float) - float(t), 0.0).sum())


def served(X, y, u, t, alpha, h) -> int:
    """#{i : y_i α ReLU(u·x_i − t) ≥ h}."""
    if is_exact(X):
        u, t, a, h = [_q(v) for v in u], _q(t), _q(alpha), _q(h)
        return sum(1 for r, yi in zip(_rows(X), y, strict=True)
                   if _q(yi) * a * max(Fraction(0), _dot(u, r) - t) >= h)
    z = np.maximum(np.asarray(X, float) @ np.asarray(u, float) - float(t), 0.0)
    return int(np.count_nonzero(np.asarray(y, float) * float(alpha) * z >= float(h)))


# ------------------------------------------------------------------------ the bounds, as coefficients of Op
# Each returns κ with bound = κ·Op (κ·√(n·Op) for the first value-mass bound): exact for exact input, so a check
# decides "q ≤ κ·Op" as Op ≥ q/κ by op_compare. The constants are the paper's (SPEC §4), none of them sharp.
def occupancy_coefficient(t):
    """N_u(t) ≤ Op/t²: κ = 1/t² (t > 0)."""
    return 1 / t ** 2


def value_mass_coefficients(t):
    """‖r_{u,t}‖₁ ≤ min(2√(n·Op), Op/t, (1 − t)Op/t²): (2, 1/t, (1 − t)/t²) for t ∈ (0, 1)."""
    return 2, 1 / t, (1 - t) / t ** 2


def value_mass_rigid_coefficient(L, t):
    """|α|‖r_{u,t}‖₁ ≤ 5 L Op/t when |α|√(1 − t²) ≤ 2L: κ = 5L/t."""
    return 5 * L / t


def serving_coefficient(t, h, alpha):
    """#{i : y_i α ReLU(u·x_i − t) ≥ h} ≤ Op (t + h/|α|)⁻²: κ = (t + h/|α|)⁻²."""
    return 1 / (t + h / abs(alpha)) ** 2


def serving_rigid_coefficient(L, h):
    """… ≤ 6 Op L²/h² under the rigidity bound |α|√(1 − t²) ≤ 2L: κ = 6L²/h²."""
    return 6 * L ** 2 / h ** 2


def cell_gradient(W, a, v, active):
    """v + s_A with s_A = Σ_{k∈A} a_k W_k (the gradient of Σ a_k ReLU(W_k·x + b_k) + v·x + c on the open cell
    whose active set is A; ``active`` is a 0/1 pattern over the units). Exact for exact input."""
    if is_exact(W) and is_exact(v) and is_exact(a):
        g = [_q(x) for x in v]
        for k, on in enumerate(active):
            if on:
                g = [gi + _q(a[k]) * _q(w) for gi, w in zip(g, W[k], strict=True)]
        return g
    W = np.asarray(W, float).reshape(len(a), -1)
    return np.asarray(v, float) + (np.asarray(active, float) * np.asarray(a, float)) @ W


# ------------------------------------------------------------------------------------ fitting
def clip(f):
    """clip(t) = max(−1, min(1, t)), entrywise."""
    if is_exact(f):
        return [max(Fraction(-1), min(Fraction(1), _q(v))) for v in f]
    return np.clip(np.asarray(f, float), -1.0, 1.0)


def mse(f, y):
    """(1/n) Σ (f_i − y_i)²."""
    if is_exact(f):
        f, y = [_q(v) for v in f], [_q(v) for v in y]
        return sum(((a - b) ** 2 for a, b in zip(f, y, strict=True)), Fraction(0)) / len(f)
    f, y = np.asarray(f, float), np.asarray(y, float)
    return float(np.mean((f - y) ** 2))


def fit_functional(f, y):
    """Σ_i [y_i f_i − f_i²/2]."""
    if is_exact(f):
        f, y = [_q(v) for v in f], [_q(v) for v in y]
        return sum((b * a - a * a / 2 for a, b in zip(f, y, strict=True)), Fraction(0))
    f, y = np.asarray(f, float), np.asarray(y, float)
    return float(np.sum(y * f - f * f / 2))


def well_served(f, y, eps) -> int:
    """#{i : y_i f_i ≥ ε/4}."""
    if is_exact(f):
        e = _q(eps) / 4
        return sum(1 for a, b in zip(f, y, strict=True) if _q(a) * _q(b) >= e)
    return int(np.count_nonzero(np.asarray(f, float) * np.asarray(y, float) >= float(eps) / 4))


# ------------------------------------------------------------------------------------ affine supremum
def _affine_columns(X) -> list[list[Fraction]]:
    R = _rows(X)
    d = len(R[0]) if R else 0
    return [[r[j] for r in R] for j in range(d)] + [[Fraction(1)] * len(R)]


def _orthogonal_basis(cols):
    """Exact Gram–Schmidt without normalisation: pairwise orthogonal rational vectors spanning the columns."""
    basis = []
    for c in cols:
        w = list(c)
        for q, qq in basis:
            k = _dot(w, q) / qq
            if k:
                w = [a - k * b for a, b in zip(w, q, strict=True)]
        ww = _dot(w, w)
        if ww:
            basis.append((w, ww))
    return basis


def _float_basis(X):
    X = np.asarray(X, float)
    A = np.hstack([X.reshape(len(X), -1), np.ones((len(X), 1))])
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    r = int(np.sum(s > s[0] * max(A.shape) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0
    return A, U[:, :r]


def affine_rank(X) -> int:
    """rank [X 1] (exact for rational X; float64 SVD with the usual rank cut otherwise)."""
    if is_exact(X):
        return len(_orthogonal_basis(_affine_columns(X)))
    return _float_basis(X)[1].shape[1]


def projection_value(X, y):
    """yᵀPy, P the orthogonal projection onto col [X 1]."""
    if is_exact(X):
        yq = [_q(v) for v in y]
        return sum((_dot(q, yq) ** 2 / qq for q, qq in _orthogonal_basis(_affine_columns(X))), Fraction(0))
    _, U = _float_basis(X)
    c = U.T @ np.asarray(y, float)
    return float(c @ c)


def affine_maximiser(X, y):
    """(v, c) with (v·x_i + c)_i = 2Py: the maximiser of Σ y_i z_i − ¼ Σ z_i² over affine z."""
    if is_exact(X):
        R = _rows(X)
        d = len(R[0]) if R else 0
        yq = [_q(v) for v in y]
        cols = _affine_columns(X)
        # 2Py as a combination of the columns: Gram–Schmidt keeps the triangular change of basis
        basis, coef = [], []  # coef[k]: q_k = Σ_j coef[k][j] col_j
        for j, col in enumerate(cols):
            w, cw = list(col), [Fraction(0)] * len(cols)
            cw[j] = Fraction(1)
            for (q, qq), cq in zip(basis, coef, strict=True):
                k = _dot(w, q) / qq
                if k:
                    w = [a - k * b for a, b in zip(w, q, strict=True)]
                    cw = [a - k * b for a, b in zip(cw, cq, strict=True)]
            ww = _dot(w, w)
            if ww:
                basis.append((w, ww))
                coef.append(cw)
        wsol = [Fraction(0)] * len(cols)
        for (q, qq), cq in zip(basis, coef, strict=True):
            k = 2 * _dot(q, yq) / qq
            wsol = [a + k * b for a, b in zip(wsol, cq, strict=True)]
        return wsol[:d], wsol[d]
    A, U = _float_basis(X)
    z = 2 * U @ (U.T @ np.asarray(y, float))
    w = np.linalg.lstsq(A, z, rcond=None)[0]
    return w[:-1], float(w[-1])


def affine_objective(X, y, v, c):
    """Σ_i y_i z_i − ¼ Σ_i z_i², z_i = v·x_i + c."""
    if is_exact(X):
        vq, cq = [_q(a) for a in v], _q(c)
        z = [_dot(vq, r) + cq for r in _rows(X)]
        return sum((_q(b) * a - a * a / 4 for a, b in zip(z, y, strict=True)), Fraction(0))
    z = np.asarray(X, float) @ np.asarray(v, float) + float(c)
    return float(np.asarray(y, float) @ z - z @ z / 4)
