"""Where a calibration evaluates first: the value at which a float forecast of the event's
epsilon meets the target, computed from the mechanisms' densities without composing.

A calibration's search on certified bounds alone (:mod:`~dpaudit.accountant.calibration_search`)
spends most of its time locating the answer: on DP-SGD at 10^6 steps, four coarse PLD
evaluations and two refined ones before the accountant's run at the value found.  When the
event is a composition of Gaussian mechanisms, Poisson-subsampled or not (every DP-SGD
schedule), its privacy loss in each direction is known in closed form, and so is its moment
generating function as a one-dimensional integral.  This module

1. writes each mechanism's two privacy losses (remove: the subsampled pair against the
   Gaussian; add: the reverse) as quadrature nodes (:func:`_gaussian_nodes`), the composition as
   their powers (:func:`loss_nodes`);
2. forecasts delta at the target epsilon by the saddle-point inversion of
   :mod:`dpaudit.numeric.saddlepoint` (the larger of the two directions, as the accountant's
   PLD bound is), and finds the value whose forecast meets the target: the secant method in
   ``log v`` on ``sqrt(-2 log delta)`` (nearly linear in the noise, as it is exactly for a
   Gaussian's ``mu``), safeguarded by bisection once the root is bracketed;
3. chooses where the first certified evaluation goes (:func:`_settled`).  The certified PLD
   bound lies above the true epsilon by its discretisation error, so its crossing is on the
   private side of the forecast one.  Where the refinement stops before the finest grid (its
   gap below ``TARGET_GAP`` of epsilon), that is by less than the search's tolerance: the
   evaluation is made :data:`AIM` beyond the forecast.  Where the finest grid's error is
   larger (DP-SGD from about 10^5 steps: 1.7e-4 of sigma at 10^5, 3.7e-4 at 10^6), the
   forecast is made again on that grid's upper discretisations (the accountant's own leaves,
   when small: :func:`upper_nodes`), whose profile tracks the certified bound, and the
   evaluation is made :data:`LEAF_AIM` beyond that crossing, on that grid;
4. returns the value, the aim, the grid and the forecast's ``d log epsilon / d log v``
   (:class:`Forecast`), which the search extrapolates along
   (:meth:`~dpaudit.accountant.calibration_search._Search.settle`).

Privacy:
    Nothing here is a bound and nothing here decides: the value found is only where the search
    makes its first certified evaluation; every decision is taken on certified bounds computed
    at exactly the value decided.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from dpaudit.accountant.calibration_search import RELATIVE_TOLERANCE
from dpaudit.accountant.currencies import FINEST_GRID, TARGET_GAP
from dpaudit.accountant.parameter_roles import INCREASING
from dpaudit.events.base import Event
from dpaudit.events.combinators import Composed, PoissonSampled, SelfComposed
from dpaudit.events.primitives import Gaussian
from dpaudit.numeric.saddlepoint import LossNodes, leading_term, profile, saddle_point

__all__ = ["AIM", "ENABLED", "Forecast", "forecast_value", "loss_nodes", "upper_nodes"]

#: Whether calibrations forecast at all (a switch for benchmarks and tests: without it, the
#: search locates the answer with coarse certified evaluations).
ENABLED = True
#: How far (relative, towards privacy) beyond the forecast value the first certified evaluation
#: is made when no grid is forecast: the certified bound's crossing lies 3e-5 to 8e-5 beyond
#: the forecast's on the DP-SGD schedules of bench/calibrate.py and bench/calibration_search.py
#: where the refinement stops before the finest grid, and the search's tolerance is 1e-4.
AIM = 9e-5
#: How far beyond the crossing forecast on the finest grid's upper discretisations the first
#: certified evaluation is made (they track the certified bound within 2e-5 of epsilon at
#: 10^4-10^6 DP-SGD steps).
LEAF_AIM = 3e-5
#: No forecast on a grid's leaf of more than this many points (a small noise on the finest
#: grid: its cost is that of the coarse evaluation it would save).
LEAF_LIMIT = 16384
#: Nodes with log P-weight above this carry a leaf's support (estimating its size).
LEAF_SUPPORT = -70.0
#: The most forecasts one solve makes before giving up (the search then runs without).
MAX_FORECASTS = 40
#: The solve stops when the secant's step in ``log v`` is below this fraction of the tolerance.
STEP_FRACTION = 1 / 16
#: Quadrature: the nodes' step in the standard normal variable is this times ``min(1, 1/mu)``
#: (the losses vary on the scale ``1/mu``), over the normal's range plus the tilts' shifts.
NODE_STEP = 0.1
#: The most nodes of one mechanism's loss: the largest tilt resolved shrinks to fit.
MAX_NODES = 8192
#: The largest tilt (saddle point) the nodes are built for.
MAX_TILT = 64.0
#: The tilt the nodes are first built for (DP-SGD's saddle points lie at 1-10): a forecast
#: whose saddle point lies beyond builds them again for four times more, up to MAX_TILT.
FIRST_TILT = 16.0
#: A direction whose leading saddle-point term is below this share of the other's is not
#: forecast in full (its profile is far below the other's).
DIRECTION_SHARE = 1e-2
#: The aim's correction on the finest grid builds a direction's leaf only when its forecast
#: log delta is within this of the larger one's.  The grid moves both directions' log delta by
#: about the same amount (DP-SGD at 10^6 steps: +0.0075 and +0.0077, the forecasts 0.050
#: apart; 10^5: +0.0032 and +0.0034, 0.15 apart), so the other direction stays below; were it
#: not, the first evaluation would miss the target and cost one more, never the answer.
DIRECTION_MARGIN = 0.03
#: The solve gives up beyond values exp(+-MAX_LOG_VALUE) (a runaway: no crossing in floats).
MAX_LOG_VALUE = 300.0
#: The standard normal's range covered beyond the tilts' shifts, in standard deviations.
NORMAL_RANGE = 12.0


@dataclasses.dataclass(frozen=True)
class Forecast:
    """The value whose forecast epsilon meets the target (``value``, a float), ``d log epsilon
    / d log v`` of the forecast there (``slope``), where the first certified evaluation goes
    (``aim``), and the grid the accountant's refinement is expected to end on there (``grid``;
    None when not forecast)."""

    value: float
    slope: float
    aim: float
    grid: float | None = None


def _number(x: object, env: dict[str, float] | None = None) -> float | None:
    """A parameter's value as a float: a number, or a bare symbol given in ``env``; None
    otherwise (an expression of a symbol, or not finite)."""
    if env is not None and getattr(x, "is_Symbol", False):
        found = env.get(str(x))
        return found if found is not None and math.isfinite(found) else None
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _gaussian_nodes(
    mu: float, q: float, count: float, tilt: float = MAX_TILT
) -> tuple[LossNodes, LossNodes] | None:
    """The remove and add privacy losses of the Gaussian mechanism of ``mu = Delta / sigma``,
    Poisson-subsampled with rate ``q`` (``q = 1``: not subsampled), as nodes in the standard
    normal variable ``u``: ``A = N(0, 1)``, ``B = (1 - q) N(0, 1) + q N(mu, 1)``, the loss
    ``log(B / A)(u) = log(1 - q + q exp(mu u - mu^2 / 2))`` (Zhu, Dong, Wang 2022, Theorem 11: the
    dominating pairs of Poisson subsampling under add/remove are (B, A) and (A, B)).  The
    certified leaf writes the same loss in ``x = u / mu`` (:func:`dpaudit.pld.continuous.
    _gaussian_pair`, with rigorous tails this float estimate does not need)."""
    if not (mu > 0 and 0 < q <= 1 and count >= 1):
        return None
    du = NODE_STEP * min(1.0, 1.0 / mu)
    tilt = min(tilt, (MAX_NODES * du / 2 - NORMAL_RANGE - mu) / mu)
    if tilt < 1:
        return None
    half = NORMAL_RANGE + mu * (1 + tilt)
    u = np.arange(-half, half + du / 2, du)
    log_phi = -0.5 * u * u - 0.5 * math.log(2 * math.pi) + math.log(du)
    with np.errstate(divide="ignore"):
        log_keep = math.log1p(-q) if q < 1 else -math.inf
    loss = np.logaddexp(log_keep, math.log(q) + mu * u - mu * mu / 2)
    log_b = np.logaddexp(log_keep + log_phi, math.log(q) + log_phi + mu * u - mu * mu / 2)
    return LossNodes(loss, log_b, count, tilt), LossNodes(-loss, log_phi, count, tilt)


Nodes = tuple[list[LossNodes], list[LossNodes]]


def _walk(
    event: Event, leaf: Callable[[Event, float], Nodes | None], count: float, env: Any = None
) -> Nodes | None:
    """The remove and add losses of a composition, one ``leaf(mechanism, count)`` per
    mechanism: a self-composition multiplies the counts, a composition joins the lists; None
    when a leaf has none or a count is not a number (or a bare symbol given in ``env``)."""
    if isinstance(event, SelfComposed):
        k = _number(event.count, env)
        return None if k is None else _walk(event.event, leaf, count * k, env)
    if isinstance(event, Composed):
        removes: list[LossNodes] = []
        adds: list[LossNodes] = []
        for child in event.events:
            found = _walk(child, leaf, count, env)
            if found is None:
                return None
            removes.extend(found[0])
            adds.extend(found[1])
        return removes, adds
    return leaf(event, count)


def loss_nodes(
    event: Event, count: float = 1, env: dict[str, float] | None = None, tilt: float = MAX_TILT
) -> Nodes | None:
    """The event's remove and add privacy losses as :class:`LossNodes`, one per mechanism
    (:func:`_walk`), resolving tilts up to ``tilt``, or None when a node is not a
    (Poisson-subsampled) Gaussian mechanism or a composition of them, or a parameter is not a
    number (or a bare symbol given a value in ``env``)."""

    def gaussian(mechanism: Event, copies: float) -> Nodes | None:
        q: float | None = 1.0
        if isinstance(mechanism, PoissonSampled):
            q, mechanism = _number(mechanism.rate, env), mechanism.event
        if not isinstance(mechanism, Gaussian) or q is None:
            return None
        sigma = _number(mechanism.sigma, env)
        sensitivity = _number(mechanism.sensitivity, env)
        if sigma is None or sensitivity is None or sigma <= 0:
            return None
        pair = _gaussian_nodes(sensitivity / sigma, q, copies, tilt)
        return None if pair is None else ([pair[0]], [pair[1]])

    return _walk(event, gaussian, count, env)


class _Solve:
    """value -> ``sqrt(-2 log delta)`` of the forecast at the target epsilon (None: no
    forecast), and the forecast's ``d log delta / d log epsilon``."""

    def __init__(
        self,
        at: Callable[[Fraction], Event],
        epsilon: float,
        template: tuple[Event, str] | None = None,
    ) -> None:
        self.at = at
        self.epsilon = epsilon
        self.template = template
        self.guesses = [1.0, 1.0]  # the saddle points of the last forecast, per direction
        # the last forecast's log delta per direction (None: far below the other's)
        self.log_deltas: list[float | None] = [None, None]
        self.tilt = FIRST_TILT
        self.calls = 0

    def __call__(self, x: float) -> tuple[float, float] | None:
        """At ``v = exp(x)``: ``(sqrt(-2 log delta), d log delta / d log epsilon)``, the delta
        the larger of the two directions'; ``(0, 0)`` when the target is at or below the
        loss's mean in a direction (delta is not small there); None without a forecast."""
        self.calls += 1
        while True:
            found = self._at(x)
            if not isinstance(found, str):
                return found
            self.tilt = min(MAX_TILT, 4 * self.tilt)  # "wider"

    def _at(self, x: float) -> tuple[float, float] | str | None:
        """As :meth:`__call__`, or "wider" when the larger profile's saddle point lies beyond
        the tilt the nodes resolve (and they can resolve more)."""
        if not -MAX_LOG_VALUE < x < MAX_LOG_VALUE:
            return None  # a solve running away (no crossing in floats)
        nodes = None
        if self.template is not None:  # the symbol read as the value: no substitution
            event, name = self.template
            nodes = loss_nodes(event, env={name: math.exp(x)}, tilt=self.tilt)
        if nodes is None:
            try:
                nodes = loss_nodes(self.at(Fraction(math.exp(x))), tilt=self.tilt)
            except (ValueError, ArithmeticError, OverflowError):
                return None
        if nodes is None:
            return None
        saddles = []
        for parts, guess in zip(nodes, self.guesses, strict=True):
            mean = sum(p.cumulants(0.0)[1] for p in parts)
            if mean >= self.epsilon:
                return 0.0, 0.0
            found = saddle_point(parts, self.epsilon, guess)
            if found is None:
                return 0.0, 0.0  # the target at or below the (tilted) mean: delta not small
            saddles.append(found)
        self.guesses = [sp[0] for sp in saddles]
        looks = [leading_term(p, self.epsilon, sp) for p, sp in zip(nodes, saddles, strict=True)]
        worst = None
        self.log_deltas = [None, None]
        for i, parts in enumerate(nodes):
            if looks[i] < max(looks) * DIRECTION_SHARE:
                continue  # far below the other direction's: not the larger profile
            profiled = profile(parts, self.epsilon, saddle=saddles[i])
            if profiled is None:
                return None
            self.log_deltas[i] = profiled.log_delta
            if worst is None or profiled.log_delta > worst.log_delta:
                worst = profiled
        if worst is None:
            return None
        if worst.t >= min(p.t_max for p in nodes[0] + nodes[1]) and self.tilt < MAX_TILT:
            return "wider"  # a Chernoff estimate: resolve the saddle point instead
        return math.sqrt(-2 * worst.log_delta), self.epsilon * worst.dlog


