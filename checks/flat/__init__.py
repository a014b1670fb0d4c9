"""flat: flatness of c-homogeneous two-layer nets at interpolation (Vardhan, Taheri, Mazumdar 2026; SPEC §2).

=================  ===========================================================================
module             what it holds
=================  ===========================================================================
``symmetry``       flat.symmetry: rescaling invariance of h, homogeneity of σ′ (S, A, F)
``trace``          flat.trace: the Hessian trace, at and away from an interpolator (S, P, A)
``upsilon``        flat.upsilon: Υ, its minimiser λ_opt, p and K_c; Υ ≤ the trace (S, P, A, F)
``duality``        flat.duality: weak and strong duality of the flattest-interpolator program (S, P, F)
``bad``            flat.bad: badly aligned interpolators stay orderwise sharper (E)
``generalize``     flat.generalize: low flatness goes with low population loss (E)
``approx``         flat.approx: an unrepresentable target defeats the flattest interpolator (E)
``near_flattest``  flat.near_flattest: Theorem 3, the worst near-flattest interpolator's excess loss over n (E)
``balance``        flat.balance: ‖b‖_∞ of the flattest interpolators over m, c = 2 and c = 1 (E)
``population``     flat.population: the exact Gaussian population loss (S, P)
``upsilon_star``   flat.upsilon_star (beyond): a certified bracket on Υ* in d = 2, 3 (E)
``cases``          the one list of deterministic cases (P and A levels)
``strategies``     Hypothesis strategies: :class:`FlatCase`, nets in hard corners
``oracles``        independent references: exact sympy.hessian, torch.func.hessian, mpmath minimisation,
                   polar Gaussian quadrature
``experiments``    directions of bounded alignment, slope fits and figures shared by the E levels
=================  ===========================================================================
"""

CLAIMS = ("symmetry", "trace", "upsilon", "duality", "bad", "generalize", "approx", "near_flattest", "balance",
          "population", "upsilon_star")
