"""The outcome of a verification (:class:`Verdict`) and the relation it is about."""

from __future__ import annotations

import dataclasses
from typing import Any

import mpmath
import sympy

from dpaudit.expressions import as_expr
from dpaudit.numeric import mp_precision
from dpaudit.verify.domain import Domain


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of a verification.

    Attributes:
        status: ``"proved"``, ``"refuted"`` or ``"unknown"``.
        relation: the inequality decided (plain symbols).
        domain: the domain it was decided over.
        method: how it was proved, or why it is unknown.
        counterexample: for ``"refuted"``, the point (exact values by name).
        lhs_value, rhs_value: for ``"refuted"``, both sides at the point as decimal text.
        remaining: for ``"unknown"``, descriptions of the undecided boxes (at most 5).
        boxes: how many boxes were examined.
        seconds: the time taken.
    """

    status: str
    relation: Any
    domain: Domain
    method: str
    counterexample: dict[str, Any] | None = None
    lhs_value: str | None = None
    rhs_value: str | None = None
    remaining: tuple[str, ...] = ()
    boxes: int = 0
    seconds: float = 0.0

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    @property
    def refuted(self) -> bool:
        return self.status == "refuted"

    def point_text(self) -> str:
        """The counterexample as ``name = value`` text (empty if there is none)."""
        if not self.counterexample:
            return ""
        return ", ".join(f"{n} = {_short(v)}" for n, v in sorted(self.counterexample.items()))

    def summary(self) -> str:
        """One line: the status and the proof method, counterexample or what is left."""
        if self.status == "proved":
            return f"proved: {self.method}"
        if self.status == "refuted":
            return (
                f"refuted at {self.point_text()}: lhs = {self.lhs_value} > rhs = {self.rhs_value}"
            )
        left = f"; undecided: {'; '.join(self.remaining)}" if self.remaining else ""
        return f"unknown: {self.method}{left}"

    def __str__(self) -> str:
        return f"{self.relation} over {self.domain}: {self.summary()}"


def _short(value: Any) -> str:
    v = as_expr(value)
    if v.is_Integer:
        return _integer_text(int(v))
    if v.is_Rational and v.q < 10**6:
        return f"{v}" if len(str(v)) < 16 else mpmath.nstr(mpmath.mpf(v.p) / v.q, 12)
    with mp_precision(80):
        return mpmath.nstr(mpmath.mpf(v.p) / v.q if v.is_Rational else mpmath.mpf(v.evalf(30)), 12)


def _integer_text(n: int) -> str:
    """An integer exactly, a power of ten near it written as one (``10**512 + 1``): the
    points at extreme magnitudes (:mod:`dpaudit.verify.far`) have hundreds of digits."""
    if abs(n) < 10**30:
        return str(n)
    k = len(str(abs(n))) - 1
    sign = -1 if n < 0 else 1
    for exponent in (k, k + 1):
        rest = n - sign * 10**exponent
        if abs(rest) < 10**6:
            head = f"{'-' if sign < 0 else ''}10**{exponent}"
            return head + (f" {'+' if rest > 0 else '-'} {abs(rest)}" if rest else "")
    return str(n)


def parse_relation(relation: Any) -> sympy.core.relational.Relational:
    """A sympy inequality from a relation or a string such as ``"exp(x) - 1 <= 2*x"``.

    Raises:
        ValueError: if it is not an inequality ``<``, ``<=``, ``>``, ``>=``.
    """
    rel = as_expr(relation, "inequality")
    if rel in (sympy.true, sympy.false):
        raise ValueError(
            f"inequality must have free parameters, got {relation!r}"
            f" (sympy already decided it: {rel})"
        )
    if not isinstance(rel, sympy.core.relational.Relational) or rel.rel_op not in (
        "<",
        "<=",
        ">",
        ">=",
    ):
        raise ValueError(f"inequality must be lhs <= rhs (or <, >=, >), got {relation!r}")
    floats = rel.atoms(sympy.Float)
    if floats:
        rel = rel.xreplace({f: sympy.Rational(f) for f in floats})
    return rel


def _same(a: Any, b: Any) -> bool:
    """True when two relations are syntactically the same condition (either orientation)."""
    if not isinstance(b, sympy.core.relational.Relational):
        return False
    return a == b or a == b.reversed


def _plain(expr: Any) -> Any:
    expr = as_expr(expr)
    return expr.xreplace({s: sympy.Symbol(s.name) for s in expr.free_symbols})
