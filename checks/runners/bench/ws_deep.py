"""ws.deep in the bench (issue 28): the deep-MLP closed form against the dense Hessian and BackPACK.

* ``D ≈ 2000``: a 2-hidden-layer tanh net, one logit (BCE): tr H and tr H² by the sample-pair sums
  (:func:`numerics.ws.deep.deep_hessian_moments`) and tr H alone (:func:`~numerics.ws.deep.deep_hessian_trace`),
  against ``torch.func.hessian`` (the dense D × D matrix: its time and memory) and BackPACK's exact ``DiagHessian``
  (tr H), in interleaved pairs (:func:`checks.runners.bench.timing.paired`); values compared with the dense Hessian.
* ``mnist_depth3``: 784–256–256–256–10 tanh, softmax CE (D = 335 114): tr H alone at n samples against BackPACK's
  ``DiagHessian`` on the same samples, and tr H² by the pair sums on a few samples (its stated cost O(L² N³) per
  pair, r = C + 2ΣN_l = 1546 rows per sample: the Gram block of one pair is r² = 2.4·10⁶ numbers).
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Any

import numpy as np

from checks.runners.bench.core import Bench
from checks.runners.bench.timing import paired


def _net(rng, widths, n, C):
    layers = [(rng.standard_normal((widths[k + 1], widths[k])) / math.sqrt(widths[k]),
               0.1 * rng.standard_normal(widths[k + 1])) for k in range(len(widths) - 1)]
    X = rng.standard_normal((n, widths[0]))
    y = rng.integers(0, 2 if C == 1 else C, n)
    return layers, X, y


def _module(layers):
    import torch
    from torch import nn

    mods = []
    for k, (W, b) in enumerate(layers):
        lin = nn.Linear(W.shape[1], W.shape[0]).double()
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(W))
            lin.bias.copy_(torch.from_numpy(b))
        mods += [lin] if k == len(layers) - 1 else [lin, nn.Tanh()]
    return nn.Sequential(*mods)


def backpack_trace(layers, X, y, batch: int = 256) -> float:
    """tr H from BackPACK's exact DiagHessian of the mean loss of a tanh MLP (any depth, one hidden layer included;
    batches weighted by their share of n)."""
    import torch
    from backpack import backpack, extend
    from backpack.extensions import DiagHessian

    C = layers[-1][0].shape[0]
    model = extend(_module(layers))
    loss = extend(torch.nn.BCEWithLogitsLoss() if C == 1 else torch.nn.CrossEntropyLoss())
    Xt = torch.from_numpy(np.ascontiguousarray(X))
    Yt = torch.as_tensor(y, dtype=torch.float64).reshape(-1, 1) if C == 1 else torch.as_tensor(y, dtype=torch.long)
    n, tr = X.shape[0], 0.0
    for i in range(0, n, batch):
        out = loss(model(Xt[i:i + batch]), Yt[i:i + batch])
        with warnings.catch_warnings(), backpack(DiagHessian()):
            warnings.filterwarnings("ignore", message="Full backward hook", category=UserWarning)
            out.backward()
        tr += min(batch, n - i) / n * float(sum(p.diag_h.sum() for p in model.parameters()))
        model.zero_grad()
    return tr


def deep_section(bench: Bench):
    from numerics.ws.deep import deep_hessian_moments, deep_hessian_trace
    from numerics.ws.reference_deep import deep_hessian_torch

    rng = np.random.default_rng(bench.seed)
    q = bench.quick
    out: dict[str, Any] = {}
    # ---- D ≈ 2000
    widths, n = ((8, 16, 16, 1), 100) if q else ((24, 32, 32, 1), 400)
    layers, X, y = _net(rng, widths, n, 1)
    closed = lambda: deep_hessian_moments(layers, X, y, "tanh")          # noqa: E731
    trace_only = lambda: deep_hessian_trace(layers, X, y, "tanh")        # noqa: E731
    dense = lambda: deep_hessian_torch(layers, X, y, "tanh")             # noqa: E731
    others = {"dense torch.func.hessian": dense, "tr H alone (closed form)": trace_only}
    try:
        import backpack  # noqa: F401

        others["BackPACK DiagHessian (tr H)"] = lambda: backpack_trace(layers, X, y)
    except ImportError:
        out["missing"] = "backpack-for-pytorch (the bench extra)"
    summ, outs = paired(closed, others, rounds=2 if q else 3, deadline=time.perf_counter() + (60 if q else 240))
    m, H = outs["base"], outs["dense torch.func.hessian"]
    tr_d, tr2_d = float(np.trace(H)), float(np.sum(H * H))
    row = {"widths": list(widths), "n": n, "D": m.dim, "trace": m.trace, "trace_sq": m.trace_sq,
           "rel_err_trace": abs(m.trace / tr_d - 1), "rel_err_trace_sq": abs(m.trace_sq / tr2_d - 1),
           "dense_bytes": H.nbytes, "pairs": m.pairs, "block": m.block, "vs": summ}
    if "BackPACK DiagHessian (tr H)" in outs:
        row["backpack_rel_err_trace"] = abs(outs["BackPACK DiagHessian (tr H)"] / m.trace - 1)
    row["trace_only_rel_err"] = abs(outs["tr H alone (closed form)"].trace / tr_d - 1)
    out["d2000"] = row
    bench.log(f"ws_deep D = {m.dim}: closed {summ['dense torch.func.hessian']['base_seconds_median']:.2f} s, "
              f"dense {summ['dense torch.func.hessian']['seconds_median']:.2f} s")
    # ---- a depth-3 MNIST-size net: tr H alone against BackPACK, tr H² on a few samples
    widths = (784, 64, 64, 64, 10) if q else (784, 256, 256, 256, 10)
    n_tr, n_pairs = (200, 4) if q else (2000, 8)
    layers, X, y = _net(rng, widths, n_tr, 10)
    others = {}
    if "missing" not in out:
        others["BackPACK DiagHessian (tr H)"] = lambda: backpack_trace(layers, X, y)
    t0 = time.perf_counter()
    if others:
        summ2, outs2 = paired(lambda: deep_hessian_trace(layers, X, y, "tanh"), others, rounds=2 if q else 3,
                              deadline=time.perf_counter() + (60 if q else 180))
        tr = outs2["base"].trace
    else:
        summ2, tr = {}, deep_hessian_trace(layers, X, y, "tanh").trace
    row = {"widths": list(widths), "n": n_tr, "D": outs2["base"].dim if others else None, "trace": tr, "vs": summ2,
           "trace_seconds": time.perf_counter() - t0}
    if others:
        row["backpack_rel_err_trace"] = abs(outs2["BackPACK DiagHessian (tr H)"] / tr - 1)
    t1 = time.perf_counter()
    m2 = deep_hessian_moments(layers, X[:n_pairs], y[:n_pairs], "tanh")
    row.update({"n_pairs_samples": n_pairs, "pairs": m2.pairs, "trace_sq": m2.trace_sq,
                "pairs_seconds": time.perf_counter() - t1, "block": m2.block,
                "seconds_per_pair": (time.perf_counter() - t1) / m2.pairs})
    out["mnist_depth3"] = row
    bench.data["ws_deep"] = out


def report(data: dict[str, Any], targets) -> list[str]:
    from checks.runners.bench.timing import ratio_text

    sec = data.get("ws_deep")
    if not sec:
        return []
    r = sec["d2000"]
    md = ["", f"## ws.deep: MLPs with L ≥ 2 hidden layers (widths {'–'.join(map(str, r['widths']))}, D = {r['D']}, "
          f"n = {r['n']})", "",
          f"Exact tr H = {r['trace']:.10g} (rel. err vs the dense Hessian {r['rel_err_trace']:.1e}), tr H² = "
          f"{r['trace_sq']:.10g} ({r['rel_err_trace_sq']:.1e}); {r['pairs']} sample pairs in blocks of {r['block']}; "
          f"the dense Hessian holds {r['dense_bytes'] / 2 ** 20:.1f} MiB. Ratio = other / closed form (tr H and "
          "tr H²), median of interleaved pairs (min–max):", "",
          "| other | ratio other/closed |", "|---|---|"]
    md += [f"| {k} | {ratio_text(s)} |" for k, s in r["vs"].items()]
    if "backpack_rel_err_trace" in r:
        md.append(f"\nBackPACK's tr H agrees to {r['backpack_rel_err_trace']:.1e}; tr H alone (closed form) to "
                  f"{r['trace_only_rel_err']:.1e}.")
    m = sec["mnist_depth3"]
    md += ["", f"Depth 3, MNIST size ({'–'.join(map(str, m['widths']))}, softmax, D = {m['D']}): tr H alone at "
           f"n = {m['n']} = {m['trace']:.10g}"
           + (f" (BackPACK agrees to {m['backpack_rel_err_trace']:.1e}; ratio BackPACK/closed "
              f"{ratio_text(next(iter(m['vs'].values())))})" if m.get("vs") else "")
           + f". tr H² by the pair sums on {m['n_pairs_samples']} samples: {m['pairs']} pairs, "
           f"{m['seconds_per_pair']:.2f} s per pair (O(L² N³) per pair plus the r² Gram block: the stated cost; "
           "tr H² of a deep net at full MNIST is out of reach this way)."]
    if sec.get("missing"):
        md.append(f"\nNot installed: {sec['missing']}.")
    return md
