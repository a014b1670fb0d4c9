"""The runners: what runs the claims and what it writes.

=====================  ===================================================================================
module                 concern
=====================  ===================================================================================
``cli``                ``python -m checks`` (``shallow-proofs``): verify, falsify, list, show, replay, inspect
``parallel``           ``verify --jobs K``: claim levels in worker processes, longest first, same report
``falsify``            the one F runner: a float64 screen, then a 50-digit confirmation of every candidate
``campaign``           falsification and E sweeps as seed shards on Dask (``--workers``, ``--scheduler``,
                       ``--resume``); ``campaign_plugin`` is its worker plugin
``report``             ``verify.md`` / ``verify.json``; ``report_html`` the self-contained ``verify.html``
``inspect``            a user's own network through the three papers' evaluators
``mutate``             ``nox -s mutate``: each mutant of ``mutants.toml`` alone in a copy of the repository
``one_sided``          finds checks that look at one side only (listed under the mutate report)
``readme``             regenerates (or ``--check``\\ s) the README's claims table from the registry
``bench``              ``nox -s bench``: speed and memory against the field's tools
=====================  ===================================================================================
"""
