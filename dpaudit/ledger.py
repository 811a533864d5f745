"""The ledger: what a run actually spends, and the guards that may refuse a step.

Every runnable primitive (``mechanisms.primitives``) records the event that describes it in
the ledgers active when it runs.  An algorithm's *plan* is what it declares it will spend; the
ledger is what it did spend, so the two can be compared with the accountant::

    with Ledger() as ledger:
        model = learner.fit(data, rng)
    ledger.check_within(learner.plan(...), delta=1e-6)

While a :func:`recorded_as` block is active, recorded events are first transformed (e.g.
wrapped in :class:`~dpaudit.events.PoissonSampled` while a primitive runs on a Poisson
subsample), so the ledger states the guarantee the run really has.  A ledger may be given a
``guard`` (a privacy filter, for instance) that sees every event before it is recorded and
may refuse it by raising; a refused event is not recorded.

Recording is **two-phase** and atomic (see ``docs/concurrency.md``): the locks of every
ledger and stateful guard involved in a step (each active ledger, its guard, the guard's
parents) are taken in one fixed global order; every guard *checks* the step without changing
anything; only when all accept does every guard *commit* and every ledger append.  A refused
step leaves every ledger and guard exactly as it was, and however many threads record at once
no guard admits more than its budget.

The stack of active ledgers is a :mod:`contextvars` variable: each thread (and each asyncio
task) has its own, so a ``with Ledger():`` block in one thread never captures the primitives
another thread runs.  To record several threads' runs in one ledger, share the ledger object
and enter it in each thread (``with ledger:``); appending is thread-safe.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import itertools
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from dpaudit.accountant import Accountant, Guarantee
from dpaudit.events import Composed, Event, SelfComposed

__all__ = [
    "Entry",
    "Guard",
    "Ledger",
    "LedgerExceededError",
    "StepRefusedError",
    "record",
    "recorded_as",
    "recorded_as_one",
    "recorded_jointly",
    "transaction",
]

_ACTIVE: contextvars.ContextVar[tuple[Ledger, ...]] = contextvars.ContextVar(
    "dpaudit_active_ledgers", default=()
)
_TRANSFORMS: contextvars.ContextVar[tuple[Callable[[Event], Event], ...]] = contextvars.ContextVar(
    "dpaudit_record_transforms", default=()
)

#: Every lock-holding object (ledger, guard) gets a rank when created; a transaction takes
#: the locks it needs in increasing rank, so two transactions never wait on each other in a
#: cycle (no deadlock).  ``itertools.count`` is atomic under the GIL.
_RANKS = itertools.count()


class LedgerExceededError(AssertionError):
    """A run spent more than its plan declares."""


class StepRefusedError(RuntimeError):
    """A guard refused a step (a privacy filter's ``BudgetExceededError`` is one)."""


def _count(count: Any) -> int:
    """``count`` as a positive int, or a ValueError naming it, its range and the value."""
    if isinstance(count, bool) or not hasattr(count, "__index__"):
        raise ValueError(f"count must be an integer in [1, inf), got {count!r}")
    value = operator.index(count)
    if value < 1:
        raise ValueError(f"count must be an integer in [1, inf), got {count!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Entry:
    """One recorded primitive run: its event, how many times, and an optional label.

    Raises:
        ValueError: for an ``event`` that is not an event, a ``count`` that is not an integer
            >= 1 (``True``, ``"3"`` and ``3.0`` are refused) or a ``label`` that is not a str.
    """

    event: Event
    count: int = 1
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.event, Event):
            raise ValueError(f"event must be an event, got {self.event!r}")
        object.__setattr__(self, "count", _count(self.count))
        if not isinstance(self.label, str):
            raise ValueError(f"label must be a str, got {self.label!r}")

    def as_event(self) -> Event:
        """The event of the entry's runs: ``event`` itself, or its ``count``-fold composition."""
        return self.event if self.count == 1 else SelfComposed(self.event, self.count)


class Guard:
    """Base class of a stateful, two-phase ledger guard (privacy filters, odometers).

    A subclass implements :meth:`check` (decide, change nothing) and :meth:`commit` (apply
    what :meth:`check` decided).  It may have a ``parent`` guard: a step it admits is then
    also checked, and charged, by the parent (and its parents), all or nothing.

    Every guard carries a reentrant lock; :func:`transaction` holds it from check to commit,
    so concurrent steps are serialised and none is admitted on a stale state.
    """

    parent: Guard | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Guard:
        self = super().__new__(cls)
        self._lock = threading.RLock()
        self._rank = next(_RANKS)
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_rank")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._rank = next(_RANKS)

    def check(self, events: Sequence[Event]) -> Any:
        """Decide whether the steps ``events`` (run in this order) may run next.

        Must not change the guard's state.

        Returns:
            An opaque value to pass to :meth:`commit`.

        Raises:
            StepRefusedError: to refuse (a privacy filter raises ``BudgetExceededError``).
        """
        raise NotImplementedError

    def commit(self, pending: Any) -> None:
        """Apply what :meth:`check` returned (must not raise)."""
        raise NotImplementedError

    def __call__(self, event: Event) -> None:
        """Admit and count ``event`` (here and in every parent), or raise, counting nothing."""
        transaction((self,), (event,))

    def admits(self, event: Event) -> bool:
        """Whether ``event`` would be admitted next, here and by every parent (no change)."""
        try:
            transaction((self,), (event,), dry_run=True)
        except StepRefusedError:
            return False
        return True


def _chain(guards: Iterable[Callable[[Event], None]]) -> list[Callable[[Event], None]]:
    """The guards and their parents, each once (by identity), children before parents."""
    out: list[Callable[[Event], None]] = []
    seen: set[int] = set()
    for guard in guards:
        path: set[int] = set()
        node: Any = guard
        while node is not None:
            if id(node) in path:
                raise ValueError(
                    f"parent must not lead back to the guard itself, got a cycle through {node!r}"
                )
            path.add(id(node))
            if id(node) not in seen:
                seen.add(id(node))
                out.append(node)
            node = node.parent if isinstance(node, Guard) else None
    return out


def transaction(
    guards: Iterable[Callable[[Event], None]],
    events: Sequence[Event],
    holders: Iterable[Ledger] = (),
    then: Callable[[], None] | None = None,
    dry_run: bool = False,
) -> None:
    """Two-phase recording of the steps ``events`` through ``guards`` (and their parents).

    Takes the locks of every guard of the chain and of ``holders`` in rank order, then: every
    guard checks all of ``events`` (a :class:`Guard` through :meth:`Guard.check`; a plain
    callable is called on each event and must only check); if all accept, every
    :class:`Guard` commits and ``then()`` runs (the ledgers append), still under the locks.
    A guard appearing twice in the chain (say, one filter guarding two nested ledgers) is
    consulted and charged once: the step runs once.

    Args:
        guards: the guards that must all admit the steps.
        events: the steps, in the order they run.
        holders: ledgers whose locks must also be held (those ``then`` appends to).
        then: run after every guard committed.
        dry_run: check only (nothing is committed and ``then`` is not run).

    Raises:
        Exception: whatever a refusing guard raises; then nothing was changed anywhere.
        ValueError: if a guard's parents lead back to itself.
    """
    chain = _chain(guards)
    lockables = {id(x): x for x in (*chain, *holders) if isinstance(x, (Guard, Ledger))}
    with contextlib.ExitStack() as stack:
        for obj in sorted(lockables.values(), key=lambda x: x._rank):
            stack.enter_context(obj._lock)
        pending: list[tuple[Guard, Any]] = []
        for guard in chain:
            if isinstance(guard, Guard):
                pending.append((guard, guard.check(events)))
            else:
                for event in events:
                    guard(event)
        if dry_run:
            return
        for guard, value in pending:
            guard.commit(value)
        if then is not None:
            then()


class Ledger:
    """Records the primitives a run executes.

    Args:
        guard: sees each event before it is recorded and may raise to refuse it (nothing is
            recorded then).  A privacy filter (a :class:`Guard`) plugs in here; a plain
            callable is treated as a pure check, called during the check phase.

    Thread safety: a ledger may be shared by threads (recording, reading and entering it
    concurrently are safe); each thread's stack of active ledgers is its own.
    """

    def __init__(self, guard: Callable[[Event], None] | None = None) -> None:
        if guard is not None and not callable(guard):
            raise ValueError(f"guard must be callable or None, got {guard!r}")
        self.entries: list[Entry] = []
        self.guard = guard
        self._lock = threading.RLock()
        self._rank = next(_RANKS)

    def __enter__(self) -> Ledger:
        _ACTIVE.set((*_ACTIVE.get(), self))
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = _ACTIVE.get()
        if not stack or stack[-1] is not self:
            raise RuntimeError(
                "ledgers must be left in the reverse order they were entered, "
                "in the thread (context) that entered them"
            )
        _ACTIVE.set(stack[:-1])

    def __len__(self) -> int:
        return len(self.entries)

    def snapshot(self) -> list[Entry]:
        """A consistent copy of the entries recorded so far."""
        with self._lock:
            return list(self.entries)

    def add(self, event: Event, count: int = 1, label: str = "") -> None:
        """Record ``count`` runs of ``event`` (after the guard and its parents accept them).

        Raises:
            ValueError: for an invalid event, count (not an integer >= 1) or label.
            Exception: whatever the guard raises to refuse (nothing is recorded then).
        """
        entry = Entry(event, count, label)
        guards = () if self.guard is None else (self.guard,)
        transaction(guards, (entry.as_event(),), (self,), lambda: self.entries.append(entry))

    def merged(self) -> list[Entry]:
        """The entries with each run of consecutive identical events merged into one entry
        carrying the total count (its label is the first run's).  Running the same mechanism
        k times in a row is its k-fold composition, ``SelfComposed(event, k)``, so the merged
        ledger denotes the same event; a learner with thousands of identical steps then
        accounts as one k-fold node instead of a composition of thousands of leaves.
        ``entries`` itself keeps one entry per recorded run."""
        out: list[Entry] = []
        for entry in self.snapshot():
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
        parts = [e.as_event() for e in self.merged()]
        if not parts:
            raise ValueError("the ledger is empty: no primitive ran while it was active")
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
                f"the run spent epsilon {spent:.6g} but its plan declares {planned:.6g}"
            )
        return spent, planned


