"""rob.structured: the constructions, k(f) over all outputs, the exact vector-output Lipschitz constant, and the
claim's levels (quick)."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import pytest

from checks.evidence.registry import Context
from checks.rob import structured as cs
from numerics import rob
from numerics.rob.structured import VectorNet, conv1d, kink_count, low_rank, tied, vector_lipschitz_ball


def test_conv1d_builds_the_shifts():
    W, b, a, v, c = conv1d([1.0, -2.0], 0.5, [1.0, 2.0, 3.0], 4)
    assert W.tolist() == [[1, -2, 0, 0], [0, 1, -2, 0], [0, 0, 1, -2]] and b.tolist() == [0.5] * 3
    with pytest.raises(ValueError, match="filter width"):
        conv1d([1.0] * 5, 0.0, [1.0], 4)
    with pytest.raises(ValueError, match="shifts"):
        conv1d([1.0, 1.0], 0.0, [1.0], 4)
    with pytest.raises(ValueError, match="NaN"):
        conv1d([1.0, math.nan], 0.0, [1.0, 1.0, 1.0], 4)


def test_tied_and_low_rank_shapes():
    W, b, a, _, _ = tied([[1.0, 0.0], [0.0, 1.0]], [[0.1, 0.2], [0.3]], [1.0, 2.0, 3.0])
    assert W.tolist() == [[1, 0], [1, 0], [0, 1]] and b.tolist() == [0.1, 0.2, 0.3]
    with pytest.raises(ValueError, match="3 units"):
        tied([[1.0, 0.0], [0.0, 1.0]], [[0.1, 0.2], [0.3]], [1.0, 2.0])
    W, *_ = low_rank(np.ones((4, 2)), np.arange(6.0).reshape(3, 2), np.zeros(4), np.ones(4))
    assert W.shape == (4, 3) and np.linalg.matrix_rank(W) == 1
    with pytest.raises(ValueError, match="share r"):
        low_rank(np.ones((4, 2)), np.ones((3, 3)), np.zeros(4), np.ones(4))


def test_vector_net_validates_shapes():
    with pytest.raises(ValueError, match="shapes"):
        VectorNet(np.ones((3, 2)), np.zeros(3), np.ones((2, 4)), np.zeros((2, 2)), np.zeros(2))
    net = VectorNet(np.ones((3, 2)), np.zeros(3), np.ones((3, 3)), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(TypeError, match="VectorNet"):
        vector_lipschitz_ball((net.W, net.b, net.A[0], net.V[0], 0.0), 1)
    with pytest.raises(ValueError, match="d ≥ 3"):
        kink_count(net, rob.Sphere(2))


@pytest.mark.parametrize("sign, expected", [(1, 1), (-1, 0)])
def test_opposite_orientations_on_one_hyperplane(sign, expected):
    """ReLU(z) + ReLU(−z) = |z| keeps its kink; ReLU(z) − ReLU(−z) = z is affine: no kink."""
    W = [[Fr(1), Fr(2)], [Fr(-1), Fr(-2)]]
    b = [Fr(1, 3), Fr(-1, 3)]
    net = (W, b, [Fr(1), Fr(sign)], [Fr(0), Fr(0)], Fr(0))
    assert kink_count(net, rob.Ball(2, 1)) == expected
    assert cs.kinks_by_gradient_jump(W, b, [[Fr(1), Fr(sign)]], [[Fr(0), Fr(0)]], Fr(1)) == expected
    # the two halves in two outputs: each output has the kink, and it is one hyperplane
    vec = cs._vec(W, b, [[Fr(1), Fr(0)], [Fr(0), Fr(sign)]], [[Fr(0)] * 2] * 2)
    assert kink_count(vec, rob.Ball(2, 1)) == 1


def test_kink_count_matches_the_gradient_jump_oracle_on_random_nets():
    rng = np.random.default_rng(3)
    for trial in range(24):
        d, m, K = 2 + trial % 2, 2 + trial % 4, 1 + trial % 2
        W = [[Fr(int(x), 2) for x in rng.integers(-3, 4, d)] for _ in range(m)]
        W = [w if any(w) else [Fr(1)] + w[1:] for w in W]
        if trial % 3 == 0:   # a coincident pair (a positive multiple) with a cancelling outer weight
            W[-1] = [2 * x for x in W[0]]
        b = [Fr(int(x), 4) for x in rng.integers(-4, 5, m)]
        if trial % 3 == 0:
            b[-1] = 2 * b[0]
        A = [[Fr(int(x)) for x in rng.integers(-2, 3, m)] for _ in range(K)]
        if trial % 3 == 0:
            A[0][-1] = -A[0][0] / 2
        V = [[Fr(0)] * d for _ in range(K)]
        net = cs._vec(W, b, A, V) if K > 1 else (W, b, A[0], V[0], Fr(0))
        assert kink_count(net, rob.Ball(d, Fr(3, 2))) == cs.kinks_by_gradient_jump(W, b, A, V, Fr(3, 2))


def test_vector_constant_with_parallel_rows_is_known_by_hand():
    W, b, A, V, k2 = cs.known_vector_case()
    L = vector_lipschitz_ball(cs._vec(W, b, A, V), 1)
    assert L.value2.cmp(__import__("numerics.rob.exact", fromlist=["QNum"]).QNum(k2)) == 0 and L.cells == 2


def test_vector_constant_one_output_is_the_scalar_one():
    rng = np.random.default_rng(5)
    W, b = rng.standard_normal((5, 3)), 0.3 * rng.standard_normal(5)
    a, v = rng.standard_normal(5), rng.standard_normal(3)
    L = vector_lipschitz_ball(VectorNet(W, b, a[None, :], v[None, :], np.zeros(1)), 1)
    S = rob.lipschitz((W, b, a, v, 0.0), rob.Ball(3, 1))
    assert S.exact and L.value2.cmp(S.value2) == 0


def test_vector_constant_against_a_dense_grid():
    rng = np.random.default_rng(6)
    W, b = rng.standard_normal((6, 2)), 0.4 * rng.standard_normal(6)
    A, V = rng.standard_normal((2, 6)), rng.standard_normal((2, 2))
    net = VectorNet(W, b, A, V, np.zeros(2))
    L = vector_lipschitz_ball(net, 1)
    g = np.linspace(-1, 1, 401)
    X = np.array([(x, y) for x in g for y in g if x * x + y * y < 1])
    act = (X @ W.T + b > 0).astype(float)
    best = 0.0
    for pat in np.unique(act, axis=0):
        J = V + (A * pat) @ W
        best = max(best, float(np.linalg.norm(J, 2)))
    assert best <= L.value * (1 + 1e-12)
    assert best >= L.value * (1 - 1e-9)   # every cell of a 2-D arrangement of 6 lines holds a grid point here


def test_level_S_passes():
    out = cs.level_S(Context(seed=20260))
    assert out.passed, out.summary
    assert out.metric["k_right"] == out.metric["cases"]


def test_level_F_passes(tmp_path):
    out = cs.level_F(Context(seed=7, budget=15, report_dir=tmp_path))
    assert out.passed, out.summary


def test_vector_margin_catches_a_wrong_constant(monkeypatch):
    """The F property has teeth: a vector routine that looks at one cell only is caught."""
    case = {"d": 2, "W": [[1.0, 0.5], [-0.5, 1.0], [0.25, -1.0]], "b": [0.1, -0.2, 0.3], "a": [1.0, -2.0, 1.5],
            "v": [0.5, 0.0], "c": 0.0, "a2_ops": ["keep", "negate", "double"], "v2": ["1/3", "0"], "pad_at": 1}
    assert cs._vector_margin(case, True) == 0.0
    real = cs.vector_lipschitz_ball

    def one_cell(net, R=1, **kw):
        full = real(net, R, **kw)
        W = [list(r) for r in full.hyperplanes]
        from numerics.rob.exact import QNum
        return type(full)(QNum(Fr(0)), 0.0, (), tuple(W), 1, full.K)

    monkeypatch.setattr(cs, "vector_lipschitz_ball", one_cell)
    assert cs._vector_margin(case, True) > 0


def test_quick_level_E(tmp_path):
    out = cs.level_E(Context(seed=1, report_dir=tmp_path, quick=True))
    assert out.passed, out.summary
    assert all(f["k_max"] <= f["m"] for f in out.details["families"])
    fams = {f["family"]: f for f in out.details["families"]}
    assert set(fams) == {"conv1d", "low_rank", "tied", "vector"}
    assert fams["tied"]["m"] == 8 and fams["tied"]["nets"] == 6   # 3 groups (3, 3, 2), 3 seeds × 2 values of n


# ---------------------------------------------------------------------------------------------- K ≥ 3 outputs, exactly
def _net(rng, K, d, m):
    W, b = rng.standard_normal((m, d)), 0.3 * rng.standard_normal(m)
    return W, b, rng.standard_normal((K, m)), 0.2 * rng.standard_normal((K, d))


@pytest.mark.parametrize("seed", range(4))
def test_three_copies_of_one_output_are_sqrt3_times_the_scalar_constant(seed):
    """J = 1·gᵀ (three equal rows): ‖J‖₂² = 3‖g‖², against the scalar exact routine (another code path)."""
    W, b, A, V = _net(np.random.default_rng(seed), 1, 3, 6)
    L = vector_lipschitz_ball(VectorNet(W, b, np.repeat(A, 3, 0), np.repeat(V, 3, 0), np.zeros(3)), 1)
    S = rob.lipschitz((W, b, A[0], V[0], 0.0), rob.Ball(3, 1))
    assert S.exact and L.K == 3
    import sympy as sp
    assert sp.simplify(L.value2.sympy() - 3 * sp.sympify(S.value) ** 2) == 0


@pytest.mark.parametrize("seed", range(4))
def test_a_zero_third_output_gives_the_two_output_constant(seed):
    """(f₁, f₂, 0): λ_max(JJᵀ) is the K = 2 path's exact a + b√D (interval 2×2 formula, QNum)."""
    W, b, A, V = _net(np.random.default_rng(10 + seed), 2, 3, 6)
    L2 = vector_lipschitz_ball(VectorNet(W, b, A, V, np.zeros(2)), 1)
    Z = np.zeros((1, 6))
    L3 = vector_lipschitz_ball(VectorNet(W, b, np.vstack([A, Z]), np.vstack([V, np.zeros((1, 3))]), np.zeros(3)), 1)
    import sympy as sp
    q = L2.value2
    exact2 = sp.Rational(q.a) + sp.Rational(q.b) * sp.sqrt(sp.Rational(q.D))
    assert L3.cells == L2.cells and L3.pattern == L2.pattern
    assert sp.simplify(L3.value2.sympy() - exact2) == 0
    assert abs(L3.value - L2.value) <= 1e-13 * L2.value


