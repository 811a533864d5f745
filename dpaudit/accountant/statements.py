"""What the accountant knows about a node: privacy statements and the steps that derived them.

A :class:`Statement` is one proved guarantee of one event in one currency: pure DP
(:class:`Pure`), approximate DP (:class:`Approx`), zero-concentrated DP
(:class:`Concentrated`) or Gaussian DP (:class:`GaussianDP`, an exact privacy profile).
Further currencies (Renyi curves, privacy loss distributions, ...) subclass
:class:`Statement`.  Each statement carries the :class:`Step` that proves it, so the whole
derivation can be printed, and converts itself to :class:`Candidate` epsilons for a target
delta.
"""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpaudit.accountant.domains import admit, with_params
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import ExactNumber, is_sympy_object, rational
from dpaudit.exact_text import sympy_text
from dpaudit.numeric import (
    EvaluationError,
    endpoints,
    exact,
    exact_value,
    float_down,
    float_up,
    interval,
)
from dpaudit.theorems import primitives as prim
from dpaudit.theorems import zcdp
from dpaudit.theorems.base import Check, Theorem

__all__ = [
    "Approx",
    "Candidate",
    "Concentrated",
    "GaussianDP",
    "Pure",
    "Statement",
    "Step",
    "compare",
    "conditional",
    "show",
    "upper_float",
]


#: Expressions with more nodes than this are shown by their rounded-up value only.
_SHOWN_NODES = 24

#: Symbolic differences with more nodes than this are not simplified by :func:`compare`
#: (simplifying a large expression takes minutes, and "undecided" is always a valid answer).
_SIMPLIFIED_NODES = 80


def exact_zero() -> Any:
    """Exact 0 (an :class:`~dpaudit.exact_numbers.ExactNumber`): the default of a statement's
    numbers, and the delta of a pure-DP candidate."""
    return _ZERO


_ZERO = rational(0)


@functools.lru_cache(maxsize=4096)
def upper_float(expr: sympy.Expr) -> float:
    """``float_up`` of a numeric expression, cached (derivation text and the choice of the
    tightest candidate evaluate the same expressions)."""
    return float_up(expr)


def show(expr: Any) -> str:
    """An exact value as text, with a decimal approximation when it is not an integer."""
    expr = exact_value(expr)
    try:
        return _show(expr)
    except TypeError:  # unhashable: not cached
        return _show.__wrapped__(expr)


@functools.lru_cache(maxsize=4096)
def _show(expr: sympy.Expr) -> str:
    from dpaudit.events.base import _format_value

    if expr.is_Integer:
        return str(expr)
    large = not expr.is_Rational and not expr.free_symbols and _larger_than(expr, _SHOWN_NODES)
    # an exact number that only sympy would print (dpaudit.exact_text declines it) is shown by
    # its rounded value, as a large one: printing it would import sympy (issue 19, part 4)
    printed = None
    if isinstance(expr, ExactNumber) and not expr.is_Rational:
        printed = sympy_text(expr)
        large = large or printed is None
    if not large:
        text = _format_value(expr) if expr.is_Rational else printed or str(expr)
        if expr.free_symbols:
            return text
    try:
        approx = upper_float(expr)
    except (EvaluationError, ValueError):
        return str(expr)
    if large:
        return f"~{approx:.6g}"
    short = f"{approx:.6g}"
    if len(text) > 40:
        return f"~{short}"
    if expr.is_Rational and ("." in text or "e" in text):
        return text
    return text if text == short else f"{text} ~ {short}"


def _larger_than(expr: Any, limit: int) -> bool:
    """Whether the expression tree has more than ``limit`` nodes (cheaper than printing it)."""
    if isinstance(expr, ExactNumber):
        return expr.size() > limit
    return any(n >= limit for n, _ in enumerate(sympy.preorder_traversal(expr)))


