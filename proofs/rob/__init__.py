"""Derivations for the rob paper (see checks/evidence/spec.toml). ``artifacts()`` is what ``proofs.derive`` writes.

Modules: :mod:`~proofs.rob.definitions` (the network, the ReLU identities: rob.canonical),
:mod:`~proofs.rob.jump` (the gradient jump and its tangential norm: rob.jump), :mod:`~proofs.rob.circle`
(the even cycle: rob.circle), :mod:`~proofs.rob.width_2n` (rob.width_2n), :mod:`~proofs.rob.codegen`
(``artifacts()``).
"""

from proofs.rob.circle import (
    EVEN_CYCLE_A,
    EVEN_CYCLE_SIGNS,
    EVEN_CYCLE_THETA,
    EvenCycle,
    circle_lipschitz,
    cycle_net,
    even_cycle,
)
from proofs.rob.codegen import artifacts
from proofs.rob.definitions import relu, relu_identities
from proofs.rob.jump import jump, tangential, tangential_jump_norm
from proofs.rob.width_2n import Width2n, width_2n

__all__ = ["artifacts", "relu", "relu_identities", "jump", "tangential", "tangential_jump_norm", "width_2n",
           "Width2n", "even_cycle", "EvenCycle", "cycle_net", "circle_lipschitz", "EVEN_CYCLE_THETA", "EVEN_CYCLE_A",
           "EVEN_CYCLE_SIGNS"]
