"""Batches of an audit: their position seeds, how one is drawn, and the tasks a worker runs
on them (:mod:`dpaudit.audit.runner` schedules them).

* :func:`seed_sequence` -- a batch's seeds from its *position* (phase, pair, dataset, batch
  index) below the audit's root seed, never from the worker that runs it;
* :func:`draw` -- ``n`` raw outputs of a mechanism, through its ``batch`` when offered;
* :func:`sample_task`, :func:`tally_task`, :func:`tally_chunk` -- what a worker runs: a
  batch drawn and returned, or drawn and tallied by sketches (:class:`EventCounts` counts
  fixed events), only the small integer tallies travelling back;
* :class:`Pilot` -- held selection samples described by their batches, so that a worker
  draws them itself (or inherits the parent's draw when forked) instead of receiving them;
* :class:`SentOnce` -- a task argument pickled once and rebuilt once per worker process.

A worker process keeps at most one pilot (:data:`_HELD`) and one rebuilt value
(:data:`_ONCE`), so its memory stays flat over an audit's tasks.
"""

from __future__ import annotations

import pickle
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.errors import EngineError, MechanismError
from dpaudit.audit.events import count_hits
from dpaudit.audit.outputs import OutputSchema, Raised, to_array

__all__ = [
    "NOT_OUTPUTS",
    "ErrorsAsOutputs",
    "EventCounts",
    "Pilot",
    "SentOnce",
    "draw",
    "release_pilot",
    "sample_task",
    "seed_sequence",
    "tally_chunk",
    "tally_task",
]


