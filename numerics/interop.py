"""PyTorch in: a two-layer module (or tensors) becomes the arrays every paper's evaluators take.

:func:`unpack` reads a module whose leaf modules reduce to ``Linear(M, N) → activation → Linear(N, C)``
(an ``nn.Sequential`` or any module with that shape; ``Identity``, ``Flatten`` and ``Dropout`` are
skipped, and a ``Dropout`` is noted: the evaluators analyse the network in eval mode). Parameters may be
float32 or float64, on any device, with or without ``requires_grad``: they are detached, moved to the CPU
and converted to float64 *exactly* (every float32 is a float64), so the network analysed is the float32
network itself, not a rounded relative of it; :attr:`TwoLayer.note` says which dtype was read.

Activations: ``Sigmoid``, ``Tanh``, ``Softplus(beta)`` (the smooth function log(1 + e^{βt})/β; torch's
``threshold`` switch to the identity is not a smooth function and is noted when it can matter),
``GELU`` (exact, and ``approximate="tanh"``), ``ReLU``, ``LeakyReLU(slope)``, and :class:`ReLUPower`
(ReLU(t)^p, c = p homogeneous). A module of another shape, or another activation, gets a ValueError that
names the offending layer and says what would work.

This module only reads: it imports none of the papers' evaluators, which import it. The entry points live with
their papers (and are re-exported under the papers' public modules):

* ``numerics.ws.modules.ce_hessian_moments_from_module(model, X, y)`` (smooth activation, ``Linear(N, 1)``: BCE);
* ``numerics.ws.modules.softmax_hessian_moments_from_module(model, X, y)`` (smooth, ``Linear(N, C)``, C >= 2:
  softmax cross-entropy; the number of outputs says which loss);
* ``numerics.flat.modules.upsilon_from_module(model, X)`` (homogeneous activation, no biases, ``Linear(N, 1)``);
* ``numerics.rob.lipschitz.lipschitz_from_module(model, domain)`` (ReLU or LeakyReLU).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["TwoLayer", "unpack", "to_numpy", "SMOOTH", "HOMOGENEOUS", "PIECEWISE_LINEAR",  # and ReLUPower (lazy)
           "activation_spec", "suite_version", "save_safetensors", "read_safetensors_metadata"]

# the evaluators of a module live with their papers (this module reads modules and imports none of them); the old
# names here are resolved lazily, by name, for code written against them
_MOVED = {"ce_hessian_moments_from_module": "numerics.ws.modules",
          "softmax_hessian_moments_from_module": "numerics.ws.modules",
          "upsilon_from_module": "numerics.flat.modules", "lipschitz_from_module": "numerics.rob.lipschitz"}

SMOOTH = ("Sigmoid", "Tanh", "Softplus", "GELU")
HOMOGENEOUS = ("ReLU", "LeakyReLU", "ReLUPower")
PIECEWISE_LINEAR = ("ReLU", "LeakyReLU")
_SKIP = ("Identity", "Flatten", "Dropout")
_WHAT_WORKS = ("Linear(M, N) → one of Sigmoid, Tanh, Softplus(beta), GELU (approximate 'none' or 'tanh'), "
               "ReLU, LeakyReLU(slope), ReLUPower(p) → Linear(N, C)")


def to_numpy(x: Any) -> Any:
    """A torch tensor as a float64 (or integer) numpy array: detached, on the CPU; anything else unchanged.
    float32/float16/bfloat16 values are converted exactly (each is a float64)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        t = x.detach().cpu()
        if t.is_floating_point():
            import torch

            t = t.to(torch.float64)
        return t.numpy()
    return x


def _relu_power_module():
    import torch

    class ReLUPower(torch.nn.Module):
        """ReLU(t)^p, a positively p-homogeneous activation (p ≥ 1)."""

        def __init__(self, p: float = 2.0):
            super().__init__()
            if not p >= 1:
                raise ValueError(f"ReLUPower: need p >= 1, got {p}")
            self.p = float(p)

        def forward(self, t):
            return torch.relu(t) ** self.p

        def extra_repr(self) -> str:
            return f"p={self.p}"

    return ReLUPower


def __getattr__(name):  # ReLUPower is built lazily so that importing numerics does not import torch
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(_MOVED[name]), name)
    if name == "ReLUPower":
        cls = _relu_power_module()
        globals()["ReLUPower"] = cls
        return cls
    raise AttributeError(name)


