"""SymPy derivations, one module per paper. ``python -m proofs.derive`` writes what they derive.

Each module starts from the paper's *definitions* (the loss, the network), differentiates or
integrates them with SymPy, and proves each closed form by exact simplification of the difference to 0.
The closed forms are then emitted as Python (``numerics/_derived/``) and LaTeX (``proofs/latex/``).
"""
