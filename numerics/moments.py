"""``numerics.moments``: the public name of :mod:`numerics.ws.moments` (re-export only)."""

from numerics.ws.modules import ce_hessian_moments_from_module, softmax_hessian_moments_from_module
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
from numerics.ws.softmax import (
                                 SoftmaxHessianMoments,
                                 SoftmaxLambdaSupGrad,
                                 softmax_dim,
                                 softmax_hessian_moments,
                                 softmax_lambda_sup_grad,
)

__all__ = ["SoftmaxHessianMoments", "SoftmaxLambdaSupGrad", "softmax_lambda_sup_grad", "softmax_dim",
           "softmax_hessian_moments", "softmax_hessian_moments_from_module",
           "ce_hessian_moments_from_module", "HessianMoments", "LambdaSupGrad", "WSBounds",
           "ce_hessian_moments", "dim_of", "lambda_sup_grad", "validate_net", "ws_bounds"]
