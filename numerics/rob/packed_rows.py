"""Sign rows packed 8 units a byte, and their distinct rows found by hashing (the cell lists of
:mod:`numerics.rob.ball`). Exact: a hash collision is detected and resolved by sorting on the words."""
from __future__ import annotations

import numpy as np

__all__ = ["first_unique", "pack_rows"]


def pack_rows(rows):
    """Boolean rows (cells × units) packed 8 units a byte."""
    return np.packbits(rows, axis=1)


def _mix(x):
    """The splitmix64 finaliser (a bijection of uint64 that scatters nearby words)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def first_unique(packed: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct row of a packbits array, in order.

    Rows are sorted by a 64-bit hash of their words; the rows of one hash value form a run, and each run is
    checked to hold one row only (else, a hash collision, the rows are sorted by all their words)."""
    n, nb = packed.shape
    if n <= 1:
        return np.arange(n)
    w = -(-nb // 8)
    words = np.zeros((n, 8 * w), np.uint8)
    words[:, :nb] = packed
    words = words.view(np.uint64)
    h = _mix(words[:, 0])
    for i in range(1, w):
        h = _mix(h ^ words[:, i])
    order = np.argsort(h)
    sh = h[order]
    same = sh[1:] == sh[:-1]
    sw = words[order]
    if np.any(same & np.any(sw[1:] != sw[:-1], axis=1)):  # a collision: sort by the words themselves
        order = np.lexsort(words.T[::-1])
        sw = words[order]
        same = ~np.any(sw[1:] != sw[:-1], axis=1)
    starts = np.flatnonzero(np.r_[True, ~same])
    return np.sort(np.minimum.reduceat(order, starts))