def seed_sequence(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The seed sequence at position ``key`` below ``root`` (same key, same seeds, always)."""
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *key))


def draw(
    mechanism: Callable[..., Any], dataset: Any, n: int, seed: np.random.SeedSequence
) -> Sequence[Any] | np.ndarray:
    """Draw ``n`` raw outputs, through ``mechanism.batch`` when offered.

    Args:
        mechanism: ``mechanism(dataset, rng)``, optionally with ``.batch(dataset, n, rng)``.
        dataset: the input dataset.
        n: number of outputs.
        seed: seed of this batch.

    Returns:
        The raw outputs.

    Raises:
        MechanismError: (a ValueError) if the mechanism raises, or ``batch`` returns a number
            of outputs other than ``n``.
    """
    rng = np.random.default_rng(seed)
    batch = getattr(mechanism, "batch", None)
    try:
        if callable(batch):
            out = batch(dataset, n, rng)
            count = len(out)
        else:
            return [mechanism(dataset, rng) for _ in range(n)]
    except MechanismError:
        raise
    except Exception as err:
        what = "mechanism.batch(dataset, n, rng)" if callable(batch) else "the mechanism"
        text = " ".join(str(err).split())[:500]
        raise MechanismError(
            f"{what} raised {type(err).__name__}: {text}", raised=(type(err).__name__, text)
        ) from err
    if count != n:
        raise MechanismError(f"mechanism.batch(dataset, n={n}, rng) returned {count} outputs")
    return out


#: Exceptions that are never a mechanism's output (``on_error="output"``): the auditor's own
#: errors and those that say the process itself is in trouble (``KeyboardInterrupt`` and
#: ``SystemExit`` are no ``Exception`` and pass through anyway).
NOT_OUTPUTS: tuple[type[BaseException], ...] = (MemoryError, MechanismError, EngineError)


class ErrorsAsOutputs:
    """A mechanism whose exceptions are outputs (``audit(..., on_error="output")``): a run
    that raises returns :class:`~dpaudit.audit.outputs.Raised` (the exception's type, not
    its message, which may hold random numbers) instead.

    ``batch(dataset, n, rng)`` calls the mechanism's own ``batch`` when it has one; if that
    raises, the batch falls back to ``n`` single calls with the same generator (from the
    state the failed call left: still a function of the batch's seed), so that each sample
    gets its own outcome. :data:`NOT_OUTPUTS` are raised as they are. Picklable when the
    mechanism is (worker processes, Dask).

    Privacy: an observer of a released result sees whether the code raised, and which
    exception; counting that as an outcome audits exactly what such an observer sees.
    """

    def __init__(self, mechanism: Any) -> None:
        self.mechanism = mechanism

    def __call__(self, dataset: Any, rng: np.random.Generator) -> Any:
        try:
            return self.mechanism(dataset, rng)
        except NOT_OUTPUTS:
            raise
        except Exception as err:  # an exception of the mechanism is its output
            return Raised.of(err)

    def batch(self, dataset: Any, n: int, rng: np.random.Generator) -> Any:
        """``n`` outputs: the mechanism's ``batch`` when it has one and it returns, else one
        call (and one outcome) per sample."""
        batch = getattr(self.mechanism, "batch", None)
        if callable(batch):
            try:
                return batch(dataset, n, rng)
            except NOT_OUTPUTS:
                raise
            except Exception:  # the single calls below say which samples raise
                pass
        return [self(dataset, rng) for _ in range(n)]

    def __repr__(self) -> str:
        return f"ErrorsAsOutputs({self.mechanism!r})"


def sample_task(
    mechanism: Any, dataset: Any, n: int, seed: np.random.SeedSequence, schema: OutputSchema
) -> np.ndarray:
    """Worker task: one batch of outputs, as an array in the audit's schema."""
    return to_array(draw(mechanism, dataset, n, seed), schema)


@dataclass(frozen=True)
class EventCounts:
    """A sketch (:mod:`dpaudit.audit.streaming`) counting the hits of fixed events: what
    certification tallies per batch."""

    events: tuple[Any, ...]

    def tally(self, outputs: np.ndarray) -> np.ndarray:
        """Hits of each event among ``outputs``."""
        return count_hits(self.events, outputs)


def tally_task(
    mechanism: Any,
    dataset: Any,
    n: int,
    seed: np.random.SeedSequence,
    schema: OutputSchema,
    sketches: Sequence[Any],
) -> list[np.ndarray]:
    """Worker task: draw one batch and return each sketch's tally of it (int64 arrays)."""
    release_pilot()  # a pilot held for the proposal is not needed any more
    x = to_array(draw(mechanism, dataset, n, seed), schema)
    return [np.asarray(s.tally(x), dtype=np.int64) for s in sketches]


def tally_chunk(
    mechanism: Any,
    dataset: Any,
    batches: Sequence[tuple[int, np.random.SeedSequence]],
    schema: OutputSchema,
    sketches: Sequence[Any],
) -> list[np.ndarray]:
    """:func:`tally_task` over consecutive batches, summed (the runner's own pool)."""
    total: list[np.ndarray] | None = None
    for n, seed in batches:
        part = tally_task(mechanism, dataset, n, seed, schema, sketches)
        total = part if total is None else [a + b for a, b in zip(total, part, strict=True)]
    assert total is not None  # a chunk has at least one batch
    return total


#: The pilot this process drew last (:meth:`Pilot.outputs`), by token: at most one.
_HELD: dict[str, tuple[np.ndarray, ...]] = {}
#: Guards :data:`_HELD`: a Dask worker may run tasks in threads, and one draw serves them all.
_HELD_LOCK = threading.Lock()
#: The value this worker process rebuilt last from a :class:`SentOnce`, by token: at most one.
_ONCE: dict[str, Any] = {}


def release_pilot() -> None:
    """Drop the pilot this process holds (:meth:`Pilot.hold`), if any."""
    with _HELD_LOCK:
        _HELD.clear()


class SentOnce:
    """A task argument sent to the own pool's workers as bytes pickled once, and rebuilt
    once per worker process: the sketches of a ten-dimensional selection pickle to 1.4 MB,
    which cost 3 ms to pickle and 6 ms to unpickle for every batch otherwise. A worker
    receives the value itself (not this wrapper)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.token = uuid.uuid4().hex
        self._payload: bytes | None = None

    def __reduce__(self) -> tuple[Any, tuple[str, bytes]]:
        if self._payload is None:  # the pool's feeder thread pickles the tasks, one by one
            self._payload = pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL)
        return _rebuilt, (self.token, self._payload)


def _rebuilt(token: str, payload: bytes) -> Any:
    if token not in _ONCE:
        _ONCE.clear()
        _ONCE[token] = pickle.loads(payload)
    return _ONCE[token]


@dataclass(frozen=True)
class Pilot:
    """Position-seeded batches held in memory for a proposal, described so that a worker
    process can draw them itself (:meth:`outputs`) instead of receiving them: drawing a
    vectorised mechanism's pilot costs about what pickling it does, and every worker draws
    at once, where pickles queue through the parent.

    Attributes:
        token: unique to the audit and the pilot (the key of a worker's copy).
        mechanism: the mechanism under audit.
        schema: the audit's output schema.
        draws: per dataset, the dataset and its batches ``(size, seed)`` in order.
    """

    token: str
    mechanism: Any
    schema: OutputSchema
    draws: tuple[tuple[Any, tuple[tuple[int, np.random.SeedSequence], ...]], ...]

    def outputs(self) -> tuple[np.ndarray, ...]:
        """The outputs per dataset (the batches concatenated), the same arrays as
        :meth:`Runner.sample` gives; drawn once per process, which keeps the last pilot only
        (until its next counting task: memory stays flat)."""
        return self.hold()

    def hold(self, first: Any = None) -> tuple[np.ndarray, ...]:
        """:meth:`outputs`, kept in this process; ``first``: the first dataset's first
        batch as the mechanism returned it, when drawn already (it is not drawn again)."""
        with _HELD_LOCK:  # threads of one process wait for one draw
            held = _HELD.get(self.token)
            if held is None:
                _HELD.clear()
                held = tuple(
                    np.concatenate([to_array(raw, self.schema) for raw in self._raw(i, first)])
                    for i in range(len(self.draws))
                )
                _HELD[self.token] = held
        return held

    def _raw(self, i: int, first: Any) -> Iterator[Any]:
        """The raw outputs of dataset ``i``'s batches, in order (``first`` in place of the
        first dataset's first batch, when given)."""
        dataset, batches = self.draws[i]
        for b, (n, seed) in enumerate(batches):
            if first is not None and (i, b) == (0, 0):
                yield first
            else:
                yield draw(self.mechanism, dataset, n, seed)
