"""The branch-and-bound search over boxes (:class:`_Search`): enclosure, contraction,
splitting, and counterexample points; the sign proofs on one box (enclosure, monotonicity
from a face) are :class:`~dpaudit.verify.nonneg._Nonnegativity`, mixed in.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import EvaluationError, endpoints, interval
from dpaudit.verify.boxes import (
    _INF,
    _any_point,
    _Axis,
    _end_text,
    _halton,
    _is_inf,
    _iv,
    _separated,
)
from dpaudit.verify.budget import (
    FACE_DEPTH,
    MAX_WORK,
    POINT_PRECISION,
    _clock,
)
from dpaudit.verify.contraction import _contract
from dpaudit.verify.domain import Domain, by_name
from dpaudit.verify.enclosure import (
    _enclose,
    _eval,
    _Factor,
    _factors,
    _pointwise_sign,
)
from dpaudit.verify.far import cheap_at, extreme_points
from dpaudit.verify.nonneg import _Nonnegativity
from dpaudit.verify.points import _sign_at
from dpaudit.verify.symbolic import _light_simplify
from dpaudit.verify.verdict import Verdict, _plain


class _Search(_Nonnegativity):
    """One branch-and-bound run."""

    def __init__(
        self,
        lhs: sympy.Expr,
        rhs: sympy.Expr,
        g: sympy.Expr,
        strict: bool,
        domain: Domain,
        axes: list[_Axis],
        start: float,
        max_boxes: int,
        time_limit: float,
        origin: _Search | None = None,
        back: Any = None,
        max_work: int = MAX_WORK,
    ) -> None:
        self.lhs, self.rhs, self.g, self.strict = lhs, rhs, g, strict
        # a reformulated problem: its points map back to the original's through ``back``,
        # and a counterexample counts only once certified in the original
        self.origin, self.back = origin, back
        self.domain, self.axes = domain, axes
        self.start, self.max_boxes, self.time_limit = start, max_boxes, time_limit
        self.max_work, self.work = max_work, 0
        self.factors = _factors(g)
        self.cache: dict[tuple, Any] = {}
        self.constraints = [
            (_plain(c), _plain(c.lhs - c.rhs), c.rel_op)
            for c in domain.constraints
            if isinstance(c, sympy.core.relational.Relational)
        ]
        self.boxes = 0
        self.by_faces = 0
        self.rel: Any = None
        # g - c for each side constraint c >= 0 (c > 0): where g - c >= 0, the constraint
        # gives g >= c >= 0 on the feasible part of a box that straddles its boundary
        self.relaxed: list[tuple[list[_Factor], bool]] = []
        for _, diff, op in self.constraints:
            oriented = -diff if op in ("<", "<=") else diff
            rest = _light_simplify(g - oriented)
            self.relaxed.append((_factors(rest), op in ("<", ">")))

    # ---- boxes ---------------------------------------------------------------------------

    def x_box(self, ubox: Sequence[tuple[Fraction, Fraction]]) -> dict[str, tuple[Any, Any]] | None:
        out = {}
        for axis, (u0, u1) in zip(self.axes, ubox, strict=True):
            x = axis.x_interval(u0, u1)
            if x is None:
                return None
            out[axis.name] = x
        return out

    def contract(
        self, ubox: tuple[tuple[Fraction, Fraction], ...], xbox: dict[str, tuple[Any, Any]]
    ) -> tuple[tuple[tuple[Fraction, Fraction], ...], dict[str, tuple[Any, Any]]] | None:
        """The box shrunk by the side constraints (:func:`_contract`), in both coordinates,
        or None when no point of it satisfies them.  A coordinate is narrowed only when it
        loses at least 1/64 of its width, to a grid of 2^-48 of its initial range (rounded
        outwards, so the box still holds every feasible point)."""
        ints = frozenset(a.name for a in self.axes if a.range.integer)
        shrunk = _contract(self.constraints, xbox, ints)
        if shrunk is None:
            return None
        new_u = list(ubox)
        changed = False
        for i, axis in enumerate(self.axes):
            (u0, u1), (a, b) = ubox[i], shrunk[axis.name]
            if (a, b) == xbox[axis.name] or u0 == u1:
                continue
            if axis.kind == "down":
                a, b = b, a
            r0, r1 = axis.initial()
            grid = (r1 - r0) / 2**48
            v0 = max(u0, r0 + grid * math.floor((axis.u_of(a) - r0) / grid))
            v1 = min(u1, r0 + grid * math.ceil((axis.u_of(b) - r0) / grid))
            if v0 > v1:
                return None
            if (v1 - v0) * 64 <= (u1 - u0) * 63:
                new_u[i] = (v0, v1)
                changed = True
        if not changed:
            return ubox, xbox
        out = tuple(new_u)
        x = self.x_box(out)
        return None if x is None else (out, x)

    def constraints_state(self, xbox: Mapping[str, tuple[Any, Any]]) -> bool | None:
        """True: every side constraint holds on the whole box; False: one fails on all of
        it; None: undecided."""
        env = {n: _iv(x) for n, x in xbox.items()}
        state: bool | None = True
        for _, diff, op in self.constraints:
            lo, hi = endpoints(_eval(diff, env))
            if op in ("<", "<="):
                lo, hi = -hi, -lo
            # now need diff' = (lhs - rhs) oriented so that the constraint is diff' > / >= 0
            strict = op in ("<", ">")
            if hi < 0 or (strict and hi <= 0):
                return False
            if not (lo > 0 or (not strict and lo >= 0)):
                state = None
        return state

    def exact_at(
        self, xbox: Mapping[str, tuple[Any, Any]]
    ) -> tuple[dict[str, Any], sympy.Expr | None]:
        """At a single point, the sign of g (-1, 0 or 1) when it is decided rigorously, else
        None: by interval enclosures at increasing precision, and a zero (an equality such
        as 2^4 = 4^2 defeats interval arithmetic) by exact algebra once every branch of a
        Min, Max or Piecewise was chosen rigorously (:func:`_sign_at`)."""
        point = {n: sympy.Rational(a.numerator, a.denominator) for n, (a, _) in xbox.items()}
        for n in self.domain.names:
            point.setdefault(n, _any_point(self.domain.range(n)))
        try:
            sign = _sign_at(self.g, point)
        except (TypeError, ValueError, NotImplementedError, KeyError):
            return point, None
        return point, (None if sign is None else sympy.Integer(sign))

    def decided(self, lo: Any) -> bool:
        return lo > 0 if self.strict else lo >= 0

    # ---- points --------------------------------------------------------------------------

    def point_of(self, ubox: Sequence[tuple[Fraction, Fraction]]) -> dict[str, Any] | None:
        """An interior point of a box (integers rounded), or None if it has none."""
        point: dict[str, Any] = {}
        for axis, (u0, u1) in zip(self.axes, ubox, strict=True):
            x = axis.x_interval(u0, u1)
            if x is None:
                return None
            a, b = x
            if axis.range.integer:
                if _is_inf(a) or _is_inf(b):
                    um = (u0 + u1) / 2
                    v = axis.x_of(um)
                    if _is_inf(v):
                        return None
                    v = Fraction(math.floor(v))
                    v = min(max(v, a if not _is_inf(a) else v), b if not _is_inf(b) else v)
                else:
                    v = Fraction(math.floor((a + b) / 2))
                point[axis.name] = sympy.Integer(int(v))
                continue
            um = (u0 + u1) / 2
            v = axis.x_of(um)
            if _is_inf(v):
                return None
            point[axis.name] = sympy.Rational(v.numerator, v.denominator)
        for n in self.domain.names:
            if n not in point:
                r = self.domain.range(n)
                point[n] = _any_point(r)
        return point

    def violates(self, point: Mapping[str, Any]) -> bool:
        """True when the point is certainly in the domain and certainly violates."""
        if self.domain.contains(point) is not True:
            return False
        subs = {sympy.Symbol(n): v for n, v in point.items() if n in by_name(self.g)}
        try:
            _, hi = endpoints(interval(self.g, subs, prec=POINT_PRECISION))
        except (EvaluationError, ZeroDivisionError, ValueError):
            return False
        return hi <= 0 if self.strict else hi < 0

    def witness(self, point: Mapping[str, Any]) -> dict[str, Any] | None:
        """The point (in the original problem's parameters) if it is a certified
        counterexample, else None."""
        if self.origin is None:
            return dict(point) if self.violates(point) else None
        try:
            original = self.back(dict(point))
        except (EvaluationError, ValueError, TypeError, ZeroDivisionError, OverflowError):
            return None
        return original if original is not None and self.origin.violates(original) else None

    def probe_points(self, count: int) -> dict[str, Any] | None:
        """``count`` points spread over the domain (a Halton sequence in the split
        coordinates); the first certified violation, if any."""
        root = [a.initial() for a in self.axes]
        primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
        for i in range(1, count + 1):
            ubox = []
            for j, (u0, u1) in enumerate(root):
                t = _halton(i, primes[j % len(primes)])
                v = u0 + (u1 - u0) * t
                ubox.append((v, v))
            p = self.point_of(ubox)
            w = self.witness(p) if p is not None else None
            if w is not None:
                return w
        return None

    def far_witness(self) -> dict[str, Any] | None:
        """The first certified counterexample among the points at extreme magnitudes, which
        the box search cannot reach (:mod:`dpaudit.verify.far`), or None."""
        names = [a.name for a in self.axes]
        for point in extreme_points(self.domain, names):
            if cheap_at(self.g, point) and self.violates(point):
                return point
        return None

    def refutation(self, point: Mapping[str, Any], how: str) -> Verdict:
        if self.origin is not None:
            self.origin.boxes += self.boxes
            return self.origin.refutation(point, how)
        lhs_v, rhs_v = _separated(self.lhs, self.rhs, point)
        rel = self.rel if self.rel is not None else sympy.Le(self.lhs, self.rhs)
        return Verdict(
            "refuted",
            rel,
            self.domain,
            how or "counterexample point",
            dict(point),
            lhs_v,
            rhs_v,
            boxes=self.boxes,
            seconds=_clock() - self.start,
        )

    # ---- the search ----------------------------------------------------------------------

    def run(self, rel: Any) -> Verdict:
        self.rel = rel
        root = tuple(a.initial() for a in self.axes)
        counter = itertools.count()
        heap: list[tuple[Any, int, tuple[tuple[Fraction, Fraction], ...]]] = [
            (0, next(counter), root)
        ]
        undecided: list[tuple[tuple[Fraction, Fraction], ...]] = []
        proved_boxes = 0
        while heap:
            if (
                self.boxes >= self.max_boxes
                or self.work >= self.max_work
                or _clock() - self.start > self.time_limit
            ):
                break
            _, _, ubox = heapq.heappop(heap)
            self.boxes += 1
            self.work += sum(self._cost(f.expr) for f in self.factors)
            xbox = self.x_box(ubox)
            if xbox is None:
                continue
            if self.constraints:
                contracted = self.contract(ubox, xbox)
                if contracted is None:
                    continue
                ubox, xbox = contracted
            cstate = self.constraints_state(xbox) if self.constraints else True
            if cstate is False:
                continue
            lo, _ = _enclose(self.factors, xbox) if self.factors else (0, 0)
            if not self.decided(lo) and all(a == b for a, b in xbox.values()):
                point, value = self.exact_at(xbox)
                if value is not None and (value > 0 or (value == 0 and not self.strict)):
                    lo = mpmath.mpf(0) if value == 0 else mpmath.mpf(1)
                elif value is not None:
                    found = (
                        dict(point)
                        if self.origin is None and self.domain.contains(point) is True
                        else self.witness(point)
                    )
                    if found is not None:
                        return self.refutation(found, "exact evaluation at a point")
            if not self.decided(lo) and self.strict and lo >= 0:
                signs = [_pointwise_sign(f, xbox, self.domain) for f in self.factors]
                if all(signs) and math.prod(signs) == 1:
                    lo = mpmath.mpf(1)
            if not self.decided(lo) and cstate is None:
                for factors, strict_c in self.relaxed:
                    rlo, _ = _enclose(factors, xbox)
                    if rlo > 0 or (rlo >= 0 and (strict_c or not self.strict)):
                        lo = mpmath.mpf(1)
                        break
            if not self.decided(lo) and self.nonneg(self.g, xbox, FACE_DEPTH, self.strict):
                lo = mpmath.mpf(1)
                self.by_faces += 1
            if self.decided(lo):
                proved_boxes += 1
                continue
            interior = self.point_of(ubox)
            found = self.witness(interior) if interior is not None else None
            if found is not None:
                return self.refutation(found, "interval branch-and-bound")
            children = self.split(ubox)
            if not children:
                undecided.append(ubox)
                continue
            for child in children:
                key = lo if not mpmath.isnan(lo) else -_INF
                heapq.heappush(
                    heap, (float(key) if not _is_inf(key) else -math.inf, next(counter), child)
                )
        if (heap or undecided) and self.origin is None:
            far = self.far_witness()
            if far is not None:
                return self.refutation(far, "a point at an extreme magnitude")
        elapsed = _clock() - self.start
        if not heap and not undecided:
            return Verdict(
                "proved",
                rel,
                self.domain,
                f"interval branch-and-bound: {proved_boxes} boxes cover the domain "
                f"({self.boxes} examined"
                + (f"; {self.by_faces} by monotonicity from a face" if self.by_faces else "")
                + ")",
                boxes=self.boxes,
                seconds=elapsed,
            )
        left = [*undecided, *(b for _, _, b in heap)]
        reason = (
            "box budget exhausted"
            if self.boxes >= self.max_boxes
            else "work budget exhausted"
            if self.work >= self.max_work
            else "time safety net reached (this verdict may depend on the machine)"
            if heap
            else "boxes too small to split further"
        )
        texts = tuple(self.describe(b) for b in sorted(left, key=self._volume, reverse=True)[:5])
        return Verdict(
            "unknown",
            rel,
            self.domain,
            f"{reason}; {len(left)} boxes undecided after {self.boxes}",
            remaining=texts,
            boxes=self.boxes,
            seconds=elapsed,
        )

    def _volume(self, ubox: Sequence[tuple[Fraction, Fraction]]) -> float:
        v = 1.0
        for (u0, u1), a in zip(ubox, self.axes, strict=True):
            r0, r1 = a.initial()
            v *= float((u1 - u0) / (r1 - r0)) if r1 > r0 else 1.0
        return v

    def describe(self, ubox: Sequence[tuple[Fraction, Fraction]]) -> str:
        xbox = self.x_box(ubox) or {}
        parts = []
        for n, (a, b) in xbox.items():
            parts.append(f"{n} in [{_end_text(a)}, {_end_text(b)}]")
        return ", ".join(parts)

    def split(
        self, ubox: tuple[tuple[Fraction, Fraction], ...]
    ) -> list[tuple[tuple[Fraction, Fraction], ...]]:
        """Bisect the widest coordinate (relative to its initial width); [] if none can."""
        best, best_width = None, Fraction(0)
        for i, (axis, (u0, u1)) in enumerate(zip(self.axes, ubox, strict=True)):
            r0, r1 = axis.initial()
            if r1 == r0 or u1 == u0:
                continue
            if axis.range.integer:
                x = axis.x_interval(u0, u1)
                if x is None or (not _is_inf(x[0]) and not _is_inf(x[1]) and x[0] == x[1]):
                    continue
            width = (u1 - u0) / (r1 - r0)
            if width < Fraction(1, 2**40):
                continue
            if width > best_width:
                best, best_width = i, width
        if best is None:
            return []
        u0, u1 = ubox[best]
        axis = self.axes[best]
        if axis.range.integer and axis.kind == "bounded":
            mid = Fraction(math.floor((u0 + u1) / 2))
            halves = [(u0, mid), (mid + 1, u1)]
        else:
            mid = (u0 + u1) / 2
            halves = [(u0, mid), (mid, u1)]
        out = []
        for h in halves:
            if h[0] > h[1]:
                continue
            child = list(ubox)
            child[best] = h
            out.append(tuple(child))
        return out
