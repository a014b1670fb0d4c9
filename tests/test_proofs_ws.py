"""proofs.ws: the symbolic checks pass, and they fail when the kernel form is wrong.

Oracle: ``sympy.hessian`` of the full loss with a generic φ and ℓ (SPEC §1, level S); the kernel form
is assembled from block kernels that SymPy *solved* for, never typed in.
"""

import pytest
import sympy as sp

from proofs import ws as proof


def test_bce_derivatives():
    assert all(proof.derive_bce().values())


def test_block_kernels_do_not_depend_on_M():
    _, _, info = proof.unit_kernels_size_free(3)
    assert all(info["identical"].values())


@pytest.mark.parametrize(("M", "N", "n", "bias"), [(1, 1, 1, True), (2, 2, 2, False), (1, 3, 2, True)])
def test_kernel_form_equals_sympy_hessian(M, N, n, bias):
    c = proof.check_against_hessian(M, N, n, bias)
    assert c.trace_zero and c.trace_sq_zero


def test_symbolic_check_has_teeth(monkeypatch):
    """Flip the sign of one monomial of the pair kernel: the exact comparison must fail."""
    good = proof.derive_unit_kernels(1, True)
    bad = dict(good)
    bad["gKg"] = good["gKg"].subs(sp.Integer(2), sp.Integer(-2))
    assert bad["gKg"] != good["gKg"]
    monkeypatch.setattr("proofs.ws.trace.derive_unit_kernels", lambda M, bias: bad)
    c = proof.check_against_hessian(1, 1, 2, True)
    assert c.trace_zero and not c.trace_sq_zero
    bad2 = dict(good)
    bad2["trK"] = sp.Integer(0)  # dropped residual term
    monkeypatch.setattr("proofs.ws.trace.derive_unit_kernels", lambda M, bias: bad2)
    assert not proof.check_against_hessian(1, 1, 1, True).trace_zero


def test_ws_theorem_derivation():
    res = proof.derive_ws_theorem(max_D=4)
    assert all(res.values()), res


def test_saturation_limit():
    assert all(proof.saturation_limit().values())


def test_generated_code_is_fresh():
    """The committed numerics/_derived files equal a fresh derivation (the same gate CI runs)."""
    from proofs.derive import main

    assert main(["--check", "--modules", "proofs.ws"]) == 0
