"""A theorem card's formula, as text and LaTeX, and with numbers substituted.

The formula is always the card's own ``bound`` (one formula in one place,
:class:`~dpaudit.theorems.base.Theorem`): this module only prints it, substitutes values for
its symbols (by name, as the accountant's rules bound them, see
:class:`~dpaudit.accountant.domains.Checks`) and evaluates it rigorously, rounded up.

A scalar value for an indexed symbol (``epsilon`` for ``epsilon[i]``) means "every part has
this value" (k-fold self-composition); a list fills the parts one by one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import sympy
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

from dpaudit.expressions import as_expr
from dpaudit.numeric import EvaluationError, exact, float_up
from dpaudit.teaching.notation import MathPrinter, math_text
from dpaudit.theorems.base import Theorem

__all__ = [
    "Instance",
    "card_formula",
    "card_latex",
    "instantiate",
    "value_text",
    "values_json",
]

#: Largest number of terms a sum or product of a card is expanded to for evaluation (the
#: optimal-composition sum has k + 1 exponential terms; beyond this the accountant's own
#: evaluation is shown instead).
MAX_TERMS = 200


def card_formula(card: Theorem) -> str:
    """The card's bound as text in mathematical notation (:mod:`dpaudit.teaching.notation`:
    ``sum_{i=1}^{k} epsilon_i``, ``x^2``), one ``name = expression`` per output, ``; ``
    separated (its statement when it has no symbolic bound)."""
    if not card.bound:
        return card.statement
    return "; ".join(f"{name} = {math_text(expr)}" for name, expr in card.bound.items())


def card_latex(card: Theorem) -> str:
    """The card's bound as LaTeX: the card's hand-set ``latex`` when it has one, else sympy's
    printing of ``bound`` (empty for a card with neither)."""
    if card.latex:
        return card.latex
    return r",\ ".join(
        f"{_latex_name(name)} = {sympy.latex(expr)}" for name, expr in card.bound.items()
    )


def _latex_name(name: str) -> str:
    return sympy.latex(sympy.Symbol(name.replace("'", "_prime")))


def value_text(value: Any) -> str:
    """An exact value for reading: integers and short fractions exactly, others as a
    6-significant-digit decimal (an input shown, not a bound)."""
    expr = as_expr(value) if not isinstance(value, sympy.Basic) else value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if expr.free_symbols:
        return str(expr)
    if expr.is_Rational and expr.q < 1000 and abs(expr.p) < 10**15:
        return str(expr)
    try:
        return f"{float(expr):.6g}"
    except (TypeError, ValueError):
        return str(expr)


@dataclasses.dataclass(frozen=True)
class Instance:
    """A card's formula at given parameter values.

    Attributes:
        card: the theorem.
        values: the parameter values used, by symbol name (exact).
        text: each output's formula with the values put in (not simplified), by output name.
        latex: the same in LaTeX.
        results: each output evaluated and rounded up (None when a symbol has no value or
            the expression is too large to evaluate here).
        missing: the card's symbols no value was given for.
    """

    card: Theorem
    values: Mapping[str, Any]
    text: Mapping[str, str]
    latex: Mapping[str, str]
    results: Mapping[str, float | None]
    missing: tuple[str, ...]

    def lines(self) -> list[str]:
        """``name = formula-with-numbers = result`` lines."""
        out = []
        for name, text in self.text.items():
            r = self.results.get(name)
            out.append(f"{name} = {text}" + ("" if r is None else f" = {r:.10g} (rounded up)"))
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``values`` (:func:`values_json`), ``substituted`` (per output: its
        formula with the values in, as text and LaTeX, and the result rounded up),
        ``results`` (output -> float rounded up, or None) and ``missing``."""
        return {
            "values": values_json(self.values),
            "substituted": [
                {
                    "output": name,
                    "text": self.text[name],
                    "latex": self.latex[name],
                    "result": self.results.get(name),
                }
                for name in self.text
            ],
            "results": dict(self.results),
            "missing": list(self.missing),
        }


def values_json(values: Mapping[str, Any]) -> list[dict[str, str]]:
    """Parameter values as ``[{"symbol": name, "value": text}, ...]`` (a list, so that a
    JSON key named ``epsilon`` always holds a bound, never an input)."""
    return [{"symbol": k, "value": value_text(v)} for k, v in values.items()]


