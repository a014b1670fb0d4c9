r"""The suite's own machinery (SPEC §5): claims about the code that makes verdicts and certificates.

====================  ======  ==============================================================================
module                levels  what the levels check
====================  ======  ==============================================================================
``verdicts``          F       SPEC §0's effect → interval → word table, on intervals whose right word is known
                              by construction, and its planted wrong branches (positive controls)
``controls``          F       every claim's S, P, A, F checks against a planted wrong evaluator (its first
                              mutant), in a forked child: each must be caught; coverage reported
``predicates``        F       every exact fall-back (numerics.fallbacks.SITES) reached by an exact-tie input,
                              its answer equal to an independent exact reference; coverage proved
====================  ======  ==============================================================================
"""

CLAIMS = ("verdicts", "controls", "predicates")
