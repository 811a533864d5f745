"""HC4 contraction of a box by the side constraints of a domain (forward evaluation, backward
projection); a box on which a constraint certainly fails is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import endpoints, iv_precision
from dpaudit.verify.boxes import _INF, _is_inf, _iv, _mpf_fraction
from dpaudit.verify.budget import BOX_PRECISION
from dpaudit.verify.enclosure import _eval

# ------------------------------------------------------------------------------------------
# Constraint propagation: side constraints shrink a box before it is evaluated (HC4)
# ------------------------------------------------------------------------------------------

#: Rounds of HC4-revise over all side constraints per box.
CONTRACTION_ROUNDS = 3


class _InfeasibleError(Exception):
    """No point of the box satisfies a side constraint."""


def _meet(a: Any, b: Any) -> Any:
    """The intersection of two enclosures (NaN ends count as unbounded).

    Raises:
        _InfeasibleError: when it is empty.
    """
    (alo, ahi), (blo, bhi) = endpoints(a), endpoints(b)
    lo = max(x for x in (alo, blo, -_INF) if not mpmath.isnan(x))
    hi = min(x for x in (ahi, bhi, _INF) if not mpmath.isnan(x))
    if lo > hi:
        raise _InfeasibleError
    return mpmath.iv.mpf([lo, hi])


def _hc4_forward(e: sympy.Expr, env: Mapping[str, Any], out: dict[Any, Any]) -> Any:
    """Enclose every node of ``e`` bottom-up (each node's enclosure recorded in ``out``)."""
    if e.is_Symbol:
        value = env[e.name]
    elif e.is_Add or e.is_Mul:
        parts = [_hc4_forward(a, env, out) for a in e.args]
        value = parts[0]
        for p in parts[1:]:
            value = value + p if e.is_Add else value * p
    elif (isinstance(e, (sympy.exp, sympy.log)) or (e.is_Pow and e.exp == -1)) and e.args[
        0
    ].free_symbols:
        inner = _hc4_forward(e.args[0], env, out)
        try:
            value = (
                (
                    mpmath.iv.exp(inner)
                    if isinstance(e, sympy.exp)
                    else mpmath.iv.log(inner)
                    if endpoints(inner)[0] >= 0
                    else None
                )
                if not e.is_Pow
                else (1 / inner if not _has_zero(inner) else None)
            )
        except (ValueError, ZeroDivisionError):
            value = None
        if value is None:
            value = _eval(e, env)
    else:
        value = _eval(e, env)
    lo, hi = endpoints(value)
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        value = mpmath.iv.mpf([-_INF, _INF])
    out[e] = value
    return value


def _has_zero(v: Any) -> bool:
    lo, hi = endpoints(v)
    return not (lo > 0 or hi < 0)


def _hc4_backward(
    e: sympy.Expr, target: Any, env: dict[str, Any], nodes: Mapping[Any, Any]
) -> None:
    """Narrow the symbols of ``e`` to the values compatible with ``e`` in ``target``:
    projections through +, *, 1/x, exp and log (inverse operations in outward-rounded
    interval arithmetic); other nodes pass nothing down (sound, only weaker).

    Raises:
        _InfeasibleError: when no value of the box is compatible.
    """
    value = _meet(nodes[e], target)
    if e.is_Symbol:
        env[e.name] = _meet(env[e.name], value)
        return
    if e.is_Add or e.is_Mul:
        args = e.args
        for i, a in enumerate(args):
            if not a.free_symbols:
                continue
            rest = [nodes[b] for j, b in enumerate(args) if j != i]
            if e.is_Add:
                total = mpmath.iv.mpf(0)
                for r in rest:
                    total = total + r
                _hc4_backward(a, value - total, env, nodes)
            else:
                total = mpmath.iv.mpf(1)
                for r in rest:
                    total = total * r
                if not _has_zero(total) and all(mpmath.isfinite(x) for x in endpoints(total)):
                    _hc4_backward(a, value / total, env, nodes)
        return
    if not e.args or not e.args[0].free_symbols:
        return
    inner = e.args[0]
    if isinstance(e, sympy.exp):
        lo, hi = endpoints(value)
        if hi <= 0:
            raise _InfeasibleError
        pre = mpmath.iv.log(mpmath.iv.mpf([max(lo, 0), hi]))
    elif isinstance(e, sympy.log):
        pre = mpmath.iv.exp(value)
    elif e.is_Pow and e.exp == -1 and not _has_zero(value):
        pre = 1 / value
    else:
        return
    if not any(mpmath.isnan(x) for x in endpoints(pre)):
        _hc4_backward(inner, pre, env, nodes)


def _contract(
    constraints: Sequence[tuple[Any, sympy.Expr, str]],
    box: Mapping[str, tuple[Any, Any]],
    integers: frozenset[str] = frozenset(),
) -> dict[str, tuple[Any, Any]] | None:
    """Shrink a box (name -> (lo, hi), Fractions or +-inf) to a sub-box holding every point
    of it that satisfies the side constraints ``(relation, lhs - rhs, op)``, or None when
    none does: HC4-revise (Benhamou et al. 1999) -- enclose each constraint's expression
    tree bottom-up, intersect the root with ``(-oo, 0]`` or ``[0, oo)``, and project back
    down to the symbols -- in outward-rounded interval arithmetic, with strict constraints
    relaxed to non-strict ones and integer parameters rounded inwards to integers.

    Sound: a point of the box that satisfies every constraint lies in the returned box
    (each projection keeps every value it could take).
    """
    half = {"<": (-_INF, 0), "<=": (-_INF, 0), ">": (0, _INF), ">=": (0, _INF)}
    with iv_precision(BOX_PRECISION):
        env = {n: _iv(x) for n, x in box.items()}
        try:
            for _ in range(CONTRACTION_ROUNDS):
                before = dict(env)
                for _, diff, op in constraints:
                    if op not in half or not diff.free_symbols <= {sympy.Symbol(n) for n in env}:
                        continue
                    nodes: dict[Any, Any] = {}
                    _hc4_forward(diff, env, nodes)
                    _hc4_backward(diff, mpmath.iv.mpf(list(half[op])), env, nodes)
                    for n in integers & set(env):
                        lo, hi = endpoints(env[n])
                        a = lo if _is_inf(lo) else Fraction(math.ceil(_mpf_fraction(lo)))
                        b = hi if _is_inf(hi) else Fraction(math.floor(_mpf_fraction(hi)))
                        if not _is_inf(a) and not _is_inf(b) and a > b:
                            raise _InfeasibleError
                        env[n] = _iv((a, b))
                if all(endpoints(env[n]) == endpoints(before[n]) for n in env):
                    break
        except _InfeasibleError:
            return None
    out: dict[str, tuple[Any, Any]] = {}
    for n, (a, b) in box.items():
        lo, hi = endpoints(env[n])
        na = a if _is_inf(lo) or (not _is_inf(a) and _mpf_fraction(lo) <= a) else _mpf_fraction(lo)
        nb = b if _is_inf(hi) or (not _is_inf(b) and _mpf_fraction(hi) >= b) else _mpf_fraction(hi)
        if (_is_inf(na) and na > 0) or (_is_inf(nb) and nb < 0):
            return None
        if not _is_inf(na) and not _is_inf(nb) and na > nb:
            return None
        out[n] = (na, nb)
    return out
