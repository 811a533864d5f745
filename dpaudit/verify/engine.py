"""Deciding an inequality over a domain: symbolic simplification, then interval branch-and-bound.

:func:`verify_inequality` decides ``lhs <= rhs`` (or ``<``, ``>=``, ``>``) for every point of
a :class:`~dpaudit.verify.domain.Domain`, with one of three outcomes:

* **proved** -- either symbolically (sympy shows ``rhs - lhs`` is identically zero, or
  nonnegative from the signs the domain gives its parameters), or by covering the whole
  domain with boxes on each of which rigorous interval arithmetic (mpmath, outward rounding)
  encloses ``rhs - lhs`` in ``[0, oo)``;
* **refuted** -- with a concrete point of the domain where interval arithmetic certifies
  ``lhs > rhs``; both sides are printed to enough digits to see the gap;
* **unknown** -- when the box budget or time runs out, with the boxes left undecided.

How the branch-and-bound works:

* ``g = rhs - lhs`` is simplified and factored; each factor is enclosed separately on a box
  and the enclosures multiplied, which removes most of the dependency problem of interval
  arithmetic (``k (a - b)`` instead of ``k a - k b``).
* A factor whose partial derivative has a constant sign on a box is evaluated on the face
  where it is smallest (resp. largest) instead of the whole box -- exact enough to prove
  inequalities that are tight on the domain's boundary (``e^x - 1 <= 2x`` near ``x = 0``).
  This is done only for factors built from smooth functions (no Min, Max, Abs, floor,
  Piecewise), where the mean value theorem applies.
* Integer parameters are split at integers and enclosed by their integer hull; a box whose
  integer range is empty is dropped.
* A parameter with an unbounded end is split in the coordinate ``u`` of the change of
  variables ``x = a + u / (1 - u)`` (``u`` in ``[0, 1)``), so boxes grow geometrically
  towards infinity and the last box reaches it; the evaluator works over the extended reals
  there (see :func:`dpaudit.numeric.interval`'s ``extended``).
* Side constraints drop the boxes on which they certainly fail.

Soundness: a box is counted as proved only when the enclosure's lower end is ``>= 0``
(``> 0`` for a strict inequality); a counterexample is reported only at a point that
:meth:`Domain.contains` certifies to be in the domain and where the gap is certified.
Anything else is ``unknown``.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import time
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from dpaudit.numeric import EvaluationError, endpoints, exact, interval
from dpaudit.verify.domain import Domain, Range, by_name, decide

__all__ = ["Verdict", "check_point", "parse_relation", "verify_inequality"]

#: Working precision (bits) of box evaluations and of counterexample checks.
BOX_PRECISION = 64
POINT_PRECISION = 120

#: Default budgets.
MAX_BOXES = 3000
TIME_LIMIT = 20.0

_NONSMOOTH = (sympy.Min, sympy.Max, sympy.Abs, sympy.floor, sympy.ceiling, sympy.Piecewise,
              sympy.sign, sympy.Heaviside)
_INF = mpmath.inf


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
            return (f"refuted at {self.point_text()}: lhs = {self.lhs_value} > "
                    f"rhs = {self.rhs_value}")
        left = f"; undecided: {'; '.join(self.remaining)}" if self.remaining else ""
        return f"unknown: {self.method}{left}"

    def __str__(self) -> str:
        return f"{self.relation} over {self.domain}: {self.summary()}"


def _short(value: Any) -> str:
    v = sympy.sympify(value)
    if v.is_Integer:
        return str(v)
    if v.is_Rational and v.q < 10**6:
        return f"{v}" if len(str(v)) < 16 else mpmath.nstr(mpmath.mpf(v.p) / v.q, 12)
    with mpmath.workprec(80):
        return mpmath.nstr(mpmath.mpf(v.p) / v.q if v.is_Rational else mpmath.mpf(v.evalf(30)),
                           12)


def parse_relation(relation: Any) -> sympy.core.relational.Relational:
    """A sympy inequality from a relation or a string such as ``"exp(x) - 1 <= 2*x"``.

    Raises:
        ValueError: if it is not an inequality ``<``, ``<=``, ``>``, ``>=``.
    """
    rel = sympy.sympify(relation, rational=True) if isinstance(relation, str) else \
        sympy.sympify(relation)
    if rel in (sympy.true, sympy.false):
        raise ValueError(f"relation must be an inequality with free parameters, got {relation!r}"
                         f" (sympy already decided it: {rel})")
    if not isinstance(rel, sympy.core.relational.Relational) or rel.rel_op not in (
            "<", "<=", ">", ">="):
        raise ValueError(f"relation must be an inequality lhs <= rhs (or <, >=, >), got "
                         f"{relation!r}")
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
    expr = sympy.sympify(expr)
    return expr.xreplace({s: sympy.Symbol(s.name) for s in expr.free_symbols})


# ------------------------------------------------------------------------------------------
# Coordinates: a box is a tuple of per-parameter intervals in the split coordinate u
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Axis:
    """How one parameter's split coordinate u maps to its value x."""

    name: str
    range: Range

    @property
    def kind(self) -> str:
        r = self.range
        if r.low is not None and r.high is not None:
            return "bounded"
        if r.low is not None:
            return "up"        # [a, oo): x = a + u/(1-u), u in [0, 1]
        if r.high is not None:
            return "down"      # (-oo, b]: x = b - u/(1-u), u in [0, 1]
        return "line"          # (-oo, oo): x = u/(1-|u|), u in [-1, 1]

    def initial(self) -> tuple[Fraction, Fraction]:
        r = self.range
        if self.kind == "bounded":
            lo = _frac_down(r.low)
            hi = _frac_up(r.high)
            if self.range.integer:
                return Fraction(r.first_integer()), Fraction(r.last_integer())
            return lo, hi
        if self.kind == "line":
            return Fraction(-1), Fraction(1)
        return Fraction(0), Fraction(1)

    def x_of(self, u: Fraction) -> Any:
        """The value at coordinate u: a Fraction, or +-inf (mpmath) at the far end."""
        r = self.range
        if self.kind == "bounded":
            return u
        if self.kind == "line":
            if abs(u) == 1:
                return _INF if u > 0 else -_INF
            return u / (1 - abs(u))
        if u == 1:
            return _INF if self.kind == "up" else -_INF
        step = u / (1 - u)
        # an irrational end is replaced by a rational on its outer side: the boxes then cover
        # a superset (sound), and any counterexample point is re-checked exactly
        base = _frac_down(r.low) if self.kind == "up" else _frac_up(r.high)
        return base + step if self.kind == "up" else base - step

    def x_interval(self, u_lo: Fraction, u_hi: Fraction) -> tuple[Any, Any] | None:
        """The value interval of a u-interval (integer hull for integer parameters), or None
        if it holds no admissible integer."""
        a, b = self.x_of(u_lo), self.x_of(u_hi)
        if self.kind == "down":
            a, b = b, a
        if self.range.integer:
            a = a if _is_inf(a) else Fraction(math.ceil(a))
            b = b if _is_inf(b) else Fraction(math.floor(b))
            first, last = self.range.first_integer(), self.range.last_integer()
            if first is not None and not _is_inf(a):
                a = max(a, Fraction(first))
            if last is not None and not _is_inf(b):
                b = min(b, Fraction(last))
            if not _is_inf(a) and not _is_inf(b) and a > b:
                return None
        return a, b


