"""Υ of a PyTorch module: a homogeneous ``Linear(d, m, bias=False) → σ → Linear(m, 1)`` (read by
:func:`numerics.interop.unpack`)."""

from __future__ import annotations

import numpy as np

from numerics.flat.trace import upsilon
from numerics.interop import to_numpy, unpack

__all__ = ["upsilon_from_module"]


def upsilon_from_module(model, X):
    """Υ (:func:`numerics.flat.upsilon`) of a homogeneous ``Linear(d, m, bias=False) → σ → Linear(m, 1)``
    module (flat's model h(x) = Σ_j a_j σ(θ_j·x) has no biases)."""
    net = unpack(model)
    net.require_one_output("upsilon_from_module")
    act = net.homogeneous_activation()
    for nm, arr in (("first", net.b), ("second", net.c)):
        if arr is not None and np.any(arr != 0):
            raise ValueError(f"the {nm} Linear layer has a nonzero bias; the flatness model h(x) = Σ a_j σ(θ_j·x) "
                             "has none: build it with bias=False")
    return upsilon(net.V[0], net.W, to_numpy(X), act)
