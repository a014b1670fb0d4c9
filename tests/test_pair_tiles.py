"""Pair sums in tiles, in this process and on Dask (numerics/ws/pair_tiles.py, issue 28).

Oracles: the float64 result without a runner (the same tiles in this process) for bit-identity; the generic pair
loops (``numerics.ws.moments._pair_sums``: one accumulator, its own loop, any array type) and the mpmath path for
the values; a journal written by a run that was interrupted, for resume. Two real Dask clusters (1 and 2 worker
processes, what ``--workers K`` starts) run the same sums; one worker is SIGKILLed in the middle of a run.
"""

import math
import os
import random
import signal
import subprocess
import sys

import numpy as np
import pytest

from numerics.ws.deep import deep_hessian_moments
from numerics.ws.moments import ce_hessian_moments
from numerics.ws.pair_tiles import ProgressLine, TileRunner, forget_built, plan, reduce_values, tiles_of
from numerics.ws.softmax import softmax_hessian_moments


def _binary(n=700, M=9, N=12, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(N, M)) / 3, rng.normal(size=N), rng.normal(size=N), 0.2, rng.normal(size=(n, M)),
            (rng.random(n) < 0.5).astype(float))


def _softmax(n=400, M=7, N=10, C=4, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(N, M)) / 3, rng.normal(size=N), rng.normal(size=(C, N)), rng.normal(size=C),
            rng.normal(size=(n, M)), rng.integers(0, C, n))


def _deep(n=90, seed=2):
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(size=(6, 5)) / 2, rng.normal(size=6)), (rng.normal(size=(4, 6)) / 2, None),
              (rng.normal(size=(3, 4)), rng.normal(size=3))]
    return layers, rng.normal(size=(n, 5)), rng.integers(0, 3, n)


def _all_three(runner=None):
    W, b, v, c, X, y = _binary()
    bi = ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy", tiles=runner)
    W, b, V, c, X, y = _softmax()
    sm = softmax_hessian_moments(W, b, V, c, X, y, "gelu", block=48, tiles=runner)
    layers, X, y = _deep()
    dp = deep_hessian_moments(layers, X, y, "softplus", block=16, tiles=runner)
    return [x.hex() for m in (bi, sm, dp) for x in (m.trace, m.trace_sq)]


def test_the_plan_covers_the_upper_triangle_once_in_consecutive_tasks():
    for n, block, per in ((1, 1, 1), (10, 3, 2), (257, 64, 5), (100, 100, 7)):
        t = tiles_of(n, block)
        k = math.ceil(n / block)
        assert len(t) == len(set(t)) == k * (k + 1) // 2 and all(I <= J for I, J in t)
        tasks = plan(n, block, per)
        assert [x for task in tasks for x in task] == t and all(len(task) <= per for task in tasks)
    with pytest.raises(ValueError, match="tiles_per_task"):
        plan(10, 3, 0)


def test_the_reduction_does_not_depend_on_the_order():
    rng = random.Random(5)
    vals = [(x * 10.0 ** rng.randint(-8, 8), -x) for x in np.random.default_rng(3).normal(size=500).tolist()]
    want = reduce_values(vals, 2)
    for _ in range(5):
        rng.shuffle(vals)
        assert reduce_values(vals, 2) == want
    assert want[0] == math.fsum(v[0] for v in vals)


def test_tiles_agree_with_the_generic_pair_loop():
    """The float64 tiles against the generic loop (one accumulator over the same blocks, the path mpmath/arb use)."""
    from numerics._derived import ws as kernels
    from numerics.ws.activations import get_activation
    from numerics.ws.moments import _pair_sums, near_terms, tables_float64

    W, b, v, c, X, y = _binary(n=300)
    P, q, r = tables_float64(W, b, v, c, X, y, get_activation("tanh"))
    Xt = np.hstack([X, np.ones((300, 1))])
    _, acc, far = near_terms(P, q, r, Xt, v, n=300, kernels=kernels, bias_const=kernels.OUTPUT_BIAS)
    generic = (acc + _pair_sums(P, q, Xt, v, far, n=300, kernels=kernels, block=300,
                                c_gg=kernels.OUTPUT_BIAS["gg"])) / 300**2
    tiled = ce_hessian_moments(W, b, v, c, X, y, "tanh", block=37, backend="numpy").trace_sq
    assert tiled == pytest.approx(generic, rel=1e-13)


