"""Formulas in mathematical notation, as a reader of a paper writes them.

sympy's own text printing is Python (``Sum(epsilon[i], (i, 1, k))``, ``x**2``,
``Max(a, b)``); a student reads ``sum_{i=1}^{k} epsilon_i``, ``x^2``, ``max(a, b)``.
:class:`MathPrinter` prints the cards' bounds that way (the LaTeX side is sympy's, which
already writes ``\\sum_{i=1}^{k} \\epsilon_{i}``).
"""

from __future__ import annotations

import sympy
from sympy.printing.str import StrPrinter

__all__ = ["MathPrinter", "math_text"]


class MathPrinter(StrPrinter):
    """sympy's text printer with sums, products, indexed symbols, powers and extremes written
    in mathematical notation."""

    def _print(self, expr: object, **kwargs: object) -> str:
        # Indexed prints itself (its _sympystr wins over a printer's method): ask for ours
        if isinstance(expr, sympy.Indexed):
            return self._print_Indexed(expr)
        return str(super()._print(expr, **kwargs))

    def _limits(self, expr: sympy.Expr, symbol: str) -> str:
        body = self._print(expr.function)
        atomic = expr.function.is_Atom or isinstance(expr.function, (sympy.Indexed, sympy.Pow))
        if not atomic:  # the summand's extent, which the notation does not show otherwise
            body = f"({body})"
        for index, low, high in reversed(expr.limits):
            start = f"{self._print(index)}={self._print(low)}"
            body = f"{symbol}_{{{start}}}^{{{self._print(high)}}} {body}"
        return body

    def _print_Sum(self, expr: sympy.Sum) -> str:
        return self._limits(expr, "sum")

    def _print_Product(self, expr: sympy.Product) -> str:
        return self._limits(expr, "prod")

    def _print_Indexed(self, expr: sympy.Indexed) -> str:
        indices = ",".join(self._print(i) for i in expr.indices)
        simple = all(i.is_Symbol or i.is_Integer for i in expr.indices)
        return (
            f"{self._print(expr.base)}_{indices}"
            if simple
            else f"{self._print(expr.base)}_{{{indices}}}"
        )

    def _print_IndexedBase(self, expr: sympy.IndexedBase) -> str:
        return self._print(expr.label)

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        return super()._print_Pow(expr, rational).replace("**", "^")

    def _print_Max(self, expr: sympy.Max) -> str:
        return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Min(self, expr: sympy.Min) -> str:
        return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"


def math_text(expr: sympy.Basic) -> str:
    """``expr`` in mathematical notation (:class:`MathPrinter`)."""
    return MathPrinter().doprint(expr)
