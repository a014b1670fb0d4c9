r"""Bench section "Certified Lipschitz" (json key ``lipschitz_peers``): the suite's certified bracket against the
field's tools, on the papers' own settings.

For f(x) = Σ_j a_j ReLU(w_j·x + b_j) + v·x (one hidden layer, skip connection v), per (domain, d, m, arrangement):

* **suite** — :func:`numerics.rob.lipschitz`: [lower, upper], both proved (SPEC §0 "Certified bracket");
* **LipSDP** (Fazlyab et al. 2019, LipSDP-Neuron, written here from the paper): the incremental quadratic constraint
  of a [0, 1]-slope-restricted ReLU, Δφ_j(w_j·Δx − Δφ_j) ≥ 0, and the S-procedure with T = diag(t) ≥ 0 give
  Lip ≤ √ρ whenever [[ρI, −WᵀT/2, v], [−TW/2, T, a], [vᵀ, aᵀ, 1]] ⪰ 0 (Schur complement of
  ρ‖Δx‖² − (v·Δx + a·Δφ)² − Σ_j t_j Δφ_j(w_j·Δx − Δφ_j) ≥ 0). It bounds the *global* constant, which is ≥ the ball's
  and the sphere's; it ignores the biases, so on any domain it is at least the zonotope's largest vertex
  max_σ ‖v + Σ_j σ_j a_j w_j‖. Solved by cvxpy with Clarabel (SCS above ``SCS_ABOVE`` units, where Clarabel's
  interior point is too slow); a float, not a certificate;
* **MIP** — the exact mixed-integer formulation on SCIP (``pyscipopt``): binary σ_j, x in the ball, big-M rows
  w_j·x + b_j ≤ M_j σ_j and ≥ −M_j(1 − σ_j) + margin, M_j = R‖w_j‖ + |b_j|, and the nonconvex objective
  max ‖v + Σ σ_j a_j w_j‖² (SCIP's spatial branch and bound); its primal and dual bounds after the same time as the
  suite's, as a bracket (floats with SCIP's tolerances, not a certificate). Ball only;
* **naive** — ‖v‖ + ‖W‖₂‖a‖₂ (the product of the layers' norms, triangle inequality for the skip);
* **sampling** — the author's method: the largest gradient norm (tangential on the sphere) over uniform samples:
  a lower end only.

Memory is stated as the peak resident set of each method (tracemalloc of Python allocations is not enough for the
solvers' native memory, so it is ``ru_maxrss`` growth, a coarse upper bound); the suite's forked workers
(``workers`` > 1) as the largest peak of any child process so far (``RUSAGE_CHILDREN``: a child shares the parent's
pages until it writes them, so this counts them again).
"""

from __future__ import annotations

import math
import resource
import time

import numpy as np

SCS_ABOVE = 96


def random_net(rng, d, m, arrangement="random"):
    """The bench's nets: ``random`` (rows N(0, I/d), biases 0.1·N(0,1), a ~ N(0,1)/√m, v small), ``cancelling``
    (half the units in pairs a ReLU(z) − a ReLU(z + δ) with tiny δ, opposite outer weights) and ``concurrent`` (every
    hyperplane through one point of the ball)."""
    W = rng.standard_normal((m, d)) / math.sqrt(d)
    b = 0.1 * rng.standard_normal(m)
    a = rng.standard_normal(m) / math.sqrt(m)
    v = 0.01 * rng.standard_normal(d)
    if arrangement == "cancelling":
        h = m // 4
        W[h:2 * h] = W[:h]
        b[h:2 * h] = b[:h] + 1e-3 * rng.standard_normal(h)
        a[h:2 * h] = -a[:h]
    elif arrangement == "concurrent":
        p = rng.standard_normal(d)
        p *= 0.3 / np.linalg.norm(p)
        b = -W @ p
    return W, b, a, v


def naive_bound(W, a, v) -> float:
    return float(np.linalg.norm(v) + np.linalg.norm(W, 2) * np.linalg.norm(a))


def lipsdp(W, a, v, *, time_limit: float = 600.0) -> dict:
    """LipSDP-Neuron with a skip connection (module docstring): √ρ* and the solver's status."""
    import cvxpy as cp

    m, d = W.shape
    rho = cp.Variable(nonneg=True)
    t = cp.Variable(m, nonneg=True)
    T = cp.diag(t)
    top = cp.hstack([rho * np.eye(d), -0.5 * (W.T @ T), v[:, None]])
    mid = cp.hstack([-0.5 * (T @ W), T, a[:, None]])
    bot = cp.hstack([v[None, :], a[None, :], np.ones((1, 1))])
    M = cp.vstack([top, mid, bot])
    prob = cp.Problem(cp.Minimize(rho), [0.5 * (M + M.T) >> 0])
    solver = cp.SCS if m > SCS_ABOVE else cp.CLARABEL
    t0 = time.perf_counter()
    kw = {"max_iters": 20000, "eps": 1e-6, "time_limit_secs": time_limit} if solver == cp.SCS else \
        {"time_limit": time_limit}
    try:
        prob.solve(solver=solver, **kw)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is reported, not fatal
        return {"value": math.nan, "status": f"error: {exc}", "seconds": time.perf_counter() - t0,
                "solver": solver}
    val = math.sqrt(rho.value) if rho.value is not None and rho.value >= 0 else math.nan
    return {"value": val, "status": prob.status, "seconds": time.perf_counter() - t0, "solver": solver}