@dataclass(frozen=True)
class TwoLayer:
    """A two-layer net read from a module: z(x) = V act(Wx + b) + c."""

    W: np.ndarray  # (N, M)
    b: np.ndarray | None  # (N,), None for a bias-free first layer
    V: np.ndarray  # (C, N)
    c: np.ndarray | None  # (C,)
    activation: str  # the torch class name: "Tanh", "LeakyReLU", ...
    params: dict  # beta, slope, approximate, p, threshold
    dtype: str  # "float32" or "float64" (what the module held)
    note: str  # what was analysed, in one sentence
    modules: tuple = field(default=(), repr=False, compare=False)  # the live (Linear, activation, Linear) modules

    @property
    def kind(self) -> str:
        return "smooth" if self.activation in SMOOTH else "piecewise-linear" if self.activation in \
            PIECEWISE_LINEAR else "homogeneous"

    def filled_biases(self) -> tuple:
        """(b, c, bias) as the evaluators take them: with either layer biased, a missing bias is a parameter fixed
        at 0 (zeros of its shape) and bias is True; with neither, (None, None, False)."""
        if self.b is None and self.c is None:
            return None, None, False
        b = self.b if self.b is not None else np.zeros(self.W.shape[0])
        c = self.c if self.c is not None else np.zeros(self.V.shape[0])
        return b, c, True

    def require_one_output(self, what: str) -> None:
        """ValueError unless the head is ``Linear(N, 1)`` (``what`` names the caller in the message)."""
        if self.V.shape[0] != 1:
            hint = (": for C >= 2 outputs use softmax_hessian_moments_from_module (softmax cross-entropy)"
                    if what.startswith("ce_") else "")
            raise ValueError(f"{what} needs a Linear(N, 1) head (binary cross-entropy on one logit); this module's "
                             f"head is Linear({self.V.shape[1]}, {self.V.shape[0]}){hint}")

    def smooth_activation(self):
        """The ws activation: a name or a SymPy expression (for Softplus(beta ≠ 1) and GELU-tanh)."""
        import sympy as sp

        t = sp.Symbol("t", real=True)
        a = self.activation
        if a == "Sigmoid":
            return "sigmoid"
        if a == "Tanh":
            return "tanh"
        if a == "Softplus":
            beta = sp.nsimplify(self.params["beta"])
            return "softplus" if beta == 1 else sp.log(1 + sp.exp(beta * t)) / beta
        if a == "GELU":
            if self.params.get("approximate", "none") == "none":
                return "gelu"
            k = sp.sqrt(2 / sp.pi)
            return t * (1 + sp.tanh(k * (t + sp.Rational(44715, 1000000) * t ** 3))) / 2
        raise ValueError(f"activation {a} is not smooth: the Wolkowicz–Styan moments need one of {SMOOTH}")

    def homogeneous_activation(self) -> str:
        a = self.activation
        if a == "ReLU":
            return "relu"
        if a == "LeakyReLU":
            return f"leaky_relu:{self.params['slope']!r}"
        if a == "ReLUPower":
            return f"relu_power:{self.params['p']!r}"
        raise ValueError(f"activation {a} is not positively homogeneous: flatness needs one of {HOMOGENEOUS}")



def _leaves(model) -> list[tuple[str, Any]]:
    out = []
    for name, mod in model.named_modules():
        if next(iter(mod.children()), None) is None:  # a leaf
            out.append((name or type(mod).__name__, mod))
    return out


