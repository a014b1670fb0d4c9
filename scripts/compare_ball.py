"""Old vs new exact ball recursion: the same result, field by field, on random and degenerate nets.

    python scripts/compare_ball.py [--old 943bf2e] [--per-kind 40] [--random 600]

The old ``numerics/rob/ball.py`` is read from git (``git show <rev>:numerics/rob/ball.py``) and imported
beside the current one; both get the same canonical form (the exact rational input of the recursion) and
must return the same ``BallResult``: the exact Lip² (a Fraction), the maximising pattern, the number of cells
and the number of flats. Nets: random float nets in d = 2..5 (Gaussian, small integers, axis-aligned rows,
repeated rows), and the degenerate strategies of :mod:`checks.rob.strategies` (every kind, d = 2, 3, 4), each
both as the float net and as the exact rational configuration behind it.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from numerics import rob  # noqa: E402
from numerics.rob import ball as new_ball  # noqa: E402
from numerics.rob.canonical import canonicalize  # noqa: E402
from numerics.rob.net import to_fraction  # noqa: E402


def load_old(rev: str):
    src = subprocess.run(["git", "show", f"{rev}:numerics/rob/ball.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "ball_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("ball_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ball_old"] = mod
    spec.loader.exec_module(mod)
    return mod


def random_nets(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        d = int(rng.choice([2, 3, 3, 3, 4, 5]))
        m = int(rng.integers(1, {2: 40, 3: 40, 4: 12, 5: 8}[d] + 1))
        fam = ["gauss", "int", "axis", "repeat", "bench"][i % 5]
        if fam == "int":  # small integers: many exact coincidences, parallels, concurrences
            W = rng.integers(-2, 3, (m, d)).astype(float)
            W[~W.any(axis=1), 0] = 1.0
            b = rng.integers(-2, 3, m) / 2.0
        elif fam == "axis":
            W = np.zeros((m, d))
            W[np.arange(m), rng.integers(0, d, m)] = rng.choice([-1.0, 1.0, 2.0, 0.5], m)
            b = rng.choice([-0.5, 0.0, 0.25, 0.5, 1.0 - 2**-40], m)
        elif fam == "repeat":  # rows repeated with scalings (coincident hyperplanes), others generic
            base = rng.standard_normal((max(1, m // 3), d))
            pick = rng.integers(0, len(base), m)
            W = base[pick] * rng.choice([1.0, 2.0, -1.0, 0.5], (m, 1))
            b = rng.standard_normal(len(base))[pick] * (W[:, 0] / base[pick, 0]) * 0.5
        else:
            W = rng.standard_normal((m, d))
            b = rng.uniform(-0.8, 0.8, m) * np.linalg.norm(W, axis=1)
        a = rng.standard_normal(m)
        if fam == "int":
            a = rng.integers(-2, 3, m).astype(float)
        v = 0.3 * rng.standard_normal(d)
        R = float(rng.choice([1.0, 1.5]))
        out.append((f"random/{fam}/d{d}/m{m}", (W, b, a, v, 0.0), d, R))
    return out


def _collect(strat, n):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    got = []

    @settings(max_examples=n, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data):
        got.append(data.draw(strat))

    collect()
    return got


def degenerate_nets(per_kind):
    from checks.rob import strategies as S

    out = []
    for d in (2, 3, 4):
        for kind in S.applicable_kinds(d, False):
            rho = 1.5 if d == 2 else 1.0
            strat = S.STRATEGIES[kind](d, sphere=False, rho=rho, m_max=8 if d < 4 else 6)
            got = _collect(strat, per_kind)
            for case in got[:per_kind]:
                out.append((f"degenerate/{kind}/d{d}/float", S.case_float(case), d, case["rho"]))
                if case.get("exact"):
                    out.append((f"degenerate/{kind}/d{d}/exact", S.case_fractions(case), d, case["rho"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", default="943bf2e")
    ap.add_argument("--per-kind", type=int, default=20)
    ap.add_argument("--random", type=int, default=600)
    args = ap.parse_args()
    old = load_old(args.old)
    nets = random_nets(args.random) + degenerate_nets(args.per_kind)
    n_ok = n_skip = 0
    bad = []
    t_old = t_new = 0.0
    kinds: dict = {}
    for name, net, d, R in nets:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf = canonicalize(net, rob.Ball(d, R))
        if not cf.rational:
            n_skip += 1
            continue
        Rq = to_fraction(R, "R")
        t0 = time.process_time()
        r_old = old.lipschitz_ball(cf.Wq, cf.bq, cf.aq, cf.vq, Rq)
        t1 = time.process_time()
        r_new = new_ball.lipschitz_ball(cf.Wq, cf.bq, cf.aq, cf.vq, Rq)
        t2 = time.process_time()
        t_old += t1 - t0
        t_new += t2 - t1
        same = (r_old.value2 == r_new.value2 and r_old.pattern == r_new.pattern and r_old.cells == r_new.cells
                and r_old.nodes == r_new.nodes)
        key = name.rsplit("/", 2)[0] if name.startswith("random") else name.rsplit("/", 2)[0]
        kinds[key] = kinds.get(key, 0) + 1
        if same:
            n_ok += 1
        else:
            bad.append((name, r_old, r_new))
    print(f"compared {n_ok + len(bad)} nets ({n_skip} skipped: irrational canonical form): {n_ok} identical, "
          f"{len(bad)} different; CPU old {t_old:.1f} s, new {t_new:.1f} s")
    for k, v in sorted(kinds.items()):
        print(f"  {k}: {v}")
    for name, a, b in bad[:20]:
        print("DIFF", name, a, b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