def scip_mip(W, b, a, v, R: float, *, time_limit: float) -> dict:
    """The exact MIP on SCIP (module docstring): {"lower", "upper", "status", "seconds"} (Lip, not Lip²)."""
    from pyscipopt import Model, quicksum

    m, d = W.shape
    A = a[:, None] * W
    M = R * np.linalg.norm(W, axis=1) + np.abs(b)
    eps = 1e-9 * (1 + M)
    mod = Model("lipschitz-mip")
    mod.hideOutput()
    mod.setParam("limits/time", float(time_limit))
    x = [mod.addVar(lb=-R, ub=R, name=f"x{i}") for i in range(d)]
    s = [mod.addVar(vtype="B", name=f"s{j}") for j in range(m)]
    for j in range(m):
        z = quicksum(float(W[j, i]) * x[i] for i in range(d)) + float(b[j])
        mod.addCons(z <= float(M[j]) * s[j])
        mod.addCons(z >= -float(M[j]) * (1 - s[j]) + float(eps[j]) * s[j])
    mod.addCons(quicksum(xi * xi for xi in x) <= R * R)
    ub2 = float(np.sum((np.abs(v) + np.sum(np.abs(A), axis=0)) ** 2))
    obj = mod.addVar(lb=0, ub=ub2, name="obj")
    g = [float(v[i]) + quicksum(float(A[j, i]) * s[j] for j in range(m)) for i in range(d)]
    mod.addCons(obj <= quicksum(gi * gi for gi in g))
    mod.setObjective(obj, "maximize")
    t0 = time.perf_counter()
    mod.optimize()
    secs = time.perf_counter() - t0
    lo2 = mod.getObjVal() if mod.getNSols() > 0 else 0.0
    up2 = mod.getDualbound()
    return {"lower": math.sqrt(max(lo2, 0.0)), "upper": math.sqrt(max(up2, 0.0)), "status": mod.getStatus(),
            "seconds": secs}


def sampled(W, b, a, v, domain, rng, n=20000) -> float:
    d = W.shape[1]
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if domain == "ball":
        X *= rng.random((n, 1)) ** (1 / d)
    G = v + ((X @ W.T + b) > 0) * a @ W
    val = np.sum(G * G, 1) - (np.sum(G * X, 1) ** 2 if domain == "sphere" else 0)
    return float(np.sqrt(max(val.max(), 0.0)))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# (domain, d, m, arrangement, suite time limit in s)
GRID_FULL = (("ball", 32, 64, "random", 60.0), ("ball", 32, 128, "random", 60.0), ("ball", 32, 256, "random", 60.0),
             ("sphere", 32, 256, "random", 60.0), ("sphere", 32, 128, "cancelling", 60.0),
             ("sphere", 16, 64, "cancelling", 60.0), ("sphere", 8, 64, "random", 60.0),
             ("ball", 16, 48, "concurrent", 60.0), ("sphere", 16, 48, "concurrent", 60.0),
             ("sphere", 5, 24, "concurrent", 60.0), ("ball", 32, 1024, "random", 120.0))
GRID_QUICK = (("ball", 8, 12, "random", 5.0), ("sphere", 8, 12, "cancelling", 5.0))


