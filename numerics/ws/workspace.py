"""Per-thread float64 scratch buffers, kept between calls of the float64 moment sums.

Why: a call of ``ce_hessian_moments`` at D = 2001, n = 2000 makes about 9 MB of temporaries (the augmented inputs,
the factor stacks, the b×b block buffers). glibc hands freed memory at the top of its heap back to the kernel, so
in a process whose allocation history left that memory at the top, the next call touches fresh pages again: on
this project's 2-core VM that was ~2 500 minor page faults and ~5 ms of kernel time in an 18 ms call, and 0 in a
process with another history. Buffers kept here are touched once per thread and reused; the bench's roofline row
reports the faults per call that remain.

Memory: at most :data:`WORKSPACE_MAX_BYTES` per thread stays allocated between calls (a request beyond it gets a
fresh array that is not kept); :func:`release` frees this thread's buffers. A nested use in the same thread (none
in this package) gets fresh arrays, so no two live uses share a buffer.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["WORKSPACE_MAX_BYTES", "release", "retained_bytes", "workspace"]

WORKSPACE_MAX_BYTES = 64 * 2**20
"""Bytes of scratch buffers one thread may keep between calls (64 MiB: n = 20 000 samples at M + N ≈ 400)."""

Take = Callable[[str, tuple[int, ...]], np.ndarray]


class _Local(threading.local):
    def __init__(self) -> None:
        self.bufs: dict[str, np.ndarray] = {}
        self.busy = False


_LOCAL = _Local()


def fresh(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A new uninitialised float64 array (``take`` without kept buffers)."""
    return np.empty(shape)


def _take(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised C-contiguous float64 array of ``shape``, a view of this thread's buffer ``name``."""
    size = math.prod(shape)
    bufs = _LOCAL.bufs
    buf = bufs.get(name)
    if buf is None or buf.size < size:
        other = sum(a.nbytes for key, a in bufs.items() if key != name)
        if other + 8 * size > WORKSPACE_MAX_BYTES:
            return np.empty(shape)
        buf = bufs[name] = np.empty(size)
    return buf[:size].reshape(shape)


@contextlib.contextmanager
def workspace() -> Iterator[Take]:
    """``with workspace() as take:`` ``take(name, shape)`` gives a scratch array; each name is one buffer, so a
    name must not be taken twice while its first array is still in use."""
    if _LOCAL.busy:
        yield fresh
        return
    _LOCAL.busy = True
    try:
        yield _take
    finally:
        _LOCAL.busy = False


def release() -> None:
    """Free this thread's scratch buffers."""
    _LOCAL.bufs.clear()


def retained_bytes() -> int:
    """Bytes of scratch buffers this thread keeps now."""
    return sum(a.nbytes for a in _LOCAL.bufs.values())
