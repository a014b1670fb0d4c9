"""The falsifier has teeth: four planted bugs in the certified Lipschitz routines, each caught by a property
of :mod:`checks.rob.rigidity_ball` / :mod:`checks.rob.rigidity_sphere` with its DEFAULT budget (the budget
the verify F levels use).

The properties judge the routines with oracles that share no code with them (the single-pole formula of
SPEC §4, the 2^m SOCP brute force with exact acceptance, exact re-evaluation at rational points of the
sphere and a witness check from the net's definition); the nets come from the degenerate-arrangement
strategies of :mod:`checks.rob.strategies`, without which none of these bugs is visible.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from checks.rob import rigidity_ball, rigidity_sphere
from checks.runners.falsify import falsify
from numerics import rob as K
from numerics.rob import ball as KB
from numerics.rob import exact as KE
from numerics.rob import sphere2 as KS


def _found(prop, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", K.KinkCoincidenceWarning)
        return falsify(prop, seed=seed)


def test_without_a_plant_the_properties_find_nothing():
    for prop in (rigidity_sphere.single_pole_property(3), rigidity_ball.oracle_ball_property(2)):
        assert not _found(prop).found


def test_planted_seam_bug_is_caught(monkeypatch):
    """The seam of item 1: an uncrossed circle treated as an open arc that loses its interior critical points."""
    real = KS.CircleArrangement.locate_many
    monkeypatch.setattr(KS.CircleArrangement, "locate_many",
                        lambda self, X: np.full(X.shape[0], -1) if not self.positions else real(self, X))
    assert _found(rigidity_sphere.single_pole_property(3)).found


def test_planted_full_gradient_norm_is_caught(monkeypatch):
    """‖g‖ instead of the tangential norm: too high, so only a two-sided property can see it."""
    monkeypatch.setattr(KS, "gx2", lambda G, X: KS.dot_iv(G, X).square() * 0.0)
    monkeypatch.setattr(KE.QPoint, "value", lambda self, g: KE.QNum(KE.dot(g, g)))
    assert _found(rigidity_sphere.single_pole_property(3)).found


def test_planted_cell_test_dropping_cells_near_the_boundary_is_caught(monkeypatch):
    """Hyperplanes that only cut a thin slice of the ball next to its boundary are treated as missing it."""
    real = KB.decide_iv

    def lossy(free, N, H, M, rho2, k, exact_nh, exact_rho2):  # a level of flats at once: N (G, m, k)
        zero_n, meets, const = real(free, N, H, M, rho2, k, exact_nh, exact_rho2)
        dist2 = H.m ** 2 / np.maximum((N.m ** 2 / M.m[:, None, :]).sum(axis=2), 1e-300)
        thin = meets & (dist2 > 0.8 * rho2.m[:, None])
        const[thin] = H.m[thin] > 0
        meets[thin] = False
        return zero_n, meets, const

    monkeypatch.setattr(KB, "decide_iv", lossy)
    assert _found(rigidity_ball.oracle_ball_property(2)).found


@pytest.mark.parametrize("where", ["ball", "sphere"])
def test_planted_coincidence_tolerance_is_caught(monkeypatch, where):
    """A coincidence decided by a tolerance of 1e-3 (points on a line, vertices on a circle)."""
    if where == "ball":
        real = KB.rank_points

        def loose(Y, mask, exact_nh):  # the points of many lines at once: Y (G, m), ranks −1 off the mask
            out = real(Y, mask, exact_nh)
            for g in range(mask.shape[0]):
                idx = np.flatnonzero(mask[g])
                if len(idx):
                    order = np.argsort(Y.m[g, idx])
                    merged = np.r_[0, np.cumsum(np.diff(Y.m[g, idx][order]) > 1e-3)]
                    out[g, idx[order]] = merged
            return out

        monkeypatch.setattr(KB, "rank_points", loose)
        prop = rigidity_ball.oracle_ball_property(2)
    else:
        from numerics.rob import arrangement2 as KA

        real_order, phis = KA.order_vertices, {}

        def loose_order(arr, phi, err):  # vertices within 1e-3 rad fall into one cluster ...
            phis.clear()
            phis.update(enumerate(phi.tolist()))
            return real_order(arr, phi, np.maximum(err, 1e-3))

        def loose_resolve(arr, cluster):  # ... and a cluster merges points closer than 1e-3 rad
            cl = sorted(cluster, key=lambda v: phis[v])
            out = [[cl[0]]]
            for v in cl[1:]:
                if phis[v] - phis[out[-1][-1]] < 1e-3:
                    out[-1].append(v)
                else:
                    out.append([v])
            return out

        monkeypatch.setattr(KA, "order_vertices", loose_order)
        monkeypatch.setattr(KA, "resolve_cluster", loose_resolve)
        prop = rigidity_sphere.probe_s2_property()
    assert _found(prop).found


# ------------------------------------------------------------- the rigidity bound at its equality cases
def _loose_lipschitz(net, dom, **kw):
    """A Lipschitz routine 1% high: valid as an upper bound, so "|α| ≤ 2 Lip" cannot see it."""
    import dataclasses
    from fractions import Fraction

    L = K.lipschitz(net, dom, **kw)
    q = L.value2
    return dataclasses.replace(L, value2=KE.QNum(q.a * Fraction(101, 100), q.b * Fraction(101, 100), q.D))


def _loose_rigidity(net, dom, **kw):
    """The rigidity ratio against 4 Lip: every net still 'holds'."""
    import dataclasses

    r = K.rigidity(net, dom, **kw)
    return dataclasses.replace(r, ratio=r.ratio / 2)


@pytest.mark.parametrize("kind", ["lipschitz_fn", "rigidity_fn"])
@pytest.mark.parametrize("make", ["ball_unit", "sphere_unit", "width_2n"])
def test_overestimates_are_caught_at_the_equality_cases(kind, make):
    from fractions import Fraction

    from checks.rob import exact_values as EV

    bug = {kind: _loose_lipschitz if kind == "lipschitz_fn" else _loose_rigidity}
    prop = {"ball_unit": lambda: EV.single_unit_property(2, sphere=False, rho=Fraction(3, 2), **bug),
            "sphere_unit": lambda: EV.single_unit_property(3, sphere=True, **bug),
            "width_2n": lambda: EV.width2n_property(3, **bug)}[make]()
    assert _found(prop).found


def test_exact_value_properties_pass_on_the_real_routines():
    from checks.rob import exact_values as EV

    for prop in (EV.single_unit_property(3, sphere=False), EV.single_unit_property(4, sphere=True),
                 EV.width2n_property(4)):
        assert not _found(prop).found, prop.name
