"""Experiments (E) for flat.bad, flat.generalize, flat.approx (placeholder while being written)."""
