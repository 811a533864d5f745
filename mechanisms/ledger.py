"""The ledger: what a run actually spends.

Every primitive in :mod:`mechanisms.primitives` records the event that describes it in the
ledgers active when it runs.  An algorithm's *plan* is what it declares it will spend; the
ledger is what it did spend, so the two can be compared with the accountant::

    with Ledger() as ledger:
        model = learner.fit(data, rng)
    ledger.check_within(learner.plan(...), delta=1e-6)

While a :func:`recorded_as` block is active, recorded events are first transformed (e.g.
wrapped in :class:`~dpaudit.events.PoissonSampled` while a primitive runs on a Poisson
subsample), so the ledger states the guarantee the run really has.  A ledger may be given a
``guard`` (a privacy filter, for instance) that sees every event before it is recorded and
may refuse it by raising; a refused event is not recorded.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from dpaudit.accountant import Accountant, Guarantee
from dpaudit.events import Composed, Event, SelfComposed

__all__ = ["Entry", "Ledger", "LedgerExceededError", "record", "recorded_as", "recorded_as_one",
           "recorded_jointly"]

_ACTIVE: contextvars.ContextVar[tuple[Ledger, ...]] = contextvars.ContextVar(
    "dpaudit_active_ledgers", default=())
_TRANSFORMS: contextvars.ContextVar[tuple[Callable[[Event], Event], ...]] = (
    contextvars.ContextVar("dpaudit_record_transforms", default=()))


class LedgerExceededError(AssertionError):
    """A run spent more than its plan declares."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One recorded primitive run: its event, how many times, and an optional label."""

    event: Event
    count: int = 1
    label: str = ""

    def as_event(self) -> Event:
        return self.event if self.count == 1 else SelfComposed(self.event, self.count)


class Ledger:
    """Records the primitives a run executes.

    Args:
        guard: called with each event before it is recorded; it may raise to refuse the
            event (nothing is recorded then).  A privacy filter plugs in here.
    """

    def __init__(self, guard: Callable[[Event], None] | None = None) -> None:
        self.entries: list[Entry] = []
        self.guard = guard
        self._token: contextvars.Token[tuple[Ledger, ...]] | None = None

    def __enter__(self) -> Ledger:
        self._token = _ACTIVE.set((*_ACTIVE.get(), self))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, event: Event, count: int = 1, label: str = "") -> None:
        """Record ``count`` runs of ``event`` (after the guard accepts it)."""
        if not isinstance(event, Event):
            raise ValueError(f"event must be an event, got {event!r}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be an integer in [1, oo), got {count!r}")
        entry = Entry(event, count, label)
        if self.guard is not None:
            self.guard(entry.as_event())
        self.entries.append(entry)

    def merged(self) -> list[Entry]:
        """The entries with each run of consecutive identical events merged into one entry
        carrying the total count (its label is the first run's).  Running the same mechanism
        k times in a row is its k-fold composition, ``SelfComposed(event, k)``, so the merged
        ledger denotes the same event; a learner with thousands of identical steps then
        accounts as one k-fold node instead of a composition of thousands of leaves.
        ``entries`` itself keeps one entry per recorded run."""
        out: list[Entry] = []
        for entry in self.entries:
            if out and out[-1].event == entry.event:
                out[-1] = Entry(entry.event, out[-1].count + entry.count, out[-1].label)
            else:
                out.append(entry)
        return out

    def event(self) -> Event:
        """Everything recorded, as one event: sequential composition in run order, with
        consecutive runs of one event as its k-fold composition (see :meth:`merged`).

        Raises:
            ValueError: if nothing was recorded.
        """
        if not self.entries:
            raise ValueError("the ledger is empty: no primitive ran while it was active")
        parts = [e.as_event() for e in self.merged()]
        return parts[0] if len(parts) == 1 else Composed(parts)

    def guarantee(self, delta: Any = None) -> Guarantee:
        """The accountant's guarantee for what was recorded."""
        return Accountant().guarantee(self.event(), delta)

    def compare(self, plan: Event, delta: Any = None) -> tuple[float, float]:
        """(epsilon spent, epsilon planned), both upper bounds from the accountant."""
        spent = self.guarantee(delta).epsilon_upper
        planned = Accountant().guarantee(plan, delta).epsilon_upper
        if spent is None or planned is None:
            raise ValueError("compare needs numeric events; substitute the plan's symbols")
        return spent, planned

    def check_within(self, plan: Event, delta: Any = None) -> tuple[float, float]:
        """Raise :class:`LedgerExceededError` if the run spent more than ``plan`` declares.

        Returns:
            (epsilon spent, epsilon planned).
        """
        spent, planned = self.compare(plan, delta)
        if spent > planned:
            raise LedgerExceededError(
                f"the run spent epsilon {spent:.6g} but its plan declares {planned:.6g}")
        return spent, planned