def _is_inf(v: Any) -> bool:
    return isinstance(v, mpmath.mpf) and mpmath.isinf(v)


def _mpf_fraction(x: Any) -> Fraction:
    """The exact value of a finite mpmath number as a Fraction."""
    man, exp = mpmath.mpf(x).man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _frac_down(v: sympy.Expr) -> Fraction:
    """A rational at most ``v`` (``v`` itself when it is rational)."""
    v = sympy.sympify(v)
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    return _mpf_fraction(endpoints(interval(v))[0])


def _frac_up(v: sympy.Expr) -> Fraction:
    """A rational at least ``v`` (``v`` itself when it is rational)."""
    v = sympy.sympify(v)
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    return _mpf_fraction(endpoints(interval(v))[1])


def _iv(x: tuple[Any, Any]) -> Any:
    """An mpmath interval from a pair of Fraction / +-inf ends (outward rounded)."""
    a, b = x
    lo = a if _is_inf(a) else _mpf_down(a)
    hi = b if _is_inf(b) else _mpf_up(b)
    return mpmath.iv.mpf([lo, hi])


def _mpf_down(f: Fraction) -> Any:
    v = mpmath.iv.mpf(f.numerator) / mpmath.iv.mpf(f.denominator)
    return endpoints(v)[0]