def unpack(model) -> TwoLayer:
    """Read ``Linear → activation → Linear`` from ``model`` (see the module docstring); ValueError else."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency
        raise ValueError("reading a module needs torch") from exc
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"expected a torch.nn.Module, got {type(model).__name__}")
    leaves, notes = [], []
    for name, mod in _leaves(model):
        kind = type(mod).__name__
        if kind in _SKIP:
            if kind == "Dropout":
                notes.append(f"{name} (Dropout) skipped: the network is analysed in eval mode")
            continue
        leaves.append((name, kind, mod))
    shape = " → ".join(f"{n}: {k}" for n, k, _ in leaves) or "no layers"
    if len(leaves) != 3 or leaves[0][1] != "Linear" or leaves[2][1] != "Linear":
        bad = next((f"layer {n!r} ({k})" for i, (n, k, _) in enumerate(leaves)
                    if (i in (0, 2) and k != "Linear") or i > 2), f"the module ({len(leaves)} layers)")
        raise ValueError(f"{bad}: a one-hidden-layer net is {_WHAT_WORKS}; this module is {shape}")
    (n1, _, lin1), (na, act_kind, act), (n2, _, lin2) = leaves
    params: dict = {}
    if act_kind == "Softplus":
        params = {"beta": float(act.beta), "threshold": float(act.threshold)}
        notes.append(f"Softplus is analysed as the smooth log(1+e^(βt))/β; torch switches to t where βt > "
                     f"{act.threshold:g}")
    elif act_kind == "GELU":
        params = {"approximate": act.approximate}
    elif act_kind == "LeakyReLU":
        params = {"slope": float(act.negative_slope)}
    elif act_kind == "ReLUPower":
        params = {"p": float(act.p)}
    elif act_kind not in ("Sigmoid", "Tanh", "ReLU"):
        raise ValueError(f"layer {na!r} ({act_kind}) is not a supported activation; a one-hidden-layer net is "
                         f"{_WHAT_WORKS}")
    if lin2.in_features != lin1.out_features:
        raise ValueError(f"layer {n2!r}: Linear({lin2.in_features}, {lin2.out_features}) does not take the "
                         f"{lin1.out_features} hidden units of {n1!r}")
    dtypes = {str(p.dtype).replace("torch.", "") for p in (lin1.weight, lin2.weight)}
    if not dtypes <= {"float32", "float64", "float16", "bfloat16"}:
        raise ValueError(f"parameters of dtype {dtypes} are not supported (need floating point)")
    dtype = "float64" if dtypes == {"float64"} else "/".join(sorted(dtypes))
    W, V = to_numpy(lin1.weight), to_numpy(lin2.weight)
    b = None if lin1.bias is None else to_numpy(lin1.bias)
    c = None if lin2.bias is None else to_numpy(lin2.bias)
    for nm, arr in (("first-layer weight", W), ("second-layer weight", V), ("first-layer bias", b),
                    ("second-layer bias", c)):
        if arr is not None and not np.all(np.isfinite(arr)):
            raise ValueError(f"the module's {nm} contains NaN or inf")
    what = (f"the {dtype} network itself (its {dtype} values are exact float64 numbers)" if dtype != "float64"
            else "the float64 network")
    note = "; ".join([f"analysed: {what}", *notes])
    return TwoLayer(W, b, V, c, act_kind, params, dtype, note, (lin1, act, lin2))


# ------------------------------------------------------------------------------------ weights that describe themselves
FORMAT = "shallow-proofs/two-layer"


def activation_spec(net: TwoLayer) -> str:
    """The activation as ``inspect --activation`` spells it (``tanh``, ``softplus:2``, ``gelu_tanh``, ...)."""
    a, p = net.activation, net.params
    if a == "Softplus":
        return "softplus" if float(p.get("beta", 1.0)) == 1.0 else f"softplus:{float(p['beta']):g}"
    if a == "GELU":
        return "gelu_tanh" if p.get("approximate", "none") == "tanh" else "gelu"
    if a == "LeakyReLU":
        return f"leaky_relu:{float(p['slope']):g}"
    if a == "ReLUPower":
        return f"relu_power:{float(p['p']):g}"
    return a.lower()


def suite_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("shallow-proofs")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0.1.0+source"


def save_safetensors(model, path) -> dict:
    """Write a ``Linear → activation → Linear`` module's weights to ``path`` (safetensors) with a ``__metadata__``
    that describes them: format, architecture, activation (as ``inspect --activation`` spells it), dtype and the
    suite's version. Each tensor keeps the module's dtype (a float32 module writes float32). Returns the metadata;
    :func:`read_safetensors_metadata` and ``inspect`` read it back, so ``--activation`` is not needed."""
    from safetensors.torch import save_file

    net = unpack(model)   # ValueError for anything that is not a one-hidden-layer net
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    (M, N), C = net.W.shape[::-1], net.V.shape[0]
    meta = {"format": FORMAT, "architecture": f"Linear({M}, {N}) -> {net.activation} -> Linear({N}, {C})",
            "activation": activation_spec(net), "dtype": net.dtype, "suite_version": suite_version(),
            "bias": f"{net.b is not None},{net.c is not None}"}
    save_file(tensors, str(path), metadata=meta)
    return meta


def read_safetensors_metadata(path) -> dict:
    """The ``__metadata__`` of a safetensors file ({} when it has none)."""
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as f:
        return dict(f.metadata() or {})