def record(event: Event, count: int = 1, label: str = "") -> None:
    """Record ``event`` in every active ledger (through the active transforms).

    All guards are consulted before any ledger records, so a refusal leaves every ledger
    unchanged.
    """
    ledgers = _ACTIVE.get()
    if not ledgers:
        return
    for transform in reversed(_TRANSFORMS.get()):
        event = transform(event)
    entry = Entry(event, count, label)
    for ledger in ledgers:
        if ledger.guard is not None:
            ledger.guard(entry.as_event())
    for ledger in ledgers:
        ledger.entries.append(entry)


@contextlib.contextmanager
def recorded_as(transform: Callable[[Event], Event]) -> Iterator[None]:
    """While active, every recorded event ``e`` is recorded as ``transform(e)``.

    Example: ``with recorded_as(lambda e: PoissonSampled(e, rate)):`` around the primitives
    that run on a Poisson subsample.
    """
    token = _TRANSFORMS.set((*_TRANSFORMS.get(), transform))
    try:
        yield
    finally:
        _TRANSFORMS.reset(token)


@contextlib.contextmanager
def _privately() -> Iterator[Ledger]:
    """Inside, primitives record into the yielded fresh ledger only (outer ledgers and
    transforms suspended; nothing is recorded when no ledger was active outside)."""
    inner = Ledger()
    active_token = _ACTIVE.set((inner,) if _ACTIVE.get() else ())
    transform_token = _TRANSFORMS.set(())
    try:
        yield inner
    finally:
        _TRANSFORMS.reset(transform_token)
        _ACTIVE.reset(active_token)


@contextlib.contextmanager
def recorded_as_one(event: Event,
                    as_event: Callable[[int], tuple[Event, int]]) -> Iterator[None]:
    """Record the runs of ``event`` inside the block as one combined event on exit.

    For algorithms whose guarantee is proved for the whole loop rather than per step (the
    cover-style bound of EMCover, say): inside the block primitives record into a private
    ledger (outer transforms suspended); on exit the ``r`` runs of ``event`` are recorded as
    ``as_event(r)`` (an event and a count) through the outer ledgers and transforms, and
    anything else that ran is passed through unchanged, so nothing is hidden.

    Guards of the outer ledgers see the combined event on exit, after the block ran; a
    filter that must stop a run *before* it overspends should check the declared plan of
    the loop before entering the block.
    """
    with _privately() as inner:
        yield
    runs = sum(e.count for e in inner.entries if e.event == event)
    if runs:
        combined, count = as_event(runs)
        record(combined, count, "combined")
    for entry in inner.entries:
        if entry.event != event:
            record(entry.event, entry.count, entry.label)


@contextlib.contextmanager
def recorded_jointly(parts: tuple[Event, ...], joint: Event, times: int = 1
                     ) -> Iterator[None]:
    """Record one run of each event of ``parts`` inside the block as the one event ``joint``.

    For an algorithm whose privacy is proved for a combination of primitives rather than by
    composing them (003's Lemma 8: an exponential mechanism, then a private learner on data
    relabeled by its output).  Inside the block primitives record into a private ledger
    (outer transforms suspended); on exit, if every event of ``parts`` ran, one run of each
    is replaced by ``joint``, recorded through the outer ledgers and transforms; every other
    run (or all of them, if a part did not run) is passed through unchanged.  A block that
    runs a batch of ``times`` independent runs has up to ``times`` runs of each part
    replaced by as many runs of ``joint``.
    """
    with _privately() as inner:
        yield
    entries = [[e.event, e.label, e.count] for e in inner.entries]
    need = {part: parts.count(part) for part in parts}
    joints = min([times] + [sum(c for event, _, c in entries if event == part) // k
                            for part, k in need.items()])
    if joints > 0:
        record(joint, joints, "joint")
        for part, k in need.items():
            left = joints * k
            for entry in entries:
                if entry[0] == part and left:
                    used = min(entry[2], left)
                    entry[2] -= used
                    left -= used
    for event, label, count in entries:
        for _ in range(count):
            record(event, 1, label)
