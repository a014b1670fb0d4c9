r"""A torch evaluator of the same closed form as :func:`numerics.ws.moments._moments` (``backend="torch"``).

The default for large pair sums (``backend="auto"`` picks it from
:data:`numerics.ws.moments.AUTO_TORCH_PAIR_FLOPS` of pair work up): below that numpy measured as fast or faster on
this project's 2-core CPU (its 256-row blocks keep the elementwise passes in cache), above it torch's fused in-place
passes win by a few per cent. Full MNIST size ((784, 256), n = 60 000: 1.8·10⁹ sample pairs, 6.5·10¹² flops,
GEMM-bound) ran in 130 s wall, 254 CPU-s, peak RSS 2.7 GB, two threads at load 1.3–1.9. The same code runs on a GPU.

It reads the *same* generated factors (``gg_factors``, ``gKg_factors``, ``KK_factors``, ``g2``, ``trK`` of
``numerics/_derived/ws.py``) and sums the same terms; only the order of the float64 operations and the
kernels that run them differ.

What it changes:

* **GEMMs with more work each.** The sample-pair loop runs over the upper triangle of ``block`` × ``block``
  blocks with a larger default block (1024): torch's (MKL's) threaded GEMMs reach their rate at that size,
  and the block × block temporaries (8 MB each) are few.
* **Fewer elementwise passes.** S = Σ_p G^p ∘ (L_p R_pᵀ) is accumulated in place (``addmm`` writes
  L₀R₀ᵀ plus the output-bias constant as an extra column of ones, ``addcmul_`` folds G ∘ (L₁R₁ᵀ));
  the far terms of gKg and KK (p ≥ 2) of both orientations are one GEMM with the factors side by side,
  [aL_I, bR_I] [bR_J, aL_J]ᵀ, multiplied by G^(p−1) in place and dotted with G; qᵀ(S∘S)q is S squared in
  place and two matrix-vector products.
* **Threaded elementwise kernels** (OpenMP) where numpy runs one core, but only for problems worth it: below
  ``SMALL_FLOPS`` of pair work the call runs on one thread (and restores the caller's count), because waking
  and joining threads costs more than the work and, on a loaded machine, a descheduled thread stalls the rest.

The p = 0 and p = 1 terms of gKg and KK and the trace need no pair loop; they are computed as in the
numpy path. The result agrees with the numpy path to rounding (``tests/test_ws_torch_backend.py``).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

__all__ = ["moments_torch"]

SMALL_FLOPS = 2e8  # ≈ 10 ms of one core's GEMM: below it, one thread (see the module docstring)


def _t(x):
    import torch

    return torch.from_numpy(np.require(x, dtype=np.float64, requirements=["C", "W"]))  # copies a read-only view


def moments_torch(P, q, r, Xt, v, *, n: int, kernels: ModuleType, block: int, bias_const: dict):
    """(tr H, tr H²) from the float64 unit tables, as ``_moments`` computes them, on torch CPU tensors."""
    import torch

    N = P[0].shape[1]
    threads = torch.get_num_threads()
    small = float(n) * n * (Xt.shape[1] + 4 * N) < SMALL_FLOPS
    if small and threads > 1:
        torch.set_num_threads(1)
    try:
        with torch.no_grad():
            return _moments_torch(P, q, r, Xt, v, n=n, kernels=kernels, block=block, bias_const=bias_const)
    finally:
        if small and threads > 1:
            torch.set_num_threads(threads)


def _moments_torch(P, q, r, Xt, v, *, n, kernels, block, bias_const):
    import torch

    P = tuple(_t(t) for t in P)
    q, r, Xt, v = _t(q), _t(r), _t(Xt), _t(v)
    gd = (Xt * Xt).sum(dim=1)
    g2 = kernels.g2(P, v, gd) + bias_const["g2"]
    trk = kernels.trK(P, v, gd) + bias_const["trK"]
    trace = float((q @ g2 + r @ trk) / n)
    acc = 0.0
    # p >= 2: left factors a∘L and right factors b∘R; a right factor shared by gKg and KK (for the named activations
    # r∘φ″) is used once, with the left factors summed, as in the numpy path: half the far GEMM's inner dimension
    far: dict[tuple, list] = {}
    for a, b, name in ((2 * q, r, "gKg"), (r, r, "KK")):
        if bias_const[name]:
            acc += float(bias_const[name] * a.sum() * b.sum())
        for p, L, R in getattr(kernels, f"{name}_factors")(P, P, v):
            aL = a[:, None] * L
            if p == 0:
                acc += float((aL.sum(0) * (b[:, None] * R).sum(0)).sum())
            elif p == 1:
                acc += float(((Xt.T @ aL) * (Xt.T @ (b[:, None] * R))).sum())
            elif (p, id(b), id(R)) in far:
                far[p, id(b), id(R)][0] += aL
            else:
                far[p, id(b), id(R)] = [aL, b[:, None] * R, R]  # R kept alive: its id stays unique
            del aL
    farL = _cat({}, [(p, f[0]) for (p, _, _), f in far.items()])
    farR = _cat({}, [(p, f[1]) for (p, _, _), f in far.items()])
    del far
    # gg = Σ_p G^p ∘ (L_p R_pᵀ) + c: the p = 0 group carries the constant as a column of ones
    pairs = kernels.gg_factors(P, P, v)
    if bias_const["gg"]:
        pairs = [*pairs, (0, torch.full((n, 1), float(bias_const["gg"]), dtype=torch.float64),
                          torch.ones(n, 1, dtype=torch.float64))]
    ggL = _cat({}, [(p, L) for p, L, _ in pairs])
    ggR = _cat({}, [(p, R) for p, _, R in pairs])
    del pairs
    acc += _pair_sum(Xt, q, ggL, ggR, farL, farR, n, block)
    return trace, acc / (n * n)


def _cat(out: dict, items: list) -> dict:
    """{p: the factors of power p side by side} (no copy for a single factor)."""
    import torch

    groups: dict[int, list] = {}
    for p, t in items:
        groups.setdefault(p, []).append(t)
    for p, ts in groups.items():
        out[p] = ts[0] if len(ts) == 1 else torch.cat(ts, dim=1)
    return out


def _pair_sum(Xt, q, ggL, ggR, farL, farR, n, block):
    import torch

    total = torch.zeros((), dtype=torch.float64)
    for I in range(0, n, block):
        sI = slice(I, min(I + block, n))
        for J in range(I, n, block):
            sJ = slice(J, min(J + block, n))
            diag = I == J
            G = Xt[sI] @ Xt[sJ].T
            S = None
            for p in sorted(ggL):
                LR = ggL[p][sI] @ ggR[p][sJ].T
                if p == 0:
                    S = LR
                    continue
                for _ in range(p - 1):
                    LR.mul_(G)
                if S is None:
                    S = LR.mul_(G)
                else:
                    S.addcmul_(LR, G)
            S.mul_(S)
            sym = q[sI] @ (S @ q[sJ])
            total += sym if diag else 2 * sym
            for p in farL:
                if diag:
                    F = farL[p][sI] @ farR[p][sI].T
                else:
                    F = torch.cat([farL[p][sI], farR[p][sI]], 1) @ torch.cat([farR[p][sJ], farL[p][sJ]], 1).T
                for _ in range(p - 1):
                    F.mul_(G)
                total += torch.dot(F.view(-1), G.reshape(-1))
    return float(total)
