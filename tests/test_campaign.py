"""Falsification campaigns on Dask (checks/runners/campaign.py, issue 15).

Oracle independence: the reference result of every distributed campaign is the same shards run one after
the other in this process, in shard order, without Dask (``Campaign(None)``); the planted bug is the √D
one of tests/test_planted_bugs.py, and ``replay`` rebuilds the *real* property, which refutes its case.
The clusters here are in-process (``processes=False``) so the file stays within seconds, except one: a
2-worker LocalCluster of real worker processes (what the CLI's ``--workers K`` starts, ``Campaign.local``), one of
which is SIGKILLed mid-campaign.
"""

import json
import os
import random
import time

import pytest
from hypothesis import strategies as st

from checks.evidence.registry import Context
from checks.runners.campaign import Campaign, Journal, PropertyRef, fingerprint, merge, plan, run_shard, shard_seed
from checks.runners.cli import main
from checks.runners.falsify import Property, falsify, replay

# an in-process scheduler and its workers call `random` in their own threads while a shard's Hypothesis run is
# generating, which Hypothesis reports as "random used inside a strategy". Worker processes (--workers K) do not.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module:hypothesis.errors.HypothesisDeprecationWarning")


def _slow_screen(x: int) -> float:
    time.sleep(0.001)  # a shard lasts long enough for a worker to be lost in the middle of it
    return float(x % 997) - 1000.0  # never violated


def _slow_property() -> Property:
    return Property("test/slow-true", st.integers(0, 10**6), _slow_screen, _slow_screen)


def _rare(x: int) -> float:
    """A rare failure (about 1 in 200 integers, scattered by a multiplicative hash) that no margin leads to."""
    return 1.0 if (x * 2654435761) % 2**32 < 2**32 // 200 else -1.0


def _rare_property() -> Property:
    return Property("test/rare", st.integers(1, 10**6), _rare, _rare)


def _planted_property() -> Property:
    from test_planted_bugs import ws_bounds_sqrt_d

    from checks.ws.theorem import theorem_equality_property

    return theorem_equality_property(ws_bounds_sqrt_d)


# factories and their arguments go to the workers by reference (a planted copy's strategies do not pickle)
SLOW = PropertyRef.recipe(_slow_property)
RARE = PropertyRef.recipe(_rare_property)
PLANTED = PropertyRef.recipe(_planted_property)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_port=0, silence_logs=40) as cl, Client(cl) as client:
        yield cl, client


def _campaign(client, **kw) -> Campaign:
    return Campaign(client, **kw)


def _run(campaign, prop, tmp_path, budget, seed=3):
    ctx = Context(seed=1, report_dir=tmp_path)
    (res,), timing = campaign.falsify_many(ctx, [prop], [seed], [budget])
    return res, timing


# ------------------------------------------------------------------------------------------- the plan
def test_plan_splits_the_budget_and_derives_distinct_seeds():
    shards = plan("p", 123, 1001, 4)
    assert [s.budget for s in shards] == [251, 250, 250, 250]
    assert len({s.seed for s in shards}) == 4 and all(0 <= s.seed < 2**31 for s in shards)
    assert plan("p", 123, 3, 8) == plan("p", 123, 3, 3)  # never a shard without examples
    assert shard_seed(123, 0, 1) == 123  # one shard is exactly the one-process run
    with pytest.raises(ValueError, match="shards"):
        plan("p", 1, 10, 0)


def test_one_shard_is_the_one_process_run():
    (s,) = plan(RARE.name, 5, 40, 1)
    one = falsify(RARE.local, budget=40, seed=5)
    assert fingerprint(merge(RARE.name, [run_shard(RARE, s, None)])) == fingerprint(one)


