"""Every tolerance of the checks, in one table, each with its reason (cf. JAX ``check_grads``).

``TOL["name"]`` is the value; ``TOL.reason("name")`` says why it is what it is. A check that needs a
new tolerance adds a row here rather than a literal in its own module, so that a reader can audit
every threshold the suite applies in one place. Grouped by paper; shared rows first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping


class _Table(Mapping):
    def __init__(self, rows: dict[str, tuple[float, str]]):
        self._rows = rows

    def __getitem__(self, key: str) -> float:
        try:
            return self._rows[key][0]
        except KeyError:
            raise KeyError(f"no tolerance {key!r} in checks/evidence/tol.py; known: {', '.join(self._rows)}") from None

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def reason(self, key: str) -> str:
        return self._rows[key][1]

    @contextlib.contextmanager
    def overriding(self, key: str, value: float):
        """``TOL[key]`` reads ``value`` inside the block (the falsifier's precision escalation); the row's
        reason is kept."""
        old = self._rows[key]
        self._rows[key] = (value, old[1])
        try:
            yield
        finally:
            self._rows[key] = old


_ROWS: dict[str, tuple[float, str]] = {
    # --- shared: the SPEC §0 evidence levels ---
    "autograd_rel": (1e-10, "SPEC §0 level A: closed form vs a torch float64 Hessian"),
    "precision_dps": (50, "SPEC §0 level P: mpmath working precision"),
    "precision_min_digits": (40.0, "digits that must agree at dps=50 for a P pass (10 digits of headroom for "
                                   "the reference's own cancellation)"),
    "confirm_dps": (50, "SPEC §0 level F: a float64 hit counts only when mpmath at 50 digits confirms it (and "
                        "again at the escalated precision of checks.runners.falsify.escalated_dps)"),
    "confirm_digits_per_decade": (4, "checks.runners.falsify.escalated_dps: the second confirmation adds this many "
                                     "digits per decade spanned by the case's nonzero numbers: the confirmed "
                                     "quantities are at most quartic in them (tr H² is), so a cancellation between "
                                     "terms of different sizes spans at most 4× the inputs' decades"),
    # --- ws ---
    "ws_confirm_slack": (1e-30, "relative slack of a 50-digit confirmation of a WS inequality: the mpmath "
                                "eigenvalues (eigsy) carry ~1e-45 relative error, so 1e-30 cannot hide a real "
                                "violation of an O(1) bound and cannot flag rounding"),
    "ws_screen_slack": (1e-9, "relative float64 slack before a ws.bound screen hit becomes a candidate: a dense "
                              "float64 eigvalsh of an O(1)-conditioned D ≤ 40 Hessian errs by ~1e-14 relative"),
    "ws_moments_screen": (1e-8, "relative float64 slack of the closed-form (tr H, tr H²) against the dense float64 "
                                "Hessian's in the moments screen (cancellation in tr H over mixed-sign diagonals)"),
    "ws_theorem_cond_slack": (1e-7, "float64 screen slack of ws.theorem/bounds per unit of cond(S), the similarity "
                                    "that builds the matrix: its rounding grows like cond(S)·u"),
    "ws_equality_cond_slack": (1e-6, "float64 screen slack of ws.theorem/equality per unit of cond(S): equality "
                                     "is a difference of O(1) quantities"),
    "ws_kth_confirm_slack": (1e-14, "relative slack of the 50-digit confirmation of ws.theorem/kth_equality's k-th "
                                    "form gaps: WSBounds.kth forms the ratios (k−1)/(D−k+1) and (D−k)/k in Python "
                                    "floats on the mpmath path too, so its 50-digit value is exact only to ~3e-17 "
                                    "relative; a wrong k-th bound moves the gap by O(1)"),
    "ws_critical_grad": (1e-9, "ws.experiment: a critical point has ‖∇L_λ‖₂ ≤ this (torch float64 autograd; "
                               "Newton reaches ~1e-16, so 1e-9 only rejects runs that did not converge)"),
    # --- flat ---
    "duality_gap_rel": (1e-8, "SPEC §2 flat.duality: strong duality gap at the optimum, relative"),
    "flat_confirm_slack": (1e-35, "relative slack of a 50-digit confirmation in flat.*: the comparisons are of "
                                  "exactly computed moments, so 15 digits of margin under 50"),
    "flat_screen_rel": (1e-9, "relative float64 slack before a flat.* screen hit becomes a candidate: the screened "
                              "moments and dual values are short float64 sums (~1e-15 relative), so 1e-9 only "
                              "filters rounding; the 50-digit confirmation decides"),
    "flat_certificate_rel": (1e-10, "flat.duality/certificate confirmation, relative: the float dual value may exceed "
                                    "the 50-digit dual at the same ν, the exact gap the stated one, the 50-digit "
                                    "interpolation residual 0 and the stated value Υ of the weights only by this; "
                                    "each is float64 rounding of Φ̄, ω and a short sum (~1e-15), the solver's "
                                    "DUAL_ROUNDING allowance is 1e-13, and a wrong certificate is off by far more"),
    "flat_dual_useful": (1e6, "flat.duality/weak, p > 1: a float dual of −∞ counts as a vacuous certificate only "
                              "where the exact dual is within this × (1 + |Υ|) of Υ; an exact value far below it is "
                              "an honest useless bound whose conjugate may overflow float64 (1e228 at x ~ 1e-38)"),
    "flat_derivative_screen": (1e-5, "flat.symmetry F screen: float64 σ′ against a central difference of σ with step "
                                     "1e-6|t| (|t| ≥ 1e-3 of the largest): truncation ~1e-12 and rounding "
                                     "~1e-10 relative, so 1e-5 only drops noise"),
    "flat_derivative_confirm": (1e-12, "flat.symmetry F confirmation: float64 σ′ against mpmath.diff of the 50-digit σ "
                                       "(relative to 1 + |σ′|): σ′ is a few float64 operations (~1e-15)"),
    "flat_rounded_rel": (1e-10, "relative slack of flat.upsilon/attained (screen and confirmation): the trace is "
                                "taken at the float64-rounded λ_opt, which moves it by O(u) relative, second order "
                                "in the rounding at a minimum"),
    "flat_singular_rel": (1e-6, "flat.upsilon F: for 1 < c < 2 σ″ is infinite at 0, so a case whose pre-activation "
                                "is within this (relative to the largest) of 0 is outside the hypotheses"),
    "flat_stationarity_rel": (1e-12, "flat.upsilon A: the torch trace after perturbing λ_opt by e^{±1e-3} may be "
                                     "below Υ by float64 rounding only (relative)"),
    "flat_lambda_digits": (12.0, "flat.upsilon P: digits to which the exact trace at the float64 λ_opt equals Υ "
                                 "(λ_opt carries ~1e-16 rounding, which the trace sees at second order; 16 digits "
                                 "is the cap)"),
    "flat_support_rel": (1e-9, "flat.duality P: b_j with |b_j| ≤ this × max(1, max|b|) are off the optimal support "
                               "of the float64 p = 1 solution when the KKT system is re-solved at 60 digits"),
    "flat_mc_max_z": (4.5, "flat.population P: the largest |exact − Monte Carlo| / standard error over 4 "
                           "comparisons; P(|z| > 4.5) ≈ 7e-6 each"),
    "flat_quadrature_dps": (30, "flat.population P: mpmath precision of the quadrature-vs-kernel comparison "
                                "(quadrature at 50 digits is slow and adds nothing to a 20-digit criterion)"),
    "flat_quadrature_digits": (20.0, "flat.population P: digits that the 2-D quadrature must share with the exact "
                                     "arc-cosine kernel at dps = 30 (10 digits of headroom)"),
    "flat_bad_min_ratio": (2.0, "flat.bad E pass criterion (not the verdict): the seed-median Υ(bad)/Υ(flattest) "
                                "at the largest n must be at least this "
                                "('orderwise sharper', not merely sharper)"),
    "flat_generalize_spearman": (0.5, "flat.generalize E pass criterion (not the verdict): the Spearman(Υ, "
                                      "population loss) of all seeds' points pooled above this for every "
                                      "sum-of-single-index case counts as the paper's strong link"),
    "flat_approx_floor_rel": (1e-9, "flat.approx E: relative float64 slack of loss ≥ ½E f*² (the exact loss is a "
                                    "sum of O(n²) kernel terms)"),
    "flat_approx_control_frac": (0.1, "flat.approx E: the representable control must fall below this fraction of "
                                      "its zero-predictor loss by the largest n"),
    "flat_bracket_order_rel": (1e-12, "flat.upsilon_star E: any certified lower bound ≤ any dictionary upper bound, "
                                      "up to this relative float64 slack"),
    "flat_bracket_width_rel": (1e-4, "flat.upsilon_star E: relative width of the refined bracket on Υ*"),
    # --- rob ---
    "rob_screen_slack": (1e-9, "float64 screen slack of the rob rigidity, circle, value and canonical-value margins "
                               "(scaled by 1 + max): equality cases exist (|α| = 2 Lip) and float64 noise on an O(1) "
                               "scaled margin is ~1e-15, so 1e-9 only drops rounding"),
    "rob_exact_slack": (1e-40, "a difference of exact SymPy numbers evaluated at 60 digits (canonical values, "
                               "single-pole and float-vs-rational constants): a true zero evaluates below 1e-60"),
    "rob_canon_equal": (1e-7, "float64 screen: two canonical forms are the same when their entries agree to this "
                              "(±1e6 cancellations leave ~1e6·2⁻⁵³ ≈ 1e-10 residues); the confirmation is exact"),
    "rob_kink_clearance": (1e-6, "rob.canonical A: points within this distance of a kink are skipped (torch's "
                                 "gradient there picks a side arbitrarily)"),
    "rob_jump_clearance": (1e-4, "rob.jump F: the point on kink j must be this far from every other kink, so the "
                                 "one-sided differences (step 1e-5) stay in the two adjacent pieces"),
    "rob_jump_screen": (1e-6, "rob.jump F screen: float64 central differences (k = 1e-6) of the original net err "
                              "by ~2⁻⁵³·|f|/k ≈ 1e-10 relative, the ±1e6 pairs by up to ~1e-8"),
    "rob_jump_confirm": (1e-20, "rob.jump F confirmation: 60-digit central differences (k = 1e-35) err by "
                                "~1e-60/1e-35 = 1e-25 relative"),
    "rob_circle_merge": (1e-12, "rob.circle float screen: kink angles θ ± a closer than this are one kink (case "
                                "angles are multiples of 1e-3, recomputation errs by ~1e-17)"),
    "rob_probe_screen": (1e-9, "S² probes above the exact constant, relative: the probe's own float rounding is "
                               "~1e-12; a hit is decided exactly at a rational point"),
    "rob_probe_kink_margin": (1e-12, "oracles: probe and sample points within this·‖W_k‖ of a kink are skipped (the "
                                     "float64 sign of W_k·x + b_k may be wrong there; a lower bound needs the true "
                                     "pattern)"),
    "rob_socp_reject": (1e-7, "oracles, ball brute force: a pattern with neither exact witness nor certificate is "
                              "rejected (numerically empty) only if the SOCP optimum δ* < −this, ~100× CLARABEL's "
                              "accuracy; otherwise it is counted unresolved"),
    "rob_witness_kink": (1e-7, "S² witness check: units within this relative distance of their kink are excepted "
                               "from the sign test (the witness may be a vertex or on an edge; its float "
                               "coordinates are rounded)"),
    "rob_witness_gap": (1e-8, "S² witness check: tangential norm at the float witness vs the exact constant, "
                              "relative (the witness coordinates carry ~1e-16 rounding, amplified near vertices)"),
    "rob_sample_above": (1e-12, "rob.rigidity_sphere P: a float64 sample may exceed the exact constant by this "
                                "relative rounding only (it is a lower bound)"),
    "rob_sample_gap": (0.05, "rob.rigidity_sphere P: 4e4 uniform samples on S² come within 5% of the exact "
                             "constant for these 4–7-unit nets (a check that the exact value is not far too high)"),
    "rob_ratio_rel": (1e-12, "rob exact-value properties: the float ratio max_j w_j/(2 Lip.upper) and the float "
                             "weights² that rob.rigidity reports may differ from the exact ones by this relative "
                             "rounding (a few float64 operations, ~1e-15); the exact decision w² ≤ 4Lip² is compared "
                             "exactly"),
    "rob_law_eps_min": (0.5, "rob.law E, stated before running: a trained net 'fits ε below the noise floor' "
                             "(the law's hypothesis) when ε = 1 − MSE ≥ 0.5; nets that do not are excluded from the "
                             "verdicts and counted, and the evidence passes only if every net fits (training "
                             "stops at MSE ≤ 0.05, ε ≈ 0.95)"),
    "rob_lemma_screen": (1e-9, "float64 screen slack of the SPEC §4 deterministic lemmas (rob.affine_sup, "
                               "rob.fit_identity, rob.forced_depth, rob.occupancy, rob.value_mass, rob.serving), "
                               "relative: the margins are short sums and small SVD/eigen problems of O(1)–O(10) "
                               "rational data (~1e-14 relative), equality cases are common, and the confirmation "
                               "is exact"),
    "rob_cluster_rate_margin": (0.1, "rob.cluster_failure E, stated before running: the doubling (TV/Lip ∝ 1/ρ) is "
                                     "reproduced when the interval of the slope of log(TV/Lip) on log(1/ρ) over the "
                                     "last four doublings lies in [1 − 0.1, 1 + 0.1], and flatness when the slope of "
                                     "log Lip lies in [−0.1, 0.1]: the floor N = ⌊t*/(2ρ)⌋ and the +1 of "
                                     "TV = α_0(N − t*(N−1)/2) bend a finite grid's slope by O(2ρ/t*) ≈ 0.03–0.06 at "
                                     "k ≥ 5, while a different rate (1/√ρ, log) differs by ≥ 0.5"),
    "rob_width_one_growth": (0.25, "rob.width_one E, stated before running: the projection floor says best "
                                   "min-gap×n / √(log(nd)) stays bounded in n; a √n-type floor would give slope 0.5 "
                                   "of log(gap·n) on log n. The floor is reproduced when the slope's interval lies "
                                   "below 0.25 (halfway), contradicted when it lies above 0.25"),
}


TOL = _Table(_ROWS)
