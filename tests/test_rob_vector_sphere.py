"""numerics.rob.vector_sphere: the ℓ2-operator Lipschitz bracket of vector-output nets by branching over output
directions, against the exact ball routine, exact scalar multiples, dense sampling, and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from numerics import rob
from numerics.rob.structured import VectorNet, vector_lipschitz_ball
from numerics.rob.vector_sphere import vector_lipschitz


def _net(seed, K, d, m):
    rng = np.random.default_rng(seed)
    W, b = rng.standard_normal((m, d)), 0.3 * rng.standard_normal(m)
    return VectorNet(W, b, rng.standard_normal((K, m)), 0.2 * rng.standard_normal((K, d)), np.zeros(K))


@pytest.mark.parametrize("K, d, m, seed", [(2, 3, 6, 0), (3, 3, 6, 1), (2, 4, 6, 2), (4, 2, 5, 3), (3, 3, 8, 4)])
def test_ball_bracket_contains_the_exact_constant(K, d, m, seed):
    net = _net(seed, K, d, m)
    B = vector_lipschitz(net, rob.Ball(d, 1), rel_gap=1e-3, time_limit=60)
    ex = float(vector_lipschitz_ball(net, 1).value2.sympy().evalf(40)) ** 0.5 if K >= 3 else \
        vector_lipschitz_ball(net, 1).value
    assert B.lower <= ex * (1 + 1e-15) and ex <= B.upper * (1 + 1e-15)
    assert B.status == "gap reached" and B.gap <= 1e-3


@pytest.mark.parametrize("alpha", [(3, 4), (1, -2, 2), (5, 0, 12)])
def test_outputs_proportional_to_one_scalar_net_are_its_multiple(alpha):
    """f = α g: ‖J(I − xxᵀ)‖₂ = ‖α‖·‖∇_S g‖, so Lip_S(f) = ‖α‖ Lip_S(g) (the exact S² routine for g)."""
    rng = np.random.default_rng(7)
    d, m = 3, 6
    W, b = rng.standard_normal((m, d)), 0.3 * rng.standard_normal(m)
    a, v = rng.standard_normal(m), 0.3 * rng.standard_normal(d)
    al = np.array(alpha, float)
    net = VectorNet(W, b, np.outer(al, a), np.outer(al, v), np.zeros(len(al)))
    g = rob.lipschitz((W, b, a, v, 0.0), rob.Sphere(d))
    assert g.exact
    target = float(sp.sqrt(sum(x * x for x in alpha)) * sp.sympify(g.value))
    S = vector_lipschitz(net, rob.Sphere(d), rel_gap=1e-4, time_limit=60)
    assert S.lower <= target * (1 + 1e-15) <= S.upper * (1 + 2e-15) and S.gap <= 1e-4
    assert abs(abs(np.dot(S.direction, al / np.linalg.norm(al))) - 1) <= 1e-3    # the maximising direction is α̂


@pytest.mark.parametrize("K, d, m, seed", [(2, 3, 6, 10), (3, 3, 7, 11), (2, 4, 5, 12)])
def test_sphere_bracket_bounds_dense_samples(K, d, m, seed):
    net = _net(seed, K, d, m)
    S = vector_lipschitz(net, rob.Sphere(d), rel_gap=1e-3, time_limit=60)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((100000, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    pats = (X @ net.W.T + net.b > 0).astype(float)
    J = net.V[None] + np.einsum("km,nm,md->nkd", net.A, pats, net.W)
    P = np.eye(d)[None] - X[:, :, None] * X[:, None, :]
    sampled = float(np.linalg.norm(J @ P, ord=2, axis=(1, 2)).max())
    assert sampled <= S.upper and S.lower <= S.upper and S.gap <= 1e-3
    assert sampled >= 0.97 * S.lower          # the sphere is small: sampling comes close (not a proof, a sanity)


def test_one_output_is_the_scalar_constant():
    net = _net(20, 1, 3, 5)
    S = vector_lipschitz(net, rob.Sphere(3))
    L = rob.lipschitz((net.W, net.b, net.A[0], net.V[0], 0.0), rob.Sphere(3))
    assert S.lower <= L.upper and L.lower <= S.upper and S.K == 1


def test_bad_inputs():
    net = _net(0, 2, 3, 4)
    with pytest.raises(TypeError, match="VectorNet"):
        vector_lipschitz((net.W, net.b, net.A[0], net.V[0], 0.0), rob.Sphere(3))
    with pytest.raises(ValueError, match="d ≥ 3"):
        vector_lipschitz(_net(0, 2, 2, 4), rob.Sphere(2))
    with pytest.raises(ValueError, match="R\\^4"):
        vector_lipschitz(net, rob.Sphere(4))
    with pytest.raises(ValueError, match="rel_gap"):
        vector_lipschitz(net, rob.Ball(3, 1), rel_gap=0)
