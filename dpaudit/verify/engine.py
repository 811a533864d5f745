"""Deciding an inequality over a domain: symbolic simplification, then interval branch-and-bound.

:func:`verify_inequality` decides ``lhs <= rhs`` (or ``<``, ``>=``, ``>``) for every point of
a :class:`~dpaudit.verify.domain.Domain`, with one of three outcomes:

* **proved** -- either symbolically (sympy shows ``rhs - lhs`` is identically zero, or
  nonnegative from the signs the domain gives its parameters), or by covering the whole
  domain with boxes on each of which rigorous interval arithmetic (mpmath, outward rounding)
  encloses ``rhs - lhs`` in ``[0, oo)``;
* **refuted** -- with a concrete point of the domain where interval arithmetic certifies
  ``lhs > rhs``; both sides are printed to enough digits to see the gap;
* **unknown** -- when the box or work budget runs out (deterministic budgets, so the verdict
  is the same on every machine), or the CPU-time safety net fires (the verdict says so),
  with the boxes left undecided.

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
* Side constraints contract every box (HC4, :func:`_contract`) and drop the boxes on which
  they certainly fail.
* At a single point, every branch choice and comparison is rigorous (:func:`_sign_at`).

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

from dpaudit.expressions import as_expr
from dpaudit.numeric import EvaluationError, decide_relation, endpoints, exact, interval
from dpaudit.verify.domain import Domain, Range, by_name, decide

__all__ = ["Verdict", "check_point", "parse_relation", "verify_inequality"]

#: Working precision (bits) of box evaluations and of counterexample checks.
BOX_PRECISION = 64
POINT_PRECISION = 120

#: The clock of the time safety net: this process's CPU time.
_clock = time.process_time

#: Levels of monotonicity-from-a-face (see :meth:`_Search.nonneg`).
FACE_DEPTH = 2

#: Default budgets.  The deterministic ones govern every verdict: boxes examined, and work
#: units (:data:`WORK_SYMBOLIC` per symbolic computation the search makes -- a derivative, a
#: face or reciprocal substitution, a factorisation -- and :data:`WORK_CHECK` per premise
#: check of monotonicity from a face).  The time limit (CPU seconds) is a generous safety
#: net only: when it fires, the verdict says so ("time safety net").
MAX_BOXES = 3000
MAX_WORK = 5000
TIME_LIMIT = 120.0
WORK_SYMBOLIC = 10
WORK_CHECK = 1
#: Work is weighted by expression size: one unit per this many operations (plus one).
WORK_OPS = 20
#: Side proofs of a reformulation (a log's argument positive, a derivative's sign) get
#: 1/SIDE_PROOF_SHARE of the caller's box and work budgets each.
SIDE_PROOF_SHARE = 2

_NONSMOOTH = (
    sympy.Min,
    sympy.Max,
    sympy.Abs,
    sympy.floor,
    sympy.ceiling,
    sympy.Piecewise,
    sympy.sign,
    sympy.Heaviside,
)
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
        return str(v)
    if v.is_Rational and v.q < 10**6:
        return f"{v}" if len(str(v)) < 16 else mpmath.nstr(mpmath.mpf(v.p) / v.q, 12)
    with mpmath.workprec(80):
        return mpmath.nstr(mpmath.mpf(v.p) / v.q if v.is_Rational else mpmath.mpf(v.evalf(30)), 12)


def parse_relation(relation: Any) -> sympy.core.relational.Relational:
    """A sympy inequality from a relation or a string such as ``"exp(x) - 1 <= 2*x"``.

    Raises:
        ValueError: if it is not an inequality ``<``, ``<=``, ``>``, ``>=``.
    """
    rel = as_expr(relation, "relation")
    if rel in (sympy.true, sympy.false):
        raise ValueError(
            f"relation must be an inequality with free parameters, got {relation!r}"
            f" (sympy already decided it: {rel})"
        )
    if not isinstance(rel, sympy.core.relational.Relational) or rel.rel_op not in (
        "<",
        "<=",
        ">",
        ">=",
    ):
        raise ValueError(
            f"relation must be an inequality lhs <= rhs (or <, >=, >), got {relation!r}"
        )
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
            return "up"  # [a, oo): x = a + u/(1-u), u in [0, 1]
        if r.high is not None:
            return "down"  # (-oo, b]: x = b - u/(1-u), u in [0, 1]
        return "line"  # (-oo, oo): x = u/(1-|u|), u in [-1, 1]

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

    def u_of(self, x: Any) -> Fraction:
        """The coordinate of a value (a Fraction or +-inf): the inverse of :meth:`x_of`."""
        if self.kind == "bounded":
            return x
        if self.kind == "line":
            if _is_inf(x):
                return Fraction(1 if x > 0 else -1)
            return x / (1 + abs(x))
        if _is_inf(x):
            return Fraction(1)
        r = self.range
        step = x - _frac_down(r.low) if self.kind == "up" else _frac_up(r.high) - x
        return step / (1 + step)

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
    # x._mpf_ itself: mpmath.mpf(x) would round x to the context's 53 bits, and man_exp
    # drops the sign
    sign, man, exp, _ = (x if isinstance(x, mpmath.mpf) else mpmath.mpf(x))._mpf_
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


def _frac_down(v: sympy.Expr) -> Fraction:
    """A rational at most ``v`` (``v`` itself when it is rational)."""
    v = as_expr(v)
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    return _mpf_fraction(endpoints(interval(v))[0])


def _frac_up(v: sympy.Expr) -> Fraction:
    """A rational at least ``v`` (``v`` itself when it is rational)."""
    v = as_expr(v)
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
    smooth: bool
    guards: list[tuple[sympy.Expr, str]] = dataclasses.field(default_factory=list)
    _derivatives: dict[str, tuple[sympy.Expr, ...]] | None = None

    @property
    def derivatives(self) -> dict[str, tuple[sympy.Expr, ...]] | None:
        """The partial derivatives as products of factors (computed when first needed);
        None for a factor that is not smooth."""
        if not self.smooth:
            return None
        if self._derivatives is None:
            try:
                self._derivatives = {
                    s.name: sympy.Mul.make_args(_factored(sympy.diff(self.expr, s)))
                    for s in sorted(self.expr.free_symbols, key=lambda s: s.name)
                }
            except (TypeError, ValueError, NotImplementedError):
                self.smooth = False
                return None
        return self._derivatives


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


def _cheap_to_factor(expr: sympy.Expr, max_ops: int) -> bool:
    """Whether ``sympy.factor`` is safe to call: it can run for minutes on long expressions
    with large coefficients."""
    if not _affordable(expr, max_ops - 1):
        return False
    big = [r for r in expr.atoms(sympy.Rational) if abs(r.p) >= 10**4 or r.q >= 10**4]
    return not (big and sympy.count_ops(expr) >= 20)


#: Size bounds under which the engine hands an expression to sympy's algebra (expand,
#: cancel, factor, powsimp, factor_terms): bits of any rational's numerator or denominator,
#: and of all of them together.  Checked *before* each call: sympy's polynomial algorithms
#: run for minutes on large coefficients, and no timer reliably stops them (an alarm raised
#: while a garbage-collector callback runs is lost, see :func:`_bounded`).
MAX_COEFFICIENT_BITS = 64
MAX_TOTAL_COEFFICIENT_BITS = 512


def _affordable(expr: sympy.Expr, max_ops: int) -> bool:
    """Whether sympy's algebra may be called on ``expr``: at most ``max_ops`` operations
    (:func:`sympy.count_ops`), rational coefficients within :data:`MAX_COEFFICIENT_BITS`
    (each) and :data:`MAX_TOTAL_COEFFICIENT_BITS` (together), and small exponents
    (:func:`_small_exponents`); a quarter of the operations with a Min or Max inside (sympy
    re-sorts their arguments by symbolic comparisons each time one is rebuilt).  A refused
    expression is kept as it is (sound: every simplification is optional)."""
    total = 0
    for r in expr.atoms(sympy.Rational):
        bits = max(abs(int(r.p)).bit_length(), int(r.q).bit_length())
        total += bits
        if bits > MAX_COEFFICIENT_BITS or total > MAX_TOTAL_COEFFICIENT_BITS:
            return False
    if expr.has(sympy.Min, sympy.Max):
        max_ops //= 4
    return sympy.count_ops(expr) <= max_ops and _small_exponents(expr)


class _SympyTimeoutError(BaseException):
    """The sympy safety net fired (a BaseException, so that sympy's own ``except
    Exception`` handlers cannot swallow it)."""


#: CPU seconds one sympy simplification may take before its input is kept as it is: a
#: safety net only -- :func:`_affordable` keeps every call far below it, so that
#: verdicts do not depend on the machine's load; each time it fires is counted in
#: :data:`SAFETY_NET_HITS` and named in the verdict.
SYMPY_SECONDS = 10.0
#: The alarm repeats at this interval after the first one (an alarm raised while a
#: garbage-collector callback runs is printed and lost, not propagated).
_REARM_SECONDS = 0.05
#: How many times the sympy safety net has fired in this process.
SAFETY_NET_HITS = [0]


def _bounded(fn: Any, fallback: Any, seconds: float = SYMPY_SECONDS) -> Any:
    """``fn()``, or ``fallback`` when it raises or takes more than ``seconds`` of CPU time
    (a safety net: callers check :func:`_affordable` first).  The limit is a profiling
    interval timer (SIGPROF: process CPU time, so the machine's load does not move it; the
    wall-clock SIGALRM stays free for callers such as the report's time limits), available
    in the main thread only; elsewhere ``fn`` runs unbounded.  An enclosing profiling timer
    keeps its remaining time (it is re-armed afterwards)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        try:
            return fn()
        except (TypeError, ValueError, NotImplementedError, RecursionError, sympy.PolynomialError):
            return fallback

    state = {"active": True}

    def alarm(signum: int, frame: Any) -> None:
        if state["active"]:
            raise _SympyTimeoutError

    began = time.process_time()
    previous = signal.signal(signal.SIGPROF, alarm)
    outer = signal.getitimer(signal.ITIMER_PROF)[0]
    if outer and outer < seconds:
        seconds = outer  # a nested call never extends an enclosing limit
    signal.setitimer(signal.ITIMER_PROF, seconds, _REARM_SECONDS)
    try:
        try:
            return fn()
        finally:
            state["active"] = False
            signal.setitimer(signal.ITIMER_PROF, 0)
    except _SympyTimeoutError:
        SAFETY_NET_HITS[0] += 1
        return fallback
    except (TypeError, ValueError, NotImplementedError, RecursionError, sympy.PolynomialError):
        return fallback
    finally:
        state["active"] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer:
            signal.setitimer(signal.ITIMER_PROF, max(outer - (time.process_time() - began), 1e-3))


def _small_exponents(expr: sympy.Expr) -> bool:
    """False when sympy's polynomial algorithms (factor, cancel) would see a huge degree:
    exp(999 x/1000) is exp(x/1000)^999 to them."""
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.exp):
            c, _ = node.args[0].as_coeff_Mul()
        elif node.is_Pow:
            c = node.exp if node.exp.is_Rational else sympy.Integer(1)
        else:
            continue
        if c.is_Rational and (abs(c.p) > 12 or c.q > 12):
            return False
    return True


