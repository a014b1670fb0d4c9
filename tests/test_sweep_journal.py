"""The E sweeps' journal (checks/runners/sweep_journal.py): ``verify --resume`` runs only what a killed run left.

Oracle: the uninterrupted sweep (the plain loop ``[fn(x) for x in items]``); a "kill" is an exception raised by the
task function at a chosen item, after which the journal must hold exactly the items finished before it.
"""

import pickle

import numpy as np
import pytest

from checks.evidence.registry import Context
from checks.runners import sweep_journal
from checks.runners.campaign import Campaign, sweep
from checks.runners.sweep_journal import SweepJournal, item_hash

CALLS: list = []
KILL_AT: list = []


def _task(args):
    seed, k = args
    if KILL_AT and k == KILL_AT[0]:
        raise KeyboardInterrupt("killed")
    CALLS.append(k)
    return {"k": k, "x": np.random.default_rng([seed, k]).normal(size=3)}


def _task_rng(item):
    rng, k = item
    return (k, float(rng.normal()))   # advances the generator inside the item


@pytest.fixture(autouse=True)
def _reset():
    CALLS.clear()
    KILL_AT.clear()
    yield
    CALLS.clear()
    KILL_AT.clear()


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x["k"] == y["k"] and np.array_equal(x["x"], y["x"])


def _ctx(tmp_path, **kw):
    return Context(report_dir=tmp_path, sweep_journal=True, **kw)


ITEMS = [(7, k) for k in range(8)]


def test_a_killed_sweep_resumes_only_the_missing_items(tmp_path):
    ref = [_task(x) for x in ITEMS]
    CALLS.clear()
    KILL_AT.append(5)
    with pytest.raises(KeyboardInterrupt):
        sweep(_ctx(tmp_path), _task, ITEMS, "t: seeds")
    assert CALLS == [0, 1, 2, 3, 4]
    KILL_AT.clear()
    CALLS.clear()
    out = sweep(_ctx(tmp_path, resume=True), _task, ITEMS, "t: seeds")
    assert CALLS == [5, 6, 7]           # only what the kill left
    _same(out, ref)
    CALLS.clear()
    _same(sweep(_ctx(tmp_path, resume=True), _task, ITEMS, "t: seeds"), ref)
    assert CALLS == []                  # everything journaled now


def test_without_resume_the_journal_starts_afresh(tmp_path):
    sweep(_ctx(tmp_path), _task, ITEMS, "t: seeds")
    CALLS.clear()
    sweep(_ctx(tmp_path), _task, ITEMS, "t: seeds")
    assert CALLS == list(range(8))


def test_other_items_other_seed_or_other_code_are_never_reused(tmp_path, monkeypatch):
    sweep(_ctx(tmp_path), _task, ITEMS, "t: seeds")
    CALLS.clear()
    changed = [(7, k) for k in range(4)] + [(8, k) for k in range(4, 8)]   # half the items differ
    out = sweep(_ctx(tmp_path, resume=True), _task, changed, "t: seeds")
    assert CALLS == [4, 5, 6, 7]
    _same(out, [_task(x) for x in changed])
    CALLS.clear()
    sweep(_ctx(tmp_path, resume=True, seed=1), _task, ITEMS, "t: seeds")   # another master seed: another journal
    assert CALLS == list(range(8))
    CALLS.clear()
    monkeypatch.setattr(sweep_journal, "code_fingerprint", lambda: "other code")
    logged = []
    sweep(_ctx(tmp_path, resume=True, log=logged.append), _task, ITEMS, "t: seeds")
    assert CALLS == list(range(8))
    assert any("ignored" in s for s in logged)


def test_items_are_hashed_before_they_run(tmp_path):
    """A task that advances a generator inside its item still finds its record (hashed before the run)."""
    def items():
        return [(np.random.default_rng(k), k) for k in range(4)]

    ref = sweep(_ctx(tmp_path), _task_rng, items(), "r")
    j = SweepJournal(tmp_path, "r", _task_rng, 20260, resume=True)
    assert len(j.load(items())) == 4 and j.ignored == 0
    assert sweep(_ctx(tmp_path, resume=True), _task_rng, items(), "r") == ref


def test_a_damaged_record_runs_again(tmp_path):
    sweep(_ctx(tmp_path), _task, ITEMS, "t: seeds")
    j = SweepJournal(tmp_path, "t: seeds", _task, 20260, resume=True)
    j.path(item_hash(ITEMS[3])).write_bytes(b"\x80\x04 truncated")
    CALLS.clear()
    sweep(_ctx(tmp_path, resume=True), _task, ITEMS, "t: seeds")
    assert CALLS == [3]


def test_a_result_that_cannot_be_written_never_stops_the_run(tmp_path):
    with pytest.warns(RuntimeWarning, match="journal stopped"):
        out = sweep(_ctx(tmp_path), _unpicklable, ITEMS[:3], "u")
    assert len(out) == 3


def _unpicklable(args):
    return lambda: args


def test_no_journal_unless_asked_nor_for_quick_runs(tmp_path):
    sweep(Context(report_dir=tmp_path), _task, ITEMS, "t")
    sweep(Context(report_dir=tmp_path, sweep_journal=True, quick=True), _task, ITEMS, "t")
    assert not (tmp_path / "sweeps").exists()


def test_the_journal_is_written_as_items_finish_on_dask(tmp_path):
    """Through Campaign.map (in-process Dask cluster): records appear per item, and resume submits the rest."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_port=0, silence_logs=40) as cl, Client(cl) as client:
        ctx = _ctx(tmp_path, campaign=Campaign(client))
        ref = sweep(ctx, _task, ITEMS, "d")
        recs = sorted((tmp_path / "sweeps").rglob("item-*.pkl"))
        assert len(recs) == 8
        assert all(pickle.loads(p.read_bytes())["fingerprint"] == sweep_journal.code_fingerprint() for p in recs)
        recs[0].unlink()
        again = sweep(_ctx(tmp_path, campaign=Campaign(client), resume=True), _task, ITEMS, "d")
    _same(again, ref)


def test_verify_accepts_resume_without_a_cluster(tmp_path):
    from checks.runners.cli import _parser

    args = _parser().parse_args(["verify", "--resume", "--report-dir", str(tmp_path)])
    assert args.resume
    from checks.runners.cli import _campaign

    assert _campaign(args) is None
    args = _parser().parse_args(["falsify", "--resume"])
    with pytest.raises(ValueError, match="sharded campaign"):
        _campaign(args)