def _mpf_up(f: Fraction) -> Any:
    v = mpmath.iv.mpf(f.numerator) / mpmath.iv.mpf(f.denominator)
    return endpoints(v)[1]


# ------------------------------------------------------------------------------------------
# Enclosures
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Factor:
    expr: sympy.Expr
    power: int
    derivatives: dict[str, tuple[sympy.Expr, ...]] | None
    guards: list[tuple[sympy.Expr, str]] = dataclasses.field(default_factory=list)


def _guards(expr: sympy.Expr) -> list[tuple[sympy.Expr, str]]:
    """Where ``expr`` may be discontinuous: (sub-expression, requirement) pairs.

    ``expr`` is built from rational operations, powers, exp, log, erf and erfc, which are
    continuous wherever every denominator is nonzero (``"nonzero"``), every log argument
    positive (``"positive"``) and every base of a non-integer power positive, or nonnegative
    when the exponent is positive (``"nonnegative"``).
    """
    out: list[tuple[sympy.Expr, str]] = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.log):
            out.append((node.args[0], "positive"))
        elif node.is_Pow and node.base is not sympy.E:
            e = node.exp
            if e.is_Integer:
                if e < 0:
                    out.append((node.base, "nonzero"))
            elif e.is_number and e.is_positive:
                out.append((node.base, "nonnegative"))
            else:
                out.append((node.base, "positive"))
    return out


def _continuous(f: _Factor, env: Mapping[str, Any]) -> bool:
    """True when every guard of ``f`` certainly holds on the box."""
    for sub, need in f.guards:
        lo, hi = endpoints(_eval(sub, env))
        if need == "nonzero" and not (lo > 0 or hi < 0):
            return False
        if need == "positive" and not lo > 0:
            return False
        if need == "nonnegative" and not lo >= 0:
            return False
    return True


def _factors(g: sympy.Expr) -> list[_Factor]:
    """``g`` as a product of factors (with integer powers), each with its derivatives."""
    try:
        gf = sympy.factor_terms(g)
        if sympy.count_ops(gf) < 400:
            gf = sympy.factor(gf, deep=False)
    except (sympy.PolynomialError, NotImplementedError, TypeError, ValueError):
        gf = g
    parts: list[_Factor] = []
    for arg in sympy.Mul.make_args(gf):
        base, power = arg, 1
        if arg.is_Pow and arg.exp.is_Integer and int(arg.exp) > 0:
            base, power = arg.base, int(arg.exp)
        derivs = None
        if not base.has(*_NONSMOOTH):
            try:
                derivs = {s.name: sympy.Mul.make_args(sympy.factor_terms(sympy.diff(base, s)))
                          for s in base.free_symbols}
            except (TypeError, ValueError, NotImplementedError):
                derivs = None
        parts.append(_Factor(base, power, derivs, _guards(base)))
    return parts


def _eval(expr: sympy.Expr, env: Mapping[str, Any]) -> Any:
    """Enclose ``expr`` on a box (env: name -> mpmath interval); [-oo, oo] if undefined."""
    if not expr.free_symbols:
        try:
            return interval(expr, prec=BOX_PRECISION, extended=True)
        except EvaluationError:
            return mpmath.iv.mpf([-_INF, _INF])
    subs = {sympy.Symbol(n): env[n] for n in by_name(expr)}
    try:
        result = interval(expr, subs, prec=BOX_PRECISION, extended=True)
    except (EvaluationError, ZeroDivisionError, ValueError, TypeError):
        return mpmath.iv.mpf([-_INF, _INF])
    lo, hi = endpoints(result)
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        return mpmath.iv.mpf([-_INF, _INF])
    return result


def _product(parts: Sequence[sympy.Expr], env: Mapping[str, Any]) -> Any:
    total = mpmath.iv.mpf(1)
    for p in parts:
        total = total * _eval(p, env)
    return total