@pytest.mark.parametrize("K, d, m, seed", [(3, 3, 5, 0), (4, 3, 6, 1), (3, 4, 8, 2), (5, 2, 7, 3)])
def test_k3_constant_bounds_every_sampled_cell_and_is_attained(K, d, m, seed):
    rng = np.random.default_rng(seed)
    W, b, A, V = _net(rng, K, d, m)
    L = vector_lipschitz_ball(VectorNet(W, b, A, V, np.zeros(K)), 1)
    X = rng.standard_normal((100000, d))
    X *= (rng.random((len(X), 1)) ** (1 / d)) / np.linalg.norm(X, axis=1, keepdims=True)
    vals = [float(np.linalg.norm(V + (A * pat) @ W, 2)) for pat in np.unique(X @ W.T + b > 0, axis=0)]
    assert max(vals) <= L.value * (1 + 1e-12)
    assert max(vals) >= L.value * (1 - 1e-12)      # the best cell is hit by 10⁵ points in d ≤ 4 (these seeds)


def test_largest_eigenvalue_against_sympy_and_ties():
    import sympy as sp

    from numerics.rob.structured import largest_eigenvalue as le
    M = [[Fr(2), Fr(1), Fr(0)], [Fr(1), Fr(2), Fr(1)], [Fr(0), Fr(1), Fr(2)]]
    top = max(sp.Matrix(M).eigenvals(), key=lambda e: float(e))
    assert sp.simplify(le(M).sympy() - top) == 0
    a = le([[9, 0, 0], [0, 1, 0], [0, 0, 1]])
    b = le([[9, 0, 0], [0, 4, 0], [0, 0, 0]])          # another polynomial, the same largest root
    c = le([[5, 4, 0], [4, 5, 0], [0, 0, 2]])          # 9 as 5 + 4
    assert a.poly != b.poly and a.cmp(b) == 0 and b.cmp(c) == 0 and c.cmp(a) == 0
    tiny = Fr(1, 10 ** 400)                            # separated only beyond 1300 bits
    assert le([[9 + tiny, 0, 0], [0, 1, 0], [0, 0, 1]]).cmp(a) == 1
    assert a.cmp(le([[9 - tiny, 0, 0], [0, 4, 0], [0, 0, 0]])) == 1
    with pytest.raises(ValueError, match="symmetric"):
        le([[1, 2], [3, 4]])
