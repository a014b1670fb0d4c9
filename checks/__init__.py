"""The claim registry, the evidence machinery, falsification, experiments and the report.

Every claim in ``../shared/SPEC.md`` has one :class:`checks.registry.Claim` here, with one small
function per evidence level (S/P/A/F/E). ``python -m checks verify`` runs them and writes the report.
"""
