"""The journal of an E level's sweep: every finished item is kept, so ``verify --resume`` runs only the rest.

An E level runs its independent units (seeds, data sets, nets) through :func:`checks.runners.campaign.sweep`.
In a full ``verify`` run (not ``--quick``) each finished item's result is written at once, atomically, to
``REPORT_DIR/sweeps/<sweep>/item-<hash>.pkl``, where ``<sweep>`` names the sweep (its description, its function
and the master seed) and ``<hash>`` is the SHA-256 of the item's pickle (its seed and configuration). A run killed
at any point keeps every item that finished; ``verify --resume`` (same report directory, seed and options) reads
them back and runs only the missing items. The result is the same list either way: items carry their own seeds, and
a resumed result is the pickle of the one computed.

A record is reused only when

* its item hash and the item's own pickle agree (the same seed and configuration), and
* it was written by the same code: :func:`code_fingerprint`, the SHA-256 of every ``.py`` file of the suite's
  packages (``checks``, ``numerics``, ``proofs``), of Python's version and of numpy's, scipy's and torch's.

Any other record is ignored, and the count of ignored records is said on the run's log. Without ``--resume`` a
sweep clears its own directory first, so stale records never accumulate. The records are pickles written by this
suite for this suite: a journal from somewhere else is code, so do not resume one you did not write.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from numerics.cluster import atomic_write

__all__ = ["SweepJournal", "code_fingerprint", "journal_for"]

PACKAGES = ("checks", "numerics", "proofs")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 (hex) of the suite's source (every ``.py`` under :data:`PACKAGES`, by relative path) and of the
    versions of Python, numpy, scipy and torch: a record written by other code or libraries is never reused."""
    from importlib import metadata

    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for pkg in PACKAGES:
        for p in sorted((root / pkg).rglob("*.py")):
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(repr(sys.version_info[:3]).encode())
    for lib in ("numpy", "scipy", "torch"):
        try:
            h.update(f"{lib}={metadata.version(lib)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{lib}=none".encode())
    return h.hexdigest()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")[:120]


def item_hash(item: Any) -> str:
    return hashlib.sha256(pickle.dumps(item, protocol=4)).hexdigest()


class SweepJournal:
    """Finished items of one sweep under ``root/sweeps/<name>``. ``resume=False`` clears the directory."""

    def __init__(self, root: Path, description: str, fn: Callable, seed: int, *, resume: bool,
                 log: Callable[[str], None] | None = None):
        name = f"{description}-{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}-seed{seed}"
        self.dir = Path(root) / "sweeps" / _slug(name)
        self.description, self.log = description, log
        self.fingerprint = code_fingerprint()
        self.broken = False       # set when a result cannot be written: the run goes on without the journal
        self.resumed = self.ignored = 0
        self.hashes: list[str] = []
        if not resume:
            self.clear()

    def path(self, h: str) -> Path:
        return self.dir / f"item-{h[:32]}.pkl"

    def clear(self) -> None:
        for p in self.dir.glob("item-*.pkl"):
            p.unlink()

    def load(self, items: Sequence) -> dict[int, Any]:
        """{index: result} of the items finished by a run of this code; the others are counted in ``ignored``."""
        done: dict[int, Any] = {}
        # hashed before anything runs: a function that advances a generator inside its item changes the item
        self.hashes = [item_hash(item) for item in items]
        if not self.dir.is_dir():
            return done
        for i, h in enumerate(self.hashes):
            p = self.path(h)
            if not p.exists():
                continue
            try:
                rec = pickle.loads(p.read_bytes())
            except Exception:     # noqa: BLE001 — cannot happen with atomic writes; the item simply runs again
                self.ignored += 1
                continue
            if rec.get("item_hash") != h or rec.get("fingerprint") != self.fingerprint:
                self.ignored += 1
                continue
            done[i] = rec["result"]
        self.resumed = len(done)
        if self.log is not None and (done or self.ignored):
            self.log(f"  {self.description}: {len(done)} of {len(items)} items resumed from {self.dir}"
                     + (f"; {self.ignored} record(s) of other code or items ignored" if self.ignored else ""))
        return done

    def record(self, index: int, result: Any) -> None:
        """Write item ``index`` (of the list given to :meth:`load`) at once, atomically. A result that cannot be
        pickled or written stops the journal, with a warning, and never the run: nothing computed is lost."""
        if self.broken:
            return
        try:
            h = self.hashes[index]
            blob = pickle.dumps({"item_hash": h, "fingerprint": self.fingerprint, "result": result}, protocol=4)
            self.dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path(h), blob)
        except Exception as exc:  # noqa: BLE001
            self.broken = True
            warnings.warn(f"{self.description}: the sweep's journal stopped ({type(exc).__name__}: {exc}); the run "
                          "goes on, but --resume will not find its remaining items", RuntimeWarning, stacklevel=2)


def journal_for(ctx, fn: Callable, description: str) -> SweepJournal | None:
    """The journal of a sweep run under ``ctx``: only when the context asks for one (``ctx.sweep_journal``, which
    ``verify`` sets for full runs), never for ``--quick`` runs (smoke runs keep nothing) nor when the environment
    variable ``SHALLOW_PROOFS_NO_SWEEP_JOURNAL`` is set."""
    if not getattr(ctx, "sweep_journal", False) or getattr(ctx, "quick", False) \
            or os.environ.get("SHALLOW_PROOFS_NO_SWEEP_JOURNAL"):
        return None
    root = getattr(ctx, "report_dir", None)
    if root is None:
        return None
    return SweepJournal(Path(root), description, fn, getattr(ctx, "seed", 0),
                        resume=bool(getattr(ctx, "resume", False)), log=getattr(ctx, "log", None))