def compare(a: sympy.Expr, b: sympy.Expr) -> int | None:
    """-1, 0 or 1 as exact ``a`` is below, equal to or above ``b``; None if undecided
    (symbolic, or too close to separate with interval arithmetic)."""
    a, b = exact_value(a), exact_value(b)
    if a == b:
        return 0
    if a.free_symbols or b.free_symbols:
        diff = a - b
        if not (diff.is_negative or diff.is_positive) and not _larger_than(diff, _SIMPLIFIED_NODES):
            diff = sympy.simplify(diff)
        if diff.is_negative:
            return -1
        if diff.is_positive:
            return 1
        return None
    if (is_sympy_object(a) and a is sympy.oo) or (is_sympy_object(b) and b is sympy.oo):
        return None if a == b else (1 if a is sympy.oo else -1)
    # each value's own enclosure first (memoised: a node compares the same candidates several
    # times): disjoint enclosures decide, and the difference is enclosed only when they meet
    ea, eb = _enclosure(a), _enclosure(b)
    if ea is not None and eb is not None:
        if ea[1] < eb[0]:
            return -1
        if ea[0] > eb[1]:
            return 1
    try:
        lo, hi = endpoints(interval(a - b))
    except EvaluationError:
        return None
    if hi < 0:
        return -1
    if lo > 0:
        return 1
    if lo == 0 and hi == 0:
        return 0
    return None


@functools.lru_cache(maxsize=1024)
def _enclosure(value: Any) -> tuple[Any, Any] | None:
    """Rigorous endpoints of a numeric exact value (None when it cannot be enclosed)."""
    try:
        return endpoints(interval(value))
    except (EvaluationError, TypeError, ValueError):
        return None


@dataclasses.dataclass(frozen=True)
class Alternative:
    """One candidate a node compared: its label, its epsilon, and whether it was chosen."""

    label: str
    epsilon: sympy.Expr
    chosen: bool

    def __str__(self) -> str:
        return f"{self.label} {show(self.epsilon)}"


