"""Google dp_accounting ``DpEvent`` trees to dpaudit events and back.

A training script that already builds a ``DpEvent`` for dp_accounting can hand the same tree
to dpaudit: ``Accountant().guarantee(from_dp_event(event), delta)``.  dp_accounting is an
optional dependency (``pip install dp-accounting``), imported only by :func:`to_dp_event`.

Supported (both ways): ``GaussianDpEvent(noise_multiplier)`` = ``Gaussian(sigma=noise_multiplier,
sensitivity=1)``, ``LaplaceDpEvent(noise_multiplier)`` = ``Laplace(scale=noise_multiplier)``,
``PoissonSampledDpEvent`` = ``PoissonSampled``, ``SelfComposedDpEvent`` = ``SelfComposed``,
``ComposedDpEvent`` = ``Composed`` and ``ZCDpEvent(rho, xi=0)`` = ``ZCDP(rho)``; all under
dpaudit's default add/remove relation, as dp_accounting's PLD and RDP accountants assume for
these events.  Anything else is refused with an error naming the event and its position.

Reading takes each float parameter exactly (its binary value: the event is the one the
training code runs).  Writing must produce floats: a noise parameter is rounded *down* and a
sampling probability *up*, so the written event is never more private than the dpaudit one
(an accountant of the written event reports an epsilon at least as large).
"""

from __future__ import annotations

from typing import Any

from dpaudit.events import ZCDP, Composed, Event, Gaussian, Laplace, PoissonSampled, SelfComposed
from dpaudit.numeric import exact, float_down, float_up

__all__ = ["from_dp_event", "to_dp_event"]


def _unsupported(what: str, path: str) -> ValueError:
    return ValueError(
        f"dp_event {path}: {what} is not supported; supported: GaussianDpEvent, LaplaceDpEvent, "
        "PoissonSampledDpEvent, SelfComposedDpEvent, ComposedDpEvent, ZCDpEvent(xi=0)"
    )


def from_dp_event(dp_event: Any, path: str = "event") -> Event:
    """The dpaudit event of a dp_accounting ``DpEvent`` tree (no dp_accounting import needed).

    Raises:
        ValueError: naming the position (``event.events[1].event``) of an unsupported event or
            of a parameter out of range (the dpaudit constructor's message).
    """
    kind = type(dp_event).__name__
    try:
        if kind == "GaussianDpEvent":
            return Gaussian(exact(dp_event.noise_multiplier, "noise_multiplier"))
        if kind == "LaplaceDpEvent":
            return Laplace(exact(dp_event.noise_multiplier, "noise_multiplier"))
        if kind == "ZCDpEvent":
            if dp_event.xi != 0:
                raise _unsupported(f"ZCDpEvent with xi = {dp_event.xi!r} (only xi = 0)", path)
            return ZCDP(exact(dp_event.rho, "rho"))
        if kind == "PoissonSampledDpEvent":
            inner = from_dp_event(dp_event.event, f"{path}.event")
            return PoissonSampled(
                inner, exact(dp_event.sampling_probability, "sampling_probability")
            )
        if kind == "SelfComposedDpEvent":
            return SelfComposed(from_dp_event(dp_event.event, f"{path}.event"), dp_event.count)
        if kind == "ComposedDpEvent":
            parts = [from_dp_event(e, f"{path}.events[{i}]") for i, e in enumerate(dp_event.events)]
            if not parts:
                raise _unsupported("an empty ComposedDpEvent", path)
            return parts[0] if len(parts) == 1 else Composed(parts)
    except ValueError as err:
        if str(err).startswith("dp_event "):
            raise
        raise ValueError(f"dp_event {path} ({kind}): {err}") from None
    raise _unsupported(kind, path)


def to_dp_event(event: Event) -> Any:
    """The dp_accounting ``DpEvent`` of a numeric dpaudit event (rounded conservatively).

    Raises:
        ImportError: if dp_accounting is not installed.
        ValueError: for an event without a dp_accounting counterpart, a symbolic parameter or
            a sensitivity other than 1.
    """
    from dp_accounting import dp_event as d  # optional dependency

    return _to(d, event, "event")


def _to(d: Any, event: Event, path: str) -> Any:
    if event.free_symbols:
        raise ValueError(f"dp_event {path}: a numeric event is needed, got {event}")
    if isinstance(event, (Gaussian, Laplace)):
        if event.sensitivity != 1:
            raise ValueError(
                f"dp_event {path}: dp_accounting's noise_multiplier assumes sensitivity 1, got "
                f"{event.sensitivity} (divide the scale by the sensitivity)"
            )
        scale = event.sigma if isinstance(event, Gaussian) else event.scale
        cls = d.GaussianDpEvent if isinstance(event, Gaussian) else d.LaplaceDpEvent
        return cls(float_down(scale))  # less noise: never more private than described
    if isinstance(event, ZCDP):
        return d.ZCDpEvent(float_up(event.rho))
    if isinstance(event, PoissonSampled):
        return d.PoissonSampledDpEvent(float_up(event.rate), _to(d, event.event, f"{path}.event"))
    if isinstance(event, SelfComposed):
        return d.SelfComposedDpEvent(_to(d, event.event, f"{path}.event"), int(event.count))
    if isinstance(event, Composed):
        return d.ComposedDpEvent(
            [_to(d, e, f"{path}.events[{i}]") for i, e in enumerate(event.events)]
        )
    raise ValueError(f"dp_event {path}: {event.kind} has no dp_accounting counterpart here")
