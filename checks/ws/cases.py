"""The ws paper's one list of deterministic cases: the paper's size (M = 2, N = 3), with and without
biases, every smooth activation."""

from __future__ import annotations

from checks.evidence.registry import Context

ACTIVATIONS = ("sigmoid", "tanh", "softplus", "gelu")


def small_cases(ctx: Context, salt: str, n: int = 12):
    rng = ctx.rng(salt)
    for act in ACTIVATIONS:
        for bias in (True, False):
            N, M = 3, 2
            W, b, v = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=N) * 1.5
            X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n).astype(float)
            c = float(rng.normal())
            yield act, bias, (W, b if bias else None, v, c if bias else None, X, y)