def test_merge_ignores_completion_order():
    rows = [run_shard(RARE, s, None) for s in plan(RARE.name, 8, 240, 6)]
    found = [r["counterexample"] is not None for r in rows]
    assert sum(found) >= 2 and not all(found), found  # shards 2 and 4 find one
    ref = fingerprint(merge(RARE.name, rows))
    for k in range(5):
        random.Random(k).shuffle(rows)
        assert fingerprint(merge(RARE.name, rows)) == ref
    first = min((r for r in rows if r["counterexample"] is not None), key=lambda r: r["shard"]["index"])
    assert ref["counterexample"] == first["counterexample"]  # the lowest-numbered shard's, whoever finished first


# ---------------------------------------------------------------------------------------- on a cluster
def test_planted_bug_campaign_finds_persists_and_sends_the_counterexample(cluster, tmp_path):
    with _campaign(cluster[1], shards=2) as camp:
        res, timing = _run(camp, PLANTED, tmp_path, budget=20)
        deadline = time.time() + 5
        while not camp.received and time.time() < deadline:  # events travel apart from the results
            time.sleep(0.05)
        assert camp.received, "no reproducer event reached the client"
    assert res.found and res.counterexample_margin > 0
    assert timing["shards_run"] == 2 and sum(w["shards"] for w in timing["per_worker"].values()) == 2
    files = sorted((tmp_path / "counterexamples").glob("*.json"))
    assert files and {m["name"] for m in camp.received} <= {f.name for f in files}
    assert [str(f) for f in files] == res.reproducers
    again = replay(res.reproducers[0])  # the real property refutes the planted bug's case
    assert again["property"] == PLANTED.name and again["mpmath_margin"] <= 0


def test_merged_result_does_not_depend_on_the_workers(cluster, tmp_path):
    from distributed import Client, LocalCluster

    bug = RARE  # found by shards 2 and 4 of six: the merged counterexample is shard 2's, whoever finishes first
    ref, _ = _run(Campaign(None, shards=6), bug, tmp_path / "seq", budget=240, seed=8)
    two, t2 = _run(_campaign(cluster[1], shards=6), bug, tmp_path / "two", budget=240, seed=8)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_port=0, silence_logs=40) as cl, Client(cl) as c1:
        one, t1 = _run(_campaign(c1, shards=6), bug, tmp_path / "one", budget=240, seed=8)
    assert ref.found and fingerprint(one) == fingerprint(two) == fingerprint(ref)
    assert len(t1["per_worker"]) == 1 and t2["shards_run"] == 6


def test_interrupted_campaign_keeps_its_shards_and_resume_runs_the_rest(cluster, tmp_path):
    seen = []

    def stop_after_two(summary):
        seen.append(summary["shard"]["index"])
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(_campaign(cluster[1], shards=8, on_shard=stop_after_two), SLOW, tmp_path, budget=160)
    journal = Journal(tmp_path / "campaigns", SLOW.name, 3, 160, 8)
    assert sorted(journal.done()) == sorted(seen)
    res, timing = _run(_campaign(cluster[1], shards=8, resume=True), SLOW, tmp_path, budget=160)
    assert timing["shards_resumed"] == 2 and timing["shards_run"] == 6
    ref, _ = _run(Campaign(None, shards=8), SLOW, tmp_path / "ref", budget=160)
    assert fingerprint(res) == fingerprint(ref) and res.examples == 160
    # without --resume the journal starts over
    _, again = _run(_campaign(cluster[1], shards=8), SLOW, tmp_path, budget=160)
    assert again["shards_resumed"] == 0 and again["shards_run"] == 8


