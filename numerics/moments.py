"""``numerics.moments``: the public name of :mod:`numerics.ws.moments` (re-export only)."""

from numerics.interop import ce_hessian_moments_from_module, softmax_hessian_moments_from_module
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
from numerics.ws.softmax import SoftmaxHessianMoments, softmax_dim, softmax_hessian_moments

__all__ = ["SoftmaxHessianMoments", "softmax_dim", "softmax_hessian_moments", "softmax_hessian_moments_from_module",
           "ce_hessian_moments_from_module", "HessianMoments", "LambdaSupGrad", "WSBounds",
           "ce_hessian_moments", "dim_of", "lambda_sup_grad", "validate_net", "ws_bounds"]
