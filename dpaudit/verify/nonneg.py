"""Certifying ``expr >= 0`` (``> 0``) on a box: the part of the branch-and-bound search
(:class:`~dpaudit.verify.search._Search`) that proves a sign without splitting.

:meth:`_Nonnegativity.nonneg` tries reciprocal coordinates on unbounded ends, the
factor-wise enclosure, pointwise signs, and *monotonicity from a face* (the mean value
theorem, recursively); the symbolic work it does is cached and charged to the search's
work budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy

from dpaudit.numeric import endpoints
from dpaudit.verify.boxes import _INF, _Axis, _is_inf, _iv
from dpaudit.verify.budget import WORK_CHECK, WORK_OPS, WORK_SYMBOLIC
from dpaudit.verify.domain import Domain, by_name
from dpaudit.verify.enclosure import (
    _NONSMOOTH,
    _enclose,
    _eval,
    _Factor,
    _factors,
    _pointwise_sign,
    _smooth,
)
from dpaudit.verify.symbolic import _affordable, _deep_cancel, _factored, _light_simplify
from dpaudit.verify.verdict import _plain


class _Nonnegativity:
    """Sign proofs on a box, mixed into :class:`~dpaudit.verify.search._Search` (which
    sets the attributes below)."""

    domain: Domain
    axes: list[_Axis]
    cache: dict[tuple, Any]
    work: int

    # ---- monotonicity from a face, recursively -------------------------------------------

    def _cost(self, expr: sympy.Expr) -> int:
        """Work units of handling ``expr`` once: 1 + its operations / :data:`WORK_OPS`."""
        key = ("cost", expr)
        if key not in self.cache:
            self.cache[key] = 1 + int(sympy.count_ops(expr)) // WORK_OPS
        return self.cache[key]

    def _cached(self, key: tuple, make: Any) -> Any:
        if key not in self.cache:
            self.work += WORK_SYMBOLIC * self._cost(key[1])
            try:
                self.cache[key] = make()
            except (
                TypeError,
                ValueError,
                NotImplementedError,
                RecursionError,
                ZeroDivisionError,
                sympy.PolynomialError,
            ):
                self.cache[key] = None
        return self.cache[key]

    def _parts(self, expr: sympy.Expr) -> list[_Factor]:
        return self._cached(("parts", expr), lambda: _factors(expr)) or []

    def _diff(self, expr: sympy.Expr, name: str) -> sympy.Expr | None:
        return self._cached(
            ("diff", expr, name), lambda: _factored(sympy.diff(expr, sympy.Symbol(name)))
        )

    def _face(self, expr: sympy.Expr, name: str, value: Fraction) -> sympy.Expr | None:
        """``expr`` with ``name = value`` substituted and simplified symbolically (so that a
        face on which the expression vanishes identically encloses as exactly 0); None when
        the substitution is not a finite expression."""

        def make() -> sympy.Expr | None:
            v = sympy.Rational(value.numerator, value.denominator)
            out = _light_simplify(_deep_cancel(expr.xreplace({sympy.Symbol(name): v})))
            return None if out.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) else out

        return self._cached(("face", expr, name, value), make)

    def _reciprocal(self, expr: sympy.Expr, names: tuple[str, ...]) -> sympy.Expr | None:
        """``expr`` in the coordinates ``w = 1/x`` for each name (symbols ``1/x``),
        simplified so that infinity-over-infinity forms such as ``t/(t + c)`` cancel."""

        def make() -> sympy.Expr | None:
            # w > 0 at every point (w = 0 is x = oo); powers of a common exponent are merged
            # (a^p b^p = (a b)^p, exact where the expression is real: a, b >= 0 or p an
            # integer) so that sqrt(t)/sqrt(t + c) becomes 1/sqrt(1 + c w)
            ws = {n: sympy.Symbol(f"1/{n}", positive=True) for n in names}
            out = expr.xreplace({sympy.Symbol(n): 1 / w for n, w in ws.items()})
            if not _affordable(out, 300):
                return None
            out = sympy.powsimp(out, combine="base", force=True)
            return _plain(_light_simplify(_deep_cancel(out)))

        return self._cached(("recip", expr, names), make)

    def _face_values(self, name: str) -> tuple[Fraction, ...]:
        """Where faces are substituted symbolically: the ends of the parameter's initial
        coordinate range (w = 0, i.e. x = oo, for a reciprocal coordinate)."""
        if name.startswith("1/"):
            return (Fraction(0),)
        for axis in self.axes:
            if axis.name == name:
                x = axis.x_interval(*axis.initial())
                return tuple(v for v in x if not _is_inf(v)) if x else ()
        return ()

    def _excluded(self, name: str, value: Fraction) -> bool:
        """True when no point of the domain has ``name = value`` (an open or outer end)."""
        if name.startswith("1/"):
            return value == 0
        r = self.domain.range(name)
        v = sympy.Rational(value.numerator, value.denominator)
        return r.contains(v) is False

    def _smooth_along(self, f: _Factor, env: Mapping[str, Any], along: str) -> bool:
        """True when every guard of ``f`` holds on each segment of the closed box in the
        direction ``along`` through a point of the domain: ends of the other coordinates
        that no point of the domain reaches (``delta = 0`` of ``delta in (0, 1)``, ``w = 0``
        of a reciprocal coordinate) are allowed to break a guard, the face ``along = v``
        is not (the expression must be continuous up to it)."""
        for sub, need in f.guards:
            lo, hi = endpoints(_eval(sub, env))
            if need == "nonzero":
                if (
                    lo > 0
                    or hi < 0
                    or self._positive_at_points(sub, env, along)
                    or self._positive_at_points(-sub, env, along)
                ):
                    continue
                return False
            if lo > 0 or (need == "nonnegative" and lo >= 0):
                continue
            if not self._positive_at_points(sub, env, along):
                return False
        return True

    def _positive_at_points(self, e: sympy.Expr, env: Mapping[str, Any], along: str) -> bool:
        """``e > 0`` at every point of the box whose other coordinates than ``along`` are
        values some domain point takes (a sufficient syntactic test)."""
        if e.is_number:
            return bool(e.is_positive)
        if e.is_Symbol:
            lo, _ = endpoints(env[e.name]) if e.name in env else (-_INF, _INF)
            if lo > 0:
                return True
            if e.name == along or lo < 0:
                return False
            if e.name.startswith("1/"):
                return True
            r = self.domain.range(e.name) if e.name in self.domain.names else None
            return r is not None and r.contains(0) is False
        if e.is_Mul or e.is_Add:
            return all(self._positive_at_points(a, env, along) for a in e.args)
        if e.is_Pow:
            return self._positive_at_points(e.base, env, along)
        if isinstance(e, sympy.exp):
            return True
        lo, _ = endpoints(_eval(e, env))
        return lo > 0

    def nonneg(
        self, expr: sympy.Expr, box: Mapping[str, tuple[Any, Any]], depth: int, strict: bool
    ) -> bool:
        """True when ``expr >= 0`` (``> 0``) is certain at every point of ``box``.

        Tried in turn: the reciprocal coordinates w = 1/x on coordinates that reach +-oo
        (from an end away from 0); the factor-wise enclosure (with per-factor monotonicity);
        pointwise signs; and, ``depth`` levels deep, *monotonicity from a face*: if ``expr``
        is continuous on the closed box, its value on the face ``x = v`` (substituted
        symbolically) is >= 0 and its partial derivative in ``x`` has the sign that makes
        it grow away from that face, then ``expr >= 0`` on the box by the mean value theorem.
        Both premises are proved by this same method one level down, so an expression that
        vanishes on two faces of a corner (``e^eps - 1 - eps alpha/4`` type) is decided by
        a mixed second derivative.
        """
        self.work += WORK_CHECK * self._cost(expr)
        names = [n for n in by_name(expr) if n in box]
        far = []
        for n in names:
            a, b = box[n]
            if _is_inf(b) and not _is_inf(a) and a > 0:
                far.append((n, (Fraction(0), 1 / a)))
            elif _is_inf(a) and not _is_inf(b) and b < 0:
                far.append((n, (1 / b, Fraction(0))))
        if far:
            rexpr = self._reciprocal(expr, tuple(sorted(n for n, _ in far)))
            if rexpr is not None:
                rbox = {n: x for n, x in box.items() if n not in dict(far)}
                rbox.update({f"1/{n}": w for n, w in far})
                if self.nonneg(rexpr, rbox, depth, strict):
                    return True
        factors = self._parts(expr)
        if not factors:
            return False
        lo, _ = _enclose(factors, box)
        if lo > 0 or (not strict and lo >= 0):
            return True
        if lo >= 0:
            signs = [_pointwise_sign(f, box, self.domain) for f in factors]
            if all(signs) and math.prod(signs) == 1:
                return True
        if depth <= 0 or expr.has(*_NONSMOOTH) or not _smooth(expr):
            return False
        env = {n: _iv(x) for n, x in box.items()}
        for name in sorted(names):
            a, b = box[name]
            if a == b or not all(self._smooth_along(f, env, name) for f in factors):
                continue
            for side, v in (("low", a), ("high", b)):
                if _is_inf(v) or v not in self._face_values(name):
                    continue
                face = self._face(expr, name, v)
                d = self._diff(expr, name)
                if face is None or d is None:
                    continue
                grow = d if side == "low" else -d
                fbox = {**box, name: (v, v)}
                if self.nonneg(face, fbox, depth - 1, strict):
                    if self.nonneg(grow, box, depth - 1, False):
                        return True
                elif (
                    strict
                    and self._excluded(name, v)
                    and self.nonneg(face, fbox, depth - 1, False)
                    and self.nonneg(grow, box, depth - 1, True)
                ):
                    return True
        return False