def test_a_journal_resumes_where_an_interrupted_run_stopped(tmp_path):
    want = _all_three()
    W, b, v, c, X, y = _binary()

    class Stop(Exception):
        pass

    def stop_after_three(summary):
        if summary["task"] == 2:
            raise Stop

    with pytest.raises(Stop):
        ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy",
                           tiles=TileRunner(journal=tmp_path, tiles_per_task=4, on_task=stop_after_three))
    (jdir,) = tmp_path.iterdir()
    assert len(list(jdir.glob("task-*.json"))) == 3
    runner = TileRunner(journal=tmp_path, resume=True, tiles_per_task=4)
    m = ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy", tiles=runner)
    assert runner.stats["tasks_resumed"] == 3 and runner.stats["tasks_run"] == runner.stats["tasks"] - 3
    assert [m.trace.hex(), m.trace_sq.hex()] == want[:2]
    # other inputs never read this journal: a new key, a new directory, nothing resumed
    runner = TileRunner(journal=tmp_path, resume=True, tiles_per_task=4)
    ce_hessian_moments(W, b, v, c, X, y[::-1].copy(), "tanh", block=64, backend="numpy", tiles=runner)
    assert runner.stats["tasks_resumed"] == 0 and len(list(tmp_path.iterdir())) == 2
    # without resume, an old journal is cleared and every task runs again
    runner = TileRunner(journal=tmp_path, tiles_per_task=4)
    ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy", tiles=runner)
    assert runner.stats["tasks_resumed"] == 0


def test_the_progress_line_counts_tiles_and_the_time_left():
    lines = []
    W, b, v, c, X, y = _binary()
    ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy",
                       tiles=TileRunner(tiles_per_task=5, progress=ProgressLine(lines.append, every=0.0)))
    total = len(tiles_of(700, 64))
    assert lines[0].startswith(f"pair tiles 5/{total} (") and "left" in lines[0]
    assert lines[-1].startswith(f"pair tiles {total}/{total} (100.0%)") and "left" not in lines[-1]


def test_bad_options_name_the_problem():
    W, b, v, c, X, y = _binary(n=20)
    with pytest.raises(ValueError, match="resume=True needs a journal"):
        TileRunner(resume=True)
    with pytest.raises(ValueError, match="tiles_per_task"):
        TileRunner(tiles_per_task=0)
    with pytest.raises(ValueError, match="dps="):
        ce_hessian_moments(W, b, v, c, X, y, dps=20, tiles=TileRunner())
    with pytest.raises(ValueError, match="backend='torch'"):
        ce_hessian_moments(W, b, v, c, X, y, backend="torch", tiles=TileRunner())
    layers, X, y = _deep(n=5)
    with pytest.raises(ValueError, match="dps="):
        deep_hessian_moments(layers, X, y, dps=20, tiles=TileRunner())


def test_blas_threads_do_not_change_a_bit():
    """The in-process result with one and with two BLAS threads (Dask workers run one)."""
    code = ("import sys; sys.path.insert(0, 'tests'); from test_pair_tiles import _all_three; "
            "print(' '.join(_all_three()))")
    outs = set()
    for k in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": k, "OMP_NUM_THREADS": k, "MKL_NUM_THREADS": k}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                                cwd=os.path.dirname(os.path.dirname(__file__))).stdout.strip())
    assert len(outs) == 1