def test_a_lost_worker_loses_only_its_shard(tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_port=0, silence_logs=40) as cl, Client(cl) as client:
        lost = []

        def lose_a_busy_worker(summary):
            if lost:
                return
            busy = [w for w, keys in client.processing().items() if keys]
            if busy:  # the scheduler drops it as it drops a worker whose process died
                client.run_on_scheduler(_remove_worker, busy[0])
                lost.append(busy[0])

        res, timing = _run(_campaign(client, shards=10, on_shard=lose_a_busy_worker), SLOW, tmp_path, budget=200)
        assert lost
        # the shard the lost worker was running went to processing twice: it was rescheduled, not dropped
        assert client.run_on_scheduler(_rescheduled) >= 1
    ref, _ = _run(Campaign(None, shards=10), SLOW, tmp_path / "ref", budget=200)
    assert timing["shards_run"] == 10 and fingerprint(res) == fingerprint(ref)
    assert len(Journal(tmp_path / "campaigns", SLOW.name, 3, 200, 10).done()) == 10


async def _remove_worker(address, dask_scheduler=None):
    await dask_scheduler.remove_worker(address, stimulus_id="test-lost-worker", close=True)


def _rescheduled(dask_scheduler=None):
    starts = {}
    for key, _start, finish, *_ in dask_scheduler.transition_log:
        if finish == "processing":
            starts[key] = starts.get(key, 0) + 1
    return sum(n > 1 for n in starts.values())


def _draw(args) -> float:
    import numpy as np

    seed, k = args
    time.sleep(0.01 * (k % 3))  # tasks finish out of order
    return float(np.random.default_rng([seed, k]).normal())


def test_sweep_on_the_cluster_is_the_plain_loop(cluster, tmp_path):
    from checks.runners.campaign import sweep

    items = [(11, k) for k in range(9)]
    plain = sweep(Context(), _draw, items, "draws")
    assert plain == [_draw(x) for x in items]
    ctx = Context(campaign=Campaign(cluster[1]), report_dir=tmp_path)
    assert sweep(ctx, _draw, items, "draws") == plain


# ------------------------------------------------------------------------------------------------- the CLI
def test_cli_sharded_falsify_against_an_existing_scheduler(cluster, tmp_path, capsys):
    args = ["falsify", "--claims", "ws.theorem", "--budget", "12", "--shards", "3", "--no-progress"]
    assert main([*args, "--scheduler", cluster[0].scheduler_address, "--report-dir", str(tmp_path / "d")]) == 0
    assert main([*args, "--report-dir", str(tmp_path / "s")]) == 0  # the same shards in this process
    out = capsys.readouterr()
    assert "campaign: 9 shards run" in out.err
    d, s = (json.loads((tmp_path / k / "falsify.json").read_text())["claims"][0]["levels"]["F"] for k in "ds")
    assert d["metric"] == s["metric"] and d["details"] == s["details"]
    assert "2 Dask worker(s)" in d["timing"]["campaign"]["engine"]
    # the summary is deterministic: no throughput, no worker address (those are timing)
    assert "ex/s" not in d["summary"] and "tcp://" not in d["summary"] and "campaign: 9 shards run" in d["summary"]


def test_cli_verify_on_a_cluster_is_todays_run(cluster, tmp_path):
    """verify takes --scheduler too; a verify-sized budget is one shard per property, run with the property's own
    seed: the F level's evidence is that of the run without Dask."""
    args = ["verify", "--claims", "ws.theorem", "--levels", "F", "--budget", "10", "--no-progress"]
    assert main([*args, "--scheduler", cluster[0].scheduler_address, "--report-dir", str(tmp_path / "d")]) == 0
    assert main([*args, "--report-dir", str(tmp_path / "p")]) == 0
    d, p = (json.loads((tmp_path / k / "verify.json").read_text())["claims"][0]["levels"]["F"] for k in "dp")
    assert d["metric"] == p["metric"] and d["details"] == p["details"]
    assert "campaign" in d["timing"] and "campaign" not in p["timing"]


def test_scheduler_alone_reads_dask_configuration(cluster):
    import dask

    with dask.config.set({"scheduler-address": cluster[0].scheduler_address}):
        with Campaign.connect(None) as camp:
            assert camp.workers == 2 and camp.own_client
    assert cluster[1].status == "running"  # the campaign closed its own client only


