"""Google dp_accounting ``DpEvent`` trees to dpaudit events and back.

A training script that already builds a ``DpEvent`` for dp_accounting can hand the same tree
to dpaudit: ``Accountant().guarantee(from_dp_event(event), delta)``.  dp_accounting is an
optional dependency (``pip install dp-accounting``), imported only by :func:`to_dp_event`.

A dp_accounting accountant is built for one neighbouring relation (``neighboring_relation``,
default add-or-remove-one) and reads the whole tree under it; :func:`from_dp_event` takes the
same choice as ``relation`` (``"add_remove"``, the default, or ``"replace_one"``) and states
every leaf under it.  Supported (both ways), with dp_accounting's definitions (``dp_event.py``):

* ``GaussianDpEvent(m)`` = ``Gaussian(sigma=m, sensitivity=D)``, ``LaplaceDpEvent(m)`` =
  ``Laplace(scale=m, sensitivity=D)``: the noise multiplier is the noise scale over the bound
  C = 1 on one record's contribution, so the sum's sensitivity is D = 1 under add/remove and
  D = 2 under replace-one (one record of norm <= 1 replaced by another; dp_accounting's PLD
  accountant uses this shift of 2 for the Gaussian under ``REPLACE_ONE``).
* ``DiscreteLaplaceDpEvent(a, C)`` = ``DiscreteLaplace(scale=1/a, sensitivity=D)`` with
  D = C (add/remove) or 2C (replace-one): P(x) = tanh(a/2) exp(-a|x|) is dpaudit's
  exp(-|x|/scale) with scale = 1/a.
* ``RandomizedResponseDpEvent(p, k)`` (replace-one only, as in dp_accounting): the true bucket
  with probability 1 - p + p/k, each other with p/k, which is dpaudit's
  ``RandomizedResponse(epsilon, categories=k)`` (true category with probability
  e^eps/(e^eps + k - 1)) with e^eps = 1 + k (1 - p)/p exactly; p = 1 or k = 1 releases nothing
  about the input (a no-op), p = 0 is not private (refused).
* ``SampledWithoutReplacementDpEvent(n, m, event)`` = ``SampledWithoutReplacement(event,
  sample=m, population=n)`` (replace-one only: its amplification theorems, dpaudit's and
  dp_accounting's RDP accountant's, are for replace-one on datasets of n records).
* ``NoOpDpEvent()`` = ``ApproxDP(0, 0)``: an output independent of the data is (0, 0)-DP.
* ``PoissonSampledDpEvent`` = ``PoissonSampled`` (add/remove only; rate 0 is a no-op),
  ``SelfComposedDpEvent`` = ``SelfComposed``, ``ComposedDpEvent`` = ``Composed``,
  ``ZCDpEvent(rho, xi=0)`` = ``ZCDP(rho)``.

Anything else (``NonPrivateDpEvent``, ``UnsupportedDpEvent``, sampling with replacement, tree
aggregation, repeat-and-select, mixtures of Gaussians, truncated Poisson sampling, ``xi > 0``)
has no dpaudit counterpart and is refused with an error naming the event and its position.
dp_accounting (0.6.0) has no generic (epsilon, delta) event, so dpaudit's ``PureDP`` and
``ApproxDP`` (other than the no-op) are not written.

Reading takes each float parameter exactly (its binary value: the event is the one the
training code runs).  Writing must produce floats: a noise parameter is rounded towards *less*
noise and a sampling probability *up*, so the written event is never more private than the
dpaudit one (an accountant of the written event reports an epsilon at least as large).
"""

from __future__ import annotations

from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.events import (
    ZCDP,
    ApproxDP,
    Composed,
    DiscreteLaplace,
    Event,
    Gaussian,
    Laplace,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
    SelfComposed,
)
from dpaudit.events.base import Relation, as_relation
from dpaudit.numeric import exact, float_down, float_up

__all__ = ["SUPPORTED", "from_dp_event", "to_dp_event"]

#: The DpEvent kinds read and written (those in brackets under one relation only).
SUPPORTED: tuple[str, ...] = (
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "DiscreteLaplaceDpEvent",
    "ZCDpEvent(xi = 0)",
    "NoOpDpEvent",
    "ComposedDpEvent",
    "SelfComposedDpEvent",
    "PoissonSampledDpEvent (add_remove)",
    "RandomizedResponseDpEvent (replace_one)",
    "SampledWithoutReplacementDpEvent (replace_one)",
)

#: Why some DpEvent kinds have no dpaudit counterpart.
_NO_COUNTERPART: dict[str, str] = {
    "NonPrivateDpEvent": "a non-private release (epsilon = infinity)",
    "UnsupportedDpEvent": "an operation without a privacy description",
    "SampledWithReplacementDpEvent": "dpaudit has no amplification rule for sampling with "
    "replacement",
    "SingleEpochTreeAggregationDpEvent": "dpaudit has no tree-aggregation event",
    "RepeatAndSelectDpEvent": "dpaudit has no repeat-and-select event",
    "MixtureOfGaussiansDpEvent": "dpaudit has no mixture-of-Gaussians event",
    "TruncatedSubsampledGaussianDpEvent": "dpaudit has no truncated Poisson sampling event",
}


