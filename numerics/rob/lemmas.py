r"""Evaluators for the deterministic lemmas of SPEC §4: Op, N_u(t), ‖r_{u,t}‖₁, the fitting functional, yᵀPy.

Every function takes float64 arrays (numpy) or exact rationals (:class:`fractions.Fraction`, ints, SymPy
Rationals, in nested lists); exact input gives exact output, by rational arithmetic only.

* :func:`op_norm` — Op = λ_max(Σ_i x_i x_iᵀ) (float64); :func:`op_exceeds` decides λ_max(XᵀX) ≥ c exactly
  (c rational) by an exact LDLᵀ positive-definiteness test of cI − XᵀX;
* :func:`occupancy` — N_u(t) = #{i : u·x_i ≥ t}; :func:`value_mass` — ‖r_{u,t}‖₁ = Σ_i ReLU(u·x_i − t);
* :func:`fit_functional` — Σ_i [y_i f_i − f_i²/2]; :func:`mse`, :func:`clip`, :func:`well_served`
  (#{i : y_i f_i ≥ ε/4});
* :func:`projection_value` — yᵀPy, P the orthogonal projection onto col [X 1]; :func:`affine_rank` — rank [X 1];
  :func:`affine_maximiser` — (v, c) with (v·x_i + c)_i = 2Py; :func:`affine_objective` —
  Σ y_i z_i − ¼ Σ z_i², z_i = v·x_i + c.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["op_norm", "op_exceeds", "occupancy", "value_mass", "fit_functional", "mse", "clip", "well_served",
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
