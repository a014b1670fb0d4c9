"""The artifacts of the flat derivations: ``numerics/_derived/flat.py`` (which the numerics import) and
``proofs/latex/flat.tex``, from :mod:`proofs.flat.upsilon`, :mod:`proofs.flat.duality` and
:mod:`proofs.flat.population`. ``artifacts()`` refuses to write anything a derivation did not establish.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from proofs.common import HEADER, Artifact, latex_doc
from proofs.flat.definitions import E_SYM, A, Abar, B, Bbar, a, c, lam, omega, p, phi, s
from proofs.flat.duality import derive_duality
from proofs.flat.population import derive_kernels
from proofs.flat.upsilon import derive_upsilon

__all__ = ["artifacts"]


class _NamespacePrinter(PythonCodePrinter):
    """Python code whose functions and exact rationals go through a namespace ``_m``.

    ``_m`` is numpy/scipy for float64 or mpmath for high precision, so one derived expression serves
    both without a float literal (like 1/3) silently capping the precision.
    """

    def _module_format(self, fqn, register=True):
        return "_m." + fqn.split(".")[-1]

    def _print_Rational(self, expr):
        return f"_m.rat({expr.p}, {expr.q})"

    def _print_Half(self, expr):
        return self._print_Rational(expr)


def _code(expr: sp.Expr) -> str:
    return _NamespacePrinter({"standard": "python3"}).doprint(expr)


def _func(name: str, args: tuple[sp.Symbol, ...], expr: sp.Expr, doc: str) -> str:
    argnames = ", ".join(str(x) for x in args)
    return (f"def {name}({argnames}, _m=NP):\n"
            f"    \"\"\"{doc}\"\"\"\n"
            f"    return {_code(expr)}\n")


_PREAMBLE = '''"""Closed forms derived in proofs/flat/ (SPEC section 2), written by proofs/flat/codegen.py.

Every function takes a namespace ``_m`` of math functions: ``NP`` (numpy/scipy, float64, vectorised)
or ``numerics.flat.MP`` (mpmath, any precision).
"""

from numerics.namespaces import NP  # the float64 namespace; numerics.flat.MP is the mpmath one
'''


def _generated_code() -> str:
    ud = derive_upsilon()
    dd = derive_duality()
    kd = derive_kernels()
    abs_a = sp.Symbol("abs_a", positive=True)
    lam_c = sp.Symbol("lam", positive=True)  # "lambda" is a Python keyword
    parts = [
        _func("p_exponent", (c,), ud.p, "p = 2c/(c+1): exponent of |a_j| in Upsilon."),
        _func("k_const", (c,), ud.K, "K_c = (c+1) c^(-c/(c+1))."),
        _func("upsilon_neuron", (A, B, abs_a, c), ud.upsilon_neuron.subs(a, abs_a),
              "min over lambda > 0 of lambda^(2c) A + lambda^(-2) a^2 B."),
        _func("lambda_opt", (A, B, abs_a, c), ud.lambda_opt.subs(a, abs_a),
              "The minimising rescaling, lambda^(2c+2) = a^2 B/(c A)."),
        _func("log_lambda_opt", (A, B, abs_a, c), sp.expand_log(sp.log(ud.lambda_opt.subs(a, abs_a)), force=True),
              "log lambda_opt, a sum of logs: finite where a^2 B/(c A) overflows float64."),
        _func("neuron_trace", (A, B, abs_a, c, lam_c), ud.neuron_trace.subs({a: abs_a, lam: lam_c}),
              "Trace contribution of one neuron after the rescaling by lambda (at an interpolator)."),
        _func("omega_weight", (Abar, Bbar, c), dd.omega, "omega_j in Upsilon = sum_j omega_j |b_j|^p."),
        _func("conjugate_power", (s, omega, p), dd.conjugate,
              "(omega |.|^p)^*(s) for s = |s| >= 0, p > 1."),
        _func("conjugate_argmax", (s, omega, p), dd.argmax,
              "|t*| maximising s t - omega |t|^p (the primal weight recovered from a dual point)."),
        _func("half_moment", (E_SYM,), kd.half_moment, "E[z_+^e] for z ~ N(0, 1)."),
        _func("relu_kernel_1", (phi,), kd.relu_kernels[1],
              "E[(u.x)_+ (v.x)_+] for unit u, v at angle phi, x ~ N(0, I)."),
        _func("relu_kernel_2", (phi,), kd.relu_kernels[2],
              "E[(u.x)_+^2 (v.x)_+^2] for unit u, v at angle phi, x ~ N(0, I)."),
    ]
    return HEADER.format(source="proofs/flat/codegen.py") + _PREAMBLE + "\n\n" + "\n\n".join(parts)


def _latex() -> str:
    ud = derive_upsilon()
    dd = derive_duality()
    kd = derive_kernels()
    eq = lambda lhs, expr: f"{lhs} = {sp.latex(expr)}"
    return latex_doc("flatness of homogeneous two-layer nets (SPEC section 2)", [
        ("rescaled neuron trace", eq(r"T_j(\lambda)", ud.neuron_trace)),
        ("minimiser", eq(r"\lambda_j^{2c+2}", ud.lambda_pow)),
        ("second derivative at the minimiser", eq(r"T_j''(\lambda_j)", ud.second_derivative)),
        ("Upsilon per neuron", eq(r"\Upsilon_j", ud.upsilon_neuron)),
        ("exponent p", eq("p", ud.p)),
        ("constant K_c", eq("K_c", ud.K)),
        ("invariant weight", eq(r"\omega_j", dd.omega)),
        ("convex conjugate of omega |t|^p", eq(r"(\omega|\cdot|^p)^*(s)", dd.conjugate)),
        ("dual, p > 1", r"\max_\nu\ \nu^\top y-(p-1)\sum_j\omega_j\Bigl(\frac{|(\bar\Phi^\top\nu)_j|}"
                        r"{p\,\omega_j}\Bigr)^{p/(p-1)}"),
        ("dual, p = 1", r"\max_\nu\ \nu^\top y\quad\text{s.t.}\quad|(\bar\Phi^\top\nu)_j|\le\omega_j"),
        ("half moment", eq(r"\mathbb E[z_+^e]", kd.half_moment)),
        ("arc-cosine kernel, degree 1", eq(r"\mathbb E[(u\cdot x)_+(v\cdot x)_+]", kd.relu_kernels[1])),
        ("arc-cosine kernel, degree 2", eq(r"\mathbb E[(u\cdot x)_+^2(v\cdot x)_+^2]", kd.relu_kernels[2])),
    ])


def artifacts() -> list[Artifact]:
    for name, res in (("upsilon", derive_upsilon()), ("duality", derive_duality()),
                      ("kernels", derive_kernels())):
        if not res.ok:
            bad = [k for k, v in res.checks.items() if not v]
            raise RuntimeError(f"flatness derivation {name} failed: {bad}")
    return [Artifact("numerics/_derived/flat.py", _generated_code()),
            Artifact("proofs/latex/flat.tex", _latex())]