def forecast_value(
    at: Callable[[Fraction], Event],
    *,
    epsilon: float,
    delta: float,
    sign: int,
    start: Fraction,
    low: Fraction | None = None,
    high: Fraction | None = None,
    template: tuple[Event, str] | None = None,
) -> Forecast | None:
    """The value ``v`` at which the forecast epsilon of ``at(v)`` at ``delta`` is ``epsilon``
    (module docstring), or None when the event has no forecast or the solve does not settle.

    Args:
        at: value -> the event at that value (numbers only).
        epsilon: the epsilon target.
        delta: the delta the target is stated at, in (0, 1).
        sign: :data:`~dpaudit.accountant.parameter_roles.INCREASING` when epsilon grows with
            the value, else ``DECREASING``.
        start: the value the solve starts from.
        low, high: the admissible values' ends (None: unbounded); a solve that would leave
            them gives no forecast (the search handles an answer at an end).
        template: ``(event, name)``: the event with the parameter as the symbol ``name``;
            where the symbol stands alone as a parameter, its value is read without
            substituting (``at`` is called otherwise).
    """
    if not (ENABLED and 0 < delta < 1 and epsilon > 0 and start > 0):
        return None
    solve = _Solve(at, epsilon, template)
    goal = math.sqrt(-2 * math.log(delta))
    # r(x) = sqrt(-2 log delta(x)) - goal grows with privacy: with x for a noise, against it
    # for a count or a rate
    direction = -1.0 if sign == INCREASING else 1.0
    stop = math.log1p(RELATIVE_TOLERANCE) * STEP_FRACTION
    points: list[tuple[float, float, float]] = []  # (x, r, d log delta / d log epsilon)
    lo: float | None = None  # the most private x seen with r < 0
    hi: float | None = None  # the least private x seen with r >= 0
    x_low = -math.inf if low is None or low <= 0 else math.log(low)
    x_high = math.inf if high is None else math.log(high)
    x = min(max(math.log(start), x_low), x_high)
    while solve.calls < MAX_FORECASTS:
        found = solve(x)
        if found is None:
            return None
        root, dlog_eps = found
        r = root - goal
        if root > 0:
            points.append((x, r, dlog_eps))
        if r < 0:
            lo = x if lo is None or direction * x > direction * lo else lo
        else:
            hi = x if hi is None or direction * x < direction * hi else hi
        if root == 0:  # delta not small: towards privacy by a factor 2
            x_next = x + direction * math.log(2)
        elif len(points) >= 2 and points[-2][1] != r:
            x0, r0, _ = points[-2]
            x_next = x - r * (x - x0) / (r - r0)
        else:  # a first step: r + goal is about linear in the noise
            x_next = x + direction * math.log(max(0.25, min(4.0, goal / root)))
        if lo is not None and hi is not None:
            a, b = sorted((lo, hi))
            if not a < x_next < b:
                x_next = (a + b) / 2
        if not x_low < x_next < x_high:
            return None  # the forecast crossing lies at or beyond an end of the range
        if abs(x_next - x) <= stop and len(points) >= 2:
            return _settled(solve, x_next, points, goal, delta, direction)
        x = x_next
    return None