def _names(expr: sympy.Expr) -> set[str]:
    names = {s.name for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
    names |= {str(x.base) for x in expr.atoms(sympy.Indexed)}
    return names - {str(x) for x in expr.atoms(sympy.Indexed)}


def _scalars(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if not isinstance(v, (list, tuple))}


def _fill(expr: sympy.Expr, values: Mapping[str, Any]) -> sympy.Expr:
    """``expr`` with symbols and indexed parts replaced by values, sums and products done:
    scalars first (``k`` fixes the range), then the parts of list values."""
    scalars = _scalars(values)
    lists = {k: v for k, v in values.items() if k not in scalars}
    out = expr.replace(
        lambda x: isinstance(x, sympy.Indexed) and str(x.base) in scalars,
        lambda x: scalars[str(x.base)],
    )
    out = out.xreplace(
        {s: scalars[s.name] for s in out.free_symbols if s.name in scalars and s.is_Symbol}
    )
    if lists and not _too_large(out):
        out = out.doit()

        def part(x: sympy.Indexed) -> sympy.Expr:
            index = x.indices[0]
            return lists[str(x.base)][int(index) - 1] if index.is_Integer else x

        out = out.replace(lambda x: isinstance(x, sympy.Indexed) and str(x.base) in lists, part)
    return out


def _for_printing(expr: sympy.Expr, values: Mapping[str, Any]) -> tuple[sympy.Expr, dict[str, Any]]:
    """``expr`` with each indexed part that has a value (a scalar for every part, or a list
    entry at a numeric index) replaced by a placeholder symbol, and the values by name."""
    shown = dict(_scalars(values))

    def placeholder(x: sympy.Indexed) -> sympy.Expr:
        v = values[str(x.base)]
        index = x.indices[0]
        if isinstance(v, (list, tuple)):
            if not index.is_Integer:
                return x
            v = v[int(index) - 1]
        name = f"_part_{x.base}_{index}"
        shown[name] = v
        return sympy.Symbol(name)

    out = expr.replace(
        lambda x: isinstance(x, sympy.Indexed) and str(x.base) in values, placeholder
    )
    # an IndexedBase's label left in place (a list at a symbolic index) keeps its name
    return out, {k: v for k, v in shown.items() if not (k in values and k not in _scalars(values))}


def _shown(value: Any, latex: bool) -> str:
    """A value put in for a symbol, bare: the printers add the parentheses its place in the
    formula needs (:func:`_value_precedence`), so ``log(1e-05)``, not ``log((1e-05))``."""
    text = value_text(value)
    if latex and "/" in text:
        p, q = text.split("/", 1)
        sign = "-" if p.startswith("-") else ""
        return rf"{sign}\tfrac{{{p.lstrip('-')}}}{{{q}}}"
    if latex and "e" in text and text.lstrip("-")[0].isdigit():  # 1e-06 is 10^{-6}
        mantissa, power = text.split("e", 1)
        sign = "-" if mantissa.startswith("-") else ""
        digits = mantissa.lstrip("-")
        scale = f"10^{{{int(power)}}}"
        return f"{sign}{scale}" if digits == "1" else rf"{mantissa} \cdot {scale}"
    return text


def _wrapped(shown: str, level: int, strict: bool) -> bool:
    r"""Whether a value printed as ``shown`` needs parentheses where a printer asks at
    ``level``: a negative number, a fraction or ``m \cdot 10^{p}`` always does as a factor or
    a power's part (sympy asks at a sum's level for the factors of a negative product, so the
    level alone would print ``-Delta/(2 sigma)`` at sigma = 1/5 as ``-1/2*1/1/5``);
    ``10^{p}`` as a power's base; a plain number never.  A function's argument (asked at
    level 0) and a sum's term (not asked) are bare: ``log(1e-05)`` and ``21/4 - 1``, not
    ``log((1e-05))``."""
    p = _value_precedence(shown)
    if level < PRECEDENCE["Add"]:  # a function's arguments (sympy asks at level 0)
        return False
    if p <= PRECEDENCE["Mul"]:
        return True
    return p < level or (not strict and p <= level)


def _value_precedence(shown: str) -> int:
    r"""The precedence of a value as :func:`_shown` prints it: a negative number binds like
    a sum, a fraction or ``m \cdot 10^{p}`` like a product, ``10^{p}`` like a power, a
    plain number like an atom."""
    if shown.startswith("-"):
        return int(PRECEDENCE["Add"])
    if "/" in shown or r"\tfrac" in shown or r"\cdot" in shown:
        return int(PRECEDENCE["Mul"])
    if "^" in shown:
        return int(PRECEDENCE["Pow"])
    return int(PRECEDENCE["Atom"])


class _StrWithValues(MathPrinter):
    """Prints the card's expression with each symbol replaced by its value (no rebuild, so
    nothing is simplified or evaluated)."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__()
        self._values = values

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        if expr.name in self._values:
            return _shown(self._values[expr.name], False)
        return super()._print_Symbol(expr)

    def parenthesize(self, item: Any, level: int, strict: bool = False) -> str:
        if isinstance(item, sympy.Symbol) and item.name in self._values:
            shown = _shown(self._values[item.name], False)
            return f"({shown})" if _wrapped(shown, level, strict) else shown
        return str(super().parenthesize(item, level, strict))


class _LatexWithValues(LatexPrinter):
    """The LaTeX counterpart of :class:`_StrWithValues`."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__()
        self._values = values

    def _print_Symbol(self, expr: sympy.Symbol, style: str = "plain") -> str:
        if expr.name in self._values:
            return _shown(self._values[expr.name], True)
        return super()._print_Symbol(expr, style)

    def _needs_mul_brackets(self, expr: Any, first: bool = False, last: bool = False) -> bool:
        # a factor: 2 (1/5), not the mixed number 2 1/5
        if isinstance(expr, sympy.Symbol) and expr.name in self._values:
            return _wrapped(_shown(self._values[expr.name], True), int(PRECEDENCE["Mul"]), False)
        return bool(super()._needs_mul_brackets(expr, first=first, last=last))

    def parenthesize(
        self, item: Any, level: int, is_neg: bool = False, strict: bool = False
    ) -> str:
        if isinstance(item, sympy.Symbol) and item.name in self._values:
            shown = _shown(self._values[item.name], True)
            wrap = _wrapped(shown, level, strict) or (is_neg and strict)
            return rf"\left({shown}\right)" if wrap else shown
        return str(super().parenthesize(item, level, is_neg, strict))


def _too_large(expr: sympy.Expr) -> bool:
    for node in expr.atoms(sympy.Sum, sympy.Product):
        for _, lo, hi in node.limits:
            span = hi - lo
            if not span.is_Number or span > MAX_TERMS:
                return True
    return False


def _expand_finite(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every Sum/Product over numeric limits written out term by term.  (``doit``
    first tries symbolic summation, Gosper's algorithm, whose simplifications of Max terms
    took minutes on the optimal-composition card; the written-out terms are numbers, which
    the rigorous interval evaluation handles in milliseconds.)"""
    if not isinstance(expr, sympy.Basic) or not expr.args:
        return expr
    args = [_expand_finite(a) if isinstance(a, sympy.Expr) else a for a in expr.args]
    if isinstance(expr, (sympy.Sum, sympy.Product)):
        body: sympy.Expr = args[0]
        combine = sympy.Add if isinstance(expr, sympy.Sum) else sympy.Mul
        for index, lo, hi in expr.limits:
            body = combine(*[body.xreplace({index: j}) for j in range(int(lo), int(hi) + 1)])
        return body
    return expr.func(*args) if args != list(expr.args) else expr


def _evaluate(expr: sympy.Expr) -> float | None:
    if expr.free_symbols or _too_large(expr):
        return None
    try:
        return float_up(_expand_finite(expr))
    except (EvaluationError, ValueError, TypeError, ZeroDivisionError):
        return None


def instantiate(card: Theorem, values: Mapping[str, Any]) -> Instance:
    """The card's bound with ``values`` substituted, printed and evaluated (rounded up).

    Args:
        card: a theorem card (one with an empty ``bound`` gives an empty instance).
        values: values by the card's symbol names (``"delta'"`` included); a scalar for an
            indexed symbol fills every part, a list fills part i with its i-th entry (and
            sets ``k`` to its length unless ``k`` is given).

    Returns:
        An :class:`Instance`.

    Raises:
        ValueError: for a value that is not an exact number (see :func:`dpaudit.numeric.exact`).
    """
    exact_values: dict[str, Any] = {}
    for name, v in values.items():
        if isinstance(v, (list, tuple)):
            exact_values[name] = [exact(x, name) for x in v]
            exact_values.setdefault("k", sympy.Integer(len(v)))
        else:
            exact_values[name] = exact(v, name)
    text, latex, results = {}, {}, {}
    used: set[str] = set()
    missing: set[str] = set()
    for name, expr in card.bound.items():
        names = _names(expr)
        used |= names & set(exact_values)
        missing |= names - set(exact_values)
        printable, shown = _for_printing(expr, exact_values)
        text[name] = _StrWithValues(shown).doprint(printable)
        latex[name] = _LatexWithValues(shown).doprint(printable)
        results[name] = _evaluate(_fill(expr, exact_values))
    return Instance(
        card,
        {k: v for k, v in exact_values.items() if k in used},
        text,
        latex,
        results,
        tuple(sorted(missing)),
    )
