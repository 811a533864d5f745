"""Exact minimum and maximum of exact values, ordered by interval enclosures (not by
sympy's symbolic comparison, which can run for minutes on close values)."""

from __future__ import annotations

from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import apply, is_exact_number_value, is_sympy_object
from dpaudit.numeric.enclosures import decide_relation, endpoints, interval
from dpaudit.numeric.values import exact


def exact_min(*values: Any) -> sympy.Expr:
    """The smallest of exact values, ordered by rigorous interval arithmetic.

    ``sympy.Min`` orders numbers by exact symbolic comparison, which can run for minutes when
    two values are close (``Min(3, log(...)/63)`` for the RDP of a 3-DP mechanism at order 64
    did not finish).  Here numeric arguments are compared through :func:`interval` enclosures
    of their differences; the result is one of the arguments (exactly), or an unevaluated
    ``Min`` of the arguments no enclosure could order (equal, or closer than the precision
    ladder resolves) -- the same value either way.  Arguments with free symbols are passed to
    ``sympy.Min`` unchanged.  Arguments that are all plain numbers (ints, fractions,
    :class:`~dpaudit.exact_numbers.ExactNumber`) give an exact number, without sympy.
    """
    return _extreme(values, "<", "Min")


def exact_max(*values: Any) -> sympy.Expr:
    """The largest of exact values, ordered by rigorous interval arithmetic (see
    :func:`exact_min`)."""
    return _extreme(values, ">", "Max")


def _extreme(values: tuple[Any, ...], op: str, name: str) -> sympy.Expr:
    if not values:
        raise ValueError("exact_min/exact_max need at least one value, got none")
    vals = [
        v if is_sympy_object(v) or is_exact_number_value(v) else exact(v, "value") for v in values
    ]

    def combine(*args: Any, evaluate: bool = True) -> Any:
        if all(is_exact_number_value(a) for a in args):
            return apply(name, *args)  # folds rationals only; otherwise an unevaluated node
        return getattr(sympy, name)(*args, evaluate=evaluate)

    if any(v.free_symbols for v in vals):
        return combine(*vals)
    infinite = [v for v in vals if is_sympy_object(v) and v in (sympy.oo, -sympy.oo)]
    if infinite:  # ordered without arithmetic: +-oo against anything finite
        best = sympy.oo if op == ">" else -sympy.oo
        if best in infinite:
            return best
        finite = [v for v in vals if v not in infinite]
        return _extreme(tuple(finite), op, name) if finite else infinite[0]
    kept: list[sympy.Expr] = []
    for v in vals:
        if any(v == k for k in kept):
            continue
        beaten = False
        survivors = []
        for k in kept:
            # refined only until the comparison is decided
            lo, hi = endpoints(interval(v - k, enough=lambda e: _decided(op, e)))
            verdict = decide_relation(op, lo, hi)
            if verdict is True:  # v beats k: drop k
                continue
            if verdict is False:  # k beats or ties v
                beaten = True
            survivors.append(k)
        kept = survivors if beaten else [*survivors, v]
    if len(kept) == 1:
        return kept[0]
    return combine(*kept, evaluate=False)


def _decided(op: str, enclosure: Any) -> bool:
    """Whether an enclosure of a difference decides ``difference op 0``."""
    return decide_relation(op, *endpoints(enclosure)) is not None
