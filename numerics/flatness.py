"""``numerics.flatness``: the public name of :mod:`numerics.flat` (re-export only)."""

from numerics.flat import *  # noqa: F403
from numerics.flat import __all__  # noqa: F401