def _factored(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` fully factored when that is cheap (a derivative such as
    ``1 - (1 + (L + 1) e^a)/(2 L + 3)`` becomes ``(L + 1)(2 - e^a)/(2 L + 3)``, whose factors
    interval arithmetic encloses without the dependency problem), else its common terms
    pulled out."""
    if not _affordable(expr, 600):
        return expr
    out = sympy.factor_terms(expr)
    try:
        # sympy.factor can run for minutes on large coefficients or many generators
        if _cheap_to_factor(out, 60):
            full = _bounded(lambda: sympy.factor(out), out)
            if sympy.count_ops(full) <= sympy.count_ops(out):
                out = full
    except (sympy.PolynomialError, NotImplementedError, TypeError, ValueError, RecursionError):
        pass
    return out


def _factors(g: sympy.Expr) -> list[_Factor]:
    """``g`` as a product of factors (with integer powers), each with its derivatives."""
    try:
        gf = sympy.factor_terms(g) if _affordable(g, 600) else g
        if _cheap_to_factor(gf, 400):
            gf = _bounded(lambda: sympy.factor(gf, deep=False), gf)
    except (sympy.PolynomialError, NotImplementedError, TypeError, ValueError):
        gf = g
    parts: list[_Factor] = []
    for arg in sympy.Mul.make_args(
        gf
        if sympy.count_ops(gf) <= sympy.count_ops(g) or not _affordable(g, 600)
        else sympy.factor_terms(g)
    ):
        base, power = arg, 1
        if arg.is_Pow and arg.exp.is_Integer and int(arg.exp) > 0:
            base, power = arg.base, int(arg.exp)
        smooth = not base.has(*_NONSMOOTH) and bool(base.free_symbols)
        parts.append(_Factor(base, power, smooth, _guards(base)))
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
        whole = whole**f.power
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


_SMOOTH_FUNCTIONS = (sympy.exp, sympy.log, sympy.erf, sympy.erfc)


def _smooth(expr: sympy.Expr) -> bool:
    """True when ``expr`` is built from arithmetic, powers, exp, log, erf and erfc only:
    smooth wherever the guards of :func:`_guards` hold."""
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Function) and not isinstance(node, _SMOOTH_FUNCTIONS):
            return False
    return True


def _deep_cancel(expr: sympy.Expr) -> sympy.Expr:
    """``sympy.cancel`` applied bottom-up to products, powers' bases and function arguments
    (never to a sum as a whole, which would merge it into one fraction), keeping a result
    only when it is no larger."""
    if not _affordable(expr, 300):
        return expr

    def tidy(e: sympy.Expr) -> sympy.Expr:
        out = _bounded(lambda: sympy.cancel(e), e, SYMPY_SECONDS / 4)
        return out if sympy.count_ops(out) <= sympy.count_ops(e) else e

    def step(e: sympy.Expr) -> sympy.Expr:
        if e.is_Mul:
            return tidy(e)
        if e.is_Pow and (e.base.is_Add or e.base.is_Mul):
            return e.func(tidy(e.base), e.exp)
        if isinstance(e, sympy.Function) and any(a.is_Add or a.is_Mul for a in e.args):
            return e.func(*(tidy(a) for a in e.args))
        return e

    return sympy.bottom_up(expr, step)


def _enclose(factors: Sequence[_Factor], box: Mapping[str, tuple[Any, Any]]) -> tuple[Any, Any]:
    env = {n: _iv(x) for n, x in box.items()}
    total = mpmath.iv.mpf(1)
    for f in factors:
        part = _eval(f.expr, env)
        total = total * (part**f.power if f.power != 1 else part)
    lo, hi = endpoints(total)
    if lo > 0:
        return lo, hi
    # not decided by the plain enclosure: refine each factor by its monotonicity
    total = mpmath.iv.mpf(1)
    for f in factors:
        total = total * _enclose_factor(f, box)
    lo, hi = endpoints(total)
    if mpmath.isnan(lo) or mpmath.isnan(hi):
        return -_INF, _INF
    return lo, hi


# ------------------------------------------------------------------------------------------
# Rigorous evaluation at a point: every branch choice and comparison by interval arithmetic
# ------------------------------------------------------------------------------------------

#: Precisions (bits) of the rigorous sign decisions at a point, tried in turn.
POINT_LADDER = (POINT_PRECISION, 4 * POINT_PRECISION, 16 * POINT_PRECISION)


class _UndecidedError(Exception):
    """A branch choice at a point that no rigorous method decided."""


def _sign_at(expr: sympy.Expr, values: Mapping[str, Any]) -> int | None:
    """The sign (-1, 0 or 1) of ``expr`` at a point (exact values by name), or None.

    Decided by interval enclosures at the precisions of :data:`POINT_LADDER`
    (:func:`dpaudit.numeric.decide_relation` on each), and 0 -- which no enclosure of a
    value that is not a dyadic rational separates -- only when exact sympy algebra reduces the
    expression to 0 after every branch was chosen rigorously (:func:`_value_at`).  Never by a
    floating-point comparison: sympy's own ``Min``, ``Max``, ``Abs`` and relationals compare
    numbers by a low-precision ``evalf``, which takes ``3 n^2 log(1 + x/n)`` at ``n = 10^9``
    for 0 and so picks the wrong branch of ``Min(3 n^2 log(1 + x/n), 10^-6)``.
    """
    subs = {n: values[n] for n in by_name(expr)}
    for prec in POINT_LADDER:
        try:
            lo, hi = endpoints(interval(expr, subs, prec=prec))
        except (EvaluationError, ValueError, ZeroDivisionError, TypeError):
            return None
        for op, sign in ((">", 1), ("<", -1), ("==", 0)):
            if decide_relation(op, lo, hi):
                return sign
    try:
        if _light_simplify(_value_at(expr, values)) == 0:
            return 0
    except (_UndecidedError, TypeError, ValueError, NotImplementedError):
        pass
    return None


def _holds_at(cond: Any, values: Mapping[str, Any]) -> bool:
    """A Piecewise condition decided at a point by :func:`_sign_at`.

    Raises:
        _UndecidedError: when it cannot be decided rigorously.
    """
    if cond in (sympy.true, True):
        return True
    if cond in (sympy.false, False):
        return False
    if isinstance(cond, (sympy.And, sympy.Or)):
        states = []
        for c in cond.args:
            try:
                states.append(_holds_at(c, values))
            except _UndecidedError:
                states.append(None)
        decisive = isinstance(cond, sympy.Or)  # the value one argument decides it with
        if decisive in states:
            return decisive
        if None in states:
            raise _UndecidedError(cond)
        return not decisive
    if isinstance(cond, sympy.Not):
        return not _holds_at(cond.args[0], values)
    if isinstance(cond, sympy.core.relational.Relational) and cond.rel_op in (
        "<",
        "<=",
        ">",
        ">=",
        "==",
        "!=",
    ):
        s = _sign_at(_value_at(cond.lhs, values) - _value_at(cond.rhs, values), {})
        if s is None:
            raise _UndecidedError(cond)
        return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[
            cond.rel_op
        ]
    raise _UndecidedError(cond)


def _value_at(expr: sympy.Expr, values: Mapping[str, Any]) -> sympy.Expr:
    """``expr`` at a point (exact values by name) as a closed sympy expression, with every
    branch -- ``Min``, ``Max``, ``Abs``, ``sign``, ``floor``, ``ceiling``, ``Heaviside``,
    ``Piecewise`` -- chosen by :func:`_sign_at`, never by sympy's automatic evaluation
    (plain ``xreplace`` would let sympy compare the numbers by a low-precision evalf).

    Raises:
        _UndecidedError: when a branch cannot be chosen rigorously.
    """
    if expr.is_Symbol:
        return values[expr.name]
    if not expr.args:
        return expr
    if isinstance(expr, sympy.Piecewise):
        for value, cond in expr.args:
            if _holds_at(cond, values):
                return _value_at(value, values)
        raise _UndecidedError(expr)
    args = [_value_at(a, values) for a in expr.args]
    if isinstance(expr, (sympy.Min, sympy.Max)):
        best = args[0]
        for a in args[1:]:
            s = _sign_at(a - best, {})
            if s is None:
                raise _UndecidedError(expr)
            if s == (-1 if isinstance(expr, sympy.Min) else 1):
                best = a
        return best
    if isinstance(expr, (sympy.Abs, sympy.sign, sympy.Heaviside)):
        s = _sign_at(args[0], {})
        if s is None or (s == 0 and isinstance(expr, sympy.Heaviside)):
            raise _UndecidedError(expr)
        if isinstance(expr, sympy.Abs):
            return args[0] if s >= 0 else -args[0]
        return sympy.Integer(s) if isinstance(expr, sympy.sign) else sympy.Integer(int(s > 0))
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        return _integer_part(expr.func, args[0])
    return expr.func(*args)


def _integer_part(func: Any, arg: sympy.Expr) -> sympy.Integer:
    """``floor(arg)`` or ``ceiling(arg)`` of a closed expression, decided rigorously.

    Raises:
        _UndecidedError: when ``arg`` is too close to an integer to decide.
    """
    rnd = mpmath.floor if func is sympy.floor else mpmath.ceil
    for prec in POINT_LADDER:
        try:
            lo, hi = endpoints(interval(arg, prec=prec))
        except (EvaluationError, ValueError, ZeroDivisionError, TypeError):
            raise _UndecidedError(arg) from None
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            continue
        with mpmath.workprec(prec + max(int(abs(lo)).bit_length(), int(abs(hi)).bit_length()) + 8):
            a, b = rnd(lo), rnd(hi)
        if a == b:
            return sympy.Integer(int(a))
    # an integer value (such as log(8)/log(2)) is its own floor and ceiling
    if not mpmath.isfinite(hi):
        raise _UndecidedError(arg)
    k = sympy.Integer(int(mpmath.nint(hi)))
    if _sign_at(arg - k, {}) == 0:
        return k
    raise _UndecidedError(arg)


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
    saved = mpmath.iv.prec
    mpmath.iv.prec = BOX_PRECISION
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
    finally:
        mpmath.iv.prec = saved
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
        if not _affordable(expr, 300):
            return expr
        out = _bounded(lambda: sympy.cancel(sympy.expand(expr)), expr)
    except (TypeError, ValueError, NotImplementedError, RecursionError, sympy.PolynomialError):
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
        return (
            None if strict else "symbolic: both sides are identical after simplification"
        ), plain
    sign = gs.is_positive if strict else gs.is_nonnegative
    if sign is True:
        return (
            "symbolic: sympy's sign rules show rhs - lhs "
            f"{'> 0' if strict else '>= 0'} from the parameters' signs"
        ), plain
    return None, plain


def verify_inequality(
    relation: Any,
    domain: Domain,
    *,
    max_boxes: int = MAX_BOXES,
    time_limit: float = TIME_LIMIT,
    symbolic: bool = True,
    max_work: int = MAX_WORK,
    _depth: int = 0,
) -> Verdict:
    """Decide ``lhs <= rhs`` (or ``<``, ``>=``, ``>``) at every point of ``domain``.

    The outcome is determined by the deterministic budgets (``max_boxes``, ``max_work``),
    so that it does not depend on the machine or its load; ``time_limit`` is a safety net
    whose firing (in the search, a side proof or a sympy call) the verdict's text names.

    Args:
        relation: a sympy inequality, or a string sympy parses (decimals read exactly).
        domain: the parameter domain; every symbol of ``relation`` must have a range.
        max_boxes: the branch-and-bound budget (boxes examined).
        time_limit: the safety net: CPU seconds before giving up with ``unknown``.
        symbolic: try sympy simplification first.
        max_work: the budget of expensive operations (see :data:`MAX_WORK`).

    Returns:
        A :class:`Verdict`: proved (and how), refuted (with a certified counterexample point
        and both sides' values), or unknown (with the boxes left).

    Raises:
        ValueError: for a relation that is not an inequality, or a symbol with no range.
    """
    hits = SAFETY_NET_HITS[0]
    verdict = _decide(
        relation,
        domain,
        max_boxes=max_boxes,
        time_limit=time_limit,
        symbolic=symbolic,
        max_work=max_work,
        _depth=_depth,
    )
    fired = SAFETY_NET_HITS[0] - hits
    if fired and _depth == 0:
        verdict = dataclasses.replace(
            verdict,
            method=(
                f"{verdict.method} [the CPU-time safety net fired {fired} time(s) in side proofs "
                "or sympy calls: this verdict may depend on the machine]"
            ),
        )
    return verdict


def _decide(
    relation: Any,
    domain: Domain,
    *,
    max_boxes: int,
    time_limit: float,
    symbolic: bool,
    max_work: int,
    _depth: int,
) -> Verdict:
    """:func:`verify_inequality` without the safety-net note."""
    if not isinstance(domain, Domain):
        raise ValueError(f"domain must be a Domain, got {domain!r}")
    decided = as_expr(relation) if not isinstance(relation, str) else None
    if decided is sympy.true:
        return Verdict("proved", decided, domain, "symbolic: sympy decides it identically")
    if decided is sympy.false:
        point = {n: _any_point(domain.range(n)) for n in domain.names}
        if domain.contains(point) is True:
            return Verdict(
                "refuted",
                decided,
                domain,
                "sympy decides it false everywhere",
                point,
                "(false)",
                "(false)",
            )
        return Verdict(
            "unknown",
            decided,
            domain,
            "false wherever defined, but no domain point could be certified",
        )
    rel = _plain(parse_relation(relation))
    if any(_same(rel, c) for c in domain.conditions()):
        return Verdict("proved", rel, domain, "by the domain's definition")
    unknown = set(by_name(rel)) - set(domain.names)
    if unknown:
        raise ValueError(
            f"relation {rel} mentions {', '.join(sorted(unknown))}, which has no "
            f"range in the domain ({domain})"
        )
    start = _clock()
    strict = rel.rel_op in ("<", ">")
    lhs, rhs = (rel.lhs, rel.rhs) if rel.rel_op in ("<", "<=") else (rel.rhs, rel.lhs)
    g = rhs - lhs
    sym_method = None
    if symbolic:
        sym_method, g = _symbolic(g, domain, strict)
    names = sorted(set(by_name(g)) | {n for c in domain.constraints for n in by_name(c)})
    axes = [_Axis(n, domain.range(n)) for n in names]
    search = _Search(
        lhs, rhs, g, strict, domain, axes, start, max_boxes, time_limit, max_work=max_work
    )
    if sym_method is not None:
        # sympy's assumption system is trusted only together with a sample check
        bad = search.probe_points(12)
        if bad is not None:
            return search.refutation(bad, "")
        return Verdict("proved", rel, domain, sym_method, seconds=_clock() - start)
    bad = search.probe_points(40 if _depth == 0 else 10)
    search.rel = rel
    if bad is not None:
        return search.refutation(bad, "probe point")
    branch = _finite_branch(lhs)
    if branch is not None:
        verdict = _verify_finite_branch(
            branch, rhs, rel, search, max_boxes, time_limit, symbolic, _depth
        )
        if verdict is not None:
            return verdict
    # the reformulation's side proofs and its search, then a branch-and-bound of the
    # original problem, each with the full deterministic budgets; one time safety net for all
    reform = _reformulate(
        lhs,
        rhs,
        strict,
        domain,
        _depth,
        start + time_limit,
        budget=(max(max_boxes // SIDE_PROOF_SHARE, 1), max(max_work // SIDE_PROOF_SHARE, 1)),
    )
    if reform is not None:
        verdict = _run_reformulated(reform, search, rel, max_boxes, time_limit, symbolic)
        if verdict.status != "unknown":
            return verdict
    return search.run(rel)


def _finite_branch(lhs: sympy.Expr) -> tuple[sympy.Expr, Any] | None:
    """``(a, C)`` when ``lhs`` is ``Piecewise((a, C), (oo, True))`` with ``C`` a relation:
    the accountant's form of a bound that holds only under a condition (e.g. the
    exponential mechanism's stability bound of 003 Lemma 7); else None."""
    if isinstance(lhs, sympy.Piecewise) and len(lhs.args) == 2:
        (a, cond), (b, rest) = lhs.args
        if (
            b is sympy.oo
            and rest is sympy.true
            and not a.has(sympy.oo, -sympy.oo)
            and isinstance(cond, sympy.core.relational.Relational)
        ):
            return a, cond
    return None


def _verify_finite_branch(
    branch: tuple[sympy.Expr, Any],
    rhs: sympy.Expr,
    rel: Any,
    search: _Search,
    max_boxes: int,
    time_limit: float,
    symbolic: bool,
    depth: int,
) -> Verdict | None:
    """``Piecewise((a, C), (oo, True)) <= rhs`` holds exactly where ``C`` holds and
    ``a <= rhs``: the proved verdict when both are proved on the domain (each a smooth
    inequality the reformulations can work on, where the Piecewise is not), else None."""
    value, cond = branch
    notes = []
    for sub in (cond, (sympy.Lt if search.strict else sympy.Le)(value, rhs)):
        if sub is sympy.true:
            continue
        if sub is sympy.false:
            return None
        v = verify_inequality(
            sub,
            search.domain,
            max_boxes=max_boxes,
            time_limit=time_limit - (_clock() - search.start),
            symbolic=symbolic,
            max_work=search.max_work,
            _depth=depth + 1,
        )
        if not v.proved:
            return None
        notes.append(f"{sub} ({v.method})")
    return Verdict(
        "proved",
        rel,
        search.domain,
        "the bound is finite exactly where its condition holds: " + "; ".join(notes),
        boxes=search.boxes,
        seconds=_clock() - search.start,
    )


def _run_reformulated(
    reform: _Reformulated,
    search: _Search,
    rel: Any,
    max_boxes: int,
    time_limit: float,
    symbolic: bool,
) -> Verdict:
    """Decide a reformulation (the time safety net ``time_limit`` counted from the start of
    the original search); a counterexample is certified in the original problem, a proof's
    method names the reformulation."""
    how = f"reformulated ({'; '.join(reform.notes)})"
    method, g = _symbolic(reform.g, reform.domain, search.strict) if symbolic else (None, reform.g)
    names = sorted(set(by_name(g)) | {n for c in reform.domain.constraints for n in by_name(c)})
    axes = [_Axis(n, reform.domain.range(n)) for n in names]
    sub = _Search(
        search.lhs,
        search.rhs,
        g,
        search.strict,
        reform.domain,
        axes,
        search.start,
        max_boxes,
        time_limit,
        origin=search,
        back=reform.back,
        max_work=search.max_work,
    )
    sub.rel = rel
    bad = sub.probe_points(12 if method is not None else 40)
    if bad is not None:
        return search.refutation(bad, f"probe point of the {how}")
    if method is not None:
        return Verdict(
            "proved", rel, search.domain, f"{how}; {method}", seconds=_clock() - search.start
        )
    verdict = sub.run(rel)
    if verdict.status == "proved":
        return dataclasses.replace(verdict, domain=search.domain, method=f"{how}; {verdict.method}")
    return verdict


class _Search:
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
            point = self.point_of(ubox)
            found = self.witness(point) if point is not None else None
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
    lhs_s = {s: subs[sympy.Symbol(s.name)] for s in as_expr(lhs).free_symbols}
    rhs_s = {s: subs[sympy.Symbol(s.name)] for s in as_expr(rhs).free_symbols}
    texts = None
    for digits in (8, 15, 30, 60, 120):
        prec = int(digits * 3.33) + 20
        try:
            a = interval(lhs, lhs_s, prec=prec)
            b = interval(rhs, rhs_s, prec=prec)
        except EvaluationError:
            break
        # each side's text is one its whole enclosure rounds to (a midpoint of a wide
        # enclosure would print digits the value does not have)
        (a_lo, a_hi), (b_lo, b_hi) = endpoints(a), endpoints(b)
        sa, sb = mpmath.nstr(a_lo, digits), mpmath.nstr(b_lo, digits)
        texts = (sa, sb)
        if sa == mpmath.nstr(a_hi, digits) and sb == mpmath.nstr(b_hi, digits) and sa != sb:
            return sa, sb
    if texts is not None:
        return texts
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


# ------------------------------------------------------------------------------------------
# Reformulation: an equivalent or stronger inequality that interval arithmetic decides
# ------------------------------------------------------------------------------------------

#: Reformulations (and their side proofs) nest at most this deep.
REFORMULATION_DEPTH = 2


@dataclasses.dataclass
class _Reformulated:
    """``g >= 0`` (``> 0``) on ``domain`` implies the original inequality on the original
    domain; ``back`` maps a point of ``domain`` to one of the original domain (or None),
    so that a counterexample found here can be certified there."""

    g: sympy.Expr
    domain: Domain
    notes: list[str]
    back: Any


def _rational_near(value: sympy.Expr, side: str = "mid") -> sympy.Rational:
    """A rational below (``"down"``), above (``"up"``) or near (``"mid"``) ``value``."""
    lo, hi = endpoints(interval(value, prec=POINT_PRECISION))
    pick = lo if side == "down" else hi if side == "up" else (lo + hi) / 2
    f = _mpf_fraction(pick)
    if side == "mid":
        f = f.limit_denominator(10**30)
    return sympy.Rational(f.numerator, f.denominator)


def _fills(names: Sequence[str], domain: Domain) -> Any:
    """Values for parameters a reformulation dropped: each at a point of its range, then one
    at a time doubled outwards (a sequence to search for a point of the original domain)."""
    base = {n: _any_point(domain.range(n)) for n in names}
    yield dict(base)
    for level in range(1, 80):
        for n in names:
            r = domain.range(n)
            if r.high is not None and r.low is not None:
                continue
            step = sympy.Integer(2) ** level
            v = base[n] * step if r.high is None else base[n] - step
            if r.high is None and base[n] <= 0:
                v = base[n] + step
            yield {**base, n: v}


def _drop_unused(g: sympy.Expr, domain: Domain) -> tuple[Domain, list[str]]:
    """The domain without the parameters ``g`` does not mention and without every side
    constraint that mentions one of them: a superset of the projection (sound for proving)."""
    used = set(by_name(g))
    dropped = [n for n in domain.names if n not in used]
    if not dropped:
        return domain, []
    ranges = {n: r for n, r in domain.ranges if n in used}
    cons = [c for c in domain.constraints if set(by_name(c)) <= used]
    return Domain(ranges, constraints=cons), dropped


def _sign_guess(d: sympy.Expr, domain: Domain) -> int:
    """+1 / -1 when ``d`` is >= 0 / <= 0 at a few sample points of the domain's ranges, else
    0 (only a guess of which monotonicity to try to prove)."""
    signs = set()
    for i in range(1, 9):
        point = {}
        for j, (n, r) in enumerate(domain.ranges):
            t = _halton(i, (2, 3, 5, 7, 11, 13)[j % 6])
            if r.low is not None and r.high is not None:
                v = r.low + (r.high - r.low) * sympy.Rational(t.numerator, t.denominator)
            else:
                v = (
                    _any_point(r)
                    + (1 if r.high is None else -1)
                    * sympy.Rational(t.numerator, t.denominator)
                    * 100
                )
            point[n] = sympy.floor(v) if r.integer else v
        try:
            lo, hi = endpoints(interval(d, {sympy.Symbol(n): point[n] for n in by_name(d)}))
        except (EvaluationError, ValueError, ZeroDivisionError, TypeError):
            continue
        if lo > 0:
            signs.add(1)
        elif hi < 0:
            signs.add(-1)
    return signs.pop() if len(signs) == 1 else 0


def _log_substitution(g: sympy.Expr, domain: Domain) -> _Reformulated | None:
    """``x = e^(-t)`` for each parameter x in (0, b], b <= 1, that appears inside a log:
    ``log(2/delta)`` becomes ``t + log 2`` and the end delta -> 0 the end t -> oo, where
    the reciprocal coordinate ``1/t`` of the branch-and-bound encloses ratios of logs."""
    names = []
    for n, r in domain.ranges:
        if r.integer or r.low != 0 or not r.low_open or r.high is None or r.high > 1:
            continue
        if any(n in by_name(a.args[0]) for a in g.atoms(sympy.log)):
            names.append(n)
    if not names:
        return None
    ranges = dict(domain.ranges)
    rep = {}
    for n in names:
        r = ranges.pop(n)
        t = sympy.Symbol(f"log(1/{n})", positive=True)
        rep[sympy.Symbol(n)] = sympy.exp(-t)
        ranges[t.name] = Range(sympy.simplify(-sympy.log(r.high)), None, low_open=r.high_open)
    g2 = _plain(sympy.expand_log(_positive_symbols(g.xreplace(rep)), deep=True))
    cons = [
        _plain(sympy.expand_log(_positive_symbols(c.xreplace(rep)), deep=True))
        for c in domain.constraints
    ]
    new = Domain(ranges, constraints=cons)

    def back(p: dict[str, Any]) -> dict[str, Any]:
        q = {k: v for k, v in p.items() if not k.startswith("log(1/")}
        for n in names:
            q[n] = _rational_near(sympy.exp(-as_expr(p[f"log(1/{n})"])))
        return q

    return _Reformulated(
        g2, new, [f"{n} = exp(-t), t = log(1/{n}) in {ranges[f'log(1/{n})']}" for n in names], back
    )


def _positive_symbols(expr: sympy.Expr) -> sympy.Expr:
    """The ``log(1/x)`` symbols made positive, so that ``expand_log`` may split logs."""
    return expr.xreplace(
        {
            s: sympy.Symbol(s.name, positive=True)
            for s in expr.free_symbols
            if s.name.startswith("log(1/")
        }
    )


def _linear_bound(c: Any, name: str) -> tuple[sympy.Expr, str] | None:
    """A side constraint linear in ``name`` with a numeric coefficient as (bound, "upper" or
    "lower"): ``x <= bound`` or ``x >= bound``; None otherwise."""
    if not isinstance(c, sympy.core.relational.Relational) or c.rel_op not in (
        "<",
        "<=",
        ">",
        ">=",
    ):
        return None
    x = sympy.Symbol(name)
    diff = _plain(c.lhs - c.rhs)
    k = sympy.diff(diff, x)
    if not k.is_number or k == 0 or sympy.diff(k, x) != 0:
        return None
    bound = sympy.expand(x - diff / k)
    if x in bound.free_symbols:
        return None
    upper = (c.rel_op in ("<", "<=")) == bool(k > 0)
    return bound, "upper" if upper else "lower"


def _eliminate(
    g: sympy.Expr,
    strict: bool,
    domain: Domain,
    depth: int,
    deadline: float,
    budget: tuple[int, int] = (MAX_BOXES, MAX_WORK),
) -> _Reformulated | None:
    """Monotone elimination of one parameter x: where the sign of dg/dx is *proved* on the
    domain (x relaxed to the reals), g is smallest at the end of x's admissible interval
    towards which it decreases -- the range's end, or a side constraint's bound
    ``x <= c(others)`` when that side of the range is unbounded -- so x is replaced by that
    end.  Sound because every segment from a point of the domain towards that end stays in
    the relaxed domain (the other constraints on x bound it from the other side)."""
    if g.has(*_NONSMOOTH) or not _smooth(g):
        return None
    for name in domain.names:
        if name not in by_name(g):
            continue
        r = domain.range(name)
        bounds = []
        for c in domain.constraints:
            if name in by_name(c):
                b = _linear_bound(c, name)
                if b is None:
                    break
                bounds.append((c, *b))
        else:
            x = sympy.Symbol(name)
            d = _factored(sympy.diff(g, x))
            relaxed = Domain(
                {**dict(domain.ranges), name: dataclasses.replace(r, integer=False)},
                constraints=domain.constraints,
            )
            guess = _sign_guess(d, relaxed)
            for direction in (1, -1) if guess >= 0 else (-1, 1):
                # increasing: smallest at the lower end; decreasing: at the upper end
                side = "lower" if direction == 1 else "upper"
                mine = [(c, b) for c, b, s in bounds if s == side]
                end = r.low if side == "lower" else r.high
                if r.integer:
                    end = r.first_integer() if side == "lower" else r.last_integer()
                elif end is not None and (r.low_open if side == "lower" else r.high_open):
                    continue  # an open end: g need not extend continuously to it
                if end is not None and not mine:
                    at, used = sympy.Integer(end) if r.integer else end, None
                elif end is None and len(mine) == 1 and mine[0][0].rel_op in ("<=", ">="):
                    at, used = mine[0][1], mine[0][0]
                else:
                    continue
                left = deadline - _clock()
                if left <= 0:
                    SAFETY_NET_HITS[0] += 1
                    return None
                rel = sympy.Ge(d, 0) if direction == 1 else sympy.Le(d, 0)
                v = verify_inequality(
                    rel,
                    relaxed,
                    time_limit=left,
                    max_boxes=budget[0],
                    max_work=budget[1],
                    _depth=depth + 1,
                )
                if not v.proved:
                    continue
                return _substitute_end(g, domain, name, at, used, side)
    return None


def _substitute_end(
    g: sympy.Expr, domain: Domain, name: str, at: sympy.Expr, used: Any, side: str
) -> _Reformulated:
    x = sympy.Symbol(name)
    r = domain.range(name)
    g2 = _light_simplify(_deep_cancel(g.xreplace({x: at})))
    cons = []
    for c in domain.constraints:
        if c is used:
            continue
        cons.append(c.xreplace({x: at}) if name in by_name(c) else c)
    if used is not None:
        # the admissible interval of x is nonempty
        other = r.high if side == "lower" else r.low
        if r.integer:
            other = r.last_integer() if side == "lower" else r.first_integer()
        if other is not None:
            is_open = (r.high_open if side == "lower" else r.low_open) and not r.integer
            rel = (
                (sympy.Lt if is_open else sympy.Le)(at, other)
                if side == "lower"
                else (sympy.Gt if is_open else sympy.Ge)(at, other)
            )
            cons.append(rel)
    cons = [c for c in cons if c is not sympy.true]
    ranges = {n: rr for n, rr in domain.ranges if n != name}
    reduced = Domain(ranges, constraints=cons)
    reduced, dropped = _drop_unused(g2, reduced)

    def back(p: dict[str, Any]) -> dict[str, Any] | None:
        for fill in _fills(dropped, domain):
            q = {**p, **fill}
            v = at.xreplace({sympy.Symbol(k): val for k, val in q.items()})
            if r.integer:
                lo, hi = endpoints(interval(v, prec=POINT_PRECISION))
                v = sympy.Integer(
                    int(mpmath.floor(lo)) if side == "upper" else int(mpmath.ceil(hi))
                )
            elif not v.is_Rational:
                v = _rational_near(v, "down" if side == "upper" else "up")
            q[name] = v
            if domain.contains(q) is True:
                return q
        return None

    end_text = f"{name} = {at}" + (
        " (its bound in the side constraint)" if used is not None else " (the end of its range)"
    )
    note = f"{name} eliminated by proved monotonicity: {end_text}"
    if dropped:
        note += f"; {', '.join(dropped)} then free"
    return _Reformulated(g2, reduced, [note], back)


def _reformulate(
    lhs: sympy.Expr,
    rhs: sympy.Expr,
    strict: bool,
    domain: Domain,
    depth: int,
    deadline: float,
    budget: tuple[int, int] = (MAX_BOXES, MAX_WORK),
) -> _Reformulated | None:
    """Rewrite ``lhs <= rhs`` on ``domain`` into ``g >= 0`` on a simpler domain, each step
    implying the previous one:

    1. ``log A <= B`` as ``A <= e^B`` (and ``A <= log B`` as ``e^A <= B``), once the log's
       argument is proved positive on the domain (an equivalence there);
    2. parameters in (0, b], b <= 1, inside logs as ``x = e^(-t)``;
    3. monotone elimination of parameters bounded by side constraints (repeatedly), then
       parameters the inequality no longer mentions are dropped.

    Returns None when no step applies.
    """
    if depth >= REFORMULATION_DEPTH:
        return None
    notes: list[str] = []
    backs: list[Any] = []
    if isinstance(lhs, sympy.log) or isinstance(rhs, sympy.log):
        args = [side.args[0] for side in (lhs, rhs) if isinstance(side, sympy.log)]
        ok = True
        for a in args:
            left = deadline - _clock()
            if left <= 0:
                SAFETY_NET_HITS[0] += 1
            if (
                left <= 0
                or not verify_inequality(
                    sympy.Gt(a, 0),
                    domain,
                    time_limit=left,
                    max_boxes=budget[0],
                    max_work=budget[1],
                    _depth=depth + 1,
                ).proved
            ):
                ok = False
                break
        if ok:
            lhs, rhs = sympy.exp(lhs), sympy.exp(rhs)
            notes.append("exp of both sides (the log's argument proved positive)")
    g = _light_simplify(rhs - lhs)
    dom = Domain(dict(domain.ranges), constraints=[_plain(c) for c in domain.constraints])
    step = _log_substitution(g, dom)
    if step is not None:
        g, dom = step.g, step.domain
        notes += step.notes
        backs.append(step.back)
    for _ in range(3):
        step = _eliminate(g, strict, dom, depth, deadline, budget)
        if step is None:
            break
        g, dom = step.g, step.domain
        notes += step.notes
        backs.append(step.back)
    if not backs:
        dom2, dropped = _drop_unused(g, dom)
        if dropped:

            def fill(p: dict[str, Any], dom: Domain = dom) -> dict[str, Any] | None:
                for f in _fills(dropped, dom):
                    q = {**p, **f}
                    if dom.contains(q) is True:
                        return q
                return None

            backs.append(fill)
            notes.append(f"{', '.join(dropped)} (only in side constraints) left free")
            dom = dom2
    if not notes:
        return None

    def back(p: dict[str, Any]) -> dict[str, Any] | None:
        for b in reversed(backs):
            if p is None:
                return None
            p = b(p)
        return p

    return _Reformulated(g, dom, notes, back)
