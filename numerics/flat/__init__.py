r"""Flatness of homogeneous two-layer nets: trace, Υ, flattest interpolators, Gaussian population loss.

The network is :math:`h(w,x)=\sum_{j\le m}a_j\,\sigma(\theta_j\cdot x)` with a positively
:math:`c`-homogeneous activation, :math:`\sigma(\lambda t)=\lambda^c\sigma(t)` for :math:`\lambda>0`. Every such
:math:`\sigma` is :math:`\sigma(t)=\alpha_+t_+^c+\alpha_-t_-^c` (:class:`Activation`). The loss is
:math:`F_S(w)=\frac1{2n}\sum_i(h(w,x_i)-y_i)^2` and its flatness is

.. math::

    \operatorname{Tr}\nabla^2F_S(w)=\sum_j\bigl(A_j+a_j^2B_j\bigr)
      +\frac1n\sum_i r_i\sum_j a_j\sigma''(\theta_j\cdot x_i)\|x_i\|^2,

:math:`A_j=\frac1n\sum_i\sigma(\theta_j\cdot x_i)^2`, :math:`B_j=\frac1n\sum_i\sigma'(\theta_j\cdot x_i)^2\|x_i\|^2`,
:math:`r_i=h(w,x_i)-y_i` (Gauss–Newton part plus residual part; :func:`flatness_trace`). The rescaling
:math:`(a_j,\theta_j)\mapsto(\lambda_j^{-c}a_j,\lambda_j\theta_j)` leaves :math:`h` unchanged and turns neuron
:math:`j`'s share into :math:`\lambda^{2c}A_j+\lambda^{-2}a_j^2B_j`; its minimum over :math:`\lambda>0` is

.. math::

    \Upsilon(w)=K_c\sum_j A_j^{1/(c+1)}B_j^{c/(c+1)}|a_j|^p,\qquad p=\frac{2c}{c+1},\qquad
    K_c=(c+1)c^{-c/(c+1)},

attained at :math:`\lambda_j^{2c+2}=a_j^2B_j/(cA_j)` (:func:`upsilon`, :func:`optimal_rescaling`). In the
invariant variables :math:`\bar\theta_j=\theta_j/\|\theta_j\|`, :math:`b_j=a_j\|\theta_j\|^c`,
:math:`\Upsilon=\sum_j\omega_j|b_j|^p`, so for fixed directions the flattest interpolator solves a convex
program whose dual certifies lower bounds (:func:`flattest_outer_weights`).

All closed forms (:math:`p`, :math:`K_c`, :math:`\lambda_j`, :math:`\omega_j`, the conjugate of
:math:`|t|^p`, the Gaussian kernels) are generated from ``proofs/flat`` (``numerics._derived.flat``).

Modules, one concern each:

* :mod:`~numerics.flat.activations` — :class:`Activation`, :func:`get_activation` (validated, with the reason);
* :mod:`~numerics.flat.trace` — the network, :func:`flatness_trace`, :func:`upsilon`, :func:`optimal_rescaling`,
  :func:`rescale`, and their mpmath versions;
* :mod:`~numerics.flat.duality` — the invariant form, :func:`dual_objective`, :func:`flattest_outer_weights`
  (certified dual points);
* :mod:`~numerics.flat.weighted_l1` — the p = 1 interior point with crossover (:func:`weighted_l1_min`);
* :mod:`~numerics.flat.targets`, :mod:`~numerics.flat.population` — targets and the exact Gaussian
  :func:`population_loss`;
* :mod:`~numerics.flat.certificates` — beyond the paper: :func:`upsilon_star_bracket`, a certified bracket on Υ*;
* :mod:`~numerics.namespaces`, :mod:`~numerics.flat.inputs` — the ``NP``/``MP`` namespaces of the derived
  closed forms, and input validation.

References:
    Vardhan, Taheri, Mazumdar (2026). Flatness of homogeneous two-layer nets. arXiv 2606.04429.
    Cho, Saul (2009). Kernel methods for deep learning. NeurIPS (arc-cosine kernels).

Example:
    >>> import numpy as np
    >>> from numerics.flat import flatness_trace, flattest_outer_weights, network, upsilon
    >>> rng = np.random.default_rng(0)
    >>> X, Theta = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    >>> y = np.tanh(X[:, 0])
    >>> res = flattest_outer_weights(Theta, X, y, "quadratic")
    >>> bool(np.allclose(network(res.a, Theta, X, "quadratic"), y))
    True
    >>> res.dual_value <= res.value and res.rel_gap < 1e-8
    True
    >>> bool(upsilon(res.a, Theta, X, "quadratic") <= flatness_trace(res.a, Theta, X, y, "quadratic"))
    True
"""

from numerics.flat.activations import HOMOGENEOUS, Activation, get_activation
from numerics.flat.certificates import Bracket, CircleCertificate, certify_circle, certify_sphere, upsilon_star_bracket
from numerics.flat.duality import (
    DUAL_ROUNDING,
    FlattestMethod,
    FlattestResult,
    InvariantForm,
    certify_nu_p1,
    dual_objective,
    flattest_outer_weights,
    invariant_form,
    solve_p1,
)
from numerics.flat.inputs import as_array, check_inputs
from numerics.flat.modules import upsilon_from_module
from numerics.flat.population import (
    monomial_pair_moment,
    pair_expectation_quad,
    pair_expectations,
    population_loss,
    population_loss_mc,
)
from numerics.flat.targets import LINKS, Link, Ridge, Target, multi_index, single_index, sum_single_index
from numerics.flat.trace import (
    TraceParts,
    flatness_trace,
    flatness_trace_mp,
    mp_inputs,
    network,
    neuron_moments,
    neuron_moments_mp,
    optimal_rescaling,
    rescale,
    trace_parts,
    upsilon,
    upsilon_mp,
)
from numerics.flat.weighted_l1 import L1Result, interpolates, lstsq_correct, shifted_cholesky, weighted_l1_min
from numerics.namespaces import MP, NP

__all__ = [
    "upsilon_from_module",
    # activations
    "Activation", "get_activation", "HOMOGENEOUS",
    # trace, Upsilon, rescaling
    "network", "neuron_moments", "TraceParts", "trace_parts", "flatness_trace", "upsilon", "optimal_rescaling",
    "rescale", "mp_inputs", "neuron_moments_mp", "flatness_trace_mp", "upsilon_mp",
    # invariant form, duals, flattest interpolators
    "InvariantForm", "invariant_form", "DUAL_ROUNDING", "dual_objective", "FlattestResult", "FlattestMethod",
    "certify_nu_p1", "solve_p1", "flattest_outer_weights",
    "L1Result", "weighted_l1_min", "interpolates", "lstsq_correct", "shifted_cholesky",
    # targets and the population loss
    "Link", "LINKS", "Ridge", "Target", "single_index", "sum_single_index", "multi_index",
    "monomial_pair_moment", "pair_expectation_quad", "pair_expectations", "population_loss", "population_loss_mc",
    # beyond: the bracket on Upsilon*
    "CircleCertificate", "certify_circle", "certify_sphere", "Bracket", "upsilon_star_bracket",
    # namespaces and validation
    "NP", "MP", "as_array", "check_inputs",
]