@dataclasses.dataclass(frozen=True)
class Step:
    """One application of a theorem at one node of the event tree.

    Attributes:
        theorem: the result applied.
        event: the node it was applied to.
        conclusion: what it concludes, e.g. ``"(1/10)-DP"``.
        formula: the bound with the numbers substituted, e.g. ``"eps = Delta/b = 1/10"``.
        premises: the steps its inputs came from.
        alternatives: the candidates compared at this node, when it chose among several.
        note: anything a reader must know (assumptions used, a delta split, ...).
        checks: the theorem's domain conditions decided at this node's parameters
            (:func:`dpaudit.accountant.domains.admit`); None when the rule did not check.
    """

    theorem: Theorem
    event: Event
    conclusion: str
    formula: str = ""
    premises: tuple[Step, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    note: str = ""
    checks: tuple[Check, ...] | None = None

    def walk(self) -> list[tuple[int, Step]]:
        """Every step of the derivation, depth first, with its depth."""
        out: list[tuple[int, Step]] = []

        def visit(step: Step, depth: int) -> None:
            out.append((depth, step))
            for p in step.premises:
                visit(p, depth + 1)

        visit(self, 0)
        return out


@dataclasses.dataclass(frozen=True)
class Candidate:
    """An (epsilon, delta) guarantee for the whole event at the requested delta.

    ``epsilon`` is an exact upper bound.  ``epsilon_lower``, when set, is a certified lower
    bound on the *true* epsilon of the event at ``delta`` (only methods that are exact for
    the event, such as the Gaussian profile of a tree of Gaussian mechanisms, give one).
    """

    epsilon: sympy.Expr
    delta: sympy.Expr
    step: Step
    epsilon_lower: sympy.Expr | None = None

    @property
    def label(self) -> str:
        return self.step.theorem.name


@dataclasses.dataclass(frozen=True)
class Statement:
    """A proved guarantee of one event in one currency.

    Attributes:
        step: the derivation of this statement.
        exact_profile: True when the statement is not just a bound but the event's exact
            privacy profile (so certified lower bounds can be read off it).
    """

    step: Step
    exact_profile: bool = dataclasses.field(default=False, kw_only=True)

    #: The currency's name (one statement of each currency is kept per node).
    currency = "statement"
    #: True for currencies whose candidates cost seconds or more (a privacy loss distribution
    #: is composed by FFT): the accountant computes them last and skips them when a cheaper
    #: candidate is already exact (:data:`SETTLED`).
    costly = False

    def key(self) -> sympy.Expr | None:
        """The scalar that orders statements of this currency (smaller is better), if any."""
        return None

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        """Epsilon guarantees at ``delta`` (None: at the statement's own delta)."""
        raise NotImplementedError

    def estimate(self, delta: sympy.Expr | None) -> float | None:
        """A float estimate of the smallest epsilon :meth:`candidates` gives at ``delta``
        (None: none cheaper than the candidates).  Not a bound: only to skip a certified
        conversion that cannot win (:func:`~dpaudit.accountant.rules.best_candidate`)."""
        return None


@dataclasses.dataclass(frozen=True)
class Pure(Statement):
    """epsilon-DP."""

    epsilon: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    currency = "pure"

    def key(self) -> sympy.Expr:
        return self.epsilon

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        return [
            Candidate(
                self.epsilon,
                exact_zero(),
                self.step,
                self.epsilon if self.exact_profile else None,
            )
        ]


@dataclasses.dataclass(frozen=True)
class Approx(Statement):
    """(epsilon, delta)-DP."""

    epsilon: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    delta: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    currency = "approx"

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None:
            return [Candidate(self.epsilon, self.delta, self.step)]
        order = compare(self.delta, delta)
        if order in (-1, 0):
            return [Candidate(self.epsilon, self.delta, self.step)]
        if order is None and (exact_value(delta).free_symbols or self.delta.free_symbols):
            return [conditional(self.epsilon, self.delta, delta, self.step)]
        return []


@dataclasses.dataclass(frozen=True)
class Concentrated(Statement):
    """rho-zCDP (Bun and Steinke 2016)."""

    rho: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    currency = "zcdp"

    def key(self) -> sympy.Expr:
        return self.rho

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None:
            return []
        params = {"rho": self.rho, "delta": delta}
        checks = admit(zcdp.ZCDP_TO_APPROX, self.step.event, params)
        if checks is None:
            return []
        eps = zcdp.zcdp_to_approx(self.rho, delta)
        step = Step(
            zcdp.ZCDP_TO_APPROX,
            self.step.event,
            f"({show(eps)}, {show(delta)})-DP",
            f"eps = rho + 2 sqrt(rho log(1/delta)) = {show(eps)}",
            (self.step,),
            checks=checks,
        )
        out = [Candidate(eps, delta, step)]
        # rho = 0 (a no-op): the basic conversion above is already exact (eps = 0)
        if not (self.rho.free_symbols or delta.free_symbols) and self.rho > 0:
            checks = admit(zcdp.ZCDP_TO_APPROX_OPTIMAL, self.step.event, params)
            opt = zcdp.zcdp_to_approx_optimal(self.rho, delta)
            out.append(
                Candidate(
                    opt,
                    delta,
                    Step(
                        zcdp.ZCDP_TO_APPROX_OPTIMAL,
                        self.step.event,
                        f"({show(opt)}, {show(delta)})-DP",
                        "eps = alpha rho + (log(1/delta) + alpha log(1 - 1/alpha) - log(alpha - 1))"
                        f"/(alpha - 1) = {show(opt)}",
                        (self.step,),
                        # the order the conversion was evaluated at, for the card's formula
                        checks=with_params(checks, {"alpha": zcdp.cks20_order(self.rho, delta)}),
                    ),
                )
            )
        return out


@dataclasses.dataclass(frozen=True)
class GaussianDP(Statement):
    """mu-GDP (Dong, Roth, Su 2022): the privacy profile of a Gaussian mechanism with
    Delta/sigma = mu, which is exact for (compositions of) Gaussian mechanisms."""

    mu: sympy.Expr = dataclasses.field(default_factory=exact_zero)
    currency = "gdp"

    def key(self) -> sympy.Expr:
        return self.mu

    def candidates(self, delta: sympy.Expr | None) -> list[Candidate]:
        if delta is None or delta.free_symbols or self.mu.free_symbols:
            return []
        checks = admit(prim.GAUSSIAN_ANALYTIC, self.step.event, {"delta": delta})
        if checks is None:
            return []
        try:
            lower, upper = prim.gdp_epsilon(self.mu, delta)
        except EvaluationError:  # mu so large that the bisection finds no bracket: the
            return []  # other currencies (zCDP, PLD) still give a bound
        step = Step(
            prim.GAUSSIAN_ANALYTIC,
            self.step.event,
            f"({show(upper)}, {show(delta)})-DP",
            f"smallest eps with delta_mu(eps) <= {show(delta)}, mu = {show(self.mu)}: "
            f"eps in [{float_down(lower):.10g}, {float_up(upper):.10g}]",
            (self.step,),
            note="solved with rigorous interval bisection on the exact profile",
            checks=with_params(checks, {"epsilon": upper, **self._noise()}),
        )
        return [Candidate(upper, delta, step, lower if self.exact_profile else None)]

    def _noise(self) -> dict[str, Any]:
        """Delta and sigma of the card's formula (which depends on Delta/sigma = mu alone):
        the event's own when it is one Gaussian mechanism, else Delta = 1, sigma = 1/mu (the
        one Gaussian mechanism with this profile, e.g. sqrt(k) Delta/sigma for k of them)."""
        event = self.step.event
        sigma, sens = getattr(event, "sigma", None), getattr(event, "sensitivity", None)
        if sigma is not None and sens is not None and sens / sigma == self.mu:
            return {"Delta": sens, "sigma": sigma}
        return {"Delta": rational(1), "sigma": 1 / self.mu}


@functools.cache
def _settled() -> Any:
    return rational(Fraction(1, 10**9))


#: ``SETTLED``: a candidate whose certified band ``[epsilon_lower, epsilon]`` is narrower than
#: this (relative) is the exact epsilon for every purpose: no costly currency can improve it by
#: more.  Exactly 10^-9 (an exact number), made on first access (PEP 562 ``__getattr__``).
if TYPE_CHECKING:
    SETTLED: ExactNumber
else:

    def __getattr__(name: str) -> Any:
        if name == "SETTLED":
            return _settled()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def band_settled(upper: float, lower: float) -> bool:
    """Whether a certified band ``[lower, upper]`` is within :data:`SETTLED` of ``upper``."""
    return upper - lower <= float(_settled()) * upper


def settled(candidates: list[Candidate]) -> Candidate | None:
    """The first numeric candidate whose certified band is within :data:`SETTLED` of its
    upper bound (e.g. the analytic Gaussian profile, exact for compositions of Gaussians)."""
    for c in candidates:
        if c.epsilon_lower is None or c.epsilon.free_symbols or c.epsilon_lower.free_symbols:
            continue
        upper, lower = float_up(c.epsilon), float_down(c.epsilon_lower)
        if upper > 0 and band_settled(upper, lower):
            return c
    return None


def conditional(epsilon: sympy.Expr, own: sympy.Expr, delta: sympy.Expr, step: Step) -> Candidate:
    """The candidate of an (epsilon, own)-DP statement at a symbolic target ``delta`` that
    cannot be compared with ``own`` without knowing the parameters' range.

    Its epsilon is ``Piecewise((epsilon, own <= delta), (oo, True))``: where ``own <= delta``
    the mechanism is (epsilon, delta)-DP (a larger delta is a weaker claim); elsewhere
    nothing is known, so no finite bound is given.  Whoever knows the range (the verifier,
    with the claim's domain) decides the condition rigorously; nothing is guessed here.
    """
    bound = sympy.Piecewise((epsilon, sympy.Le(own, delta)), (sympy.oo, True))
    return Candidate(
        bound,
        delta,
        Step(
            step.theorem,
            step.event,
            f"({show(epsilon)}, {show(delta)})-DP where {show(own)} <= {show(delta)}",
            f"delta = {show(own)} <= {show(delta)} is needed",
            (step,),
            note="the guarantee's delta is compared with the target on the domain",
            checks=step.checks,
        ),
    )  # the premise's card at the premise's parameters


def as_delta(delta: Any) -> sympy.Expr | None:
    """Validate a requested delta: None, or an exact value in [0, 1)."""
    if delta is None:
        return None
    d = exact(delta, "delta")
    if not d.free_symbols and not (0 <= d < 1):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    return d
