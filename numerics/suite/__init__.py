"""The suite's own machinery (SPEC §5). Its evaluators live where the runs use them: the verdict logic of SPEC §0 in
:mod:`checks.evidence.stats` (:func:`checks.evidence.stats.region_verdict`,
:func:`checks.evidence.stats.combine_parts`); this package only
completes the one-package-per-layer layout."""