def _settled(
    solve: _Solve,
    x: float,
    points: list[tuple[float, float, float]],
    goal: float,
    delta: float,
    direction: float,
) -> Forecast | None:
    """The forecast at the root ``x``: ``d log epsilon / d log v = -(d log delta / d log v) /
    (d log delta / d log epsilon)``, the first from the secant of ``r`` through the last two
    points (``log delta = -(r + goal)^2 / 2``, so ``d log delta / d log v = -goal dr / d log v``
    at the root), the second the forecast's at the last point; then the aim
    (:func:`_certified_shift`)."""
    (x0, r0, _), (x1, r1, dlog_eps) = points[-2], points[-1]
    if x1 == x0 or not dlog_eps < 0:
        return None
    dlog_delta = -goal * (r1 - r0) / (x1 - x0)
    slope = -dlog_delta / dlog_eps
    if not (math.isfinite(x) and math.isfinite(slope) and slope != 0):
        return None
    shift = _certified_shift(solve, x, delta, dlog_delta)
    if shift is not None and 2 * abs(shift * slope) >= TARGET_GAP:
        # the finest grid's bound is that far above the forecast: the refinement ends there
        aim = x + shift + direction * math.log1p(LEAF_AIM)
        return Forecast(math.exp(x), slope, math.exp(aim), FINEST_GRID)
    return Forecast(math.exp(x), slope, math.exp(x + direction * math.log1p(AIM)))


