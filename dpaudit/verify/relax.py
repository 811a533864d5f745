"""Proof by relaxation: prove a simpler inequality that implies ``lhs <= rhs``.

Interval branch-and-bound (:mod:`dpaudit.verify.engine`) cannot enclose some bounds the
accountant produces: nested minima of candidate bounds, ``n log(1 + x/n)`` as n -> oo, and
ratios of logarithms as delta -> 0.  :func:`prove_by_relaxation` proves ``g = rhs - lhs >= 0``
(``> 0``) through a chain of steps, each of which implies the one before, and states every
step in the verdict's method text:

1. **Choices and relaxations.**  A sub-expression X in whose value g is nonincreasing (its
   *polarity* is -1) may be replaced by an upper bound X' >= X; one in whose value g is
   nondecreasing by a lower bound.  The bounds used (:data:`RULES`) are

   * ``Min(a, b, ...) <= a`` (each argument is a choice: Min(A, B) + Min(C, D) <= rhs holds
     where any of A + C, A + D, B + C, B + D is <= rhs), and ``Max(a, b, ...) >= a``;
   * ``log(y) <= y - 1`` for y > 0 (so ``n log(1 + x/n) <= x``);
   * ``e^y - 1 <= y e^y`` for all real y (mean value theorem: e^y - 1 = y e^xi, xi between
     0 and y).

   One occurrence is replaced at a time, every other fixed, so g changes as a function of
   that one value along the segment from X to X'.  The polarity is read off the expression
   tree: sums keep it, a product multiplies it by the sign of its other factors, ``u^k``
   (u >= 0) by the sign of k, exp, log and erf keep it, erfc reverses it; every sign comes
   from a rigorous interval enclosure over the whole domain.  The functions on the path that
   need their argument in a range (log: > 0; non-integer or negative powers: >= 0 / > 0)
   are checked at both ends (before and after), so the whole segment stays in their domain
   and g is monotone along it.
2. **Change of variables.**  A parameter in (0, b], b <= 1, that occurs only inside logs is
   written ``x = e^-t`` (t = log 1/x in [log 1/b, oo)); one in [a, oo), a > 0, that occurs
   only inside logs ``x = e^s`` (an integer parameter relaxed to the reals: a superset).
   Logs of products are then sums, linear in t and s, and side constraints between such
   parameters (``delta m < 1``) are taken to logs (``s - t < 0``).
3. **Ratios of logs.**  In each product, ``P^a Q^-c`` with P - Q a constant and P, Q > 0 is
   written ``(1 + (P - Q)/Q)^r P^(a-r) Q^(r-c)``, r = min(a, c) (an identity), so that each
   parameter occurs with one polarity (``log(12n/d)/log(3n/d) = 1 + log 4/log(3n/d)``).
4. **Monotone elimination.**  A parameter in which g has a proved polarity (read off as in
   1., signs by enclosures) is set to the end of its range where g is smallest, provided no
   side constraint bounds it on that side (constant bounds are folded into the range), and
   g is continuous up to that end (every log argument, denominator and root base is
   enclosed away from its singularity on the closed box); a positive factor (a parameter
   with a range in (0, oo), or an enclosure > 0) is divided out first when that helps.
5. What is left is decided by a rigorous interval enclosure (no parameters left) or by
   :func:`~dpaudit.verify.engine.verify_inequality` on the reduced problem (one parameter
   left).
6. When no single choice of Min (Max) arguments proves the whole domain, the domain is
   bisected along one parameter (the two closed halves cover it) and each half may choose
   its own arguments.

Soundness: steps 1-4 only ever replace the problem by one that implies it; nothing is
refuted here (a counterexample must come from the engine, in the original problem).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import mpmath
import sympy

from dpaudit.expressions import as_expr
from dpaudit.numeric import endpoints, interval, mp_digits
from dpaudit.verify.budget import _clock
from dpaudit.verify.domain import Domain, by_name
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.relax_reduce import _Problem, _reduce
from dpaudit.verify.relax_rules import RULES, _choices, _relax
from dpaudit.verify.verdict import Verdict, _plain, parse_relation

__all__ = ["RELAX_SECONDS", "RULES", "prove_by_relaxation", "verify_with_relaxation"]

#: Rule sets tried after the Min/Max choices, most relaxed first.
_RULE_SETS: tuple[tuple[str, ...], ...] = (("log", "expm1"), ("log",), ())

#: The CPU-time safety net :func:`~dpaudit.verify.prove.verify_claim` gives a relaxation
#: attempt (the candidate budget :data:`MAX_CANDIDATES` decides; this only stops a runaway).
RELAX_SECONDS = 30.0

#: A reduced problem goes to the engine only with at most this many parameters left.
ENGINE_PARAMETERS = 1

#: The deterministic budget of one attempt: relaxed candidates examined (screened, reduced and
#: decided) over all domain pieces.  It, not the clock, decides when relaxation gives up, so
#: the outcome is the same on any machine; the CPU time limit is only a safety net.
MAX_CANDIDATES = 200

#: The engine's work budget on a reduced one-parameter problem.
ENGINE_WORK = 1500


# ------------------------------------------------------------------------------------------
# The entry point
# ------------------------------------------------------------------------------------------


def _decide_constant(g: sympy.Expr, strict: bool) -> bool:
    try:
        lo, _ = endpoints(interval(g, prec=120))
    except Exception:  # an expression interval() cannot enclose is undecided
        return False
    return lo > 0 if strict else lo >= 0


def _samples(domain: Domain, count: int = 30) -> list[dict[str, Any]]:
    """Points spread over the domain: the corners (each parameter at its first or last
    sample value) and mixtures, including far ends (delta = 10^-300, n = 10^30)."""
    values: dict[str, list[Any]] = {}
    for n, r in domain.ranges:
        lo, hi = r.low, r.high
        if lo is not None and hi is not None:
            vs = [lo + (hi - lo) * sympy.Rational(k, 8) for k in (8, 7, 4, 1, 0)]
            if lo == 0:
                vs += [hi * sympy.Integer(10) ** -k for k in (3, 30, 300)]
        elif lo is not None:
            vs = [lo, lo + 1] + [(abs(lo) + 1) * sympy.Integer(10) ** k for k in (1, 3, 10, 30)]
        elif hi is not None:
            vs = [hi, hi - 1] + [-(abs(hi) + 1) * sympy.Integer(10) ** k for k in (1, 3, 10)]
        else:
            vs = [sympy.Integer(k) for k in (0, 1, -1, 10, -10, 1000, -1000)]
        if r.integer:
            vs = [sympy.ceiling(v) for v in vs]
        values[n] = [v for v in vs if r.contains(v) is not False]
    names = sorted(values)
    out = [
        {n: values[n][-1 if corner >> j & 1 else 0] for j, n in enumerate(names)}
        for corner in range(2 ** min(len(names), 4))
    ]
    for i in range(count):
        out.append(
            {
                n: values[n][(i * (2 * j + 1) + i // (j + 2)) % len(values[n])]
                for j, n in enumerate(names)
            }
        )
    return out


def _screen_for(domain: Domain, strict: bool) -> Any:
    """A heuristic filter: False when g is < 0 (<= 0) at a sample point of the domain, in
    30-digit arithmetic.  Nothing is concluded from it; it only chooses what to try."""
    points = [p for p in _samples(domain) if domain.contains(p) is not False]

    def screen(g: sympy.Expr) -> bool:
        names = sorted(by_name(g))
        try:
            f = sympy.lambdify([sympy.Symbol(n) for n in names], g, modules="mpmath")
        except Exception:  # cannot be screened: keep it
            return True
        with mp_digits(30):
            for pt in points:
                try:
                    v = f(
                        *(
                            mpmath.mpf(sympy.Rational(pt[n]).p) / sympy.Rational(pt[n]).q
                            for n in names
                        )
                    )
                except Exception:  # undefined at the sample: no verdict
                    continue
                if isinstance(v, mpmath.mpc) or not mpmath.isfinite(v):
                    continue
                if v < 0 or (strict and v == 0):
                    return False
        return True

    return screen


def prove_by_relaxation(
    relation: Any, domain: Domain, *, time_limit: float = 10.0, max_boxes: int = 1500
) -> Verdict | None:
    """Try to prove ``lhs <= rhs`` (``<``, ``>=``, ``>``) on ``domain`` by relaxation,
    change of variables and monotone elimination (see the module docstring).  When no
    choice of Min arguments works on the whole domain, the domain is bisected (at most
    :data:`SPLIT_DEPTH` levels, one parameter per level) and each piece may choose its own.

    Args:
        relation: the inequality.
        domain: its domain.
        time_limit: a CPU-time safety net for the whole attempt (including any engine run
            on a reduced problem); :data:`MAX_CANDIDATES` decides when it gives up.
        max_boxes: the engine's box budget on a reduced problem.

    Returns:
        A proved :class:`~dpaudit.verify.engine.Verdict` whose method lists every step, or
        None when no candidate could be proved (this never refutes).
    """
    start = _clock()
    if as_expr(relation, "inequality") in (sympy.true, sympy.false):
        return None  # already decided by sympy: nothing to relax
    rel = _plain(parse_relation(relation))
    strict = rel.rel_op in ("<", ">")
    lhs, rhs = (rel.lhs, rel.rhs) if rel.rel_op in ("<", "<=") else (rel.rhs, rel.lhs)
    deadline = start + time_limit
    budget = [MAX_CANDIDATES]
    method = _prove_split(rhs - lhs, strict, domain, deadline, max_boxes, SPLIT_DEPTH, budget)
    if method is None:
        return None
    return Verdict("proved", rel, domain, f"by relaxation: {method}", seconds=_clock() - start)


#: Levels of domain bisection when no single choice proves the whole domain.
SPLIT_DEPTH = 1


def _halves(domain: Domain, name: str) -> tuple[Domain, Domain, str] | None:
    """The domain cut in two along ``name`` (a superset of it: the cut is in both)."""
    r = domain.range(name)
    if r.low is not None and r.high is not None:
        mid = (r.low + r.high) / 2
        if r.low == 0 and r.low_open:
            mid = r.high / 2
    elif r.low is not None:
        mid = 2 * r.low + 1 if r.low >= 0 else sympy.Integer(0)
    elif r.high is not None:
        mid = 2 * r.high - 1 if r.high <= 0 else sympy.Integer(0)
    else:
        mid = sympy.Integer(0)
    if r.integer:
        mid = sympy.floor(mid)
        if (r.low is not None and mid < r.first_integer()) or (
            r.high is not None and mid >= r.last_integer()
        ):
            return None
        upper = dataclasses.replace(r, low=mid + 1, low_open=False)
    else:
        upper = dataclasses.replace(r, low=mid, low_open=False)
    lower = dataclasses.replace(r, high=mid, high_open=False)
    pieces = []
    for piece in (lower, upper):
        ranges = {**dict(domain.ranges), name: piece}
        try:
            pieces.append(Domain(ranges, constraints=list(domain.constraints)))
        except ValueError:  # an empty piece: the cut is at an open end
            return None
    return pieces[0], pieces[1], f"{name} <= {mid} and {name} >= {upper.low}"


def _prove_split(
    g: sympy.Expr,
    strict: bool,
    domain: Domain,
    deadline: float,
    max_boxes: int,
    depth: int,
    budget: list[int],
) -> str | None:
    """A proof method for ``g >= 0`` (``> 0``) on ``domain``, or None.  ``budget`` holds
    the candidates left (shared by all pieces, decremented in place)."""
    method = _prove_whole(g, strict, domain, deadline, max_boxes, budget)
    if method is not None or depth <= 0 or budget[0] <= 0 or _clock() > deadline:
        return method
    if not g.has(sympy.Min, sympy.Max):
        return None  # pieces help by choosing Min/Max arguments differently
    for name in sorted(by_name(g)):
        cut = _halves(domain, name)
        if cut is None:
            continue
        low, high, where = cut
        m1 = _prove_split(g, strict, low, deadline, max_boxes, depth - 1, budget)
        if m1 is None:
            continue
        m2 = _prove_split(g, strict, high, deadline, max_boxes, depth - 1, budget)
        if m2 is not None:
            return f"domain split into {where}: [{m1}] and [{m2}]"
    return None


def _prove_whole(
    g: sympy.Expr, strict: bool, domain: Domain, deadline: float, max_boxes: int, budget: list[int]
) -> str | None:
    """One choice of Min arguments and relaxations for the whole domain."""
    base = _Problem(g, dict(domain.ranges), [_plain(c) for c in domain.constraints], [])
    env = base.env()
    tried: set[sympy.Expr] = set()
    screen = _screen_for(domain, strict)
    partial: list[_Problem] = []
    for choice, notes in _choices(g, env):
        for rules in _RULE_SETS:
            if budget[0] <= 0 or _clock() > deadline:  # budget; the clock is a safety net
                return None
            budget[0] -= 1
            relaxed, rnotes = _relax(choice, rules, env, screen)
            if relaxed in tried or not screen(relaxed):
                continue
            tried.add(relaxed)
            p = _reduce(
                _Problem(relaxed, dict(base.ranges), list(base.constraints), [*notes, *rnotes])
            )
            if p.g.free_symbols:
                if p.notes:
                    partial.append(p)
                continue
            if _decide_constant(p.g, strict):
                lo = mpmath.nstr(endpoints(interval(p.g, prec=80))[0], 6)
                return _steps(p, f"what is left is a number >= {lo} (interval arithmetic)")
    # no candidate reduced to a number: the engine on the reduced problems, fewest
    # parameters first
    for p in sorted(partial, key=lambda q: len(q.ranges)):
        if len(by_name(p.g)) > ENGINE_PARAMETERS:
            continue
        left = deadline - _clock()
        if left <= 0 or budget[0] <= 0:
            return None
        budget[0] -= 1
        # the engine's deterministic work budget decides; the time left is a safety net
        v = verify_inequality(
            sympy.Gt(p.g, 0) if strict else sympy.Ge(p.g, 0),
            p.domain(),
            time_limit=left,
            max_boxes=max_boxes,
            max_work=ENGINE_WORK,
        )
        if v.proved:
            return _steps(p, f"the reduced inequality: {v.method}")
    return None


def _steps(p: _Problem, last: str) -> str:
    return "; ".join([*p.notes, last])


def verify_with_relaxation(
    relation: Any, domain: Domain, *, time_limit: float = 20.0, max_boxes: int = 3000
) -> Verdict:
    """:func:`prove_by_relaxation` (at most :data:`RELAX_SECONDS`), then, if it proved
    nothing, :func:`~dpaudit.verify.engine.verify_inequality` (which alone refutes)."""
    r = prove_by_relaxation(relation, domain, time_limit=min(time_limit, RELAX_SECONDS))
    if r is not None:
        return r
    return verify_inequality(relation, domain, time_limit=time_limit, max_boxes=max_boxes)
