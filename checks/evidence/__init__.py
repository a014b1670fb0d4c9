"""The evidence model: what a claim is, what its levels return, and how a result becomes a verdict.

=================  ==========================================================================================
module             concern
=================  ==========================================================================================
``spec.toml``      the papers and claims (ID, statement, LaTeX, levels, status): SPEC.md made machine-readable
``spec``           loads and validates it
``registry``       one :class:`~checks.evidence.registry.Claim` per spec ID, from the paper rooms' claim modules
``outcome``        what one level returns (:class:`~checks.evidence.outcome.Outcome`) and how it is judged
``stats``          intervals, power, planned units and SPEC §0's verdict regions for E levels
``tol``            every tolerance, with its reason (no claim module holds a tolerance literal)
``figures``        one figure style for every experiment
=================  ==========================================================================================

The names of :mod:`checks.evidence.outcome` are re-exported here (``from checks.evidence import Outcome`` was the
public spelling before the rooms, and callers outside the repository use it).
"""

from checks.evidence.outcome import (  # noqa: F401  (re-exports)
    E_VERDICTS,
    LEVEL_NAMES,
    LEVELS,
    Evidence,
    Level,
    Outcome,
    claim_verdict,
    default_verdict,
    digits_agreed,
    jsonable,
    rel_err,
    severity,
)