def _certified_shift(solve: _Solve, x: float, delta: float, dlog_delta: float) -> float | None:
    """How far (in ``log v``, towards privacy) the crossing of the PLD bound on the finest
    grid lies beyond the forecast's ``x``: the same forecast made on the upper discretisations
    the accountant builds there (:func:`upper_nodes`), its ``log delta`` above the target
    divided by ``-d log delta / d log v``; None when a leaf would be larger than
    :data:`LEAF_LIMIT` points (its cost is then that of the search it would save)."""
    if dlog_delta == 0:
        return None
    try:
        event = solve.at(Fraction(math.exp(x)))
    except (ValueError, ArithmeticError, OverflowError):
        return None
    top = max((v for v in solve.log_deltas if v is not None), default=None)
    needed: tuple[bool, ...] = (True, True)
    if top is not None:
        # a direction whose forecast lies DIRECTION_MARGIN below the other's is not built
        needed = tuple(v is not None and v >= top - DIRECTION_MARGIN for v in solve.log_deltas)
    nodes = upper_nodes(event, FINEST_GRID, needed)
    if nodes is None:
        return None
    worst = -math.inf
    for parts in nodes:
        if not parts:
            continue  # a direction not built
        found = profile(parts, solve.epsilon, max(solve.guesses))
        if found is None:
            return None
        worst = max(worst, found.log_delta)
    return -(worst - math.log(delta)) / dlog_delta if math.isfinite(worst) else None


