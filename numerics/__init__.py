"""Evaluators: closed forms (numpy float64 and mpmath), autograd references, exact Lipschitz, convex programs.

The closed forms run on code generated from ``proofs/`` (``numerics/_derived``, see ``nox -s derive``).
"""