def _unsupported(what: str, path: str, why: str = "") -> ValueError:
    because = f" ({why})" if why else ""
    return ValueError(
        f"dp_event {path}: {what} is not supported{because}; supported: {', '.join(SUPPORTED)}"
    )


def _needs(kind: str, path: str, relation: Relation) -> ValueError:
    other = "replace_one" if relation is Relation.ADD_REMOVE else "add_remove"
    return _unsupported(
        f"{kind} under relation={relation.value!r}",
        path,
        f"dp_accounting accounts it only under {other}; pass relation={other!r}, as you would "
        "pass neighboring_relation to dp_accounting's accountant",
    )


def _noop(relation: Relation) -> Event:
    # an output that does not depend on the data: (0, 0)-DP under any relation
    return ApproxDP(0, 0, relation=relation)


def from_dp_event(
    dp_event: Any, path: str = "event", *, relation: Relation | str = Relation.ADD_REMOVE
) -> Event:
    """The dpaudit event of a dp_accounting ``DpEvent`` tree (no dp_accounting import needed).

    Args:
        dp_event: a ``DpEvent`` (recognised by its class name and fields).
        path: the position printed in errors (the root is ``event``).
        relation: the neighbouring relation the tree is read under, as dp_accounting's
            accountant ``neighboring_relation``: ``"add_remove"`` (default) or
            ``"replace_one"``.

    Returns:
        An event with exact (rational) parameters, every leaf stated under ``relation``.

    Raises:
        ValueError: naming the position (``event.events[1].event``) of an unsupported event or
            of a parameter out of range (the dpaudit constructor's message).
    """
    return _from(dp_event, path, as_relation(relation))


def _from(dp_event: Any, path: str, rel: Relation) -> Event:
    kind = type(dp_event).__name__
    # dp_accounting states one record's contribution bound C = 1: a sum moves by C under
    # add/remove and by 2C under replace-one
    shift = 1 if rel is Relation.ADD_REMOVE else 2
    try:
        if kind == "NoOpDpEvent":
            return _noop(rel)
        if kind == "GaussianDpEvent":
            sigma = exact(dp_event.noise_multiplier, "noise_multiplier")
            return Gaussian(sigma, sensitivity=shift, relation=rel)
        if kind == "LaplaceDpEvent":
            scale = exact(dp_event.noise_multiplier, "noise_multiplier")
            return Laplace(scale, sensitivity=shift, relation=rel)
        if kind == "DiscreteLaplaceDpEvent":
            a = exact(dp_event.noise_parameter, "noise_parameter")
            if not a > 0:
                raise ValueError(f"noise_parameter must be > 0, got {dp_event.noise_parameter!r}")
            c = exact(dp_event.sensitivity, "sensitivity")
            return DiscreteLaplace(1 / a, sensitivity=shift * c, relation=rel)
        if kind == "ZCDpEvent":
            if dp_event.xi != 0:
                raise _unsupported(f"ZCDpEvent with xi = {dp_event.xi!r} (only xi = 0)", path)
            rho = exact(dp_event.rho, "rho")
            return _noop(rel) if rho == 0 else ZCDP(rho, relation=rel)
        if kind == "RandomizedResponseDpEvent":
            if rel is not Relation.REPLACE_ONE:
                raise _needs(kind, path, rel)
            return _randomized_response(dp_event)
        if kind == "PoissonSampledDpEvent":
            if rel is not Relation.ADD_REMOVE:
                raise _needs(kind, path, rel)
            inner = _from(dp_event.event, f"{path}.event", rel)
            rate = exact(dp_event.sampling_probability, "sampling_probability")
            return _noop(rel) if rate == 0 else PoissonSampled(inner, rate)
        if kind == "SampledWithoutReplacementDpEvent":
            if rel is not Relation.REPLACE_ONE:
                raise _needs(kind, path, rel)
            inner = _from(dp_event.event, f"{path}.event", rel)
            return SampledWithoutReplacement(
                inner,
                sample=exact(dp_event.sample_size, "sample_size"),
                population=exact(dp_event.source_dataset_size, "source_dataset_size"),
            )
        if kind == "SelfComposedDpEvent":
            inner = _from(dp_event.event, f"{path}.event", rel)
            return SelfComposed(inner, exact(dp_event.count, "count"))
        if kind == "ComposedDpEvent":
            parts = [_from(e, f"{path}.events[{i}]", rel) for i, e in enumerate(dp_event.events)]
            if not parts:
                raise _unsupported("an empty ComposedDpEvent", path)
            return parts[0] if len(parts) == 1 else Composed(parts)
    except ValueError as err:
        if str(err).startswith("dp_event "):
            raise
        raise ValueError(f"dp_event {path} ({kind}): {err}") from None
    if kind in _NO_COUNTERPART:
        raise _unsupported(kind, path, _NO_COUNTERPART[kind])
    raise _unsupported(kind, path)


