r"""The rob paper's checks (SPEC §3): Shmalo 2026, arXiv 2607.07778, law of robustness for two-layer nets.

Claim modules, in spec order (``CLAIMS``), each with ``ID`` and one ``level_X`` per spec level:

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
``fit_identity``      S F     Σ(y f − f²/2) ≥ εn/2 for f and clip∘f; ≥ εn/2 indices with y f ≥ ε/4 (SPEC §4)
``affine_sup``        S P F   sup over affine z of y·z − ¼‖z‖² is yᵀPy at z = 2Py; E_y yᵀPy = rank [X 1]
``forced_depth``      S F     Kσ ≤ ‖Σu_g‖ ≤ √(K(1 + (K−1)ν)); K ≤ (1 − ν)/(σ² − ν)
``occupancy``         F E     N_u(t) ≤ Op/t², decided exactly; its sharpness for aimed normalised sums (figure)
``value_mass``        S F     ‖r_{u,t}‖₁ ≤ min(2√(n·Op), Op/t, (1−t)Op/t²); |α|‖r‖₁ ≤ 5 L Op/t (sharp: 2τ^{5/2})
``serving``           F       #{y α ReLU(u·x − t) ≥ h} ≤ Op(t + h/|α|)⁻², ≤ 6 Op L²/h² (sharp: 4)
``pileup``            F       ∇f = v + s_A off the kinks; ‖s_A − s_A′‖ ≤ 2 Lip_{B_R} over certified cells
``single_pole``       S P F   the exact single-pole constant (= lipschitz, = the S² arrangement), static
                              rigidity, TV ≤ πL, ‖v_⊥‖ ≤ L, the tanh/GELU version
``single_pole_law``   E       single-pole nets fitting noise: exact Lip against ε·min(√n, d) over n and d
``stratified``        F       stratified isolation |β_c + A_c(s)|√(1 − s²) ≤ Lip under its hypotheses (d = 6, 24..64)
``cluster_failure``   S P E   two coherent clusters: exact Lip = α_0 ≤ 2α_0 flat in ρ, profile TV ∝ 1/ρ (SPEC §4)
``width_one``         E       projection floor: a Grassmannian adversary's best min-gap × n against √(log(nd))
``conjecture_9_1``    E       Conjecture 9.1: the strongest certified multiplier found, against εn/4 and εn/160
====================  ======  ==============================================================================

Shared modules:

* ``cases`` — deterministic exact rational nets, exact and mpmath evaluation from the definition;
* ``properties`` — case readers, the rigidity margin and the certified-routine properties both rigidity
  claims use;
* ``strategies`` — Hypothesis strategies: degenerate arrangements (planted exactly) and adversarial nets;
* ``rational`` — the exact rational constructions and the JSON case builder behind ``strategies``;
* ``lemma_data`` — rational strategies and SymPy/mpmath references for the SPEC §4 lemmas;
* ``oracles`` — independent references (ball brute force, S² probes, uniform sample), one copy each,
  sharing no code with :mod:`numerics.rob`;
* ``author`` — runs the author's ten scripts as a peer and records their output (``author_checks.toml``);
  ``author_suite`` computes the suite's certified counterparts and the sampling shortfalls recorded beside them;
* ``exact_values`` — two-sided properties on families whose constant and rigidity ratio are known by hand
  (single units at the rigidity equality case, the width-2n interpolant, near-tied cells).

Derivations come from :mod:`proofs.rob`, evaluators from :mod:`numerics.rob`, closed forms from
:mod:`numerics._derived.rob`.
"""

CLAIMS = ("canonical", "jump", "rigidity_ball", "rigidity_sphere", "circle", "width_2n", "law", "realized_kinks",
          "structured", "low_width", "sharpness", "value",
          "fit_identity", "occupancy", "value_mass", "serving", "pileup", "affine_sup", "forced_depth",
          "single_pole", "single_pole_law", "stratified", "cluster_failure", "width_one", "conjecture_9_1")