def _face_bound(f: _Factor, box: Mapping[str, tuple[Any, Any]], side: str) -> Any:
    """A bound on the min (``side="low"``) or max (``"high"``) of ``f`` over ``box``.

    Repeatedly moves every coordinate in which ``f`` is monotone on the current box to the
    face where ``f`` is smallest (largest), then encloses ``f`` there.  Sound when ``f`` is
    continuous on ``box`` (checked by the caller): by the mean value theorem the extreme
    over the box is attained on that face.
    """
    current = dict(box)
    assert f.derivatives is not None
    changed = True
    while changed:
        changed = False
        env = {n: _iv(x) for n, x in current.items()}
        for name, parts in f.derivatives.items():
            a, b = current[name]
            if a == b:
                continue
            dlo, dhi = endpoints(_product(parts, env))
            if dlo >= 0:
                current[name] = (a, a) if side == "low" else (b, b)
            elif dhi <= 0:
                current[name] = (b, b) if side == "low" else (a, a)
            else:
                continue
            changed = True
            env = {n: _iv(x) for n, x in current.items()}
    lo, hi = endpoints(_eval(f.expr, {n: _iv(x) for n, x in current.items()}))
    return lo if side == "low" else hi


def _enclose_factor(f: _Factor, box: Mapping[str, tuple[Any, Any]]) -> Any:
    """Enclose one factor on a box, using monotonicity to evaluate on faces where it can."""
    env = {n: _iv(x) for n, x in box.items()}
    whole = _eval(f.expr, env)
    if f.derivatives and _continuous(f, env):
        lo_w, hi_w = endpoints(whole)
        lo = max(_face_bound(f, box, "low"), lo_w)
        hi = min(_face_bound(f, box, "high"), hi_w)
        if lo <= hi:
            whole = mpmath.iv.mpf([lo, hi])
    if f.power != 1:
        whole = whole ** f.power
    return whole


def _pointwise_sign(f: _Factor, box: Mapping[str, tuple[Any, Any]], domain: Domain) -> int:
    """+1 / -1 when the factor (with its power) is > 0 / < 0 at every point of the box,
    although its enclosure may reach 0 at an infinite or open end; 0 when undecided.

    Recognised: enclosures away from 0; exp(...); a parameter whose range is ``(0, ...``;
    b^e with a negative exponent when b's enclosure excludes 0 (b is finite at every point).
    """
    env = {n: _iv(x) for n, x in box.items()}
    e = f.expr
    sign = 0
    if isinstance(e, sympy.exp) or (e.is_Pow and e.base is sympy.E):
        sign = 1
    elif e.is_Symbol:
        r = domain.range(e.name)
        if r.low is not None and (r.low > 0 or (r.low == 0 and r.low_open)):
            sign = 1
    if sign == 0:
        lo, hi = endpoints(_eval(e, env))
        if lo > 0:
            sign = 1
        elif hi < 0:
            sign = -1
        elif e.is_Pow and e.exp.is_Integer and e.exp < 0:
            blo, bhi = endpoints(_eval(e.base, env))
            if blo > 0:
                sign = 1
            elif bhi < 0:
                sign = -1 if int(e.exp) % 2 else 1
        elif e.is_Pow and e.exp.is_number and e.exp.is_negative:
            blo, _ = endpoints(_eval(e.base, env))
            sign = 1 if blo > 0 else 0
    if sign == -1 and f.power % 2 == 0:
        sign = 1
    return sign


def _enclose(factors: Sequence[_Factor], box: Mapping[str, tuple[Any, Any]]) -> tuple[Any, Any]:
    total = mpmath.iv.mpf(1)
    for f in factors:
        total = total * _enclose_factor(f, box)
    lo, hi = endpoints(total)
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        return -_INF, _INF
    return lo, hi


# ------------------------------------------------------------------------------------------
# The verifier
# ------------------------------------------------------------------------------------------