def _randomized_response(dp_event: Any) -> Event:
    """``RandomizedResponseDpEvent(p, k)`` under replace-one (see the module docstring)."""
    p = exact(dp_event.noise_parameter, "noise_parameter")
    k = exact(dp_event.num_buckets, "num_buckets")
    if not (k.is_integer and k >= 1):
        raise ValueError(f"num_buckets must be an integer >= 1, got {dp_event.num_buckets!r}")
    if not 0 <= p <= 1:
        raise ValueError(f"noise_parameter must be in [0, 1], got {dp_event.noise_parameter!r}")
    if k == 1 or p == 1:
        return _noop(Relation.REPLACE_ONE)
    if p == 0:
        raise ValueError(
            "noise_parameter must be in (0, 1] for a private release (p = 0 reports the input "
            "bucket itself, epsilon = infinity), got 0"
        )
    # P[true]/P[other] = (1 - p + p/k)/(p/k) = 1 + k (1 - p)/p  (dp_accounting dp_event.py)
    epsilon = sympy.log(1 + k * (1 - p) / p)
    return RandomizedResponse(epsilon, categories=k, relation=Relation.REPLACE_ONE)


def to_dp_event(event: Event) -> Any:
    """The dp_accounting ``DpEvent`` of a numeric dpaudit event (rounded conservatively).

    An event stated under replace-one gives a tree to account with
    ``neighboring_relation=NeighboringRelation.REPLACE_ONE``.

    Raises:
        ImportError: if dp_accounting is not installed.
        ValueError: for an event without a dp_accounting counterpart, a symbolic parameter or
            a sensitivity other than dp_accounting's (1 under add/remove, 2 under
            replace-one).
    """
    from dp_accounting import dp_event as d  # optional dependency

    return _to(d, event, "event")


def _to(d: Any, event: Event, path: str) -> Any:
    if event.free_symbols:
        raise ValueError(f"dp_event {path}: a numeric event is needed, got {event}")
    shift = 1 if event.relation is Relation.ADD_REMOVE else 2
    if isinstance(event, (Gaussian, Laplace)):
        if event.sensitivity != shift:
            raise ValueError(
                f"dp_event {path}: dp_accounting's noise_multiplier assumes sensitivity {shift} "
                f"under {event.relation.value}, got {event.sensitivity} (scale the noise by "
                f"{shift}/sensitivity)"
            )
        scale = event.sigma if isinstance(event, Gaussian) else event.scale
        cls = d.GaussianDpEvent if isinstance(event, Gaussian) else d.LaplaceDpEvent
        return cls(float_down(scale))  # less noise: never more private than described
    if isinstance(event, DiscreteLaplace):
        c = event.sensitivity / shift
        if not c.is_integer:
            raise ValueError(
                f"dp_event {path}: dp_accounting's DiscreteLaplaceDpEvent needs an integer "
                f"sensitivity (times {shift} under {event.relation.value}), got "
                f"{event.sensitivity}"
            )
        # a larger noise parameter a = 1/scale is less noise
        return d.DiscreteLaplaceDpEvent(float_up(1 / event.scale), int(c))
    if isinstance(event, RandomizedResponse):
        if event.relation is not Relation.REPLACE_ONE:
            raise ValueError(
                f"dp_event {path}: dp_accounting accounts RandomizedResponseDpEvent only under "
                f"replace_one, got {event} under {event.relation.value}"
            )
        k = event.categories
        # p = k/(e^eps + k - 1); a smaller p is less noise
        return d.RandomizedResponseDpEvent(
            float_down(k / (sympy.exp(event.epsilon) + k - 1)), int(k)
        )
    if isinstance(event, ApproxDP) and event.epsilon == 0 and event.delta == 0:
        return d.NoOpDpEvent()
    if isinstance(event, ZCDP):
        return d.ZCDpEvent(float_up(event.rho))
    if isinstance(event, PoissonSampled):
        return d.PoissonSampledDpEvent(float_up(event.rate), _to(d, event.event, f"{path}.event"))
    if isinstance(event, SampledWithoutReplacement):
        return d.SampledWithoutReplacementDpEvent(
            int(event.population), int(event.sample), _to(d, event.event, f"{path}.event")
        )
    if isinstance(event, SelfComposed):
        return d.SelfComposedDpEvent(_to(d, event.event, f"{path}.event"), int(event.count))
    if isinstance(event, Composed):
        return d.ComposedDpEvent(
            [_to(d, e, f"{path}.events[{i}]") for i, e in enumerate(event.events)]
        )
    raise ValueError(f"dp_event {path}: {event.kind} has no dp_accounting counterpart here")