def _transformed(event: Event) -> Event:
    for transform in reversed(_TRANSFORMS.get()):
        event = transform(event)
    return event


def _record_entries(entries: Sequence[Entry]) -> None:
    """Record ``entries`` (already transformed) in every active ledger, all or nothing."""
    ledgers = list({id(x): x for x in _ACTIVE.get()}.values())  # a ledger entered twice: once
    if not ledgers or not entries:
        return
    guards = [ledger.guard for ledger in ledgers if ledger.guard is not None]

    def append() -> None:
        for ledger in ledgers:
            ledger.entries.extend(entries)

    transaction(guards, [e.as_event() for e in entries], ledgers, append)


def record(event: Event, count: int = 1, label: str = "") -> None:
    """Record ``count`` runs of ``event`` in every active ledger (through the active
    transforms).

    Two-phase: every guard of every active ledger (and their parents) checks the step; only
    if all accept is it counted by every guard and appended to every ledger.

    Raises:
        ValueError: for an invalid event, count (not an integer >= 1) or label.
        Exception: whatever a refusing guard raises; nothing is recorded anywhere then.
    """
    entry = Entry(event, count, label)  # validated even when no ledger is active
    if not _ACTIVE.get():
        return
    _record_entries([Entry(_transformed(entry.event), entry.count, entry.label)])


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