@pytest.mark.parametrize(("extra", "msg"), [
    (["--workers", "0"], "--workers must be a positive integer"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "give one of them"),
    (["--resume"], "--resume continues a sharded campaign"),
    (["--scheduler"], "scheduler-address"),
])
def test_cli_rejects_bad_campaign_options(extra, msg, tmp_path, capsys):
    import dask

    with dask.config.set({"scheduler-address": None}):
        assert main(["falsify", "--claims", "ws.theorem", "--report-dir", str(tmp_path), *extra]) == 2
    assert msg in capsys.readouterr().err


@pytest.mark.skipif(bool(os.environ.get("SHALLOW_PROOFS_SKIP_DASK_PROCESSES")),
                    reason="SHALLOW_PROOFS_SKIP_DASK_PROCESSES is set (this test starts worker processes)")
@pytest.mark.usefixtures("hang_watchdog")
def test_a_killed_worker_process_loses_only_its_shard(tmp_path):
    """The same as the lost-worker test with real worker processes (what --workers K starts): SIGKILL one while it
    runs a shard; its nanny starts a fresh worker and the scheduler runs the shard again."""
    import signal

    environ = dict(os.environ)
    with Campaign.local(2, shards=10) as camp:
        pids = camp.client.run(os.getpid)
        killed = []

        def kill_a_busy_worker(summary):
            busy = [w for w, keys in camp.client.processing().items() if keys and w in pids]
            if busy and not killed:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])

        camp.on_shard = kill_a_busy_worker
        res, timing = _run(camp, SLOW, tmp_path, budget=200)
        assert killed and timing["shards_run"] == 10
    # the nanny that restarted the killed worker wrote MALLOC_TRIM_THRESHOLD_, OMP_NUM_THREADS, … again: closing the
    # campaign put os.environ back
    assert dict(os.environ) == environ
    ref, _ = _run(Campaign(None, shards=10), SLOW, tmp_path / "ref", budget=200)
    assert fingerprint(res) == fingerprint(ref)


def test_ctrl_c_ends_a_cli_campaign_without_waiting_for_its_running_shard(tmp_path):
    """`python -m checks falsify --workers 1` on one endless shard, then Ctrl-C: a worker asked to close first tries
    to finish its running task, so leaving the campaign on an exception kills the worker processes it started
    (finished shards are journaled already). In a subprocess, so that a hang is a failure, not a stuck run."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    cmd = [sys.executable, "-m", "checks", "falsify", "--claims", "ws.theorem", "--budget", "3000000", "--shards",
           "1", "--workers", "1", "--report-dir", str(tmp_path)]
    # SIGINT back to its default in the child: pytest-xdist's workers ignore it, and a child inherits that
    proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(25.0)  # imports, the cluster and the shard's start, on a loaded machine
        assert proc.poll() is None, proc.stderr.read()
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        # measured with two cores busy: 1.1 s, against 5.0 s when closing waits for Dask's own timeouts (no kill)
        assert time.perf_counter() - t0 < 3.5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()



def test_the_search_has_no_target_phase(monkeypatch):
    """Engine revision 3: Hypothesis's hill climber stalled about one ws.bound shard in ten (ENGINE_REVISION's note);
    a run is generation and shrinking only, and the journal is keyed by the engine."""
    import checks.runners.falsify as F

    seen = []
    real = F.settings

    def spy(*a, **k):
        seen.append(k.get("phases"))
        return real(*a, **k)

    monkeypatch.setattr(F, "settings", spy)
    falsify(Property("ws.test/phases", st.integers(0, 9), lambda x: -1.0, lambda x: -1.0), budget=5, seed=0)
    from hypothesis import Phase

    assert seen and all(Phase.target not in p for p in seen)
    assert Journal("/x", "ws.bound/upper", 1, 10, 2, 2).dir.name.endswith(f"-r2-e{F.ENGINE_REVISION}")
