"""Parameter regimes of the private learners' classifiers: ``regime="practical"`` (the
default: tuned constants that learn at practical sizes) or ``regime="paper"`` (the source
document's constants exactly, as the learner ran before tuned defaults existed).

A classifier's constructor takes ``None`` for every parameter the regime decides; at ``fit``
the regime fills those in (:func:`resolve`) and an explicit value always wins.  Every tuned
constant is *data-independent*: a number, or a function of the training set's shape only
(:class:`Rule`: the number of rows n, public under the replace-one relation every learner
states its guarantee in, and the number of features d, the schema), fixed before any
record is read.  A privacy proof that holds for every value of a parameter therefore holds
for the tuned value too; each class's ``TUNED`` says, per constant, why its proof does not
depend on it (or how the accountant certifies the value), and the plan of every fit is
accounted and checked against the request anyway.

The requirements a learner states (:func:`requirements`: feature kind, dimension limits,
epsilon range, whether delta is needed) are what ``dpaudit learn --list --json`` shows.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "BELOW_ONE",
    "REGIMES",
    "Rule",
    "check_regime",
    "described",
    "largest_certified",
    "requirements",
    "resolve",
]

#: The regimes every classifier takes.
REGIMES = ("practical", "paper")

#: Where a theorem is stated for epsilon in (0, 1) only, ``regime="paper"`` runs its
#: formulas at min(epsilon, BELOW_ONE): the largest two-decimal number in the open interval.
#: Running at a smaller epsilon than requested is private at the request too (the accountant
#: certifies the plan actually run, and the fit checks it against the request).
BELOW_ONE = 0.99


@dataclasses.dataclass(frozen=True)
class Rule:
    """A tuned constant that depends on the training set's shape only: ``value(n, d)``.

    Attributes:
        text: how the rule reads in docs and ``learn --list`` (e.g. ``"d (no projection)"``).
        value: the function of (n rows, d features).
    """

    text: str
    value: Callable[[int, int], Any]

    def __call__(self, n: int, d: int) -> Any:
        return self.value(n, d)

    def __repr__(self) -> str:
        return self.text


def check_regime(regime: Any) -> str:
    """``regime`` checked: one of :data:`REGIMES`.

    Raises:
        ValueError: naming the parameter, the admissible values and the value received.
    """
    if not isinstance(regime, str) or regime not in REGIMES:
        raise ValueError(f"regime must be one of {', '.join(map(repr, REGIMES))}, got {regime!r}")
    return regime


def resolve(
    params: Mapping[str, Any], defaults: Mapping[str, Mapping[str, Any]], n: int, d: int
) -> types.SimpleNamespace:
    """The settings a fit runs with: ``params`` (the constructor's arguments) with every
    ``None`` that the regime decides replaced by the regime's value (a :class:`Rule`
    evaluated at (n, d)).

    Args:
        params: the classifier's ``get_params()``, ``regime`` among them.
        defaults: regime -> {parameter: value or Rule}.
        n, d: the training set's shape.

    Returns:
        A namespace of every parameter (``regime`` included).

    Raises:
        ValueError: for an unknown regime.
    """
    regime = check_regime(params.get("regime", "practical"))
    table = defaults.get(regime, {})
    out = dict(params)
    for key, value in table.items():
        if out.get(key) is None:
            out[key] = value(n, d) if isinstance(value, Rule) else value
    return types.SimpleNamespace(**out)


def described(defaults: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """The regimes' values as text (JSON-ready), for ``learn --list``."""
    return {
        regime: {
            key: value if isinstance(value, str) else repr(value) for key, value in table.items()
        }
        for regime, table in defaults.items()
    }


def requirements(
    features: str,
    min_features: int = 1,
    max_features: int | None = None,
    epsilon: str = "(0, inf)",
    delta: bool = False,
    note: str = "",
) -> dict[str, Any]:
    """What a learner needs of its input and privacy parameters (``learn --list --json``).

    Args:
        features: ``"real"`` or ``"boolean"`` (0/1).
        min_features, max_features: the number of features it accepts (None: no limit).
        epsilon: the epsilon it accepts, as an interval.
        delta: whether it takes (and needs) a delta > 0.
        note: how it handles what it cannot take natively (a reduction, a clamp).

    Raises:
        ValueError: for an unknown feature kind.
    """
    if features not in ("real", "boolean"):
        raise ValueError(f"features must be 'real' or 'boolean', got {features!r}")
    return {
        "features": features,
        "min_features": int(min_features),
        "max_features": None if max_features is None else int(max_features),
        "epsilon": epsilon,
        "delta": bool(delta),
        "note": note,
    }


def largest_certified(ok: Callable[[float], bool], low: float, high: float) -> float:
    """The largest x in [low, high] on a geometric grid of ratio 1.001 with ``ok(x)``, by
    bisection (``ok`` monotone: true below some point, false above); ``low`` if none.

    Used to calibrate a data-independent parameter (an inverse temperature, a learning
    rate) to the largest value whose plan the accountant certifies within the request: the
    search only proposes, ``ok`` (the accountant) decides.
    """
    if ok(high):
        return high
    if not ok(low):
        return low
    lo, hi = 0, max(1, math.ceil(math.log(high / low) / math.log1p(1e-3)))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(low * (1 + 1e-3) ** mid):
            lo = mid
        else:
            hi = mid
    return low * (1 + 1e-3) ** lo
