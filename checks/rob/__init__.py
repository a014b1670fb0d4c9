r"""The rob paper's checks: Shmalo 2026, arXiv 2607.07778, law of robustness for two-layer nets.

Two rooms. This package holds the paper's own claims (SPEC §3) and the helpers both rooms share;
:mod:`checks.rob.supplement` holds the author's supplementary note and public checks (SPEC §4), with the helpers
only they use. Claim modules of this room, in spec order (``CLAIMS``), each with ``ID`` and one ``level_X`` per
spec level:

====================  ======  ==============================================================================
module                levels  what the levels check
====================  ======  ==============================================================================
``canonical``         S A F   canonicalising preserves f and is unique (ReLU identities, exact forms, torch)
``jump``              S P F   ∇f jumps by α_j u_j; the tangential jump norm |α_j|√(1 − t_j²) on the sphere
``rigidity_ball``     F P     |α_j| ≤ 2 Lip on B_R; the exact constant against the 2^m brute force
``rigidity_sphere``   F P     |α_j|√(1 − t_j²) ≤ 2 Lip on S^{d−1}, d ≥ 3; single-pole and S² probe oracles
``circle``            S P F   the d = 2 failure: the even cycle, a ratio search, an unbounded family
``width_2n``          S P     the width-2n interpolant: interpolation, cap condition, Lip = √((2−s)/s)
``law``               E       trained nets on noise: certified Lipschitz brackets against √(n/m̄)
``realized_kinks``    S F E   Theorem 1.5: k(f) exact; padding keeps f, k(f), Lip; tied nets against k̄ and m̄
``structured``        S F E   Corollaries 1.6-1.7: conv1d, tied, low-rank, vector outputs: k(f), ‖J‖₂, fitting nets
``low_width``         P E     Section 8: m ≤ 3, any activation: certified Lip in ≤ 4 dims; the least fitting Lip
``sharpness``         P E     Prop. 10.1: the width-2n construction's two conditions over (n, d); Lip = O(1)
``value``             F       sup|f| ≤ 2 + 4L for nets fitting below the noise floor
====================  ======  ==============================================================================

Shared modules:

* ``cases`` — deterministic exact rational nets, exact and mpmath evaluation from the definition;
* ``properties`` — case readers, the rigidity margin and the certified-routine properties both rigidity
  claims use;
* ``strategies`` — Hypothesis strategies: degenerate arrangements (planted exactly) and adversarial nets;
* ``rational`` — the exact rational constructions and the JSON case builder behind ``strategies``;
* ``oracles`` — independent references (ball brute force, S² probes, uniform sample), one copy each,
  sharing no code with :mod:`numerics.rob`;
* ``exact_values`` — two-sided properties on families whose constant and rigidity ratio are known by hand
  (single units at the rigidity equality case, the width-2n interpolant, near-tied cells).

Derivations come from :mod:`proofs.rob`, evaluators from :mod:`numerics.rob`, closed forms from
:mod:`numerics._derived.rob`.
"""

from checks.rob.supplement import CLAIMS as _SUPPLEMENT

CLAIMS = ("canonical", "jump", "rigidity_ball", "rigidity_sphere", "circle", "width_2n", "law", "realized_kinks",
          "structured", "low_width", "sharpness", "value") + tuple(f"supplement.{name}" for name in _SUPPLEMENT)
