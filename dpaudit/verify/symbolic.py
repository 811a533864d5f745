"""Symbolic steps of the verifier under guards: size limits on what sympy is asked to factor or
simplify, a CPU-time bound on each sympy call, and the symbolic first attempt at a proof.
"""

from __future__ import annotations

import time
from typing import Any

import sympy

from dpaudit.verify.domain import Domain, Range, by_name
from dpaudit.verify.verdict import _plain


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