def _assumed_symbol(name: str, r: Range | None) -> sympy.Symbol:
    """A symbol carrying the sign and integrality the range guarantees (a superset)."""
    kw: dict[str, bool] = {"real": True}
    if r is not None:
        if r.integer:
            kw["integer"] = True
        if r.low is not None and r.low >= 0:
            if r.low > 0 or r.low_open:
                kw["positive"] = True
            else:
                kw["nonnegative"] = True
        elif r.high is not None and r.high <= 0:
            if r.high < 0 or r.high_open:
                kw["negative"] = True
            else:
                kw["nonpositive"] = True
    return sympy.Symbol(name, **kw)


def _light_simplify(expr: sympy.Expr) -> sympy.Expr:
    """Cheap, always-terminating simplification: expand and cancel, keeping the result only
    when it is no larger (``sympy.simplify`` can run for minutes, e.g. in logcombine)."""
    try:
        if sympy.count_ops(expr) > 300:
            return expr
        out = sympy.cancel(sympy.expand(expr))
    except (TypeError, ValueError, NotImplementedError, RecursionError,
            sympy.PolynomialError):
        return expr
    return out if sympy.count_ops(out) <= sympy.count_ops(expr) else expr


def _symbolic(g: sympy.Expr, domain: Domain, strict: bool) -> tuple[str | None, sympy.Expr]:
    """Try to decide ``g >= 0`` (``> 0``) symbolically.

    Returns:
        (method or None, simplified g in plain symbols).
    """
    ranges = {n: domain.range(n) for n in domain.names}
    rich = {sympy.Symbol(n): _assumed_symbol(n, ranges.get(n)) for n in by_name(g)}
    gr = g.xreplace(rich)
    gs = _light_simplify(gr)
    plain = _plain(gs)
    if gs == 0:
        return (None if strict else "symbolic: both sides are identical after simplification"
                ), plain
    sign = gs.is_positive if strict else gs.is_nonnegative
    if sign is True:
        return ("symbolic: sympy's sign rules show rhs - lhs "
                f"{'> 0' if strict else '>= 0'} from the parameters' signs"), plain
    return None, plain


def verify_inequality(
    relation: Any,
    domain: Domain,
    *,
    max_boxes: int = MAX_BOXES,
    time_limit: float = TIME_LIMIT,
    symbolic: bool = True,
) -> Verdict:
    """Decide ``lhs <= rhs`` (or ``<``, ``>=``, ``>``) at every point of ``domain``.

    Args:
        relation: a sympy inequality, or a string sympy parses (decimals read exactly).
        domain: the parameter domain; every symbol of ``relation`` must have a range.
        max_boxes: the branch-and-bound budget (boxes examined).
        time_limit: seconds before giving up with ``unknown``.
        symbolic: try sympy simplification first.

    Returns:
        A :class:`Verdict`: proved (and how), refuted (with a certified counterexample point
        and both sides' values), or unknown (with the boxes left).

    Raises:
        ValueError: for a relation that is not an inequality, or a symbol with no range.
    """
    if not isinstance(domain, Domain):
        raise ValueError(f"domain must be a Domain, got {domain!r}")
    decided = sympy.sympify(relation) if not isinstance(relation, str) else None
    if decided is sympy.true:
        return Verdict("proved", decided, domain, "symbolic: sympy decides it identically")
    if decided is sympy.false:
        point = {n: _any_point(domain.range(n)) for n in domain.names}
        if domain.contains(point) is True:
            return Verdict("refuted", decided, domain, "sympy decides it false everywhere",
                           point, "(false)", "(false)")
        return Verdict("unknown", decided, domain, "false wherever defined, but no domain "
                       "point could be certified")
    rel = _plain(parse_relation(relation))
    if any(_same(rel, c) for c in domain.conditions()):
        return Verdict("proved", rel, domain, "by the domain's definition")
    unknown = set(by_name(rel)) - set(domain.names)
    if unknown:
        raise ValueError(f"relation {rel} mentions {', '.join(sorted(unknown))}, which has no "
                         f"range in the domain ({domain})")
    start = time.monotonic()
    strict = rel.rel_op in ("<", ">")
    lhs, rhs = (rel.lhs, rel.rhs) if rel.rel_op in ("<", "<=") else (rel.rhs, rel.lhs)
    g = rhs - lhs
    sym_method = None
    if symbolic:
        sym_method, g = _symbolic(g, domain, strict)
    names = sorted(set(by_name(g)) | {n for c in domain.constraints for n in by_name(c)})
    axes = [_Axis(n, domain.range(n)) for n in names]
    search = _Search(lhs, rhs, g, strict, domain, axes, start, max_boxes, time_limit)
    if sym_method is not None:
        # sympy's assumption system is trusted only together with a sample check
        bad = search.probe_points(12)
        if bad is not None:
            return search.refutation(bad, "")
        return Verdict("proved", rel, domain, sym_method, seconds=time.monotonic() - start)
    bad = search.probe_points(40)
    if bad is not None:
        search.rel = rel
        return search.refutation(bad, "probe point")
    return search.run(rel)


