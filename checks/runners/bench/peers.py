"""The libraries people use for Hessian traces and λ_max, called on the suite's ws net (issue 14).

Every peer sees the same M–N–1 net as :func:`numerics.ws.ce_hessian_moments`: a float64
``nn.Sequential(Linear(M, N), φ, Linear(N, 1))`` whose parameters, in module order (W, b, v, c), are the
SPEC §1 order θ = (vec W row-major, b, v, c), and the mean ``BCEWithLogitsLoss`` on (n, 1) float targets.
Each adapter returns plain floats plus what the peer itself reports, so the bench can set them beside
the closed form. ``tests/test_bench_peers.py`` checks each one against the closed form and the dense
Hessian at small sizes before any of their times is reported.

* **curvlinops** 3.0.1 (``curvlinops-for-pytorch``): :class:`curvlinops.HessianLinearOperator` on the full
  batch; ``hutchinson_trace``, ``hutchpp_trace``, ``xtrace`` (tr H), ``hutchinson_squared_fro``
  (‖H‖_F² = tr H²), and ``scipy.sparse.linalg.eigsh`` on ``H.to_scipy()`` for λ_max.
* **BackPACK** 1.7.1: the exact Hessian diagonal (``DiagHessian``) in one backward pass: exact tr H, and
  Σ H_ii², which with tr H² gives the exact single-probe Hutchinson variance 2(tr H² − Σ H_ii²).
* **PyHessian** 0.1 (PyPI): ``hessian.trace()`` (Hutchinson with a relative-change stop, ``maxIter=100,
  tol=1e-3``) and ``hessian.eigenvalues()`` (power iteration). Its stop divides by the running mean, not
  its absolute value: a negative trace stops after the second probe. The bench reports what it returns.

Peers are optional (``pip install .[bench]``): :func:`available` says which import, and why not.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import time
import warnings
from typing import Any

import numpy as np

PEERS = {"curvlinops": "curvlinops", "backpack": "backpack", "pyhessian": "pyhessian"}
DIST = {"curvlinops": "curvlinops-for-pytorch", "backpack": "backpack-for-pytorch", "pyhessian": "PyHessian"}


def available() -> dict[str, str | None]:
    """{peer: None if it imports, else the reason} (with the version of those that do, under ``versions``)."""
    out: dict[str, str | None] = {}
    for name, mod in PEERS.items():
        try:
            importlib.import_module(mod)
            out[name] = None
        except Exception as exc:  # an ImportError, or a peer that fails at import against this torch
            out[name] = f"{DIST[name]} not importable ({type(exc).__name__}: {exc}); `pip install .[bench]`"
    return out


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name, dist in DIST.items():
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(dist)
    return out


# ------------------------------------------------------------------------------------------------ the net
def torch_net(W, b, v, c, X, y, activation: str = "tanh"):
    """(model, loss, X, Y): the ws net as a float64 torch module, its mean BCE-with-logits loss and data."""
    import torch
    from torch import nn

    acts = {"tanh": nn.Tanh, "sigmoid": nn.Sigmoid}
    if activation not in acts:
        raise ValueError(f"peers: activation {activation!r} has no torch module here; use one of {sorted(acts)}")
    W, v, X = (np.asarray(a, dtype=np.float64) for a in (W, v, X))
    N, M = W.shape
    model = nn.Sequential(nn.Linear(M, N), acts[activation](), nn.Linear(N, 1)).double()
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(W))
        model[0].bias.copy_(torch.as_tensor(np.asarray(b, dtype=np.float64)))
        model[2].weight.copy_(torch.from_numpy(v).reshape(1, N))
        model[2].bias.fill_(float(c))
    Xt = torch.from_numpy(np.ascontiguousarray(X))
    Yt = torch.as_tensor(np.asarray(y, dtype=np.float64)).reshape(-1, 1)
    return model, nn.BCEWithLogitsLoss(reduction="mean"), Xt, Yt


def _dim(model) -> int:
    return sum(p.numel() for p in model.parameters())


# ---------------------------------------------------------------------------------------------- curvlinops
def curvlinops_operator(net, *, batch: int | None = None):
    """curvlinops' HessianLinearOperator of the net on the full data set (in batches of ``batch`` rows)."""
    from curvlinops import HessianLinearOperator

    model, loss, X, Y = torch_net(*net)
    bs = batch or X.shape[0]
    data = [(X[i : i + bs], Y[i : i + bs]) for i in range(0, X.shape[0], bs)]
    # check_deterministic=False: the data are a fixed list and the model has no dropout or batch norm, and the
    # check costs extra products that no user-facing estimate needs
    H = HessianLinearOperator(model, loss, list(model.parameters()), data, check_deterministic=False)
    return H


def curvlinops_estimate(H, method: str, matvecs: int, seed: int = 0) -> float:
    """One curvlinops estimate with ``matvecs`` Hessian products (torch's global generator seeded first)."""
    import torch
    from curvlinops import hutchinson_squared_fro, hutchinson_trace, hutchpp_trace, xtrace

    fn = {
        "hutchinson": hutchinson_trace,
        "hutchpp": hutchpp_trace,
        "xtrace": xtrace,
        "hutchinson_fro2": hutchinson_squared_fro,
    }[method]
    if method == "xtrace" and matvecs % 2:
        matvecs += 1  # xtrace needs an even count
    torch.manual_seed(seed)
    return float(fn(H, matvecs))