def upper_nodes(
    event: Event, h: float, directions: tuple[bool, ...] = (True, True)
) -> Nodes | None:
    """The remove and add losses of the upper discretisations on grid ``h`` of the event's
    leaves (the accountant's own leaves: :func:`dpaudit.pld.gaussian_direction` builds what
    :func:`dpaudit.pld.gaussian` does, one direction at a time), as :class:`LossNodes`
    (:func:`_walk`), the lists of a direction not in ``directions`` (remove, add) left empty;
    None as :func:`loss_nodes`, or when a leaf would have more than :data:`LEAF_LIMIT`
    points."""
    from dpaudit import pld

    def leaf(mechanism: Event, copies: float) -> Nodes | None:
        exact = loss_nodes(mechanism, copies)
        if exact is None:
            return None
        remove = exact[0][0]
        carried = remove.s[remove.log_m > LEAF_SUPPORT]
        if len(carried) == 0 or float(np.max(carried) - np.min(carried)) / h > LEAF_LIMIT:
            return None
        rate = 1.0
        if isinstance(mechanism, PoissonSampled):
            rate, mechanism = float(mechanism.rate), mechanism.event
        sigma = _number(getattr(mechanism, "sigma", None))
        sensitivity = _number(getattr(mechanism, "sensitivity", None))
        if sigma is None or sensitivity is None:
            return None
        built: list[list[LossNodes]] = []
        for name, wanted in zip(("remove", "add"), directions, strict=True):
            if not wanted:
                built.append([])
                continue
            try:
                d = pld.gaussian_direction(
                    sigma, sensitivity, name, sampling_probability=rate, value_discretization=h
                )
            except ValueError:
                return None
            built.append([_upper(d.upper, copies, h)])
        return built[0], built[1]

    return _walk(event, leaf, 1)


def _upper(upper: Any, count: float, h: float) -> LossNodes:
    """An upper discretisation (:class:`~dpaudit.pld.UpperPLD`) on the grid ``h`` as nodes:
    its finite grid losses (shifted: every true loss is at most a grid loss plus ``shift``) and
    masses."""
    keep = upper.masses > 0
    return LossNodes(
        upper.losses()[keep] + upper.shift,
        np.log(upper.masses[keep].astype(np.float64)),
        count,
        inf_mass=float(upper.inf_mass),
        spacing=h,
    )
