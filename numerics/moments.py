"""``numerics.moments``: the public name of :mod:`numerics.ws.moments` (re-export only)."""

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

__all__ = ["HessianMoments", "LambdaSupGrad", "WSBounds", "ce_hessian_moments", "dim_of", "lambda_sup_grad",
           "validate_net", "ws_bounds"]
