"""Derivations for the flat paper (see checks/evidence/spec.toml). ``artifacts()`` is what ``proofs.derive`` writes.

Modules: :mod:`~proofs.flat.definitions` (symbols, activation families, the network, the loss), one derivation
per claim (:mod:`~proofs.flat.symmetry`, :mod:`~proofs.flat.trace`, :mod:`~proofs.flat.upsilon`,
:mod:`~proofs.flat.duality`, :mod:`~proofs.flat.population`), and :mod:`~proofs.flat.codegen` (the artifacts).
"""

from proofs.flat.codegen import artifacts
from proofs.flat.definitions import FAMILIES
from proofs.flat.duality import DualityDerivation, derive_duality
from proofs.flat.population import KernelDerivation, derive_kernels
from proofs.flat.symmetry import HomogeneityResult, derive_homogeneity
from proofs.flat.trace import TRACE_SIZES, TraceCase, TraceCheck, check_trace_against_hessian, trace_case
from proofs.flat.upsilon import UpsilonDerivation, derive_upsilon

__all__ = ["artifacts", "FAMILIES", "derive_homogeneity", "HomogeneityResult", "check_trace_against_hessian",
           "trace_case", "TraceCase", "TraceCheck", "TRACE_SIZES", "derive_upsilon", "UpsilonDerivation",
           "derive_duality", "DualityDerivation", "derive_kernels", "KernelDerivation"]