class _Search:
    """One branch-and-bound run."""

    def __init__(self, lhs: sympy.Expr, rhs: sympy.Expr, g: sympy.Expr, strict: bool,
                 domain: Domain, axes: list[_Axis], start: float, max_boxes: int,
                 time_limit: float) -> None:
        self.lhs, self.rhs, self.g, self.strict = lhs, rhs, g, strict
        self.domain, self.axes = domain, axes
        self.start, self.max_boxes, self.time_limit = start, max_boxes, time_limit
        self.factors = _factors(g)
        self.constraints = [(_plain(c), _plain(c.lhs - c.rhs), c.rel_op)
                            for c in domain.constraints
                            if isinstance(c, sympy.core.relational.Relational)]
        self.boxes = 0
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

    def exact_at(self, xbox: Mapping[str, tuple[Any, Any]]
                 ) -> tuple[dict[str, Any], sympy.Expr | None]:
        """At a single point, the exact value of g when sympy reduces it to a rational (an
        equality such as 2^4 = 4^2 defeats interval arithmetic), else None."""
        point = {n: sympy.Rational(a.numerator, a.denominator) for n, (a, _) in xbox.items()}
        for n in self.domain.names:
            point.setdefault(n, _any_point(self.domain.range(n)))
        try:
            value = _light_simplify(self.g.xreplace({sympy.Symbol(n): v
                                                     for n, v in point.items()}))
        except (TypeError, ValueError, NotImplementedError):
            return point, None
        return point, (value if value.is_Rational else None)

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
            if p is not None and self.violates(p):
                return p
        return None

    def refutation(self, point: Mapping[str, Any], how: str) -> Verdict:
        lhs_v, rhs_v = _separated(self.lhs, self.rhs, point)
        rel = self.rel if self.rel is not None else sympy.Le(self.lhs, self.rhs)
        return Verdict("refuted", rel, self.domain, how or "counterexample point",
                       dict(point), lhs_v, rhs_v, boxes=self.boxes,
                       seconds=time.monotonic() - self.start)

    # ---- the search ----------------------------------------------------------------------

    def run(self, rel: Any) -> Verdict:
        self.rel = rel
        root = tuple(a.initial() for a in self.axes)
        counter = itertools.count()
        heap: list[tuple[Any, int, tuple[tuple[Fraction, Fraction], ...]]] = [
            (0, next(counter), root)]
        undecided: list[tuple[tuple[Fraction, Fraction], ...]] = []
        proved_boxes = 0
        while heap:
            if self.boxes >= self.max_boxes or time.monotonic() - self.start > self.time_limit:
                break
            _, _, ubox = heapq.heappop(heap)
            self.boxes += 1
            xbox = self.x_box(ubox)
            if xbox is None:
                continue
            cstate = self.constraints_state(xbox) if self.constraints else True
            if cstate is False:
                continue
            lo, _ = _enclose(self.factors, xbox) if self.factors else (0, 0)
            if not self.decided(lo) and all(a == b for a, b in xbox.values()):
                point, value = self.exact_at(xbox)
                if value is not None and (value > 0 or (value == 0 and not self.strict)):
                    lo = mpmath.mpf(0) if value == 0 else mpmath.mpf(1)
                elif value is not None and self.domain.contains(point) is True:
                    return self.refutation(point, "exact evaluation at a point")
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
            if self.decided(lo):
                proved_boxes += 1
                continue
            point = self.point_of(ubox)
            if point is not None and self.violates(point):
                return self.refutation(point, "interval branch-and-bound")
            children = self.split(ubox)
            if not children:
                undecided.append(ubox)
                continue
            for child in children:
                key = lo if not mpmath.isnan(lo) else -_INF
                heapq.heappush(heap, (float(key) if not _is_inf(key) else -math.inf,
                                      next(counter), child))
        elapsed = time.monotonic() - self.start
        if not heap and not undecided:
            return Verdict("proved", rel, self.domain,
                           f"interval branch-and-bound: {proved_boxes} boxes cover the domain "
                           f"({self.boxes} examined)", boxes=self.boxes, seconds=elapsed)
        left = [*undecided, *(b for _, _, b in heap)]
        reason = ("box budget exhausted" if self.boxes >= self.max_boxes else
                  "time limit reached" if heap else "boxes too small to split further")
        texts = tuple(self.describe(b) for b in sorted(left, key=self._volume,
                                                       reverse=True)[:5])
        return Verdict("unknown", rel, self.domain,
                       f"{reason}; {len(left)} boxes undecided after {self.boxes}",
                       remaining=texts, boxes=self.boxes, seconds=elapsed)

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

    def split(self, ubox: tuple[tuple[Fraction, Fraction], ...]
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


def _halton(index: int, base: int) -> Fraction:
    """The index-th element of the van der Corput sequence in ``base`` (in (0, 1))."""
    result, f = Fraction(0), Fraction(1)
    while index > 0:
        f /= base
        result += f * (index % base)
        index //= base
    return result


def _end_text(v: Any) -> str:
    if _is_inf(v):
        return "oo" if v > 0 else "-oo"
    return _short(sympy.Rational(v.numerator, v.denominator))


def _any_point(r: Range) -> sympy.Expr:
    if r.integer:
        first, last = r.first_integer(), r.last_integer()
        return sympy.Integer(first if first is not None else (last if last is not None else 0))
    if r.low is not None and r.high is not None:
        return (r.low + r.high) / 2
    if r.low is not None:
        return r.low + 1
    if r.high is not None:
        return r.high - 1
    return sympy.Integer(0)


def _separated(lhs: sympy.Expr, rhs: sympy.Expr, point: Mapping[str, Any]) -> tuple[str, str]:
    """Both sides at a point, to as many digits as it takes to see them apart."""
    subs = {sympy.Symbol(n): v for n, v in point.items()}
    lhs_s = {s: subs[sympy.Symbol(s.name)] for s in sympy.sympify(lhs).free_symbols}
    rhs_s = {s: subs[sympy.Symbol(s.name)] for s in sympy.sympify(rhs).free_symbols}
    for digits in (8, 15, 30, 60, 120):
        prec = int(digits * 3.33) + 20
        try:
            a = interval(lhs, lhs_s, prec=prec)
            b = interval(rhs, rhs_s, prec=prec)
        except EvaluationError:
            break
        a_lo, a_hi = endpoints(a)
        b_lo, b_hi = endpoints(b)
        sa = mpmath.nstr(mpmath.mpf(a_lo + a_hi) / 2, digits)
        sb = mpmath.nstr(mpmath.mpf(b_lo + b_hi) / 2, digits)
        if sa != sb:
            return sa, sb
    return str(sympy.N(lhs.xreplace(lhs_s), 40)), str(sympy.N(rhs.xreplace(rhs_s), 40))


def check_point(relation: Any, domain: Domain, point: Mapping[str, Any]) -> Verdict:
    """Check an inequality at one point: ``refuted`` when the point is certainly in the
    domain and the inequality certainly fails there, else ``unknown`` (one point proves
    nothing).

    Raises:
        ValueError: for a relation that is not an inequality or a point missing a parameter.
    """
    rel = _plain(parse_relation(relation))
    values = {str(k): exact(v, str(k)) for k, v in point.items()}
    for n in domain.names:
        if n not in values:
            raise ValueError(f"point must give a value for every parameter; missing {n}")
    if domain.contains(values) is True and decide(rel, values) is False:
        lhs, rhs = (rel.lhs, rel.rhs) if rel.rel_op in ("<", "<=") else (rel.rhs, rel.lhs)
        lv, rv = _separated(lhs, rhs, values)
        return Verdict("refuted", rel, domain, "witness point", values, lv, rv)
    return Verdict("unknown", rel, domain, "the point is no counterexample")
