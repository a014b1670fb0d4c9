r"""The author's supplementary note and public checks (SPEC §4): Shmalo 2026, the repository
yspennstate/law-of-robustness-two-layer. The paper's own claims (SPEC §3) and the helpers both rooms share
(``cases``, ``properties``, ``strategies``, ``rational``, ``oracles``, ``exact_values``) are in :mod:`checks.rob`.

Claim modules, in spec order (``CLAIMS``; :mod:`checks.rob` lists them as ``supplement.<module>``):

====================  ======  ==============================================================================
module                levels  what the levels check
====================  ======  ==============================================================================
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

Helpers of this room only:

* ``lemma_data`` — rational strategies and SymPy/mpmath references for the SPEC §4 lemmas;
* ``single_pole_cases`` — the single-pole strategy (aimed at its degenerate cases) and its JSON reader;
* ``author`` — runs the author's ten scripts as a peer and records their output (``author_checks.toml``);
  ``author_suite`` computes the suite's certified counterparts and the sampling shortfalls recorded beside them.
"""

CLAIMS = ("fit_identity", "occupancy", "value_mass", "serving", "pileup", "affine_sup", "forced_depth",
          "single_pole", "single_pole_law", "stratified", "cluster_failure", "width_one", "conjecture_9_1")
