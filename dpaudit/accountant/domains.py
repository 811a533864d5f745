"""Applying a theorem only inside its domain: the accountant's side of
:meth:`~dpaudit.theorems.base.Theorem.check`.

A rule calls :func:`admit` with the theorem it is about to apply and the values of the
theorem's parameters at this node, *before* computing the bound, and attaches the returned
checks to its :class:`~dpaudit.accountant.statements.Step`.  The policy (soundness first):

* every condition verified -- the theorem applies, and the derivation says how each condition
  was checked;
* a condition refuted, or a condition on numbers that interval arithmetic cannot decide --
  the theorem is **not applied** (:func:`admit` returns None) and the accountant lists it
  among the results that were not applicable, with the reason;
* a condition on symbols that neither the symbols' assumptions nor the known conditions
  decide -- the theorem is applied **conditionally**: the step says "assumption X not
  verified" and the instantiated condition joins the guarantee's ``assumptions``.  The
  verifier (:func:`dpaudit.verify.prove.verify_claim`) must prove every assumption over the
  claim's domain before it accepts the bound, so an unverified assumption never yields a
  reported bound silently.

Known conditions are the event's own parameter constraints plus whatever the caller passes
to :class:`~dpaudit.accountant.core.Accountant` as ``assume`` (e.g. a verifier's domain).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.theorems.base import Check, Theorem

__all__ = [
    "Checks",
    "Rejection",
    "admit",
    "context",
    "discard_rejections_since",
    "rejected_at",
    "rejection_count",
    "unverified",
    "with_params",
]

_KNOWN: contextvars.ContextVar[tuple[sympy.Basic, ...]] = contextvars.ContextVar(
    "dpaudit_known_conditions", default=()
)
_LOG: contextvars.ContextVar[list[Rejection] | None] = contextvars.ContextVar(
    "dpaudit_rejections", default=None
)


class Checks(tuple):
    """The checks of one application of a card (a tuple of
    :class:`~dpaudit.theorems.base.Check`), with ``params``: the values the rule bound the
    card's symbols to at this node, by name.  Teaching views substitute them into the card's
    ``bound`` (its one formula) to show the theorem with the numbers in; equality and
    hashing are the tuple's (the checks decide what a step is).
    """

    params: Mapping[str, Any]

    def __new__(
        cls, checks: Sequence[Check] = (), params: Mapping[str, Any] | None = None
    ) -> Checks:
        obj = super().__new__(cls, checks)
        obj.params = dict(params or {})
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (Checks, (tuple(self), dict(self.params)))


@dataclasses.dataclass(frozen=True)
class Rejection:
    """A theorem a rule would have applied at ``event`` but whose domain excludes it."""

    theorem: Theorem
    event: Event
    checks: tuple[Check, ...]

    @property
    def reason(self) -> str:
        return "; ".join(
            f"assumption {c.condition} {'fails' if c.status == 'refuted' else 'not verified'}"
            f" ({c.how})"
            for c in self.checks
            if c.status != "verified"
        )

    def __str__(self) -> str:
        return f"{self.theorem.name} not applicable to {self.event}: {self.reason}"


def admit(theorem: Theorem, event: Event, params: Mapping[str, Any]) -> Checks | None:
    """The checks of ``theorem``'s domain at ``params``, or None when it must not be applied.

    Args:
        theorem: the card about to be applied.
        event: the node it is applied at (named in the rejection).
        params: the values of the card's domain symbols, by name.

    Returns:
        The checks (all verified, or unverified only on symbolic values) carrying
        ``params`` (:class:`Checks`), or None when a condition is refuted or a numeric one
        is undecided; the rejection is then recorded for the derivation.
    """
    checks = theorem.check(params, _KNOWN.get())
    bad = [c for c in checks if c.status == "refuted" or (c.status == "unverified" and c.numeric)]
    if bad:
        log = _LOG.get()
        if log is not None:
            rejection = Rejection(theorem, event, tuple(bad))
            if rejection not in log:
                log.append(rejection)
        return None
    return Checks(checks, params)


def with_params(checks: Checks | None, params: Mapping[str, Any]) -> Checks | None:
    """``checks`` with more values of the card's symbols (ones the rule computes after
    admitting the card, such as the order an RDP conversion chose); None stays None."""
    if checks is None:
        return None
    return Checks(checks, {**getattr(checks, "params", {}), **params})


@contextlib.contextmanager
def context(known: Sequence[sympy.Basic]) -> Iterator[list[Rejection]]:
    """Within the block, :func:`admit` decides symbolic conditions using ``known`` and records
    rejections in the yielded list."""
    log: list[Rejection] = []
    t_known = _KNOWN.set(tuple(known))
    t_log = _LOG.set(log)
    try:
        yield log
    finally:
        _KNOWN.reset(t_known)
        _LOG.reset(t_log)


def rejection_count() -> int:
    """How many rejections the current :func:`context` has recorded (0 outside one)."""
    return len(_LOG.get() or ())


def discard_rejections_since(count: int) -> None:
    """Forget the rejections recorded after :func:`rejection_count` returned ``count`` (those of
    an evaluation the accountant abandoned)."""
    log = _LOG.get()
    if log is not None:
        del log[count:]


def rejected_at(event: Event) -> tuple[Rejection, ...]:
    """The rejections recorded so far (in the current :func:`context`) at ``event``: the
    reasons a rule named for not applying a theorem there."""
    return tuple(r for r in _LOG.get() or () if r.event == event)


def unverified(steps: Sequence[Any]) -> tuple[sympy.Basic, ...]:
    """The instantiated conditions left unverified anywhere in these derivation trees (the
    side conditions a conditional bound carries)."""
    found: list[sympy.Basic] = []
    for root in steps:
        for _, step in root.walk():
            for c in step.checks or ():
                if c.status == "unverified" and c.instance not in found:
                    found.append(c.instance)
    return tuple(found)
