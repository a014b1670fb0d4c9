"""Sessions: verify, derive, falsify, tests, bench, mutate, lint. All install with ``-c constraints.txt``
(torch pinned to the CPU build) and reuse their virtualenvs; posargs pass through.

torch: ``constraints.txt`` pins ``torch==2.13.0``. On this project's machines pip's configuration points
``find-links`` at a local folder holding the ``2.13.0+cpu`` wheel. Elsewhere, set
``SHALLOW_PROOFS_TORCH_INDEX=https://download.pytorch.org/whl/cpu`` and the sessions install torch from
that index (PyTorch's CPU-only builds); without either, pip takes PyPI's multi-GB CUDA build.
"""

import os

import nox

nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]
PY = "3.11"
CONSTRAINTS = ("-c", "constraints.txt")


def install(session, extras=""):
    index = os.environ.get("SHALLOW_PROOFS_TORCH_INDEX")
    session.install(*CONSTRAINTS, *(("--index-url", index) if index else ()), "torch==2.13.0")
    session.install(*CONSTRAINTS, "-e", f".{extras}")


@nox.session(python=PY, reuse_venv=True)
def verify(session):
    """Every claim at every level it supports; writes reports/verify.{json,md} and figures."""
    install(session)
    session.run("python", "-m", "checks", "verify", *session.posargs)


@nox.session(python=PY, reuse_venv=True)
def derive(session):
    """Regenerate numerics/_derived and proofs/latex from proofs/ (``-- --check`` only compares)."""
    install(session)
    session.run("python", "-m", "proofs.derive", *session.posargs)


@nox.session(python=PY, reuse_venv=True)
def falsify(session):
    """Two-stage falsification: ``nox -s falsify -- --budget N --claims ID``; on Dask with ``--workers K`` (a local
    cluster) or ``--scheduler [ADDRESS]`` (an existing one), ``--shards S``, ``--resume``
    (checks/runners/campaign.py)."""
    install(session)
    session.run("python", "-m", "checks", "falsify", *session.posargs)


# backpack-for-pytorch declares torchvision, which it imports only in its examples; the index's torchvision wheels
# are built against the CUDA torch and fail to import beside torch +cpu. So the peers go in without dependencies,
# and their real ones (pinned in constraints.txt) are listed here.
BENCH_PEERS = ("curvlinops-for-pytorch", "backpack-for-pytorch", "PyHessian")
BENCH_PEER_DEPS = ("einops", "einconv", "unfoldNd", "linear_operator", "opt_einsum", "tqdm")


def install_peers(session):
    session.install(*CONSTRAINTS, *BENCH_PEER_DEPS, "pyscipopt")  # SCIP: the certified-Lipschitz bench's MIP peer
    session.install(*CONSTRAINTS, "--no-deps", *BENCH_PEERS)


@nox.session(python=PY, reuse_venv=True)
def tests(session):
    """The test suite, plus the derive drift gate. The bench's peers are installed too: each is checked against the
    closed form at small sizes (tests/test_bench_peers.py, the quick bench), which would otherwise be skipped."""
    install(session, "[test]")
    install_peers(session)
    session.run("python", "-m", "proofs.derive", "--check")
    session.run("pytest", "-q", "-n", "auto", *session.posargs)  # pytest-xdist: one worker per core


@nox.session(python=PY, reuse_venv=True)
def bench(session):
    """Speed and memory against the alternatives and the peers (extra ``bench``: curvlinops, BackPACK, PyHessian);
    writes reports/bench.{json,md} and plots. ``-- --quick`` for the small grid."""
    install(session)
    install_peers(session)
    session.run("python", "-m", "checks.runners.bench", *session.posargs)


@nox.session(python=PY, reuse_venv=True)
def mutate(session):
    """Mutation testing: each mutant of checks/runners/mutants.toml alone in a copy of the repo, its claims (full
    budgets)
    and its tests; writes reports/mutate.{json,md}. ``nox -s mutate -- --jobs 2``, ``-- --only ID``. Not in CI."""
    install(session, "[test]")
    session.run("python", "-m", "checks.runners.mutate", *session.posargs)


@nox.session(python=PY, reuse_venv=True)
def lint(session):
    """ruff, and the map of the house (no import circle, no module over 600 lines, no private crossing)."""
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", "proofs", "numerics", "checks", "tests", "noxfile.py", "examples")
    session.run("python", "-m", "checks.runners.house", env={"PYTHONPATH": "."})
