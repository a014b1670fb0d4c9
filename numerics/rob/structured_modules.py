r"""The structured nets of rob.structured (SPEC §3) as PyTorch modules, and back to the suite's exact nets.

Each module computes x ↦ head(ReLU(first(x))) + skip(x) in float64 and has ``net()``, the net it computes as the
suite's exact object: a scalar tuple (W, b, a, v, c) for one output, a :class:`numerics.rob.structured.VectorNet`
for K ≥ 2 outputs. Every entry of ``net()`` is a float64 number that the module itself holds or computes, so
``net()`` is the module's function exactly (not a re-derivation of it):

* :class:`Conv1dReLU` — one filter h of width s, stride 1, no padding, one shared bias (``nn.Conv1d(1, 1, s)``):
  unit j is ReLU(h·x_{j..j+s−1} + β), m = d − s + 1 (W's rows are copies of h: :func:`structured.conv1d`);
* :class:`TiedReLU` — G weight vectors, group g repeated ``counts[g]`` times with its own biases;
* :class:`LowRankReLU` — W = UVᵀ with U (m×r), V (d×r); W is the float64 product as torch forms it in
  :meth:`LowRankReLU.weights`, which ``forward`` also uses, so the net analysed is the one evaluated;
* any module with K ≥ 1 outputs: :func:`net_from_module` reads ``Linear(d, m) → ReLU → Linear(m, K)`` (the
  suite's interop reader) and the structured modules above.

``weights()`` returns (W, b) as differentiable tensors (for penalties such as the path norm in training).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from numerics.rob.structured import VectorNet, conv1d, tied

__all__ = ["Conv1dReLU", "TiedReLU", "LowRankReLU", "net_from_module"]

F64 = torch.float64


class _Structured(nn.Module):
    """Shared head: Linear(m, K) on the hidden units, plus an optional bias-free skip Linear(d, K)."""

    def _heads(self, d: int, m: int, K: int, skip: bool):
        if K < 1:
            raise ValueError(f"K = {K} outputs: need at least one")
        self.d, self.m, self.K = d, m, K
        self.head = nn.Linear(m, K, dtype=F64)
        self.skip = nn.Linear(d, K, bias=False, dtype=F64) if skip else None

    def weights(self):  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def forward(self, x):
        if x.shape[-1] != self.d:
            raise ValueError(f"input has {x.shape[-1]} features; this net takes d = {self.d}")
        W, b = self.weights()
        h = torch.relu(x @ W.T + b)
        out = self.head(h)
        if self.skip is not None:
            out = out + self.skip(x)
        return out

    def _outer(self):
        A = self.head.weight.detach().cpu().numpy().astype(np.float64)
        c = self.head.bias.detach().cpu().numpy().astype(np.float64)
        V = (self.skip.weight.detach().cpu().numpy().astype(np.float64) if self.skip is not None
             else np.zeros((self.K, self.d)))
        return A, V, c

    def net(self):
        """The module's function as the suite's exact net: (W, b, a, v, c) for K = 1, a VectorNet for K ≥ 2."""
        with torch.no_grad():
            W, b = (t.detach().cpu().numpy().astype(np.float64) for t in self.weights())
        A, V, c = self._outer()
        return _pack(W, b, A, V, c)


def _pack(W, b, A, V, c):
    for name, x in (("W", W), ("b", b), ("A", A), ("V", V), ("c", c)):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"the module's {name} has NaN or infinite entries")
    if A.shape[0] == 1:
        return W, b, A[0].copy(), V[0].copy(), float(c[0])
    return VectorNet(W, b, A, V, c)


class Conv1dReLU(_Structured):
    """f(x) = head(ReLU(conv(x))) + skip(x), conv = ``nn.Conv1d(1, 1, s)`` (stride 1, no padding) on R^d."""

    def __init__(self, d: int, s: int, K: int = 1, skip: bool = True):
        super().__init__()
        if not 1 <= s <= d:
            raise ValueError(f"Conv1dReLU: the filter width s = {s} must be between 1 and d = {d}")
        self.s = s
        self.conv = nn.Conv1d(1, 1, s, dtype=F64)
        self._heads(d, d - s + 1, K, skip)

    def weights(self):
        h = self.conv.weight.reshape(self.s)
        idx = torch.arange(self.m)[:, None] + torch.arange(self.s)[None, :]
        W = torch.zeros(self.m, self.d, dtype=F64).scatter(1, idx, h.expand(self.m, self.s))
        return W, self.conv.bias.expand(self.m)

    def forward(self, x):
        if x.shape[-1] != self.d:
            raise ValueError(f"input has {x.shape[-1]} features; this net takes d = {self.d}")
        h = torch.relu(self.conv(x.reshape(-1, 1, self.d))).reshape(*x.shape[:-1], self.m)
        out = self.head(h)
        return out + self.skip(x) if self.skip is not None else out

    def net(self):
        h = self.conv.weight.detach().cpu().numpy().reshape(self.s).astype(np.float64)
        beta = float(self.conv.bias.detach().cpu().numpy()[0])
        W, b, _, _, _ = conv1d(h, beta, np.zeros(self.m), self.d)
        A, V, c = self._outer()
        return _pack(W, b, A, V, c)


class TiedReLU(_Structured):
    """G weight vectors; group g has ``counts[g]`` units sharing its vector, each with its own bias."""

    def __init__(self, d: int, counts, K: int = 1, skip: bool = True):
        super().__init__()
        counts = [int(k) for k in counts]
        if not counts or min(counts) < 1:
            raise ValueError(f"TiedReLU: every group needs at least one unit; got counts {counts}")
        self.counts = counts
        self.Wg = nn.Parameter(torch.randn(len(counts), d, dtype=F64) / d ** 0.5)
        self.bias = nn.Parameter(0.1 * torch.randn(sum(counts), dtype=F64))
        self._heads(d, sum(counts), K, skip)

    def weights(self):
        return torch.repeat_interleave(self.Wg, torch.tensor(self.counts), dim=0), self.bias

    def net(self):
        Wg = self.Wg.detach().cpu().numpy().astype(np.float64)
        bb = self.bias.detach().cpu().numpy().astype(np.float64)
        cuts = np.cumsum([0, *self.counts])
        W, b, _, _, _ = tied(Wg, [bb[cuts[g]:cuts[g + 1]] for g in range(len(self.counts))], np.zeros(self.m))
        A, V, c = self._outer()
        return _pack(W, b, A, V, c)


class LowRankReLU(_Structured):
    """W = U Vᵀ, U (m×r), V (d×r): the float64 product as :meth:`weights` forms it, in forward and in net()."""

    def __init__(self, d: int, m: int, r: int, K: int = 1, skip: bool = True):
        super().__init__()
        if not 1 <= r <= min(d, m):
            raise ValueError(f"LowRankReLU: rank r = {r} must be between 1 and min(d, m) = {min(d, m)}")
        self.r = r
        self.U = nn.Parameter(torch.randn(m, r, dtype=F64) / r ** 0.5)
        self.V = nn.Parameter(torch.randn(d, r, dtype=F64) / d ** 0.5)
        self.bias = nn.Parameter(0.1 * torch.randn(m, dtype=F64))
        self._heads(d, m, K, skip)

    def weights(self):
        return self.U @ self.V.T, self.bias


def net_from_module(model):
    """The exact net of a structured module above, or of ``Linear(d, m) → ReLU → Linear(m, K)`` (any K ≥ 1):
    (W, b, a, v, c) for one output, a :class:`VectorNet` for K ≥ 2."""
    if isinstance(model, _Structured):
        return model.net()
    from numerics.interop import unpack

    two = unpack(model)
    if two.activation != "ReLU":
        raise ValueError(f"net_from_module reads ReLU nets (rob.structured); this module's activation is "
                         f"{two.activation}")
    m, d = two.W.shape
    K = two.V.shape[0]
    b = two.b if two.b is not None else np.zeros(m)
    c = two.c if two.c is not None else np.zeros(K)
    return _pack(two.W.astype(np.float64), b.astype(np.float64), two.V.astype(np.float64), np.zeros((K, d)),
                 c.astype(np.float64))