def test_one_and_two_dask_workers_give_the_bits_of_this_process(tmp_path):
    want = _all_three()
    environ = dict(os.environ)
    for k in (1, 2):
        with TileRunner.local(k, tiles_per_task=3, journal=tmp_path / f"w{k}") as runner:
            assert _all_three(runner) == want
            assert len(runner.stats["per_worker"]) >= 1 and runner.stats["tasks_run"] == runner.stats["tasks"]
            assert all(w["peak_rss_mb"] > 0 for w in runner.stats["per_worker"].values())
            # the workers gave their built problems back after the run (keep_built=False)
            assert set(runner.client.run(forget_built).values()) == {0}
            # Dask's nanny wrote MALLOC_TRIM_THRESHOLD_, OMP_NUM_THREADS, … into os.environ: put back at once
            assert dict(os.environ) == environ
    assert dict(os.environ) == environ


@pytest.mark.usefixtures("hang_watchdog")
def test_a_killed_worker_loses_only_its_task(tmp_path):
    W, b, v, c, X, y = _binary(n=3000, M=20, N=40)
    want = ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy").trace_sq
    with TileRunner.local(2, tiles_per_task=8, journal=tmp_path) as runner:
        pids = runner.client.run(os.getpid)
        killed = []

        def kill_a_busy_worker(summary):
            busy = [w for w, keys in runner.client.processing().items() if keys and w in pids]
            if busy and not killed:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])

        runner.on_task = kill_a_busy_worker
        got = ce_hessian_moments(W, b, v, c, X, y, "tanh", block=64, backend="numpy", tiles=runner).trace_sq
        assert killed and runner.stats["tasks_run"] == runner.stats["tasks"]
    assert got.hex() == want.hex()


def test_softmax_memory_modes_change_no_bit(monkeypatch):
    """The four (n, C, N) side arrays kept or made per tile, and the per-sample work in chunks of 37 samples or in
    one: the same tile values; the chunked near terms agree to rounding."""
    from numerics.ws import softmax, softmax_tiles
    from numerics.ws.activations import get_activation

    W, b, V, c, X, y = _softmax()
    want = softmax_hessian_moments(W, b, V, c, X, y, "gelu", block=48)
    monkeypatch.setattr(softmax_tiles, "SIDES_BYTES", 0)
    got = softmax_hessian_moments(W, b, V, c, X, y, "gelu", block=48)
    assert (got.trace.hex(), got.trace_sq.hex()) == (want.trace.hex(), want.trace_sq.hex())
    P, p, s, r, Vt, _, sqrt = softmax._tables(W, b, V, c, X, y, get_activation("gelu"), mp=False)
    Xt = np.hstack([X, np.ones((len(X), 1))])
    kw = dict(n=len(X), kernels=softmax.softmax_kernels, block=48, bias=True, sqrt=sqrt)
    one, chunked = softmax.prepared(P, p, s, r, Vt, Xt, **kw), softmax.prepared(P, p, s, r, Vt, Xt, chunk=37, **kw)
    assert one[0] == pytest.approx(chunked[0], rel=1e-14) and one[1] == pytest.approx(chunked[1], rel=1e-13)
    assert len(one[2].far) == len(chunked[2].far) >= 1
    assert [one[2].tile(I, J) for I, J in tiles_of(len(X), 48)] == \
        [chunked[2].tile(I, J) for I, J in tiles_of(len(X), 48)]


def test_an_overflow_on_a_worker_is_a_named_error():
    """Inputs ~1e80: the near terms are finite, the tiles' Gram powers overflow. In this process numpy raises; a Dask
    worker does not, so the caller checks the reduced values: the same ValueError either way."""
    W, b, V, c, X, y = _softmax(n=60)
    X = X * 1e80
    with pytest.raises(ValueError, match="overflow"):
        softmax_hessian_moments(W, b, V, c, X, y, "tanh", block=16)
    with TileRunner.local(1) as runner, pytest.raises(ValueError, match="overflow"):
        softmax_hessian_moments(W, b, V, c, X, y, "tanh", block=16, tiles=runner)


