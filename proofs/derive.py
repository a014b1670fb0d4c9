"""Regenerate every derived artifact (``python -m proofs.derive [--check]``).

Every paper in ``checks/evidence/spec.toml`` names its proofs package (``derive = "proofs.<paper>"``), which
exposes ``artifacts() -> list[Artifact]``; a named package that is missing is an error. The default
writes the artifacts; ``--check`` exits 1 and names the files that differ from a fresh derivation (CI drift gate).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "checks" / "evidence" / "spec.toml"  # the papers table (read as data: proofs do not import checks)


def modules() -> list[str]:
    """The proofs package of every paper in the spec, in spec order."""
    papers = tomllib.loads(SPEC.read_text())["papers"]
    return [p["derive"] for p in papers.values() if p.get("derive")]


def collect(names=None):
    for name in names or modules():
        mod = importlib.import_module(name)  # a missing package is an error, never a skip
        if not callable(getattr(mod, "artifacts", None)):
            raise AttributeError(f"{name} has no artifacts() function")
        t0 = time.perf_counter()
        arts = mod.artifacts()
        print(f"derived {name}: {len(arts)} artifacts in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        yield from arts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if committed files differ")
    ap.add_argument("--modules", nargs="+", default=None, help="proofs packages (default: every paper's)")
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