def peer_rows(seed: int = 0, quick: bool = False, log=print, lipsdp_max_m: int = 256, mip: bool = True,
              grid=None, workers: int = 2) -> dict:
    """The ``lipschitz_peers`` record: one row per grid case with every method's numbers. ``workers``: the suite's
    branch-and-bound processes (the issue's "on 2 cores"; LipSDP's and SCIP's solvers run as they ship)."""
    from numerics import rob

    rows = []
    for dom, d, m, arr, limit in (grid or (GRID_QUICK if quick else GRID_FULL)):
        rng = np.random.default_rng([seed, d, m, len(arr), dom == "ball"])
        W, b, a, v = random_net(rng, d, m, arr)
        D = rob.Ball(d, 1.0) if dom == "ball" else rob.Sphere(d)
        r0 = _rss_mb()
        t0 = time.perf_counter()
        L = rob.lipschitz((W, b, a, v, 0.0), D, time_limit=limit, rel_gap=0.01, workers=workers)
        row = {"domain": dom, "d": d, "m": m, "arrangement": arr, "suite_lower": float(L.lower),
               "suite_upper": float(L.upper), "suite_gap": float(L.gap), "suite_seconds": time.perf_counter() - t0,
               "suite_status": L.status, "suite_method": L.method.split(" (")[0], "suite_upper_source": L.upper_source,
               "suite_rss_growth_mb": _rss_mb() - r0, "suite_workers": workers,
               "suite_child_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
               "naive": naive_bound(W, a, v),
               "sampled": sampled(W, b, a, v, dom, rng)}
        if m <= lipsdp_max_m:
            r0 = _rss_mb()
            sdp = lipsdp(W, a, v)
            row.update(lipsdp=sdp["value"], lipsdp_seconds=sdp["seconds"], lipsdp_status=sdp["status"],
                       lipsdp_solver=sdp["solver"], lipsdp_rss_growth_mb=_rss_mb() - r0)
            row["suite_upper_le_lipsdp"] = bool(row["suite_upper"] <= sdp["value"]) if math.isfinite(sdp["value"]) \
                else None
        if mip and dom == "ball":
            r0 = _rss_mb()
            mp = scip_mip(W, b, a, v, 1.0, time_limit=max(row["suite_seconds"], 1.0))
            row.update(mip_lower=mp["lower"], mip_upper=mp["upper"], mip_seconds=mp["seconds"],
                       mip_status=mp["status"], mip_rss_growth_mb=_rss_mb() - r0,
                       suite_within_mip=bool(row["suite_upper"] <= mp["upper"] * (1 + 1e-9)
                                             and row["suite_lower"] >= mp["lower"] * (1 - 1e-9)))
        rows.append(row)
        log(f"lipschitz_peers {dom} d={d} m={m} {arr}: suite [{row['suite_lower']:.4g}, {row['suite_upper']:.4g}] "
            f"in {row['suite_seconds']:.1f} s; LipSDP {row.get('lipsdp', math.nan):.4g}; "
            f"MIP [{row.get('mip_lower', math.nan):.4g}, {row.get('mip_upper', math.nan):.4g}]; "
            f"naive {row['naive']:.4g}; sampled {row['sampled']:.4g}")
    return {"available": True, "rows": rows}


def markdown(rec: dict) -> list[str]:
    """The section's one table."""
    if not rec.get("available"):
        return []
    out = ["## Certified Lipschitz", "",
           "The suite's certified bracket against LipSDP (cvxpy; global constant, a float), the exact MIP on SCIP "
           "(its primal/dual bracket after the suite's time), the naive product bound and the author's sampling "
           "(a lower end). Relative gap = upper/lower − 1. The suite's branch and bound runs on "
           f"{rec['rows'][0].get('suite_workers', 1) if rec.get('rows') else 1} process(es).", "",
           "| domain | d | m | arrangement | suite [lower, upper] | gap | status | s | LipSDP | s | MIP [primal, dual] "
           "| s | naive | sampled |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    def cell(r, k, fmt="{:.4g}"):
        x = r.get(k)
        return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else fmt.format(x)

    for r in rec["rows"]:
        def f(k, fmt="{:.4g}", r=r):
            return cell(r, k, fmt)
        out.append(f"| {r['domain']} | {r['d']} | {r['m']} | {r['arrangement']} | [{r['suite_lower']:.4f}, "
                   f"{r['suite_upper']:.4f}] | {100 * r['suite_gap']:.2f}% | {r.get('suite_status', '—')} | "
                   f"{r['suite_seconds']:.1f} | "
                   f"{f('lipsdp')} | {f('lipsdp_seconds', '{:.1f}')} | "
                   + (f"[{f('mip_lower')}, {f('mip_upper')}]" if "mip_lower" in r else "—")
                   + f" | {f('mip_seconds', '{:.1f}')} | {r['naive']:.4g} | {r['sampled']:.4g} |")
    return out + [""]


def main(argv=None) -> int:
    """``python -m checks.runners.bench.lipschitz_peers [--quick] [--out reports]``: the section alone, written to
    ``<out>/lipschitz_peers.{json,md}``."""
    import argparse
    import json
    from pathlib import Path

    ap = argparse.ArgumentParser(prog="python -m checks.runners.bench.lipschitz_peers")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("reports"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="the suite's branch-and-bound processes (default 2)")
    args = ap.parse_args(argv)
    rec = peer_rows(args.seed, quick=args.quick, log=lambda s: print(s, flush=True), workers=args.workers)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "lipschitz_peers.json").write_text(json.dumps(rec, indent=1, default=float))
    (args.out / "lipschitz_peers.md").write_text("\n".join(markdown(rec)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