def test_a_worker_with_other_tile_code_refuses_the_task():
    import dataclasses

    from numerics.ws.activations import get_activation
    from numerics.ws.pair_tiles import TILE_REVISION, run_task
    from numerics.ws.softmax import softmax_recipe

    W, b, V, c, X, y = _softmax(n=20)
    recipe = dataclasses.replace(softmax_recipe(W, b, V, c, X, y, get_activation("tanh"), True, 8),
                                 revision=TILE_REVISION - 1)
    with pytest.raises(RuntimeError, match="same version"):
        run_task(recipe, 0, ((0, 0),))


def test_the_dask_example_runs_and_resumes(tmp_path):
    """examples/softmax_moments_on_dask.py: the same bits on one worker as in this process; a second run resumes
    every task from the journal the first one left."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("example", os.path.join(
        os.path.dirname(os.path.dirname(__file__)), "examples", "softmax_moments_on_dask.py"))
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    first = ex.main(n=200, workers=1, journal=str(tmp_path))
    assert (first["dask"].trace, first["dask"].trace_sq) == (first["here"].trace, first["here"].trace_sq)
    assert first["stats"]["tasks_run"] >= 1 and first["stats"]["tasks_resumed"] == 0
    again = ex.main(n=200, workers=1, journal=str(tmp_path))
    assert again["stats"]["tasks_run"] == 0 and again["stats"]["tasks_resumed"] == first["stats"]["tasks"]


# ------------------------------------------------------------------------------------------------ panels
def test_a_panel_plan_covers_the_upper_triangle_once_and_each_task_reads_two_panels():
    from numerics.ws.pair_tiles import panel_plan, rows_of

    for n, block, k in ((203, 16, 3), (160, 16, 2), (5, 16, 4), (97, 8, 1)):
        tasks = panel_plan(n, block, k)
        flat = [t for task in tasks for t in task]
        assert sorted(flat) == sorted(tiles_of(n, block)) and len(flat) == len(set(flat))
        for task in tasks:
            rows = rows_of(task, n, block)
            assert sum(b - a for a, b in rows) <= 2 * k * block and len(rows) <= 2
            assert all(a % block == 0 and (b % block == 0 or b == n) for a, b in rows)


def test_a_panel_build_gives_the_tiles_of_the_whole_problem_bit_for_bit(monkeypatch):
    """Tables made for some sample ranges alone (a worker's two panels, the last block short) against the whole
    problem's, with the (n, C, N) sides kept and made per tile."""
    from numerics.ws import softmax_tiles
    from numerics.ws.pair_tiles import panel_plan, rows_of
    from numerics.ws.softmax import build_softmax_tiles

    W, b, V, c, X, y = _softmax(n=203)
    for sides in (softmax_tiles.SIDES_BYTES, 0):
        monkeypatch.setattr(softmax_tiles, "SIDES_BYTES", sides)
        whole = build_softmax_tiles(W, b, V, c, X, y, "gelu", None, True, 16)
        for task in panel_plan(203, 16, 3):
            part = build_softmax_tiles(W, b, V, c, X, y, "gelu", None, True, 16, rows=rows_of(task, 203, 16))
            assert part.inner.n == sum(e - a for a, e in rows_of(task, 203, 16))
            assert [part.tile(I, J) for I, J in task] == [whole.tile(I, J) for I, J in task]


def test_remapped_rows_must_be_whole_blocks():
    from numerics.ws.pair_tiles import Remapped

    class Inner:
        block, width, tile_flops = 16, 1, 1.0

    with pytest.raises(ValueError, match="whole blocks"):
        Remapped(Inner(), ((0, 16), (40, 48)), 100)
    assert Remapped(Inner(), ((0, 16), (96, 100)), 100).local == {0: 0, 96: 16}


def test_a_worker_builds_only_the_rows_of_its_task():
    from numerics.ws.activations import get_activation
    from numerics.ws.pair_tiles import _BUILT, run_task
    from numerics.ws.softmax import softmax_recipe

    W, b, V, c, X, y = _softmax(n=400)
    recipe = softmax_recipe(W, b, V, c, X, y, get_activation("tanh"), True, 16)
    want = softmax_hessian_moments(W, b, V, c, X, y, "tanh", block=16)
    out = run_task(recipe, 0, ((0, 160), (16, 160)))
    (built,) = _BUILT.values()
    assert built.inner.n == 48     # blocks 0, 16 and 160: three blocks of the 25
    forget_built()
    assert len(out["values"]) == 2 and want.trace_sq > 0


def test_samples_from_a_file_are_read_by_rows_on_the_workers(tmp_path):
    """X given as np.load(path, mmap_mode="r"): the workers read their panels' rows from the file (the recipe holds
    the path and a sha256, not the samples) and the bits are those of the in-memory run; a file that changed is
    refused by name."""
    import dataclasses

    from numerics.ws.pair_tiles import ArrayFile, run_task
    from numerics.ws.softmax import softmax_recipe

    W, b, V, c, X, y = _softmax(n=300)
    np.save(tmp_path / "X.npy", X)
    Xm = np.load(tmp_path / "X.npy", mmap_mode="r")
    want = softmax_hessian_moments(W, b, V, c, X, y, "tanh", block=32)
    with TileRunner.local(1, tiles_per_task=4) as runner:
        got = softmax_hessian_moments(W, b, V, c, Xm, y, "tanh", block=32, tiles=runner)
    assert (got.trace.hex(), got.trace_sq.hex()) == (want.trace.hex(), want.trace_sq.hex())
    ref = ArrayFile.of(Xm)
    assert ref.shape == (300, 7) and len(ref.digest) == 64
    np.save(tmp_path / "X.npy", X[:299])
    from numerics.ws.activations import get_activation

    recipe = softmax_recipe(W, b, V, c, ref, y, get_activation("tanh"), True, 32)
    with pytest.raises(ValueError, match="changed"):
        run_task(dataclasses.replace(recipe), 0, ((0, 0),))
    with pytest.raises(ValueError, match="2-D float64"):
        np.save(tmp_path / "bad.npy", X.astype(np.float32))
        ArrayFile.of(tmp_path / "bad.npy")


def test_the_client_of_a_panel_run_streams_the_near_terms_to_the_same_bits(monkeypatch):
    """tr H and the near pair terms made a few blocks at a time, keeping no per-sample array (the client of a Dask
    run), against the whole problem's: the same additions in the same order."""
    from numerics.ws import softmax
    from numerics.ws.activations import get_activation

    W, b, V, c, X, y = _softmax(n=203)
    whole = softmax.build_softmax_tiles(W, b, V, c, X, y, "gelu", None, True, 16)
    for group in (1, 2, 64):
        monkeypatch.setattr(softmax, "GROUP_BLOCKS", group)
        tr, near, shape = softmax.streamed_near_terms(W, b, V, c, X, y, get_activation("gelu"), True, 16)
        assert (tr.hex(), near.hex()) == (whole.trace.hex(), whole.near.hex())
        assert (shape.n, shape.block, shape.tile_flops) == (203, 16, whole.tile_flops)


def test_workers_tune_glibc_malloc_once():
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 (which freezes the mmap threshold at 128 KB): run_task sets
    it back to serving tile temporaries from the heap, once per process, where glibc is there to ask."""
    from numerics.ws.pair_tiles import tune_malloc

    first = tune_malloc()
    assert tune_malloc() is first
    if sys.platform.startswith("linux") and os.path.exists("/lib/x86_64-linux-gnu/libc.so.6"):
        assert first is True
