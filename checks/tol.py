"""Every tolerance of the checks, in one table, each with its reason (cf. JAX ``check_grads``).

``TOL["name"]`` is the value; ``TOL.reason("name")`` says why it is what it is. A check that needs a
new tolerance adds a row here rather than a literal in its own module, so that a reader can audit
every threshold the suite applies in one place. Grouped by paper; shared rows first.
"""

from __future__ import annotations

from collections.abc import Mapping


class _Table(Mapping):
    def __init__(self, rows: dict[str, tuple[float, str]]):
        self._rows = rows

    def __getitem__(self, key: str) -> float:
        try:
            return self._rows[key][0]
        except KeyError:
            raise KeyError(f"no tolerance {key!r} in checks/tol.py; known: {', '.join(self._rows)}") from None

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def reason(self, key: str) -> str:
        return self._rows[key][1]


_ROWS: dict[str, tuple[float, str]] = {
    # --- shared: the SPEC §0 evidence levels ---
    "autograd_rel": (1e-10, "SPEC §0 level A: closed form vs a torch float64 Hessian"),
    "precision_dps": (50, "SPEC §0 level P: mpmath working precision"),
    "precision_min_digits": (40.0, "digits that must agree at dps=50 for a P pass (10 digits of headroom for "
                                   "the reference's own cancellation)"),
    "confirm_dps": (50, "SPEC §0 level F: a float64 hit counts only when mpmath at 50 digits confirms it"),
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
    "ws_critical_grad": (1e-9, "ws.experiment: a critical point has ‖∇L_λ‖₂ ≤ this (torch float64 autograd; "
                               "Newton reaches ~1e-16, so 1e-9 only rejects runs that did not converge)"),
    # --- flat ---
    "duality_gap_rel": (1e-8, "SPEC §2 flat.duality: strong duality gap at the optimum, relative"),
    "flat_confirm_slack": (1e-35, "relative slack of a 50-digit confirmation in flat.*: the comparisons are of "
                                  "exactly computed moments, so 15 digits of margin under 50"),
    "flat_screen_rel": (1e-9, "relative float64 slack before a flat.* screen hit becomes a candidate: the screened "
                              "moments and dual values are short float64 sums (~1e-15 relative), so 1e-9 only "
                              "filters rounding; the 50-digit confirmation decides"),
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
    "flat_bad_min_ratio": (2.0, "flat.bad E: Υ(bad)/Υ(flattest) at the largest n must be at least this "
                                "('orderwise sharper', not merely sharper)"),
    "flat_generalize_spearman": (0.5, "flat.generalize E: Spearman(Υ, population loss) above this for every "
                                      "sum-of-single-index case counts as the paper's strong link"),
    "flat_approx_floor_rel": (1e-9, "flat.approx E: relative float64 slack of loss ≥ ½E f*² (the exact loss is a "
                                    "sum of O(n²) kernel terms)"),
    "flat_approx_control_frac": (0.1, "flat.approx E: the representable control must fall below this fraction of "
                                      "its zero-predictor loss by the largest n"),
    "flat_bracket_order_rel": (1e-12, "flat.upsilon_star E: any certified lower bound ≤ any dictionary upper bound, "
                                      "up to this relative float64 slack"),
    "flat_bracket_width_rel": (1e-4, "flat.upsilon_star E: relative width of the refined bracket on Υ*"),
    # --- rob ---
}

TOL = _Table(_ROWS)
