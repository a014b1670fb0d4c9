"""Wolkowicz–Styan for the cross-entropy Hessian (``ws``; Omae et al. 2026, SPEC §1).

=================  ==========================================================================
module             concern
=================  ==========================================================================
``activations``    smooth activations φ, φ′, φ″ in numpy, mpmath and torch
``inputs``         validation of (W, b, v, c, X, y): named errors for shapes, dtypes, NaN/inf, labels
``bounds``         the Wolkowicz–Styan bounds from (tr A, tr A², D)
``moments``        closed-form tr H, tr H² (blocked sample-pair sums), λ_sup and its gradient
``softmax``        the same for multi-class softmax cross-entropy (C × C blocks; ws.softmax)
``deep``           the same for MLPs of any depth, binary and softmax (sample-pair Gram blocks; ws.deep)
``pair_tiles``     the sample-pair sums as (I ≤ J) tiles: in this process or on Dask, journaled, bit-identical
``binary_tiles``   the binary moments' float64 tiles; ``softmax_tiles`` the softmax ones (C × C blocks)
``estimators``     Hutchinson and Lanczos on Hessian-vector products (bench baselines)
``reference``      dense references: a torch.func Hessian and a SymPy Hessian in mpmath
=================  ==========================================================================
"""

from numerics.ws.activations import SmoothActivation, get_activation
from numerics.ws.deep import DeepHessianMoments, DeepHessianTrace, deep_hessian_moments, deep_hessian_trace
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
                                 SoftmaxHessianTrace,
                                 SoftmaxLambdaSupGrad,
                                 softmax_dim,
                                 softmax_hessian_moments,
                                 softmax_hessian_trace,
                                 softmax_lambda_sup_grad,
)
from numerics.ws.trace_only import HessianTrace, ce_hessian_trace
from numerics.ws.training import CurvatureMonitor, lambda_sup

__all__ = ["DeepHessianMoments", "DeepHessianTrace", "deep_hessian_moments", "deep_hessian_trace",
           "lambda_sup", "CurvatureMonitor", "HessianTrace", "ce_hessian_trace", "SoftmaxHessianTrace",
           "softmax_hessian_trace", "SoftmaxHessianMoments",
           "SoftmaxLambdaSupGrad", "softmax_lambda_sup_grad",
           "softmax_dim",
           "softmax_hessian_moments", "softmax_hessian_moments_from_module",
           "ce_hessian_moments_from_module", "HessianMoments", "LambdaSupGrad", "SmoothActivation", "WSBounds",
           "ce_hessian_moments", "dim_of", "get_activation", "lambda_sup_grad", "validate_net", "ws_bounds"]
