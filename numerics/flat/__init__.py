"""Flatness of c-homogeneous two-layer nets (``flat``; Vardhan, Taheri, Mazumdar 2026, SPEC §2)."""

from numerics.flat.core import *  # noqa: F403
from numerics.flat.core import __all__  # noqa: F401
