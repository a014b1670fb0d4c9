"""The ws artifacts: the block kernels as vectorised numpy/mpmath code (``numerics/_derived/ws.py``;
each Σ_k over units is a matrix product of per-sample unit tables) and LaTeX (``proofs/latex/ws.tex``)."""

from __future__ import annotations

import sympy as sp

from proofs.common import HEADER, Artifact, latex_doc
from proofs.ws.definitions import KERNELS, P_I, P_J, G, V
from proofs.ws.kernels import output_bias_kernels, unit_kernels_size_free

_TABLE_NAMES = {P_I[0]: ("i", 0), P_I[1]: ("i", 1), P_I[2]: ("i", 2),
                P_J[0]: ("j", 0), P_J[1]: ("j", 1), P_J[2]: ("j", 2)}


def _split_monomial(mono: sp.Expr, name_i: str = "Ti", name_j: str = "Tj"):
    """A monomial c·v^e·Π(i-tables)·Π(j-tables) as (c, i-factor code with v^e, j-factor code)."""
    coeff, factors = mono.as_coeff_mul()
    fi, fj, vpow = [], [], 0
    for f in factors:
        base, e = f.as_base_exp()
        if base == V:
            vpow += int(e)
            continue
        side, order = _TABLE_NAMES[base]
        term = f"{name_i if side == 'i' else name_j}[{order}]" + (f"**{int(e)}" if e != 1 else "")
        (fi if side == "i" else fj).append(term)
    if vpow:
        fi.append("v" if vpow == 1 else f"v**{vpow}")
    return sp.nsimplify(coeff), fi, fj


def _side_code(names: list[str], ones_like: str) -> str:
    return " * ".join(names) if names else f"({ones_like} * 0 + 1)"


def _monomial_code(mono: sp.Expr, diag: bool) -> str:
    c, fi, fj = _split_monomial(mono, "Ti", "Ti" if diag else "Tj")
    if diag:  # i = j: a row sum over units of one table
        code = f"({_side_code(fi + fj, 'Ti[0]')}).sum(axis=1)"
    else:
        code = f"({_side_code(fi, 'Ti[0]')}) @ ({_side_code(fj, 'Tj[0]')}).T"
    return code if c == 1 else f"{c} * {code}"


def _kernel_code(expr: sp.Expr, diag: bool) -> str:
    poly = sp.Poly(expr, G)
    terms = []
    for (d,), coeff in sorted(poly.terms()):
        monos = sp.Add.make_args(sp.expand(coeff))
        body = " + ".join(_monomial_code(mn, diag) for mn in monos)
        g = "" if d == 0 else ("Gm * " if d == 1 else f"Gm**{d} * ")
        terms.append(f"{g}({body})")
    return " + ".join(terms) if terms else "0"


def _factor_code(expr: sp.Expr) -> str:
    """κ = Σ_p G^p ∘ (L_p R_pᵀ), one (p, L, R) per monomial, L from the i-tables (and v), R from j."""
    out = []
    for (d,), coeff in sorted(sp.Poly(expr, G).terms()):
        for mono in sp.Add.make_args(sp.expand(coeff)):
            c, fi, fj = _split_monomial(mono)
            left = _side_code(fi, "Ti[0]")
            out.append(f"({d}, {left if c == 1 else f'{c} * {left}'}, {_side_code(fj, 'Tj[0]')})")
    return "[" + ", ".join(out) + "]"


def artifacts() -> list[Artifact]:
    kb_bias, kb_nobias, info = unit_kernels_size_free(3)
    if not all(info["identical"].values()):
        raise ArithmeticError("block kernels depend on M: the block-structure argument fails")
    if kb_bias != kb_nobias:
        raise ArithmeticError("block kernels differ with/without bias in the unit block")
    kc = output_bias_kernels()
    lines = [HEADER.format(source="proofs/ws/"),
             '"""Block kernels of the CE Hessian of an M-N-1 net, as derived by SymPy.',
             "",
             "Ti, Tj: tuples (P0, P1, P2) of unit tables phi^(r)(a_ik), shape (rows, N); v: (N,);",
             "Gm: block of augmented Gram entries x~_i . x~_j (pair kernels) or squared norms (diag kernels).",
             "The output bias c adds the constants in OUTPUT_BIAS. Works on float64 and on object",
             "arrays of mpmath numbers alike.",
             '"""', "",
             f"OUTPUT_BIAS = {{{', '.join(f'{k!r}: {int(kc[k])}' for k in KERNELS)}}}", ""]
    doc = {
        "gg": "g_i . g_j (unit blocks only)",
        "gKg": "g_i^T K_j g_i (unit blocks only)",
        "KK": "tr(K_i K_j) (unit blocks only)",
        "g2": "|g_i|^2 (unit blocks only), one value per row",
        "trK": "tr K_i, one value per row",
    }
    for name in KERNELS:
        diag = name in ("g2", "trK")
        args = "Ti, v, Gm" if diag else "Ti, Tj, v, Gm"
        lines += [f"def {name}({args}):", f'    """{doc[name]}: {sp.sstr(kb_bias[name])}"""',
                  f"    return {_kernel_code(kb_bias[name], diag)}", "", ""]
        if not diag:
            lines += [f"def {name}_factors(Ti, Tj, v):",
                      f'    """{name} = sum over (p, L, R) of G**p * (L @ R.T); L rows follow Ti, R rows Tj."""',
                      f"    return {_factor_code(kb_bias[name])}", "", ""]
    code = "\n".join(lines).rstrip() + "\n"
    tex = latex_doc("block kernels of the cross-entropy Hessian (proofs/ws/)", [
        (f"kernel {name}", sp.Eq(sp.Symbol(r"\kappa_{\mathrm{" + name + "}}"), kb_bias[name])) for name in KERNELS
    ] + [
        ("trace", r"\operatorname{tr}H=\frac1n\sum_i\Big(q_i\big(\textstyle\sum_k\kappa_{g2}+[c]\big)"
                  r"+r_i\sum_k\kappa_{trK}\Big)"),
        ("trace of square", r"\operatorname{tr}H^2=\frac1{n^2}\sum_{i,j}\Big(q_iq_j\big(\textstyle\sum_k"
                            r"\kappa_{gg}+[c]\big)^2+2q_ir_j\sum_k\kappa_{gKg}+r_ir_j\sum_k\kappa_{KK}\Big)"),
    ])
    return [Artifact("numerics/_derived/ws.py", code), Artifact("proofs/latex/ws.tex", tex)]
