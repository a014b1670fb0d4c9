r"""The coherent two-cluster construction of SPEC §4 (rob.cluster_failure), derived in SymPy.

Two poles u_1, u_2 ∈ S^{d−1} (d ≥ 3) at separation ρ' = ‖u_1 − u_2‖ ≤ ρ, each carrying the same N = ⌊t*/(2ρ)⌋
thresholds t_j = (j − 1)h, h = t*/N, j = 1..N (evenly spaced in [0, t*)), weights +α_0 on u_1 and −α_0 on u_2:

    f(x) = α_0 Σ_j [ReLU(u_1·x − t_j) − ReLU(u_2·x − t_j)],     0 < ρ ≤ t*/2, t* ≤ 1.

With s_c = u_c·x and n_c = #{j : t_j < s_c}, off the kinks ∇f = α_0(n_1 u_1 − n_2 u_2), and on the sphere the
tangential gradient norm² is F = ‖∇f‖² − (∇f·x)². The derivation (each step an identity that simplifies to 0,
or a polynomial whose sign is decided by its factorisation):

1. h ≥ 2ρ (from N ≤ t*/(2ρ)), and |s_1 − s_2| ≤ ρ' ≤ ρ < h, so the counts differ by at most one (both count the
   same grid of spacing h);
2. ‖n_1 u_1 − n_2 u_2‖² = (n_1 − n_2)² + n_1 n_2 ρ'² for unit u_1, u_2 (the parametrised pair u_2 =
   ((1−q²)/(1+q²), 2q/(1+q²), 0, …), ρ'² = 4q²/(1+q²), covers every pair up to rotation);
3. cells with n_1 = n_2 = n: F ≤ n²ρ'² ≤ (Nρ)² ≤ t*²/4 ≤ 1/4 (times α_0²);
4. cells with n_1 = n + 1, n_2 = n (s_1 > nh ≥ s_2): ∇f·x/α_0 = s_1 + n(s_1 − s_2) > nh ≥ 0, so
   F/α_0² < 1 + n(n+1)ρ² − n²h² ≤ 1 − nρ²(3n − 1) ≤ 1 for every integer n ≥ 1; for n = 0, F/α_0² = 1 − s_1²,
   whose supremum over the cell (s_1 ↓ 0, s_2 < 0) is 1; the cells n_1 = n, n_2 = n + 1 are the mirror image;
5. hence Lip_{S^{d−1}}(f) = α_0 exactly, for every ρ, every t* and every d ≥ 3 (the author's bound is 2α_0;
   the remark's intermediate bound α_0(n_2 ρ + 1) ≤ 3α_0/2);
6. the profile P_c(s) = α_0 Σ_j ReLU(s − t_j) is non-decreasing with P_c(−1) = 0, so its total variation on
   [−1, 1] is P_c(1) = α_0(N − t*(N − 1)/2), and TV ≥ P_c(t*) − P_c(0) = α_0 t*(N + 1)/2 > α_0 t*²/(4ρ)
   (with t*/(2ρ) = N + φ, φ ∈ [0, 1): the difference is α_0 (t*/2)(1 − φ) > 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero


@dataclass(frozen=True)
class ClusterFailure:
    checks: dict[str, bool]
    lipschitz: sp.Expr  # Lip_{S^{d-1}}(f) in terms of alpha0
    tv: sp.Expr  # TV of one profile on [-1, 1], in terms of alpha0, N, tstar
    ramp: sp.Expr  # P_c(t*) - P_c(0)
    tv_floor: sp.Expr  # the stated lower bound alpha0 t*^2 / (4 rho)


def cluster_failure() -> ClusterFailure:
    out: dict[str, bool] = {}
    a0, rho, ts, q, s1, s2, phi = sp.symbols("alpha0 rho tstar q s1 s2 phi", positive=True)
    N, n, j = sp.symbols("N n j", positive=True, integer=True)
    n1, n2 = sp.symbols("n1 n2", nonnegative=True, integer=True)
    h = ts / N
    # 1. spacing: N <= t*/(2 rho)  <=>  h - 2 rho = (t* - 2 rho N)/N >= 0
    out["h - 2ρ = (t* − 2ρN)/N (≥ 0 as N ≤ t*/(2ρ))"] = is_zero(sp.together(h - 2 * rho - (ts - 2 * rho * N) / N))
    # 2. the gradient norm identity, from the vectors
    u1 = sp.Matrix([1, 0, 0])
    u2 = sp.Matrix([(1 - q**2) / (1 + q**2), 2 * q / (1 + q**2), 0])
    r2 = sp.simplify(((u1 - u2).T * (u1 - u2))[0])
    out["‖u_2‖ = 1"] = is_zero(sp.simplify((u2.T * u2)[0] - 1))
    out["ρ'² = ‖u_1 − u_2‖² = 4q²/(1+q²)"] = is_zero(sp.simplify(r2 - 4 * q**2 / (1 + q**2)))
    G = n1 * u1 - n2 * u2
    out["‖n_1u_1 − n_2u_2‖² = (n_1 − n_2)² + n_1 n_2 ρ'²"] = is_zero(
        sp.simplify((G.T * G)[0] - ((n1 - n2) ** 2 + n1 * n2 * r2)))
    # 3. equal counts: ‖G‖² = n² ρ'² <= (N rho)^2 <= t*^2/4
    out["n_1 = n_2 = n: ‖G‖² = n²ρ'²"] = is_zero(sp.simplify((G.T * G)[0].subs({n1: n, n2: n}) - n**2 * r2))
    out["(Nρ)² ≤ t*²/4 ⇔ t*² − 4N²ρ² = (t* − 2Nρ)(t* + 2Nρ) ≥ 0"] = is_zero(
        sp.expand(ts**2 - 4 * N**2 * rho**2 - (ts - 2 * N * rho) * (ts + 2 * N * rho)))
    # 4. counts n+1, n: G.x on the plane coordinates (x.u1 = s1, x.u2 = s2)
    Gx = (n + 1) * s1 - n * s2
    out["n_1 = n+1, n_2 = n: ∇f·x/α_0 = s_1 + n(s_1 − s_2)"] = is_zero(sp.expand(Gx - (s1 + n * (s1 - s2))))
    bound = 1 + n * (n + 1) * rho**2 - n**2 * (2 * rho) ** 2  # ‖G‖² with ρ' ≤ ρ, minus (G·x)² > (n h)² ≥ (2nρ)²
    out["1 + n(n+1)ρ² − (2nρ)² − 1 = −nρ²(3n − 1) (≤ 0 for n ≥ 1)"] = is_zero(
        sp.expand(bound - 1 + n * rho**2 * (3 * n - 1)))
    out["n = 0: F/α_0² = ‖u_1‖² − s_1² → 1 as s_1 ↓ 0"] = sp.limit(1 - s1**2, s1, 0, "+") == 1
    # mirror cell (n, n+1): G.x = n s1 - (n+1) s2 = -(s2 + n (s2 - s1))
    out["n_1 = n, n_2 = n+1: ∇f·x/α_0 = −(s_2 + n(s_2 − s_1))"] = is_zero(
        sp.expand(n * s1 - (n + 1) * s2 + (s2 + n * (s2 - s1))))
    # 6. the profile's total variation
    P1 = sp.summation(a0 * (1 - (j - 1) * h), (j, 1, N))  # P_c(1): every unit active at s = 1
    tv = a0 * (N - ts * (N - 1) / 2)
    out["TV(P_c) on [−1,1] = P_c(1) = α_0(N − t*(N−1)/2)"] = is_zero(sp.simplify(P1 - tv))
    ramp = sp.summation(a0 * (ts - (j - 1) * h), (j, 1, N))  # P_c(t*) - P_c(0), P_c(0) = 0
    out["P_c(t*) − P_c(0) = α_0 t*(N+1)/2"] = is_zero(sp.simplify(ramp - a0 * ts * (N + 1) / 2))
    floor = a0 * ts**2 / (4 * rho)
    # t*/(2 rho) = N + phi  =>  rho = t*/(2(N + phi))
    diff = sp.simplify((a0 * ts * (N + 1) / 2 - floor).subs(rho, ts / (2 * (N + phi))))
    out["α_0t*(N+1)/2 − α_0t*²/(4ρ) = α_0(t*/2)(1 − φ) with t*/(2ρ) = N + φ"] = is_zero(
        sp.simplify(diff - a0 * ts / 2 * (1 - phi)))
    return ClusterFailure(out, a0, tv, a0 * ts * (N + 1) / 2, floor)
