"""The claims, their evidence, falsification, experiments and the report.

Layout (one name per paper: ``ws``, ``flat``, ``rob``; the papers table is ``checks/spec.toml``)::

    checks/spec.toml           papers (key, title, BibTeX) and claims (ID, statement, LaTeX, levels)
    checks/spec.py             loads and validates it
    checks/registry.py         builds one Claim per spec ID from the claim modules (one mechanism)
    checks/falsify.py          the one F runner (two-stage: float64 screen, 50-digit confirmation)
    checks/tol.py              every tolerance, with its reason
    checks/<paper>/__init__.py CLAIMS = (...): the paper's claim modules, in spec order
    checks/<paper>/<claim>.py  ID = "<paper>.<claim>" and level_S, level_P, level_A, level_F, level_E
    checks/<paper>/cases.py    the paper's one list of deterministic cases (P and A levels)
    checks/<paper>/strategies.py   its Hypothesis strategies
    checks/<paper>/oracles.py  its independent references (sharing no code with what they judge)

Conventions in a claim module:

* the docstring's first line is the claim ID and its statement; the docstring names the derivation
  (``proofs.<paper>....``) and the evaluators (``numerics.<paper>....``) the levels use;
* ``ID`` is the spec ID; one function ``level_X(ctx: Context) -> Outcome`` per level the spec lists
  (the registry refuses a module whose functions differ from the spec's levels);
* the F level is ``run_properties(ctx, props, ID)``; the properties are built in the module by
  ``<name>_property(...)`` factories, which the planted-bug tests call with a broken evaluator;
* imports: ``from numerics import <paper>`` (public names only), ``from proofs import <paper> as proof``,
  ``from numerics._derived import <paper> as derived``; no other aliases, and no private name
  (leading underscore) of another module;
* no tolerance literal: add a row to :mod:`checks.tol`.
"""
