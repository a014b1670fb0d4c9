"""Regenerate every derived artifact (``python -m proofs.derive [--check]``).

Each proofs module listed in :data:`MODULES` exposes ``artifacts() -> list[Artifact]``. The default
writes them; ``--check`` exits 1 and names the files that differ from a fresh derivation (CI drift gate).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("proofs.ws.core", "proofs.flat.core", "proofs.rob.core")


def collect(modules=MODULES):
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        t0 = time.perf_counter()
        arts = mod.artifacts()
        print(f"derived {name}: {len(arts)} artifacts in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        yield from arts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if committed files differ")
    ap.add_argument("--modules", nargs="+", default=list(MODULES))
    args = ap.parse_args(argv)
    drift = []
    for art in collect(args.modules):
        path = ROOT / art.path
        old = path.read_text() if path.exists() else None
        if old != art.text:
            drift.append(art.path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(art.text)
    if args.check and drift:
        print("derived files drift from a fresh derivation:\n  " + "\n  ".join(drift), file=sys.stderr)
        return 1
    print(("up to date" if not drift else f"wrote {len(drift)} files: {', '.join(drift)}"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
