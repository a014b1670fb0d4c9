r"""λ_sup inside a training loop: a differentiable torch scalar of the model's own parameters, and a monitor.

:func:`lambda_sup` reads a ``Linear(M, N) → φ → Linear(N, C)`` module (φ smooth: Sigmoid, Tanh, Softplus, GELU;
C = 1 is binary cross-entropy on one logit, C ≥ 2 softmax cross-entropy, as the suite's other module adapters) and
returns λ_sup = μ + √(D−1)σ of its mean cross-entropy Hessian on (X, y) as a float64 torch scalar built from the
module's *own* parameter tensors: ``lambda_sup(model, X, y).backward()`` fills each parameter's ``.grad`` with
∂λ_sup/∂θ (cast back to the parameter's dtype), exactly what :func:`numerics.ws.lambda_sup_grad` /
:func:`numerics.ws.softmax_lambda_sup_grad` return. Use it as a regulariser (loss + γ·λ_sup, as in the
follow-up arXiv 2606.28662) or to watch the curvature. No D×D matrix is formed: O(n²(M+N)) time (binary).

:class:`CurvatureMonitor` logs tr H, tr H², λ_sup (and, for ReLU nets, the certified Lipschitz bracket on a domain)
every ``every`` steps of a plain torch loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["lambda_sup", "CurvatureMonitor"]


def lambda_sup(model, X, y, *, block: int | None = None):
    """λ_sup of the model's mean CE Hessian on (X, y): a differentiable float64 torch scalar (see the module doc).

    Example:
        >>> import torch
        >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
        <...>
        >>> model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)).double()
        >>> X, y = torch.randn(20, 2, dtype=torch.float64), (torch.rand(20) < 0.5).double()
        >>> lam = lambda_sup(model, X, y)
        >>> lam.backward()
        >>> bool(lam > 0) and model[0].weight.grad.shape == (3, 2)
        True
    """
    import torch

    from numerics.interop import to_numpy, unpack
    from numerics.ws.activations import get_activation
    from numerics.ws.inputs import validate_net
    from numerics.ws.moments import lambda_sup_tensor
    from numerics.ws.softmax import softmax_lambda_sup_tensor, validate_softmax_net

    net = unpack(model)   # validates the shape, the activation and the parameters (NaN/inf)
    lin1, _, lin2 = net.modules
    act = get_activation(net.smooth_activation())
    f64 = torch.float64
    bias = lin1.bias is not None or lin2.bias is not None
    Wt = lin1.weight.to(f64)
    bt = (lin1.bias.to(f64) if lin1.bias is not None else torch.zeros(Wt.shape[0], dtype=f64)) if bias else None
    Xn, yn = to_numpy(X), to_numpy(y)
    C = lin2.out_features
    if C == 1:
        vt = lin2.weight[0].to(f64)
        ct = (lin2.bias[0].to(f64) if lin2.bias is not None else torch.zeros((), dtype=f64)) if bias else None
        b, c, _ = net.filled_biases()
        validate_net(net.W, b, net.V[0], float(c[0]) if bias else None, Xn, yn, bias=bias)
        return lambda_sup_tensor(Wt, bt, vt, ct, torch.as_tensor(Xn, dtype=f64), torch.as_tensor(yn, dtype=f64), act,
                                 block=block)
    Vt = lin2.weight.to(f64)
    ct = (lin2.bias.to(f64) if lin2.bias is not None else torch.zeros(C, dtype=f64)) if bias else None
    b, c, _ = net.filled_biases()
    validate_softmax_net(net.W, b, net.V, c, Xn, yn, bias=bias)
    return softmax_lambda_sup_tensor(Wt, bt, Vt, ct, torch.as_tensor(Xn, dtype=f64), yn, act, block=block)


@dataclass
class CurvatureMonitor:
    """Every ``every`` steps, record tr H, tr H², λ_sup (smooth nets), or the certified Lipschitz bracket on
    ``domain`` (ReLU nets): ``monitor(step, model)`` inside a plain torch loop; ``monitor.rows`` holds the log,
    ``monitor.plot(path)`` draws λ_sup (or the bracket) over the steps."""

    X: Any
    y: Any = None
    every: int = 10
    domain: Any = None            # a numerics.rob Ball/Sphere: the Lipschitz bracket of ReLU nets
    time_limit: float = 5.0       # per Lipschitz bracket
    rows: list = field(default_factory=list)

    def __call__(self, step: int, model) -> dict | None:
        if step % self.every:
            return None
        from numerics.interop import unpack

        net = unpack(model)
        row: dict = {"step": step}
        if net.activation in ("ReLU", "LeakyReLU"):
            from numerics.rob import lipschitz

            if self.domain is None:
                raise ValueError("a ReLU net has no Hessian curvature here: give domain= for its Lipschitz bracket")
            L = lipschitz(model, self.domain, time_limit=self.time_limit)
            row.update(lip_lower=float(L.lower), lip_upper=float(L.upper))
        else:
            from numerics.ws.modules import ce_hessian_moments_from_module, softmax_hessian_moments_from_module

            fn = ce_hessian_moments_from_module if net.V.shape[0] == 1 else softmax_hessian_moments_from_module
            m = fn(model, self.X, self.y)
            row.update(trace=float(m.trace), trace_sq=float(m.trace_sq), lambda_sup=float(m.lambda_sup))
        self.rows.append(row)
        return row

    def plot(self, path):
        from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

        fig = Figure(figsize=(5, 3.2))
        ax = fig.subplots()
        steps = [r["step"] for r in self.rows]
        if self.rows and "lambda_sup" in self.rows[0]:
            ax.plot(steps, [r["lambda_sup"] for r in self.rows], "o-", label="λ_sup (closed form)")
            ax.set_ylabel("λ_sup of the CE Hessian")
        else:
            ax.fill_between(steps, [r["lip_lower"] for r in self.rows], [r["lip_upper"] for r in self.rows],
                            alpha=0.4, label="certified Lipschitz bracket")
            ax.set_ylabel("Lipschitz constant")
        ax.set_xlabel("training step")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        return path
