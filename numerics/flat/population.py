r"""The Gaussian population loss :math:`\tfrac12\mathbb E_{x\sim N(0,I)}(h(w,x)-f^*(x)-\xi)^2`, exactly.

Expanding the square leaves pair expectations :math:`\mathbb E[g_1(v_1\cdot x)g_2(v_2\cdot x)]` of a bivariate
Gaussian (:func:`pair_expectations`): Gaussian moments for polynomials (:func:`monomial_pair_moment`), the
derived half moments :math:`\mathbb E[z_+^e]` for homogeneous × polynomial, the derived arc-cosine kernels for
homogeneous × homogeneous of degree 1 or 2, and quadrature otherwise (:func:`pair_expectation_quad`).
:func:`population_loss_mc` is an independent Monte Carlo estimate. The half moments and kernels are generated
from ``proofs/flat/population.py``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from numerics._derived import flat as derived
from numerics.flat.activations import Activation, get_activation
from numerics.flat.inputs import check_inputs
from numerics.flat.targets import Link, Target
from numerics.namespaces import MP, NP

__all__ = ["monomial_pair_moment", "pair_expectation_quad", "pair_expectations", "population_loss",
           "population_loss_mc"]


def _gauss_moment(e: int, ns):
    """E[u^e], u ~ N(0,1), from the derived half moment."""
    return 0 if e % 2 else 2 * derived.half_moment(e, ns)


def _cond(j: int, rho, s2, ns):
    """Terms of z2^j = s2^j (ρu + √(1−ρ²) w)^j: yields (k, C(j,k) s2^j ρ^k (1−ρ²)^{(j−k)/2} E[w^{j−k}])."""
    for k in range(j + 1):
        if (j - k) % 2:
            continue
        yield k, math.comb(j, k) * s2**j * rho**k * (1 - rho * rho) ** ((j - k) // 2) * _gauss_moment(j - k, ns)


def monomial_pair_moment(i, j, s1, s2, rho, ns=NP):
    """E[z1^i z2^j] for centred Gaussians with Var z_k = s_k² and Corr = ρ, by conditioning z2 on z1, in the
    namespace ``ns`` (:data:`NP`, :data:`MP`, or any with ``pi``, ``sqrt``, ``gamma``, ``rat``: SymPy too)."""
    return sum(w * s1**i * _gauss_moment(i + k, ns) for k, w in _cond(j, rho, s2, ns))


def _e_hom_mono(act, j, s1, s2, rho, ns):
    cc, cp, cm = (act.c, act.plus, act.minus) if ns is NP else map(mpmath.mpf, (act.c, act.plus, act.minus))
    return sum(w * s1**cc * (cp + cm * (-1) ** k) * derived.half_moment(cc + k, ns)
               for k, w in _cond(j, rho, s2, ns))


def _e_hom_hom(h1, h2, s1, s2, rho, ns):
    kern = {1: derived.relu_kernel_1, 2: derived.relu_kernel_2}[int(h1.c)]
    tot = 0
    num = (lambda x: x) if ns is NP else mpmath.mpf  # float coefficients enter exactly in mpmath
    for e1, c1 in ((1, h1.plus), (-1, h1.minus)):
        for e2, c2 in ((1, h2.plus), (-1, h2.minus)):
            if c1 == 0 or c2 == 0:
                continue
            tot = tot + num(c1) * num(c2) * kern(ns.arccos(ns.clip(e1 * e2 * rho)), ns)
    return tot * (s1 * s2) ** int(h1.c)


def _kind(g):
    """('poly', coeffs) | ('hom', Activation) | ('fn', Link) for a link or activation."""
    if isinstance(g, Activation):
        return ("poly", g.poly) if g.poly is not None else ("hom", g)
    if g.poly is not None:
        return "poly", g.poly
    if g.hom is not None:
        return ("poly", g.hom.poly) if g.hom.poly is not None else ("hom", g.hom)
    return "fn", g


def _exact_ok(k1, k2) -> bool:
    if k1[0] == "fn" or k2[0] == "fn":
        return False
    if k1[0] == "hom" and k2[0] == "hom":
        return k1[1].c == k2[1].c and k1[1].c in (1.0, 2.0)
    return True


def _pair_exact(k1, k2, s1, s2, rho, ns):
    """E[g1(z1) g2(z2)] for Var z_i = s_i², Corr = ρ, by Gaussian moments and arc-cosine kernels."""
    num = (lambda x: x) if ns is NP else mpmath.mpf
    if k1[0] == "poly" and k2[0] == "poly":
        return sum(num(ai) * num(bj) * monomial_pair_moment(i, j, s1, s2, rho, ns)
                   for i, ai in enumerate(k1[1]) if ai for j, bj in enumerate(k2[1]) if bj)
    if k1[0] == "poly":
        k1, k2, s1, s2 = k2, k1, s2, s1
    if k2[0] == "poly":
        return sum(num(bj) * _e_hom_mono(k1[1], j, s1, s2, rho, ns) for j, bj in enumerate(k2[1]) if bj)
    return _e_hom_hom(k1[1], k2[1], s1, s2, rho, ns)


def _gfun_mp(g):
    return g.mp if isinstance(g, Activation | Link) else g


def _cond_mean_mp(kind, mu, tau):
    """E[g(μ + τ w)], w ~ N(0,1), in closed form for polynomials and homogeneous g of degree 1 or 2."""
    if kind[0] == "poly":
        return mpmath.fsum(cf * mpmath.fsum(math.comb(i, k) * mu**k * tau ** (i - k) * _gauss_moment(i - k, MP)
                                            for k in range(i + 1)) for i, cf in enumerate(kind[1]) if cf)
    h = kind[1]
    tot = mpmath.mpf(0)
    for sgn, cf in ((1, h.plus), (-1, h.minus)):
        if cf == 0:
            continue
        m_ = sgn * mu  # E[(m_ + τ w)_+^c]
        if tau == 0:
            val = max(m_, 0) ** int(h.c)
        else:
            Phi, phi_ = mpmath.ncdf(m_ / tau), mpmath.npdf(m_ / tau)
            val = m_ * Phi + tau * phi_ if h.c == 1 else (m_**2 + tau**2) * Phi + m_ * tau * phi_
        tot += cf * val
    return tot


_GH_NODES = 160


def pair_expectation_quad(g1, v1, g2, v2, dps: int = 15):
    """E[g1(v1·x) g2(v2·x)] by mpmath quadrature of the 2-D Gaussian integral.

    With z2 = s2 u and z1 = s1(ρu + √(1−ρ²) w): when g1 is a polynomial or homogeneous of degree 1 or 2
    the inner w-integral is done in closed form (E[(μ + τw)_+] = μΦ(μ/τ) + τφ(μ/τ), ...) and only the
    u-integral is numerical (mpmath); two smooth links use a 160-node tensor Gauss–Hermite rule in float64;
    otherwise both integrals are mpmath quadratures, split at the kinks of homogeneous functions.
    """
    k1, k2 = _kind(g1), _kind(g2)
    if k1[0] == "fn" and k2[0] != "fn":
        g1, v1, g2, v2, k1, k2 = g2, v2, g1, v1, k2, k1
    with mpmath.workdps(dps):
        f1, f2 = _gfun_mp(g1), _gfun_mp(g2)
        s1 = mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in v1))
        s2 = mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in v2))
        dot = mpmath.fsum(mpmath.mpf(float(x)) * mpmath.mpf(float(y)) for x, y in zip(v1, v2, strict=True))
        rho = dot / (s1 * s2) if s1 > 0 and s2 > 0 else mpmath.mpf(0)
        rho = max(mpmath.mpf(-1), min(mpmath.mpf(1), rho))
        rp = mpmath.sqrt(1 - rho**2)
        dens = mpmath.npdf
        line = [-mpmath.inf, 0, mpmath.inf]
        if k1[0] == "fn" and k2[0] == "fn":  # smooth x smooth: tensor Gauss-Hermite (probabilists')
            from scipy.special import roots_hermitenorm

            nodes, wts = roots_hermitenorm(_GH_NODES)
            wts = wts / math.sqrt(2 * math.pi)
            fa, fb = g1.fn, g2.fn
            U, W = np.meshgrid(nodes, nodes, indexing="ij")
            vals = fa(float(s1) * U) * fb(float(s2) * (float(rho) * U + float(rp) * W))
            return mpmath.mpf(float(wts @ vals @ wts))
        if k1[0] == "poly" or (k1[0] == "hom" and k1[1].c in (1.0, 2.0)):
            return mpmath.quad(lambda u: dens(u) * f2(s2 * u) * _cond_mean_mp(k1, s1 * rho * u, s1 * rp), line)
        if rp == 0:
            return mpmath.quad(lambda u: dens(u) * f1(s1 * u) * f2(s2 * rho * u), line)

        def inner(u):
            w0 = -rho * u / rp
            return mpmath.quad(lambda w: dens(w) * f2(s2 * (rho * u + rp * w)), [-mpmath.inf, w0, mpmath.inf])
        return mpmath.quad(lambda u: dens(u) * f1(s1 * u) * inner(u), line)


def _geometry(V1, V2):
    """Norms and correlations of the rows of V1 against the rows of V2 (numpy, vectorised)."""
    s1 = np.linalg.norm(V1, axis=1)[:, None]
    s2 = np.linalg.norm(V2, axis=1)[None, :]
    den = s1 * s2
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(den > 0, (V1 @ V2.T) / np.where(den > 0, den, 1.0), 0.0)
    return s1, s2, np.clip(rho, -1.0, 1.0)


def pair_expectations(g1, V1, g2, V2, dps: int | None = None):
    """Matrix of E[g1(V1_i·x) g2(V2_j·x)], x ~ N(0, I), for an :class:`Activation` or :class:`Link` g1, g2 and
    rows V1, V2: exact when possible (float64, or mpmath at ``dps``), else quadrature."""
    k1, k2 = _kind(g1), _kind(g2)
    if _exact_ok(k1, k2):
        if dps is None:
            s1, s2, rho = _geometry(V1, V2)
            return np.asarray(_pair_exact(k1, k2, s1, s2, rho, NP), dtype=float) * np.ones(rho.shape)
        with mpmath.workdps(dps):
            out = mpmath.matrix(V1.shape[0], V2.shape[0])
            for i, va in enumerate(V1):
                for j, vb in enumerate(V2):
                    A1 = [mpmath.mpf(float(x)) for x in va]
                    A2 = [mpmath.mpf(float(x)) for x in vb]
                    s1 = mpmath.sqrt(mpmath.fsum(x * x for x in A1))
                    s2 = mpmath.sqrt(mpmath.fsum(x * x for x in A2))
                    rho = (mpmath.fsum(x * y for x, y in zip(A1, A2, strict=True)) / (s1 * s2)
                           if s1 > 0 and s2 > 0 else mpmath.mpf(0))
                    out[i, j] = _pair_exact(k1, k2, s1, s2, MP.clip(rho), MP)
            return out
    out = np.empty((V1.shape[0], V2.shape[0]))
    for i, va in enumerate(V1):
        for j, vb in enumerate(V2):
            out[i, j] = float(pair_expectation_quad(g1, va, g2, vb, dps or 15))
    return out


def population_loss(a, Theta, target: Target, noise: float = 0.0, activation="relu", *,
                    dps: int | None = None):
    r"""Population loss :math:`\tfrac12\mathbb E_{x\sim N(0,I_d)}[(h(w,x)-y)^2]`, :math:`y=f^*(x)+\xi`.

    The same ½ convention as :math:`F_S` (whose empirical version this is); ``noise`` is the standard
    deviation of ξ, so it adds :math:`\tfrac12\,\text{noise}^2`. Expanding the square gives pair
    expectations :math:`\mathbb E[g_1(v_1\cdot x)g_2(v_2\cdot x)]` of a bivariate Gaussian:

    * polynomial × polynomial and homogeneous × polynomial: Gaussian moments, with
      :math:`\mathbb E[z_+^e]=2^{e/2-1}\Gamma(\tfrac{e+1}2)/\sqrt\pi` (derived);
    * homogeneous × homogeneous of degree 1 or 2 (ReLU, LeakyReLU, ReLU²): arc-cosine kernels (derived);
    * anything else (tanh, sin links, other degrees): mpmath 2-D quadrature split at the kinks.

    ``dps=None`` evaluates the exact formulas in float64; an integer evaluates them in mpmath.

    Example:
        >>> from numerics.flat.targets import single_index
        >>> t = single_index([1.0, 0.0], "relu")
        >>> round(float(population_loss([1.0], [[1.0, 0.0]], t, activation="relu")), 15)  # h = f*
        0.0
        >>> round(float(population_loss([0.0], [[1.0, 0.0]], t, noise=1.0)), 12)  # ½(E[z_+²] + 1)
        0.75
    """
    act = get_activation(activation)
    v = check_inputs(a=a, Theta=Theta)
    a_, Th = v["a"], v["Theta"]
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target (see single_index, ...), not {type(target).__name__}")
    if target.d != Th.shape[1]:
        raise ValueError(f"Theta has d = {Th.shape[1]} but the target has d = {target.d}")
    if not (math.isfinite(float(noise)) and noise >= 0):
        raise ValueError(f"noise must be a finite standard deviation >= 0, got {noise}")
    with mpmath.workdps(dps or mpmath.mp.dps):  # products below stay at the working precision
        G = pair_expectations(act, Th, act, Th, dps)
        cross = [(rg.coef, pair_expectations(act, Th, rg.link, rg.v[None, :], dps)) for rg in target.ridges]
        ff = [[rg.coef * rh.coef * pair_expectations(rg.link, rg.v[None, :], rh.link, rh.v[None, :], dps)[0, 0]
               for rh in target.ridges] for rg in target.ridges]
    if dps is None:
        Eh2 = float(a_ @ G @ a_)
        Ehf = sum(cf * float(a_ @ np.asarray(C, dtype=float)[:, 0]) for cf, C in cross)
        Ef2 = math.fsum(float(x) for row in ff for x in row)
        return 0.5 * (Eh2 - 2 * Ehf + Ef2 + float(noise) ** 2)
    with mpmath.workdps(dps):
        am = [mpmath.mpf(float(x)) for x in a_]
        m = len(am)
        Eh2 = mpmath.fsum(am[i] * am[j] * G[i, j] for i in range(m) for j in range(m))
        Ehf = mpmath.fsum(cf * am[i] * C[i, 0] for cf, C in cross for i in range(m))
        Ef2 = mpmath.fsum(x for row in ff for x in row)
        return (Eh2 - 2 * Ehf + Ef2 + mpmath.mpf(float(noise)) ** 2) / 2


def population_loss_mc(a, Theta, target: Target, noise: float = 0.0, activation="relu", *,
                       samples: int = 200_000, rng: np.random.Generator | None = None) -> tuple[float, float]:
    """Monte Carlo estimate of :func:`population_loss` and its standard error (an independent check)."""
    act = get_activation(activation)
    v = check_inputs(a=a, Theta=Theta)
    rng = np.random.default_rng(0) if rng is None else rng
    vals = []
    for start in range(0, samples, 50_000):
        Xs = rng.standard_normal((min(50_000, samples - start), v["Theta"].shape[1]))
        err = act(Xs @ v["Theta"].T) @ v["a"] - target(Xs)
        vals.append(0.5 * err**2)
    allv = np.concatenate(vals) + 0.5 * float(noise) ** 2
    return float(np.mean(allv)), float(np.std(allv) / math.sqrt(allv.size))
