r"""The branch and bound of :func:`numerics.rob.bracket.certified_bracket` on several processes.

After a warm-up on one process, the open nodes are dealt round-robin in the order of their bounds to ``workers``
processes forked from the running search (each inherits the net, the lower search and every bound so far, and owns
exactly one part of the open nodes: their union is the open set, so the upper end stays proved). The workers share one
number, the largest lower end any of them has witnessed (a genuine exact point of the domain, evaluated exactly in
that worker), and prune against it. Each child returns its part's result through a pipe: its status, the bound that
holds its upper end, its witness (which the parent evaluates again, exactly, before it may raise the lower end) and its
counts. A child that does not answer by its deadline (plus ``GRACE`` seconds) or that fails is stopped, and the largest
bound of the nodes it was given enters the upper end in its place: a lost worker widens the bracket, never falsifies it.

Forking needs the ``fork`` start method (Linux, macOS) and a process that may have children (not a daemonic
multiprocessing worker): otherwise, and when ``workers`` ≤ 1, the search stays on one process.
"""
from __future__ import annotations

import heapq
import multiprocessing as mp
import os
import pickle
import time
import traceback

__all__ = ["Team", "can_fork", "deal"]

GRACE = 20.0     # seconds a child may overrun the deadline before its part is taken at its bounds


def can_fork() -> bool:
    """True when this process may fork worker processes (POSIX fork, not a daemonic multiprocessing worker)."""
    return hasattr(os, "fork") and "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def deal(heap: list, workers: int) -> list[list]:
    """The heap's entries (tuples ordered by −bound first) dealt round-robin in bound order: part i gets ranks
    i, i + workers, …, so that every part starts with nodes as high as the others'. Each part is a heap."""
    ranked = sorted(heap)
    parts = [ranked[i::workers] for i in range(workers)]
    for p in parts:
        heapq.heapify(p)
    return parts


class Team:
    """The processes of one branch and bound. ``role`` is 0 in the parent, i ≥ 1 in child i."""

    def __init__(self, workers: int):
        self.workers = int(workers)
        self.role = 0
        self._lock = mp.Lock()
        self._low = mp.RawValue("d", 0.0)
        self.children = []            # (pid, read end of the pipe, the largest bound of its part)

    def fork(self, heap: list, stuck: list) -> None:
        """Split the open nodes among the workers: afterwards ``heap`` holds this process's part (the parent keeps
        part 0 and the stuck sphere leaves; children get none of those)."""
        parts = deal(heap, self.workers)
        for i in range(1, self.workers):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:                       # the child: its part only
                os.close(r)
                self.role, self._w, self.children = i, w, []
                heap[:] = parts[i]
                stuck.clear()
                return
            os.close(w)
            top = -parts[i][0][0] if parts[i] else 0.0
            self.children.append((pid, r, top))
        heap[:] = parts[0]

    def share(self, own_low: float) -> float:
        """Publish this worker's witnessed lower end; returns the largest any worker has published."""
        with self._lock:
            if own_low > self._low.value:
                self._low.value = own_low
            return self._low.value

    def child_exit(self, make_result) -> None:
        """In a child: send ``make_result()`` (or the failure) to the parent and end the process. Never returns."""
        code = 0
        try:
            try:
                data = pickle.dumps(("ok", make_result()))
            except BaseException:          # noqa: BLE001 - the parent takes the part at its bounds
                data = pickle.dumps(("error", traceback.format_exc()))
                code = 1
            view = memoryview(data)
            while view:
                view = view[os.write(self._w, view):]
            os.close(self._w)
        finally:
            os._exit(code)

    def abandon(self) -> None:
        """In the parent, when its own search failed: stop every child."""
        for pid, r, _ in self.children:
            for act, arg in ((os.kill, (pid, 9)), (os.waitpid, (pid, 0)), (os.close, (r,))):
                try:
                    act(*arg)
                except OSError:
                    pass
        self.children = []

    def collect(self, deadline: float) -> list[tuple]:
        """In the parent: one (result or None, the largest bound of the child's part, message) per child. A child
        silent past ``deadline + GRACE`` is killed; its result is None."""
        out = []
        for pid, r, top in self.children:
            chunks, ok = [], False
            end = deadline + GRACE
            os.set_blocking(r, False)
            while True:
                try:
                    buf = os.read(r, 1 << 20)
                except BlockingIOError:
                    if time.perf_counter() > end:
                        break
                    time.sleep(0.005)
                    continue
                if not buf:
                    ok = True
                    break
                chunks.append(buf)
            os.close(r)
            if not ok:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            res, msg = None, "no answer by the deadline" if not ok else ""
            if ok:
                try:
                    kind, val = pickle.loads(b"".join(chunks))
                    res, msg = (val, "") if kind == "ok" else (None, str(val).strip().splitlines()[-1])
                except Exception as exc:        # noqa: BLE001 - a truncated answer: the part at its bounds
                    msg = f"unreadable answer: {exc!r}"
            out.append((res, top, msg))
        self.children = []
        return out
