"""``shallow-proofs inspect MODEL --data DATA``: every paper's quantities for your own two-layer network.

MODEL is a ``.safetensors`` file, a ``.pt`` state dict (or, with ``--trust-pickle``, a pickled
``nn.Module``: unpickling runs arbitrary code), or an ``.npz``. A safetensors file written by
:func:`numerics.interop.save_safetensors` names its activation in its metadata; other weight files carry none, so they
need ``--activation`` (``sigmoid``, ``tanh``, ``softplus[:beta]``, ``gelu``, ``gelu_tanh``, ``relu``,
``leaky_relu:slope``, ``relu_power:p``). Their 2-d weights are the layers (two, or more for ws_deep), in key order
(``0.weight``/``2.weight`` of an ``nn.Sequential``, or ``W``/``V`` in an ``.npz``), each with its
``.bias`` if present. DATA is an ``.npz`` or ``.pt`` with ``X`` and ``y``, or a ``.csv`` whose last column is y.

Sections (each applies where the network allows it):

* **ws** (smooth activation, one logit): the exact tr H and tr H² of the mean BCE Hessian, μ, σ, λ_sup and
  the four Wolkowicz–Styan bounds, λ_max itself (Lanczos ``eigsh`` on Hessian-vector products, with its
  residual), and ‖∇λ_sup‖;
* **ws_softmax** (smooth activation, a ``Linear(N, C)`` head with C >= 2): the same for the mean softmax
  cross-entropy (labels 0..C−1; the number of outputs says which loss), with ‖∇λ_sup‖ too;
* **flat** (homogeneous activation, no biases): the Hessian trace of the squared loss, Υ (the trace
  minimised over rescalings), the optimal rescaling, and the flattest outer weights for the model's own
  directions with their dual certificate;
* **ws_deep** (an ``nn.Sequential`` or weights file with two or more hidden layers, one smooth activation): exact
  tr H and tr H² of the mean BCE (one logit) or softmax CE (C ≥ 2) Hessian by sample-pair sums
  (:mod:`numerics.ws.deep`), the WS bounds and λ_max by Lanczos;
* **rob** (ReLU or LeakyReLU): the canonical form's number of distinct kinks k(f) against the width m, the
  certified Lipschitz bracket on ``--domain sphere|ball --radius R``, and the rigidity ratio of every kink.

A file that is missing, truncated, has the wrong keys or the wrong shapes is one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ACTIVATIONS = ("sigmoid", "tanh", "softplus[:beta]", "gelu", "gelu_tanh", "relu", "leaky_relu:slope",
               "relu_power:p")


class InputError(ValueError):
    """A bad file or option: one line, exit 2."""


def activation_module(spec: str):
    import torch.nn as nn

    from numerics.interop import ReLUPower

    name, _, arg = spec.strip().lower().partition(":")
    try:
        val = float(arg) if arg else None
    except ValueError:
        raise InputError(f"--activation {spec!r}: {arg!r} is not a number") from None
    table = {"sigmoid": lambda: nn.Sigmoid(), "tanh": lambda: nn.Tanh(), "gelu": lambda: nn.GELU(),
             "gelu_tanh": lambda: nn.GELU(approximate="tanh"), "relu": lambda: nn.ReLU(),
             "softplus": lambda: nn.Softplus(beta=val if val is not None else 1.0),
             "leaky_relu": lambda: nn.LeakyReLU(val if val is not None else 0.01),
             "relu_power": lambda: ReLUPower(val if val is not None else 2.0)}
    if name not in table:
        raise InputError(f"--activation {spec!r} is not supported; use one of {', '.join(ACTIVATIONS)}")
    return table[name]()


def _natural(key: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", key)]


def module_from_arrays(arrays: dict[str, np.ndarray], activation: str | None, source: str):
    """An ``nn.Sequential(Linear, act, Linear)`` from a dict of weight arrays: float32 when every array is float32 or
    float16 (so that ``inspect`` reports the file's dtype), else float64."""
    import torch
    import torch.nn as nn

    if activation is None:
        raise InputError(f"{source}: a weights file carries no activation: pass --activation "
                         f"(one of {', '.join(ACTIVATIONS)})")
    if {"W", "V"} <= set(arrays) or {"W", "v"} <= set(arrays):
        layers = [("W", "b"), ("V" if "V" in arrays else "v", "c")]
    else:
        weights = sorted((k for k, a in arrays.items() if np.ndim(a) == 2), key=_natural)
        if len(weights) < 2:
            raise InputError(f"{source}: expected two or more 2-d weight arrays (one per linear layer), found "
                             f"{len(weights)}: {', '.join(weights) or 'none'} (keys: {', '.join(arrays)})")
        layers = [(w, w[: -len("weight")] + "bias" if w.endswith("weight") else None) for w in weights]
    used = [k for wk, bk in layers for k in (wk, bk) if k is not None and k in arrays]
    src = {np.asarray(arrays[k]).dtype for k in used}
    # a float32 (or float16) file stays that dtype: the module holds exactly the file's numbers, and
    # numerics.interop converts them to float64 exactly (every float32 is a float64) and says so in its note
    low = src <= {np.dtype(np.float32), np.dtype(np.float16)}
    mats = []
    for wk, bk in layers:
        w = np.asarray(arrays[wk], dtype=np.float64)
        w = w.reshape(1, -1) if w.ndim == 1 else w
        b = None if bk is None or bk not in arrays else np.asarray(arrays[bk], dtype=np.float64).reshape(-1)
        if b is not None and b.shape != (w.shape[0],):
            raise InputError(f"{source}: bias {bk!r} has shape {b.shape}, weight {wk!r} has {w.shape[0]} rows")
        mats.append((w, b))
    for k in range(1, len(mats)):
        (W, _), (V, _) = mats[k - 1], mats[k]
        if V.shape[1] != W.shape[0]:
            raise InputError(f"{source}: layer {k + 1} {V.shape} does not take the {W.shape[0]} units of layer {k} "
                             f"{W.shape}")
    tdt = torch.float32 if low else torch.float64
    mods = []
    for k, (W, b) in enumerate(mats):
        lin = nn.Linear(W.shape[1], W.shape[0], bias=b is not None).to(tdt)
        with torch.no_grad():   # float16/float32 → float32 and float64 → float64: exact either way
            lin.weight.copy_(torch.from_numpy(W).to(tdt))
            if b is not None:
                lin.bias.copy_(torch.from_numpy(b).to(tdt))
        mods += [lin] if k == len(mats) - 1 else [lin, activation_module(activation)]
    return nn.Sequential(*mods)


def load_model(path: Path, activation: str | None, trust_pickle: bool):
    import torch

    if not path.is_file():
        raise InputError(f"model {path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".safetensors":
            from safetensors.numpy import load_file

            from numerics.interop import read_safetensors_metadata

            meta = read_safetensors_metadata(path)   # a file written by save_safetensors names its activation
            saved = meta.get("activation")
            if activation is not None and saved is not None and activation.strip().lower() != saved:
                raise InputError(f"model {path}: --activation {activation!r} contradicts the file's own "
                                 f"activation {saved!r} (its __metadata__); drop --activation or fix the file")
            return module_from_arrays(dict(load_file(str(path))), activation or saved, str(path))
        if suffix == ".npz":
            with np.load(path) as z:
                return module_from_arrays({k: z[k] for k in z.files}, activation, str(path))
        if suffix in (".pt", ".pth"):
            try:
                obj = torch.load(path, map_location="cpu", weights_only=True)
            except Exception as exc:
                if "weights_only" in str(exc) or "Unsupported global" in str(exc):
                    if not trust_pickle:
                        raise InputError(f"model {path}: a pickled module; loading it runs arbitrary code: pass "
                                         "--trust-pickle if you trust the file") from None
                    obj = torch.load(path, map_location="cpu", weights_only=False)
                else:
                    raise
            if isinstance(obj, torch.nn.Module):
                return obj
            if isinstance(obj, dict):
                return module_from_arrays({k: v.detach().cpu().numpy() for k, v in obj.items()
                                           if hasattr(v, "detach")}, activation, str(path))
            raise InputError(f"model {path}: holds a {type(obj).__name__}, not a state dict or a module")
    except InputError:
        raise
    except Exception as exc:  # truncated or corrupt files: safetensors, zip, pickle errors
        raise InputError(f"model {path}: cannot be read ({type(exc).__name__}: {str(exc)[:160]})") from None
    raise InputError(f"model {path}: unknown format {suffix!r}; use .safetensors, .pt or .npz")


def load_data(path: Path) -> tuple[np.ndarray, np.ndarray]:
    if not path.is_file():
        raise InputError(f"data {path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            arr = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=_header_rows(path))
            X, y = arr[:, :-1], arr[:, -1]
        elif suffix == ".npz":
            with np.load(path) as z:
                missing = [k for k in ("X", "y") if k not in z.files]
                if missing:
                    raise InputError(f"data {path}: needs arrays X and y, has {', '.join(z.files)}")
                X, y = z["X"], z["y"]
        elif suffix in (".pt", ".pth"):
            import torch

            d = torch.load(path, map_location="cpu", weights_only=True)
            if not isinstance(d, dict) or not {"X", "y"} <= set(d):
                raise InputError(f"data {path}: needs a dict with X and y")
            X, y = d["X"].detach().numpy(), d["y"].detach().numpy()
        else:
            raise InputError(f"data {path}: unknown format {suffix!r}; use .npz, .pt or .csv")
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"data {path}: cannot be read ({type(exc).__name__}: {str(exc)[:160]})") from None
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or len(X) != len(y) or len(y) == 0:
        raise InputError(f"data {path}: X must be n×d and y of length n, got X {X.shape}, y {y.shape}")
    return X, y


def _header_rows(path: Path) -> int:
    first = path.read_text().splitlines()[:1]
    try:
        [float(t) for t in first[0].split(",")] if first else None
        return 0
    except ValueError:
        return 1


# ------------------------------------------------------------------------------------------------ sections
def ws_section(model, X, y, log, tiles=None) -> dict[str, Any]:
    from scipy.sparse.linalg import LinearOperator, eigsh

    from numerics.interop import unpack
    from numerics.ws import lambda_sup_grad, ws_bounds
    from numerics.ws.modules import ce_hessian_moments_from_module
    from numerics.ws.reference import hvp_operator

    net = unpack(model)
    if not set(np.unique(y)) <= {0.0, 1.0}:
        raise InputError("ws: binary cross-entropy needs labels y in {0, 1}")
    m = ce_hessian_moments_from_module(model, X, y, tiles=tiles)
    B = ws_bounds(m.trace, m.trace_sq, m.dim)
    bias = net.b is not None or net.c is not None
    W, b = net.W, (net.b if net.b is not None else np.zeros(len(net.W))) if bias else None
    c = (float(net.c[0]) if net.c is not None else 0.0) if bias else None
    act = net.smooth_activation()
    log("ws: λ_max by Lanczos on Hessian-vector products")
    hvp, D = hvp_operator(W, b, net.V[0], c, X, y, act, bias=bias)
    import torch

    def mv(x):
        return hvp(torch.as_tensor(np.asarray(x, float).reshape(D, -1))).numpy().reshape(np.shape(x))

    op = LinearOperator((D, D), matvec=mv, matmat=mv, dtype=np.float64)
    if D >= 3:
        vals, vecs = eigsh(op, k=1, which="LA", tol=1e-12)
        lmax, vec = float(vals[-1]), vecs[:, -1]
    else:
        Hd = np.column_stack([mv(e) for e in np.eye(D)])
        ev, evec = np.linalg.eigh((Hd + Hd.T) / 2)
        lmax, vec = float(ev[-1]), evec[:, -1]
    resid = float(np.linalg.norm(mv(vec) - lmax * vec))
    try:
        g = lambda_sup_grad(W, b, net.V[0], c, X, y, act, bias=bias)
        gnorm = float(np.linalg.norm(g.flat()))
    except ValueError as exc:
        gnorm = f"undefined ({exc})"
    return {"dim": m.dim, "trace": m.trace, "trace_sq": m.trace_sq, "mu": B.mean, "sigma": B.std,
            "lambda_sup": B.lmax_upper, "lmax_lower_bound": B.lmax_lower, "lmin_lower_bound": B.lmin_lower,
            "lmin_upper_bound": B.lmin_upper, "lambda_max": lmax, "lambda_max_residual": resid,
            "grad_lambda_sup_norm": gnorm, "note": net.note}


def _lanczos_lmax(hvp, D: int):
    """λ_max of the Hessian from HVPs (``eigsh``; a dense solve for D < 3) and its residual ‖Hv − λv‖."""
    import torch
    from scipy.sparse.linalg import LinearOperator, eigsh

    def mv(x):
        return hvp(torch.as_tensor(np.asarray(x, float).reshape(D, -1))).numpy().reshape(np.shape(x))

    if D >= 3:
        op = LinearOperator((D, D), matvec=mv, matmat=mv, dtype=np.float64)
        vals, vecs = eigsh(op, k=1, which="LA", tol=1e-12)
        lmax, vec = float(vals[-1]), vecs[:, -1]
    else:
        Hd = np.column_stack([mv(e) for e in np.eye(D)])
        ev, evec = np.linalg.eigh((Hd + Hd.T) / 2)
        lmax, vec = float(ev[-1]), evec[:, -1]
    return lmax, float(np.linalg.norm(mv(vec) - lmax * vec))


def softmax_section(model, X, y, log, tiles=None) -> dict[str, Any]:
    """ws for a Linear(N, C) head, C >= 2: softmax cross-entropy with labels 0..C−1."""
    from numerics.interop import unpack
    from numerics.ws.modules import softmax_hessian_moments_from_module
    from numerics.ws.reference_softmax import softmax_hvp_operator

    net = unpack(model)
    C = net.V.shape[0]
    if not (np.all(y == np.round(y)) and np.all((y >= 0) & (y <= C - 1))):
        raise InputError(f"ws: softmax cross-entropy with C = {C} outputs needs integer labels y in 0..{C - 1}")
    m = softmax_hessian_moments_from_module(model, X, y, tiles=tiles)
    B = m.bounds
    bias = net.b is not None or net.c is not None
    b = (net.b if net.b is not None else np.zeros(len(net.W))) if bias else None
    c = (net.c if net.c is not None else np.zeros(C)) if bias else None
    log("ws (softmax): λ_max by Lanczos on Hessian-vector products")
    hvp, D = softmax_hvp_operator(net.W, b, net.V, c, X, y, net.smooth_activation(), bias=bias)
    lmax, resid = _lanczos_lmax(hvp, D)
    try:
        from numerics.ws.softmax import softmax_lambda_sup_grad

        g = softmax_lambda_sup_grad(net.W, b, net.V, c, X, y, net.smooth_activation(), bias=bias)
        gnorm = float(np.linalg.norm(g.flat()))
    except ValueError as exc:
        gnorm = f"undefined ({exc})"
    return {"classes": C, "dim": m.dim, "trace": m.trace, "trace_sq": m.trace_sq, "mu": B.mean, "sigma": B.std,
            "lambda_sup": B.lmax_upper, "lmax_lower_bound": B.lmax_lower, "lmin_lower_bound": B.lmin_lower,
            "lmin_upper_bound": B.lmin_upper, "lambda_max": lmax, "lambda_max_residual": resid,
            "grad_lambda_sup_norm": gnorm, "note": net.note}


def flat_section(model, X, y) -> dict[str, Any]:
    from numerics.flat import flatness_trace, flattest_outer_weights, optimal_rescaling, upsilon
    from numerics.interop import unpack

    net = unpack(model)
    if net.V.shape[0] != 1:
        raise InputError("flat: needs a Linear(N, 1) head")
    if any(a is not None and np.any(a != 0) for a in (net.b, net.c)):
        return {"skipped": "the flatness model h(x) = Σ a_j σ(θ_j·x) has no biases; this net has some"}
    act = net.homogeneous_activation()
    a, Th = net.V[0], net.W
    lam = optimal_rescaling(a, Th, X, act)
    out = {"trace": flatness_trace(a, Th, X, y, act), "upsilon": upsilon(a, Th, X, act),
           "optimal_rescaling_min": float(np.min(lam)), "optimal_rescaling_max": float(np.max(lam))}
    try:
        fl = flattest_outer_weights(Th, X, y, act)
    except ValueError as exc:  # e.g. fewer directions than samples: no interpolator exists
        out["flattest"] = f"not applicable: {exc}"
        return out
    return {**out, "flattest_upsilon": fl.value, "flattest_dual_certificate": fl.dual_value,
            "flattest_rel_gap": fl.rel_gap, "flattest_interpolation_residual": fl.interpolation_residual}


def rob_section(model, domain: str, radius: float, time_limit: float, X) -> dict[str, Any]:
    from numerics import rob
    from numerics.interop import unpack
    from numerics.rob.net import piecewise_linear_of

    net = unpack(model)
    psi = piecewise_linear_of(net)
    m, d = net.W.shape
    dom = rob.Sphere(d) if domain == "sphere" else rob.Ball(d, radius)
    if domain == "sphere" and d < 3:
        raise InputError(f"rob: the sphere needs d >= 3 for rigidity (d = {d}); use --domain ball")
    b = net.b if net.b is not None else np.zeros(m)
    c = float(net.c[0]) if net.c is not None else 0.0
    tup = (net.W, b, net.V[0], np.zeros(d), c)
    cf = rob.canonicalize(tup, dom, activation=psi)
    pts = X / np.linalg.norm(X, axis=1, keepdims=True) if domain == "sphere" else None
    rig = rob.rigidity(cf, dom, time_limit=time_limit, data_points=pts)
    L = rig.lipschitz
    w = np.asarray([float(x) for x in rig.weights])
    return {"width": m, "kinks": cf.m, "lipschitz_lower": L.lower, "lipschitz_upper": L.upper,
            "exact": L.exact, "method": L.method, "rigidity_ratio_max": rig.ratio,
            "rigidity_ratios": (w / (2 * L.upper)).tolist() if L.upper > 0 else [],
            "rigidity_holds": rig.holds}


EXPLAIN = {
    "ws": "The Hessian of the mean BCE loss: exact traces, the Wolkowicz–Styan bounds they imply, and λ_max "
          "itself for comparison (λ_max ≤ λ_sup always).",
    "ws_softmax": "The Hessian of the mean softmax cross-entropy (C ≥ 2 outputs, labels 0..C−1): exact traces, "
                  "the Wolkowicz–Styan bounds they imply, and λ_max itself for comparison (λ_max ≤ λ_sup always).",
    "flat": "The Hessian trace of the squared loss, its minimum Υ over rescalings, and the flattest "
            "interpolator with these directions (the dual certificate bounds the flatness of every one).",
    "ws_deep": "The Hessian of the mean cross-entropy of a deep MLP (ws.deep): exact traces by sample-pair sums, "
               "the Wolkowicz–Styan bounds they imply, and λ_max itself (λ_max ≤ λ_sup always).",
    "ws_trace": "tr H of the mean cross-entropy alone (--trace-only), by per-sample sums: no sample pairs, so no "
                "tr H² and no Wolkowicz–Styan bound.",
    "rob": "The canonical form's distinct kinks, a certified Lipschitz bracket, and each kink's rigidity "
           "ratio |α|(√(1−t²))/(2 Lip), which the paper bounds by 1.",
}


def _deep_layers(model):
    """(layers, activation) when ``model`` is an ``nn.Sequential`` with two or more hidden layers, else None."""
    import torch.nn as nn

    if isinstance(model, nn.Sequential) and sum(isinstance(m, nn.Linear) for m in model) >= 3:
        from numerics.ws.deep import deep_layers_from_module

        return deep_layers_from_module(model)
    return None


def deep_section(layers, act, X, y, log, tiles=None) -> dict[str, Any]:
    """ws.deep: exact tr H, tr H² of the mean CE Hessian of a deep smooth MLP, the WS bounds and λ_max (Lanczos)."""
    import torch
    from scipy.sparse.linalg import LinearOperator, eigsh

    from numerics.ws.deep import deep_hessian_moments
    from numerics.ws.reference_deep import deep_hvp_operator

    C = layers[-1][0].shape[0]
    top = 1 if C == 1 else C - 1
    if not np.all((y == np.round(y)) & (y >= 0) & (y <= top)):
        raise InputError(f"ws_deep: labels y must be integers in 0..{top} for {C} output(s)")
    t0 = time.perf_counter()
    m = deep_hessian_moments(layers, X, y, act, progress=None if tiles is not None else _pair_progress(log),
                             tiles=tiles)
    B = m.bounds
    log(f"ws_deep: tr H, tr H² over {m.pairs} sample pairs in {time.perf_counter() - t0:.1f} s; λ_max by Lanczos")
    hvp, D = deep_hvp_operator(layers, X, y, act)

    def mv(x):
        return hvp(torch.as_tensor(np.asarray(x, float).reshape(D, -1))).numpy().reshape(np.shape(x))

    op = LinearOperator((D, D), matvec=mv, matmat=mv, dtype=np.float64)
    vals, vecs = eigsh(op, k=1, which="LA", tol=1e-12)
    lmax, vec = float(vals[-1]), vecs[:, -1]
    return {"loss": m.loss, "widths": "–".join(map(str, m.widths)), "dim": m.dim, "trace": m.trace,
            "trace_sq": m.trace_sq,
            "mu": B.mean, "sigma": B.std, "lambda_sup": B.lmax_upper, "lmax_lower_bound": B.lmax_lower,
            "lambda_max": lmax, "lambda_max_residual": float(np.linalg.norm(mv(vec) - lmax * vec)),
            "pairs": m.pairs}


def _network_info(model, deep, net=None) -> dict[str, Any]:
    """The "network" block of the report: shapes, activation, parameter count, dtype, kind (``net``: the module
    already unpacked, for a one-hidden-layer model)."""
    if deep is not None:
        layers, act = deep
        widths = [layers[0][0].shape[1]] + [W.shape[0] for W, _ in layers]
        return {"M": widths[0], "N": "–".join(map(str, widths[1:-1])), "outputs": widths[-1], "activation": act,
                "params": None, "dtype": str(next(model.parameters()).dtype), "kind": "smooth (deep)",
                "note": f"{len(layers) - 1} hidden layers: ws.deep applies; flat and rob are one-hidden-layer "
                        "statements"}
    from numerics.interop import unpack

    net = unpack(model) if net is None else net
    return {"M": net.W.shape[1], "N": net.W.shape[0], "outputs": net.V.shape[0], "activation": net.activation,
            "params": net.params, "dtype": net.dtype, "kind": net.kind, "note": net.note}


def _pair_progress(log, every: float = 5.0):
    last = [time.perf_counter()]

    def show(done, total):
        now = time.perf_counter()
        if now - last[0] >= every:
            last[0] = now
            log(f"ws_deep: pair blocks {done}/{total}")

    return show


def trace_section(model, X, y, deep) -> dict[str, Any]:
    """tr H alone, by per-sample sums (no sample pairs, no D×D matrix): :func:`numerics.ws.ce_hessian_trace`
    (``diagonal=False``), :func:`numerics.ws.softmax_hessian_trace` or :func:`numerics.ws.deep.deep_hessian_trace`."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    if deep is not None:
        from numerics.ws.deep import deep_hessian_trace

        layers, act = deep
        t = deep_hessian_trace(layers, X, y, act)
        return {"dim": t.dim, "trace": float(t.trace), "method": "per-sample sums (ws.deep), no sample pairs"}
    from numerics.interop import unpack
    from numerics.ws import ce_hessian_trace, softmax_hessian_trace

    net = unpack(model)
    if net.kind != "smooth":
        raise InputError(f"--trace-only is the Hessian of a smooth net's cross-entropy (ws); this net is {net.kind}")
    b, c, bias = net.filled_biases()
    act = net.smooth_activation()
    if net.V.shape[0] == 1:
        if not set(np.unique(y)) <= {0.0, 1.0}:
            raise InputError("ws: binary cross-entropy needs labels y in {0, 1}")
        t = ce_hessian_trace(net.W, b, net.V[0], float(c[0]) if bias else None, X, y, act, bias=bias, diagonal=False)
        loss = "binary cross-entropy"
    else:
        t = softmax_hessian_trace(net.W, b, net.V, c, X, y, act, bias=bias)
        loss = f"softmax cross-entropy, C = {net.V.shape[0]}"
    return {"dim": t.dim, "trace": float(t.trace), "method": f"per-sample sums ({loss}), no sample pairs",
            "note": net.note}


def inspect(model, X, y, *, domain="sphere", radius=1.0, time_limit=30.0, log=print,
            tiles=None, trace_only: bool = False) -> dict[str, Any]:
    """Every paper's quantities for ``model`` on (X, y); ``tiles`` (a :class:`numerics.ws.pair_tiles.TileRunner`)
    runs the sample-pair sums of the ws sections (on Dask workers, with a journal). ``trace_only``: tr H of the
    cross-entropy alone (smooth nets, any depth), by per-sample sums: O(n·D) instead of the pair sums."""
    from numerics.interop import unpack

    deep = _deep_layers(model)
    if trace_only:
        t0 = time.perf_counter()
        log("ws: tr H alone, per-sample sums")
        net_info = _network_info(model, deep)
        out = {"network": net_info, "ws_trace": trace_section(model, X, y, deep)}
        out["seconds"] = time.perf_counter() - t0
        return out
    if deep is not None:
        layers, act = deep
        t0 = time.perf_counter()
        out = {"network": _network_info(model, deep)}
        out["ws_deep"] = deep_section(layers, act, np.asarray(X, float), np.asarray(y, float), log, tiles)
        out["seconds"] = time.perf_counter() - t0
        return out
    net = unpack(model)
    out: dict[str, Any] = {"network": _network_info(model, None, net)}
    t0 = time.perf_counter()
    if net.kind == "smooth" and net.V.shape[0] == 1:
        out["ws"] = ws_section(model, X, y, log, tiles)
    elif net.kind == "smooth":  # C >= 2 outputs: softmax cross-entropy
        out["ws_softmax"] = softmax_section(model, X, y, log, tiles)
    if net.kind in ("homogeneous", "piecewise-linear"):
        log("flat: trace, Υ, flattest interpolator")
        out["flat"] = flat_section(model, X, y)
    if net.kind == "piecewise-linear" and net.V.shape[0] == 1:
        log(f"rob: certified Lipschitz bracket on the {domain} (time limit {time_limit:g} s)")
        out["rob"] = rob_section(model, domain, radius, time_limit, X)
    out["seconds"] = time.perf_counter() - t0
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="shallow-proofs inspect", description=__doc__.splitlines()[0])
    p.add_argument("model", type=Path)
    p.add_argument("--data", type=Path, required=True, help=".npz/.pt with X and y, or .csv (last column y)")
    p.add_argument("--activation", default=None, help=f"for weight files: {', '.join(ACTIVATIONS)}")
    p.add_argument("--domain", choices=("sphere", "ball"), default="sphere", help="rob: the domain (default sphere)")
    p.add_argument("--radius", type=float, default=1.0, help="rob: the ball's radius")
    p.add_argument("--time-limit", type=float, default=30.0, help="rob: seconds for the Lipschitz bracket")
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    p.add_argument("--trust-pickle", action="store_true", help="allow a pickled nn.Module (.pt): runs its code")
    p.add_argument("--trace-only", action="store_true",
                   help="ws: tr H of the cross-entropy alone, by per-sample sums (no sample pairs, no λ bounds)")
    g = p.add_argument_group("sample-pair tiles of the ws sums (Dask)")
    g.add_argument("--workers", type=int, default=None, metavar="K",
                   help="start a local Dask cluster of K worker processes and run the pair tiles on it")
    g.add_argument("--scheduler", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run them on an existing Dask cluster (tcp://host:port); alone: Dask's scheduler-address")
    g.add_argument("--tiles-dir", type=Path, default=Path("reports/tiles"),
                   help="journal of finished tiles (default reports/tiles), with --workers, --scheduler or --resume")
    g.add_argument("--resume", action="store_true", help="keep the tiles a previous run finished; run the rest")
    args = p.parse_args(argv)
    say = lambda s: print(f"  … {s}", file=sys.stderr, flush=True)  # noqa: E731
    runner = None
    try:
        runner = tile_runner(args, say)
        model = load_model(args.model, args.activation, args.trust_pickle)
        X, y = load_data(args.data)
        res = inspect(model, X, y, domain=args.domain, radius=args.radius, time_limit=args.time_limit, log=say,
                      tiles=runner, trace_only=args.trace_only)
    except ValueError as exc:  # InputError and the adapters' ValueErrors name the problem
        print(f"shallow-proofs inspect: error: {exc}", file=sys.stderr)
        return 2
    finally:
        if runner is not None:
            runner.close()
    if runner is not None and runner.stats:
        res["tiles"] = runner.stats
    _table(res)
    if args.json is not None:
        from checks.evidence.outcome import jsonable

        args.json.write_text(json.dumps(jsonable(res), indent=2, sort_keys=True) + "\n")
        print(f"wrote {args.json}")
    return 0


def tile_runner(args, say):
    """The :class:`~numerics.ws.pair_tiles.TileRunner` that ``--workers``/``--scheduler``/``--resume`` ask for, or
    None (the pair sums then run in this process without a journal, as before)."""
    from numerics.cluster import check_options
    from numerics.ws.pair_tiles import ProgressLine, TileRunner

    check_options(args.workers, args.scheduler)
    if args.workers is None and args.scheduler is None and not args.resume:
        return None
    kw = dict(journal=args.tiles_dir, resume=args.resume, progress=ProgressLine(say))
    if args.workers is not None:
        return TileRunner.local(args.workers, **kw)
    if args.scheduler is not None:
        return TileRunner.connect(args.scheduler or None, **kw)
    return TileRunner(**kw)  # --resume alone: the journal, in this process


def _table(res: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    n = res["network"]
    con.print(f"{n['M']}–{n['N']}–{n['outputs']} net, {n['activation']} {n['params'] or ''}, {n['dtype']}: {n['note']}")
    for sec in ("ws", "ws_softmax", "ws_deep", "ws_trace", "flat", "rob"):
        if sec not in res:
            continue
        t = Table(title=f"{sec}: {EXPLAIN[sec]}", title_justify="left")
        t.add_column("quantity")
        t.add_column("value", justify="right")
        for k, v in res[sec].items():
            if isinstance(v, list):
                v = f"{len(v)} values, max {max(v):.4g}" if v else "none"
            t.add_row(k, f"{v:.10g}" if isinstance(v, float) else str(v))
        con.print(t)
    if "tiles" in res:
        st = res["tiles"]
        peak = max((w["peak_rss_mb"] for w in st.get("per_worker", {}).values()), default=None)
        con.print(f"pair tiles: {st['tiles']} in {st['tasks']} tasks on {st['engine']} ({st.get('tasks_resumed', 0)} "
                  f"tasks resumed), {st['wall_s']:.1f} s" + (f", peak {peak:.0f} MB per worker" if peak else ""))
