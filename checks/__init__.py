"""The claims, their evidence, falsification, experiments and the report.

Three kinds of room::

    papers          checks/ws, checks/flat, checks/rob (+ rob/supplement: the author's note, SPEC §4), checks/suite
                    <paper>/__init__.py  CLAIMS = (...): the paper's claim modules, in spec order
                    <paper>/<claim>.py   ID = "<paper>.<claim>" and level_S, level_P, level_A, level_F, level_E
                    <paper>/cases.py     the paper's one list of deterministic cases (P and A levels)
                    <paper>/strategies.py   its Hypothesis strategies
                    <paper>/oracles.py   its independent references (sharing no code with what they judge)
    evidence model  checks/evidence: spec.toml + spec (the claims), registry, outcome, stats (verdicts),
                    tol (every tolerance, with its reason), figures (one style)
    runners         checks/runners: cli (``python -m checks``), parallel, falsify (the one F runner),
                    campaign (+ its Dask plugin), report (+ html), inspect, mutate (+ mutants.toml), one_sided,
                    readme, bench

Papers import the evidence model and, for their F levels and E sweeps, ``runners.falsify`` and
``runners.campaign``; the runners find the papers through the registry (by name, never by a static import).
Before the rooms these modules sat at the top of ``checks``: the old dotted names (``checks.registry``,
``checks.bench``, ``python -m checks.mutate``, ``checks.rob.author``, …) still import the same module objects,
through :data:`MOVED` below, so that callers outside the repository keep working.

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
* no tolerance literal: add a row to :mod:`checks.evidence.tol`.
"""


# ------------------------------------------------------------------------------------------------ old names
import importlib  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402

_SUPPLEMENT = ("affine_sup", "author", "author_suite", "cluster_failure", "conjecture_9_1", "fit_identity",
               "forced_depth", "lemma_data", "occupancy", "pileup", "serving", "single_pole", "single_pole_law",
               "stratified", "value_mass", "width_one")
#: old dotted name → its room (a prefix: ``checks.bench.report`` → ``checks.runners.bench.report``)
MOVED = {
    **{f"checks.{m}": f"checks.evidence.{m}" for m in ("registry", "spec", "tol", "stats", "figures")},
    **{f"checks.{m}": f"checks.runners.{m}" for m in ("falsify", "campaign", "campaign_plugin", "parallel", "mutate",
                                                       "cli", "inspect", "readme", "report", "report_html",
                                                       "one_sided", "bench")},
    **{f"checks.rob.{m}": f"checks.rob.supplement.{m}" for m in _SUPPLEMENT},
}


def moved_to(name: str) -> str | None:
    """The current name of a module that an old dotted ``name`` meant (None: not a moved name)."""
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves an old dotted name to the *same* module object as its new name (not a second copy, whose state
    would diverge), and lets ``python -m <old name>`` run the new module's code."""

    def find_spec(self, fullname, path=None, target=None):
        new = moved_to(fullname)
        if new is None:
            return None
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=real.origin,
                                               is_package=real.submodule_search_locations is not None)

    def create_module(self, spec):
        module = importlib.import_module(moved_to(spec.name))
        self._real_spec = module.__spec__  # the import system overwrites __spec__ next; exec_module restores it
        return module

    def exec_module(self, module):
        module.__spec__ = self._real_spec

    def get_code(self, fullname):  # runpy (``python -m``) asks the loader for the code to run as __main__
        real = importlib.util.find_spec(moved_to(fullname))
        return real.loader.get_code(real.name)


if not any(isinstance(f, _OldNames) for f in sys.meta_path):
    sys.meta_path.insert(0, _OldNames())  # first: a moved package's __path__ would let PathFinder load a second copy