def _pass_through(entries: Iterable[Entry]) -> list[Entry]:
    return [Entry(_transformed(e.event), e.count, e.label) for e in entries]


@contextlib.contextmanager
def recorded_as_one(event: Event, as_event: Callable[[int], tuple[Event, int]]) -> Iterator[None]:
    """Record the runs of ``event`` inside the block as one combined event on exit.

    For algorithms whose guarantee is proved for the whole loop rather than per step (the
    cover-style bound of EMCover, say): inside the block primitives record into a private
    ledger (outer transforms suspended); on exit the ``r`` runs of ``event`` are recorded as
    ``as_event(r)`` (an event and a count) through the outer ledgers and transforms, and
    anything else that ran is passed through unchanged, so nothing is hidden.  Everything is
    recorded in one two-phase step (all or nothing), also when the block raised: what ran
    was spent.

    Guards of the outer ledgers see the combined event on exit, after the block ran; a
    filter that must stop a run *before* it overspends should check the declared plan of
    the loop before entering the block.
    """
    try:
        with _privately() as inner:
            yield
    finally:
        ran = inner.snapshot()
        out: list[Entry] = []
        runs = sum(e.count for e in ran if e.event == event)
        if runs:
            combined, count = as_event(runs)
            out.append(Entry(_transformed(combined), count, "combined"))
        out += _pass_through(e for e in ran if e.event != event)
        _record_entries(out)


@contextlib.contextmanager
def recorded_jointly(parts: tuple[Event, ...], joint: Event, times: int = 1) -> Iterator[None]:
    """Record one run of each event of ``parts`` inside the block as the one event ``joint``.

    For an algorithm whose privacy is proved for a combination of primitives rather than by
    composing them (003's Lemma 8: an exponential mechanism, then a private learner on data
    relabeled by its output).  Inside the block primitives record into a private ledger
    (outer transforms suspended); on exit, if every event of ``parts`` ran, one run of each
    is replaced by ``joint``, recorded through the outer ledgers and transforms; every other
    run (or all of them, if a part did not run) is passed through unchanged.  A block that
    runs a batch of ``times`` independent runs has up to ``times`` runs of each part
    replaced by as many runs of ``joint``.  Everything is recorded in one two-phase step
    (all or nothing).
    """
    try:
        with _privately() as inner:
            yield
    finally:
        _record_entries(_jointly(inner.snapshot(), parts, joint, times))


def _jointly(ran: list[Entry], parts: tuple[Event, ...], joint: Event, times: int) -> list[Entry]:
    """The entries :func:`recorded_jointly` records for the runs ``ran``."""
    counts = [e.count for e in ran]  # the runs of each entry not replaced by ``joint``
    need = {part: parts.count(part) for part in parts}
    joints = min(
        [times] + [sum(e.count for e in ran if e.event == part) // k for part, k in need.items()]
    )
    out: list[Entry] = []
    if joints > 0:
        out.append(Entry(_transformed(joint), joints, "joint"))
        for part, k in need.items():
            left = joints * k
            for i, entry in enumerate(ran):
                if entry.event == part and left:
                    used = min(counts[i], left)
                    counts[i] -= used
                    left -= used
    for entry, count in zip(ran, counts, strict=True):
        out += _pass_through([Entry(entry.event, 1, entry.label)] * count)
    return out
