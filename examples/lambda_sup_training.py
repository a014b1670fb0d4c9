"""Train a small tanh net on two Gaussian classes with and without a λ_sup penalty, and plot λ_sup over the steps.

    python examples/lambda_sup_training.py [out.png]

λ_sup = μ + √(D−1)σ of the mean BCE Hessian is a differentiable torch scalar of the model's own parameters
(numerics.ws.lambda_sup), so it can sit in the loss; CurvatureMonitor logs tr H, tr H² and λ_sup every k steps.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
from matplotlib.figure import Figure

from numerics.ws import CurvatureMonitor, lambda_sup


def run(gamma: float, steps: int = 300, seed: int = 0) -> CurvatureMonitor:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    X = torch.tensor(np.vstack([rng.normal([-1, 0], 0.8, (100, 2)), rng.normal([1, 0.5], 0.8, (100, 2))]))
    y = torch.tensor(np.r_[np.zeros(100), np.ones(100)])
    model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    mon = CurvatureMonitor(X, y, every=10)
    for step in range(steps + 1):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(X)[:, 0], y)
        if gamma:
            loss = loss + gamma * lambda_sup(model, X, y)
        loss.backward()
        opt.step()
        mon(step, model)
    return mon


def main(out: str = "lambda_sup_training.png") -> None:
    fig = Figure(figsize=(5.5, 3.5))
    ax = fig.subplots()
    for gamma in (0.0, 0.5):
        mon = run(gamma)
        ax.plot([r["step"] for r in mon.rows], [r["lambda_sup"] for r in mon.rows], "o-", ms=3,
                label=f"loss + {gamma:g}·λ_sup")
        print(f"γ = {gamma}: λ_sup {mon.rows[0]['lambda_sup']:.4f} → {mon.rows[-1]['lambda_sup']:.4f}")
    ax.set(xlabel="training step", ylabel="λ_sup of the BCE Hessian", title="λ_sup in a plain torch loop")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