def curvlinops_lmax(H, *, tol: float = 1e-8, seed: int = 0) -> dict[str, Any]:
    """λ_max by ``scipy.sparse.linalg.eigsh(H.to_scipy(), k=1, which='LA')`` (ARPACK), with its product count."""
    from scipy.sparse.linalg import eigsh

    A = H.to_scipy()
    count = {"n": 0}
    inner = A.matvec

    def mv(x):
        count["n"] += 1
        return inner(x)

    from scipy.sparse.linalg import LinearOperator

    op = LinearOperator(A.shape, matvec=mv, dtype=np.float64)
    v0 = np.random.default_rng(seed).standard_normal(A.shape[0])
    lam = eigsh(op, k=1, which="LA", tol=tol, v0=v0, return_eigenvectors=False)
    return {"lmax": float(lam[0]), "matvecs": count["n"]}


# ------------------------------------------------------------------------------------------------ BackPACK
class OverBudget(RuntimeError):
    """A peer stopped after its first batch because the rest would overrun the time it was given."""

    def __init__(self, what: str, projected_s: float, allowed_s: float):
        super().__init__(f"{what}: projected {projected_s:.0f} s from its first batch > the {allowed_s:.0f} s left")
        self.projected_s, self.allowed_s = projected_s, allowed_s


def backpack_diag(net, *, batch: int | None = None, allowed_s: float | None = None) -> dict[str, float]:
    """tr H and Σ H_ii² from BackPACK's exact ``DiagHessian`` (one extended backward pass per batch).

    With ``batch`` rows at a time the mean loss is Σ_b (n_b/n)·(batch mean), so diag H = Σ_b (n_b/n)·diag H_b;
    Σ H_ii² is taken of the summed diagonal. BackPACK builds an (rows, N, N) tensor per batch, hence batches.
    With ``allowed_s``, raises :class:`OverBudget` after the first batch when all of them would take longer.
    """
    from backpack import backpack, extend
    from backpack.extensions import DiagHessian

    model, loss, X, Y = torch_net(*net)
    model, loss = extend(model), extend(loss)
    n = X.shape[0]
    bs = batch or n
    diag = [0.0 for _ in model.parameters()]
    t0 = time.perf_counter()
    for i in range(0, n, bs):
        if i == bs and allowed_s is not None:
            projected = (time.perf_counter() - t0) * math.ceil(n / bs)
            if projected > allowed_s:
                raise OverBudget("BackPACK DiagHessian", projected, allowed_s)
        out = loss(model(X[i : i + bs]), Y[i : i + bs])
        with warnings.catch_warnings(), backpack(DiagHessian()):
            # torch warns that its full backward hooks fire with no input requiring grad: BackPACK's own design
            warnings.filterwarnings("ignore", message="Full backward hook", category=UserWarning)
            out.backward()
        w = min(bs, n - i) / n
        diag = [d + w * p.diag_h.detach() for d, p in zip(diag, model.parameters(), strict=True)]
        model.zero_grad()
    return {"trace": float(sum(d.sum() for d in diag)), "diag_sq": float(sum((d * d).sum() for d in diag))}


# ----------------------------------------------------------------------------------------------- PyHessian
@contextlib.contextmanager
def _float64_default():
    """PyHessian draws its power-iteration start with ``torch.randn(p.size())``: the default dtype must be
    float64 for a float64 model (a user of a float64 model sets it too)."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def pyhessian_run(net, *, what: str, seed: int = 0, max_iter: int = 100, tol: float = 1e-3) -> dict[str, Any]:
    """PyHessian's ``trace()`` (``what='trace'``) or top ``eigenvalues()`` (``what='lmax'``) with its defaults."""
    import torch
    from pyhessian import hessian

    model, loss, X, Y = torch_net(*net)
    torch.manual_seed(seed)
    with _float64_default(), warnings.catch_warnings():
        # PyHessian calls backward(create_graph=True); torch warns about the reference cycle that makes
        warnings.filterwarnings("ignore", message="Using backward.. with create_graph=True", category=UserWarning)
        h = hessian(model, loss, data=(X, Y), cuda=False)
        if what == "trace":
            vals = h.trace(maxIter=max_iter, tol=tol)
            return {"trace": float(np.mean(vals)), "probes": len(vals), "samples": [float(s) for s in vals]}
        ev, _ = h.eigenvalues(maxIter=max_iter, tol=tol, top_n=1)
        return {"lmax": float(ev[0])}


def pyhessian_stop_index(samples: list[float], tol: float = 1e-3) -> int:
    """The probe count at which PyHessian 0.1's rule stops, replayed on a sequence of per-probe values.

    The rule (``pyhessian/hessian.py``): stop after probe k when |mean_k − mean_{k−1}| / (mean_{k−1} + 1e-6)
    < tol, with mean_0 = 0. A negative running mean makes the left side negative, so it stops at once.
    """
    prev = 0.0
    for k in range(1, len(samples) + 1):
        m = float(np.mean(samples[:k]))
        if abs(m - prev) / (prev + 1e-6) < tol:
            return k
        prev = m
    return len(samples)


# ------------------------------------------------------------------------------------------- small helpers
def probes_for_rel_se(trace: float, trace_sq: float, diag_sq: float, rel: float) -> dict[str, float]:
    """Rademacher Hutchinson: the exact single-probe variance 2(tr H² − Σ H_ii²) (Avron & Toledo 2011) and the
    probe count k = ⌈var / (rel·|tr H|)²⌉ whose standard error is ``rel``·|tr H|."""
    var = max(2.0 * (trace_sq - diag_sq), 0.0)
    return {"var": var, "sd": math.sqrt(var), "probes": max(1, math.ceil(var / (rel * abs(trace)) ** 2))}


def timed(fn):
    """(wall seconds, CPU seconds of this process, fn())."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out
