"""Wolkowicz–Styan moments of a PyTorch module (read by :func:`numerics.interop.unpack`).

* :func:`ce_hessian_moments_from_module` — smooth ``Linear(M, N) → φ → Linear(N, 1)``: binary cross-entropy;
* :func:`softmax_hessian_moments_from_module` — smooth ``Linear(M, N) → φ → Linear(N, C)``, C ≥ 2: softmax
  cross-entropy. The head's number of outputs says which loss.
"""

from __future__ import annotations

from numerics.interop import to_numpy, unpack
from numerics.ws.moments import ce_hessian_moments
from numerics.ws.softmax import softmax_hessian_moments

__all__ = ["ce_hessian_moments_from_module", "softmax_hessian_moments_from_module"]


def ce_hessian_moments_from_module(model, X, y, **kw):
    """:func:`numerics.ws.ce_hessian_moments` of a smooth ``Linear(M, N) → φ → Linear(N, 1)`` module; the
    result has an extra attribute ``source`` (:class:`numerics.interop.TwoLayer`) recording what was analysed."""
    net = unpack(model)
    net.require_one_output("ce_hessian_moments_from_module")
    act = net.smooth_activation()
    b, c, bias = net.filled_biases()
    out = ce_hessian_moments(net.W, b, net.V[0], float(c[0]) if bias else None, to_numpy(X), to_numpy(y), act,
                             bias=bias, **kw)
    object.__setattr__(out, "source", net)  # the result may be a frozen dataclass
    return out


def softmax_hessian_moments_from_module(model, X, y, **kw):
    """:func:`numerics.ws.softmax.softmax_hessian_moments` of a smooth ``Linear(M, N) → φ → Linear(N, C)`` module,
    C >= 2 (mean softmax cross-entropy on the C logits, labels y in 0..C−1, as ``nn.CrossEntropyLoss``).

    The head says which loss: one output is binary cross-entropy on one logit
    (:func:`ce_hessian_moments_from_module`, as ``nn.BCEWithLogitsLoss``), C >= 2 outputs are softmax
    cross-entropy (this function). A layer without a bias has its bias fixed at 0 when the other layer has one
    (it is then a parameter of θ, as in the binary adapter); with neither, θ = (vec W, vec V), D = N(M+C).
    The result has an extra attribute ``source`` (:class:`numerics.interop.TwoLayer`)."""
    net = unpack(model)
    C, N = net.V.shape
    if C < 2:
        raise ValueError(f"softmax_hessian_moments_from_module needs a Linear(N, C) head with C >= 2 outputs; this "
                         f"module's head is Linear({N}, 1): for one logit use ce_hessian_moments_from_module (BCE)")
    act = net.smooth_activation()
    b, c, bias = net.filled_biases()
    out = softmax_hessian_moments(net.W, b, net.V, c, to_numpy(X), to_numpy(y), act, bias=bias, **kw)
    object.__setattr__(out, "source", net)
    return out
