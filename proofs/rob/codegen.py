r"""The rob paper's generated artifacts: ``numerics/_derived/rob.py`` (mpmath closed forms and the even-cycle
example) and ``proofs/latex/rob.tex``, from the derivations of :mod:`proofs.rob`.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.pycode import MpmathPrinter

from proofs.common import HEADER, Artifact, latex_doc
from proofs.rob.circle import EVEN_CYCLE_A, EVEN_CYCLE_SIGNS, EVEN_CYCLE_THETA, even_cycle
from proofs.rob.jump import tangential_jump_norm
from proofs.rob.single_pole import closed_forms as single_pole_closed_forms
from proofs.rob.width_2n import width_2n

SOURCES = "proofs/rob/{width_2n,jump,circle}.py"


def artifacts() -> list[Artifact]:
    w = width_2n()
    jump_norm = tangential_jump_norm()
    ec = even_cycle()
    code = HEADER.format(source="proofs/rob/codegen.py") + "\n".join([
        f'"""Closed forms derived in {SOURCES} (SPEC §3)."""',
        "",
        "import mpmath",
        "",
        "from sympy import Rational",
        "",
        "",
        "def width2n_lipschitz(s):",
        '    """Lip of the width-2n interpolant on S^{d-1} when its caps are disjoint."""',
        f"    return {MpmathPrinter().doprint(w.lipschitz)}",
        "",
        "",
        "def cap_threshold(s):",
        '    """Caps of the width-2n interpolant are disjoint iff max_{i != j} x_i.x_j <= this."""',
        f"    return {sp.pycode(w.threshold)}",
        "",
        "",
        "def tangential_jump_norm(alpha, t):",
        '    """|alpha| sqrt(1 - t^2): the tangential gradient jump at a kink u.x = t on the sphere."""',
        f"    return {MpmathPrinter().doprint(jump_norm)}",
        "",
        "",
        "# The paper's even-cycle example on S^1 (exact): u_j = (cos theta_j, sin theta_j), t_j = cos a_j,",
        "# alpha_j = kappa * sign_j / sin a_j.",
        f"EVEN_CYCLE_THETA = ({', '.join(f'Rational({x.p}, {x.q})' for x in EVEN_CYCLE_THETA)})",
        f"EVEN_CYCLE_A = ({', '.join(f'Rational({x.p}, {x.q})' for x in EVEN_CYCLE_A)})",
        f"EVEN_CYCLE_SIGNS = {EVEN_CYCLE_SIGNS}",
        f"EVEN_CYCLE_LIPSCHITZ_PER_KAPPA = {sp.N(ec.lipschitz, 30)!s}  # float of the exact value below",
        f"EVEN_CYCLE_LIPSCHITZ_EXACT = {str(sp.sstr(ec.lipschitz))!r}",
        "",
    ])
    tex = latex_doc("law of robustness (Shmalo 2026), derived in proofs/rob", [
        ("ReLU orientation flip", r"\operatorname{ReLU}(-z) = \operatorname{ReLU}(z) - z"),
        ("unit normalisation", r"a\operatorname{ReLU}(w\cdot x+b) = a\|w\|\operatorname{ReLU}(u\cdot x - t),"
                               r"\quad u = w/\|w\|,\ t = -b/\|w\|"),
        ("gradient jump", r"\nabla f_+ - \nabla f_- = \alpha_j u_j"),
        ("tangential jump", r"\|u - (u\cdot x)x\|^2 = 1 - t^2 \quad (\|u\|=\|x\|=1,\ u\cdot x = t)"),
        ("cap threshold", sp.Eq(sp.Symbol(r"\max_{i\neq j} x_i\cdot x_j"), w.threshold)),
        ("width-2n Lipschitz constant", sp.Eq(sp.Symbol(r"\operatorname{Lip}"), w.lipschitz)),
        ("even cycle, exact Lipschitz constant (kappa = 1)",
         sp.Eq(sp.Symbol(r"\operatorname{Lip}"), ec.lipschitz)),
        ("even cycle, violation ratio", sp.Eq(sp.Symbol(r"\kappa/(2\operatorname{Lip})"), ec.ratio)),
    ])
    return [Artifact("proofs/latex/rob.tex", tex), Artifact("numerics/_derived/rob.py", code),
            *single_pole_artifacts()]


def single_pole_artifacts() -> list[Artifact]:
    """``numerics/_derived/rob_single_pole.py``: the level-set closed forms of :mod:`proofs.rob.single_pole`."""
    forms = single_pole_closed_forms()
    pr = MpmathPrinter()
    code = HEADER.format(source="proofs/rob/codegen.py") + "\n".join([
        '"""Closed forms derived in proofs/rob/single_pole.py (SPEC §4, rob.single_pole)."""',
        "",
        "import mpmath",
        "",
        "",
        "def level_set_sup2(B, p, s):",
        '    """max ||tangential grad f||^2 on the level set u0.x = s, gradient B u0 + v_perp, p = ||v_perp||."""',
        f"    return {pr.doprint(forms['F'])}",
        "",
        "",
        "def level_set_breakpoint(B, p):",
        '    """s0 = p / sqrt(B^2 + p^2): level_set_sup2 = B^2 + p^2 on |s| <= s0, decreasing in |s| beyond."""',
        f"    return {pr.doprint(forms['s0'])}",
        "",
        "",
        "def static_rigidity2(B, p, s):",
        '    """B^2 (1 - s^2) + p^2: the tangential norm^2 at a level-set point with y perpendicular to v_perp."""',
        f"    return {pr.doprint(forms['static'])}",
        "",
        "",
        "def interval_argmax(lo, hi):",
        '    """The closure point of [lo, hi] nearest 0, where level_set_sup2 attains its sup over the interval."""',
        "    return min(max(0, lo), hi)",
        "",
    ])
    return [Artifact("numerics/_derived/rob_single_pole.py", code)]
