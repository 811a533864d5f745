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
from collections.abc import Mapping
from typing import Any

import sympy

from dpaudit.expressions import as_expr
from dpaudit.numeric import exact
from dpaudit.verify.boxes import _any_point, _Axis, _separated
from dpaudit.verify.budget import MAX_BOXES, MAX_WORK, SIDE_PROOF_SHARE, TIME_LIMIT, _clock
from dpaudit.verify.domain import Domain, by_name, decide
from dpaudit.verify.enclosure import _NONSMOOTH, _smooth
from dpaudit.verify.reformulate import (
    _drop_unused,
    _fills,
    _linear_bound,
    _log_substitution,
    _Reformulated,
    _sign_guess,
    _substitute_end,
)
from dpaudit.verify.search import _Search
from dpaudit.verify.symbolic import SAFETY_NET_HITS, _factored, _light_simplify, _symbolic
from dpaudit.verify.verdict import Verdict, _plain, _same, parse_relation

__all__ = ["Verdict", "check_point", "parse_relation", "verify_inequality"]


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
