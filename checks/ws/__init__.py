"""ws: the Wolkowicz–Styan bound for the cross-entropy Hessian (Omae et al. 2026; SPEC §1).

=================  ===========================================================================
module             what it holds
=================  ===========================================================================
``theorem``        ws.theorem: WS 1980 for any real-spectrum matrix (S, P, F)
``trace``          ws.trace: closed-form tr H (S, P, A)
``trace_sq``       ws.trace_sq: closed-form tr H² (S, P, A)
``bound``          ws.bound: λ_max(H) ≤ λ_sup (A, F)
``softmax``        ws.softmax: multi-class softmax CE, tr H and tr H² with C×C blocks (S, P, A, F)
``deep``           ws.deep: MLPs with L ≥ 2 hidden layers, tr H and tr H² by sample-pair Gram blocks (S, P, A, F)
``dependence``     ws.dependence: λ_sup against ‖v‖, N and sample correlation (E)
``overfit``        ws.overfit: λ_sup → 0 as predictions saturate (S, E)
``experiment``     ws.experiment: critical points, λ_1 against λ_sup, λ_sup against F1 (E)
``moments``        the S/P/A evidence that ws.trace and ws.trace_sq share
``cases``          the one list of deterministic nets (P and A levels)
``strategies``     Hypothesis strategies: nets in hard corners, spectra with ties
``experiments``    data, training and critical points shared by the E levels
=================  ===========================================================================
"""

CLAIMS = ("theorem", "trace", "trace_sq", "bound", "dependence", "overfit", "experiment", "tightness", "gradient",
          "softmax", "deep")
