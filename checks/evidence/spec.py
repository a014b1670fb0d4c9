"""The claims spec, machine-readable: ``checks/evidence/spec.toml`` (papers and claims), loaded and validated.

``spec.toml`` is written from ``SPEC.md`` (the shared outside reference). The registry builds every claim's
statement, LaTeX and SPEC levels from it, so nothing is typed twice. Extra spec files (a paper kept
outside this repo, or a test's toy paper) are named in the ``SHALLOW_PROOFS_EXTRA_SPEC`` environment
variable (``os.pathsep``-separated); their papers and claims are added, and an ID defined twice is an error.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from checks.evidence.outcome import LEVELS, Level

SPEC_FILE = Path(__file__).with_name("spec.toml")
EXTRA_ENV = "SHALLOW_PROOFS_EXTRA_SPEC"
STATUSES = ("implemented", "planned")


class SpecError(ValueError):
    """The spec, the registry and the packages disagree (a missing module, an unknown or duplicate ID)."""


@dataclass(frozen=True)
class Paper:
    name: str  # the short name: the claim prefix and the package name in every layer
    key: str  # author-year key, as in the BibTeX
    title: str
    bibtex: str
    spec_section: int | str
    package: str  # the checks package that registers its claims
    derive: str | None  # the proofs package whose artifacts() ``proofs.derive`` writes (None: nothing derived)


@dataclass(frozen=True)
class ClaimSpec:
    id: str
    paper: str
    statement: str
    latex: str
    levels: tuple[Level, ...]
    status: str
    spec_section: str
    spec: str = ""  # SPEC.md's table text, verbatim
    beyond: bool = False


@dataclass(frozen=True)
class Spec:
    papers: dict[str, Paper]
    claims: dict[str, ClaimSpec]
    files: tuple[str, ...]


def parse_levels(text: str, where: str) -> tuple[Level, ...]:
    out = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in out if s not in LEVELS]
    if bad or not out:
        raise SpecError(f"{where}: levels {text!r} must be a comma list of {', '.join(LEVELS)}")
    return out  # type: ignore[return-value]


def _read(path: Path, papers: dict[str, Paper], claims: dict[str, ClaimSpec]) -> None:
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SpecError(f"spec file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"spec file {path} is not valid TOML: {exc}") from None
    for name, p in data.get("papers", {}).items():
        if name in papers:
            raise SpecError(f"{path}: paper {name!r} is defined twice")
        try:
            papers[name] = Paper(name, p["key"], p["title"], p.get("bibtex", ""), p.get("spec_section", ""),
                                 p.get("package", f"checks.{name}"), p.get("derive"))
        except KeyError as exc:
            raise SpecError(f"{path}: paper {name!r} lacks the field {exc}") from None
    for cid, c in data.get("claims", {}).items():
        if cid in claims:
            raise SpecError(f"{path}: claim {cid!r} is defined twice")
        prefix = cid.split(".")[0]
        if c.get("paper", prefix) != prefix:
            raise SpecError(f"{path}: claim {cid!r} has paper {c.get('paper')!r}, but its prefix is {prefix!r}")
        status = c.get("status", "implemented")
        if status not in STATUSES:
            raise SpecError(f"{path}: claim {cid!r} has status {status!r}; expected one of {STATUSES}")
        try:
            claims[cid] = ClaimSpec(cid, prefix, c["statement"], c.get("latex", ""),
                                    parse_levels(c["levels"], f"{path}: {cid}"), status,
                                    str(c.get("spec_section", "")), c.get("spec", ""), bool(c.get("beyond", False)))
        except KeyError as exc:
            raise SpecError(f"{path}: claim {cid!r} lacks the field {exc}") from None


def load(path: Path | None = None, extra: str | None = None) -> Spec:
    """The spec: ``path`` (default ``checks/evidence/spec.toml``) plus the files named in ``extra`` (default: the
    ``SHALLOW_PROOFS_EXTRA_SPEC`` environment variable). Every claim's prefix must name a paper."""
    files = [Path(path) if path else SPEC_FILE]
    extra = os.environ.get(EXTRA_ENV, "") if extra is None else extra
    files += [Path(p) for p in extra.split(os.pathsep) if p]
    papers: dict[str, Paper] = {}
    claims: dict[str, ClaimSpec] = {}
    for f in files:
        _read(f, papers, claims)
    for cid, c in claims.items():
        if c.paper not in papers:
            raise SpecError(f"claim {cid!r}: no paper {c.paper!r} in the spec (papers: {', '.join(papers)})")
    return Spec(papers, claims, tuple(str(f) for f in files))
