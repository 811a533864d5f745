"""Zero-concentrated differential privacy (Bun and Steinke 2016).

Each function computes one bound exactly and is the only place its formula lives.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from dpaudit.numeric import exact
from dpaudit.theorems.base import Theorem, register

eps, delta, rho, k = sympy.symbols("epsilon delta rho k", positive=True)
i = sympy.Symbol("i", integer=True, positive=True)
rho_i = sympy.IndexedBase("rho")

PURE_TO_ZCDP = register(Theorem(
    key="pure_to_zcdp",
    name="pure DP implies zCDP",
    citation="Bun and Steinke 2016, Proposition 1.4",
    assumptions="an eps-DP mechanism",
    statement="M is (eps^2/2)-zCDP",
    bound={"rho": eps**2 / 2},
    domain=(eps > 0,),
    latex=r"\rho = \varepsilon^2/2",
))


def pure_to_zcdp(epsilon: sympy.Expr) -> sympy.Expr:
    """eps^2 / 2 (Bun and Steinke 2016, Proposition 1.4)."""
    return exact(epsilon, "epsilon") ** 2 / 2


ZCDP_COMPOSITION = register(Theorem(
    key="zcdp_composition",
    name="zCDP composition",
    citation="Bun and Steinke 2016, Lemma 1.7 (Lemma 2.3 in the full version)",
    assumptions="k adaptively composed mechanisms, each rho_i-zCDP",
    statement="the composition is (sum rho_i)-zCDP",
    bound={"rho": sympy.Sum(rho_i[i], (i, 1, k))},
    domain=(k >= 1,),
    latex=r"\rho = \sum_i \rho_i",
))


def zcdp_composition(rhos: Sequence[sympy.Expr]) -> sympy.Expr:
    """sum rho_i (Bun and Steinke 2016, Lemma 1.7)."""
    return sympy.Add(*rhos)


ZCDP_TO_APPROX = register(Theorem(
    key="zcdp_to_approx",
    name="zCDP to (eps, delta)",
    citation="Bun and Steinke 2016, Proposition 1.3",
    assumptions="a rho-zCDP mechanism; 0 < delta < 1",
    statement="M is (rho + 2 sqrt(rho log(1/delta)), delta)-DP",
    bound={"epsilon": rho + 2 * sympy.sqrt(rho * sympy.log(1 / delta))},
    domain=(rho > 0, delta > 0, delta < 1),
    latex=r"\varepsilon = \rho + 2\sqrt{\rho \log(1/\delta)}",
))


def zcdp_to_approx(rho_: sympy.Expr, delta_: sympy.Expr) -> sympy.Expr:
    """rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Proposition 1.3).

    Raises:
        ValueError: if delta is not in (0, 1).
    """
    d = exact(delta_, "delta")
    if not d.free_symbols and not (0 < d < 1):
        raise ValueError(f"zCDP conversion: delta must be in (0, 1), got {d}")
    r = exact(rho_, "rho")
    return r + 2 * sympy.sqrt(r * sympy.log(1 / d))
