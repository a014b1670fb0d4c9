"""``numerics.moments``: the public name of :mod:`numerics.ws.moments` (re-export only)."""

from numerics.interop import ce_hessian_moments_from_module
from numerics.ws.moments import (
                                 HessianMoments,
                                 LambdaSupGrad,
                                 WSBounds,
                                 ce_hessian_moments,
                                 dim_of,
                                 lambda_sup_grad,
                                 validate_net,
                                 ws_bounds,
)

__all__ = ["ce_hessian_moments_from_module", "HessianMoments", "LambdaSupGrad", "WSBounds",
           "ce_hessian_moments", "dim_of", "lambda_sup_grad", "validate_net", "ws_bounds"]
