"""``numerics.kinks``: the public name of :mod:`numerics.rob` (re-export only)."""

from numerics.rob import *  # noqa: F403
from numerics.rob import __all__  # noqa: F401
