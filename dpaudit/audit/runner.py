"""Batched, seeded, optionally parallel sampling of a mechanism.

Work is cut into batches of a fixed size. Each batch gets its own ``SeedSequence``, derived
from the audit's root seed and the batch's *position* (phase, pair, dataset, batch index),
never from the worker that runs it, so an audit's result depends on its seed (and batch size)
only, not on the number of workers or on the engine that runs the batches.

Every batch has its own position, so no two batches share a seed, however many workers run
them: the seeds are the nodes of one ``SeedSequence`` spawn tree (``seed_sequence(root, *key)``
is the child ``root.spawn`` would give at that position). A mechanism that ignores its rng and
draws from NumPy's *global* state or Python's ``random`` escapes this; the auditor detects it
(:func:`dpaudit.audit.monte_carlo.audit` reports such an audit as not reproducible) and the
local worker processes reseed their global states from fresh entropy when they start, so
that forked workers never repeat each other's draws.

Failures: an exception raised by the mechanism becomes a
:class:`~dpaudit.audit.errors.MechanismError` (a ValueError; so does a mechanism that cannot
be pickled for, or imported by, the workers); any other failure of an engine becomes an
:class:`~dpaudit.audit.errors.EngineError`, one line naming the engine and the batch.

What a batch is and what a worker runs on it (seeds, drawing, tallies, the pilot) is in
:mod:`dpaudit.audit.batches`; this module schedules them.

Engines: in-process (``workers=1``), a local process pool (``workers>1``; it counts
:func:`guided_groups` of consecutive batches per task, sends a counting phase's sketches once
per worker, and its workers inherit or draw a held sample themselves: :class:`Pilot`), or any
executor offering ``submit(fn, *args) -> future`` with ``future.result()`` (a
``concurrent.futures.Executor``). A Dask ``distributed.Client`` or scheduler address is
wrapped in :class:`dpaudit.audit.distributed.DaskExecutor` (retries, one task per batch).
"""

from __future__ import annotations

import math
import multiprocessing
import sys
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from dpaudit.audit.batches import (
    EventCounts,
    Pilot,
    SentOnce,
    draw,
    release_pilot,
    sample_task,
    seed_sequence,
    tally_chunk,
    tally_task,
)
from dpaudit.audit.distributed import DaskExecutor, is_dask_target
from dpaudit.audit.errors import EngineError, MechanismError
from dpaudit.audit.outputs import OutputSchema, infer_schema, to_array
from dpaudit.audit.worker_process import start_worker

__all__ = ["DEFAULT_BATCH_SIZE", "GUIDED_SHARE", "PROGRESS_THRESHOLD", "Runner", "guided_groups"]

#: Samples per batch; part of what fixes an audit's result together with the seed.
DEFAULT_BATCH_SIZE = 100_000
#: Batches in flight per worker when counting: enough to keep every worker busy, few enough
#: that memory does not grow with the number of batches.
IN_FLIGHT = 4
#: Workers assumed behind an external executor (Dask, ...) when sizing that window.
EXTERNAL_WORKERS = 16
#: The runner's own pool counts consecutive batches of one dataset in one task, in groups
#: that shrink as the phase advances (:func:`guided_groups`): a group is the batches left
#: divided by this many times the workers, at least one.  Each task costs a round trip to the
#: parent (about half a millisecond of a worker's time on this machine, against 2-4 ms for a
#: batch of a vectorised mechanism), so large early groups save most of them, and the last
#: groups of one batch let the workers finish together.  Sums do not depend on the grouping.
GUIDED_SHARE = 2
#: Audits drawing at least this many samples in total show a progress bar (when on a terminal).
PROGRESS_THRESHOLD = 2_000_000


def _pickling_failure(err: BaseException) -> bool:
    return "pickl" in f"{type(err).__name__} {err}".lower()


def guided_groups(counts: Sequence[int], workers: int) -> list[tuple[int, int, int]]:
    """Consecutive groups ``(task, start, stop)`` of each task's batches, in order: for
    ``workers`` >= 1, each group takes the batches left in the phase (over all tasks) divided
    by :data:`GUIDED_SHARE` x ``workers``, at least one, and not past its task's end (guided
    self-scheduling, as OpenMP's ``schedule(guided)``); for 0 workers, a batch a group."""
    groups = []
    left = sum(counts)
    for task, count in enumerate(counts):
        start = 0
        while start < count:
            size = max(1, left // (GUIDED_SHARE * workers)) if workers else 1
            stop = min(count, start + size)
            groups.append((task, start, stop))
            left -= stop - start
            start = stop
    return groups


def _engine_failure(err: BaseException, engine: Any) -> BaseException:
    """The error to raise for a batch that failed on ``engine``: the mechanism's own error,
    a MechanismError for a mechanism the workers cannot receive, else an EngineError."""
    if isinstance(err, (MechanismError, KeyboardInterrupt, SystemExit)):
        return err
    message = " ".join(str(err).split())[:500]
    name = type(engine).__name__
    if isinstance(err, ImportError):
        return MechanismError(
            f"the workers of {name} cannot import the mechanism ({type(err).__name__}: "
            f"{message}); install its module on the workers or put it on their PYTHONPATH"
        )
    if _pickling_failure(err):
        return MechanismError(
            f"the mechanism and datasets must be picklable to run on {name} workers (a "
            f"module-level function or an instance of a module-level class): {message}"
        )
    if isinstance(err, BrokenProcessPool):
        return EngineError(f"a worker process of {name} died while running a batch: {message}")
    return EngineError(f"{name} failed running a batch: {type(err).__name__}: {message}")


@dataclass
class Runner:
    """Runs sampling tasks in fixed-size, position-seeded batches.

    Attributes:
        mechanism: the mechanism under audit.
        root: the audit's root seed sequence.
        batch_size: samples per batch.
        workers: local worker processes when no executor is given.
        executor: an external executor (``submit``/``result``), used as is.
        progress: show a progress bar over all samples drawn.
        total: samples expected over the whole audit (for the progress bar).
        schema: the output schema (None: fixed by the first batch drawn, with ``infer``).
        infer: how the first batch fixes the schema (e.g. with the probe's outputs:
            :func:`~dpaudit.audit.outputs.infer_schema`'s ``also``).
    """

    mechanism: Any
    root: np.random.SeedSequence
    batch_size: int = DEFAULT_BATCH_SIZE
    workers: int = 1
    executor: Any = None
    progress: bool = False
    total: int = 0
    schema: OutputSchema | None = None
    infer: Callable[[Any], OutputSchema] = infer_schema
    _own: ProcessPoolExecutor | DaskExecutor | None = field(default=None, init=False, repr=False)
    _pool_wanted: bool = field(default=False, init=False, repr=False)

    @property
    def output_schema(self) -> OutputSchema:
        """The audit's output schema, fixed by the first :meth:`sample`.

        Raises:
            RuntimeError: before the first :meth:`sample`.
        """
        if self.schema is None:
            raise RuntimeError("the output schema is fixed by sample(); call sample() first")
        return self.schema

    @property
    def pooled(self) -> bool:
        """Whether batches run in the runner's own local process pool (``workers > 1``)."""
        return self._pool_wanted

    @property
    def parts_in_engine(self) -> bool:
        """Whether the selection's proposal and search run part by part on the engine, each
        task drawing the pilot itself (:class:`Pilot`): the own pool and Dask; otherwise this
        process holds the pilot and searches it."""
        return self._pool_wanted or isinstance(self._own, DaskExecutor)

    def _engine(self) -> Any:
        """The engine batches run on (None: this process); the own pool starts here, on first
        use: its workers are forked at once by no-op tasks (5-20 ms to fork and start them)."""
        if self._pool_wanted and self._own is None:
            pool = ProcessPoolExecutor(max_workers=self.workers, initializer=start_worker)
            for _ in range(self.workers):
                pool.submit(int)
            self._own = pool
        return self._own if self._own is not None else self.executor

    def __enter__(self) -> Runner:
        self._own = None
        self._pool_wanted = self.executor is None and self.workers > 1
        if is_dask_target(self.executor):  # a distributed.Client or a scheduler address
            self._own = DaskExecutor(self.executor)
        engine = self._own if self._own is not None else self.executor
        if isinstance(engine, DaskExecutor):  # fail before sampling if workers cannot import
            try:
                engine.check_importable(self.mechanism)
            except BaseException as err:
                if self._own is not None:
                    self._own.shutdown()
                failure = _engine_failure(err, engine)
                if failure is err:
                    raise
                raise failure from err
        self._bar = tqdm(
            total=self.total,
            unit="sample",
            unit_scale=True,
            disable=not self.progress,
            file=sys.stderr,
            desc="audit",
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.close()
        release_pilot()  # a pilot this process drew for its workers (see :meth:`pilot`)
        if self._own is not None:
            # Waits for the workers to exit (a few milliseconds).  Not waiting races, on
            # Python 3.11, with the interpreter's exit: concurrent.futures then wakes a
            # manager thread whose pipe is closing ("OSError: Bad file descriptor" on stderr
            # when a script or `dpaudit audit` ends right after the audit).
            self._own.shutdown()

    def _batches(
        self, n: int, key: tuple[int, ...], skip: int = 0
    ) -> list[tuple[int, np.random.SeedSequence]]:
        """Sizes and seeds of the batches ``skip, skip + 1, ...`` of ``n`` samples at ``key``."""
        count = math.ceil(n / self.batch_size)
        seeds = [seed_sequence(self.root, *key, b) for b in range(skip, count)]
        sizes = [self.batch_size] * (count - 1) + [n - self.batch_size * (count - 1)]
        return list(zip(sizes[skip:], seeds, strict=True))

    def run(
        self, fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], sizes: Sequence[int]
    ) -> list:
        """``fn(*job)`` for every job, on the runner's engine, results in the jobs' order.

        Args:
            fn: a module-level function (the workers import it).
            jobs: the argument tuples.
            sizes: samples each job draws (for the progress bar).

        Raises:
            MechanismError: as the jobs raise it, or when the workers cannot receive them.
            EngineError: if the engine fails.
        """
        engine = self._engine()
        if engine is None:
            results = []
            for job, size in zip(jobs, sizes, strict=True):
                results.append(fn(*job))
                self._bar.update(size)
            return results
        futures: list[Any] = []
        try:
            for job in jobs:
                futures.append(engine.submit(fn, *job))
            results = []
            for fut, size in zip(futures, sizes, strict=True):
                results.append(fut.result())
                self._bar.update(size)
        except BaseException as err:
            for fut in futures:
                fut.cancel()
            failure = _engine_failure(err, engine)
            if failure is err:
                raise
            raise failure from err
        return results

    def advance(self, samples: int) -> None:
        """Count ``samples`` drawn outside :meth:`run` and :meth:`tally` on the progress bar."""
        self._bar.update(samples)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Start ``fn(*args)`` beside the batches: on the runner's own pool (a worker takes it
        before the batches submitted after it), else on a thread of this process.

        Returns:
            A future for :meth:`result`.
        """
        if self.pooled:
            return self._engine().submit(fn, *args)
        side = ThreadPoolExecutor(1)
        try:
            return side.submit(fn, *args)
        finally:
            side.shutdown(wait=False)  # the thread ends with fn

    def result(self, future: Any) -> Any:
        """The result of a :meth:`submit`.

        Raises:
            EngineError: if the pool failed running it (what ``fn`` raised, otherwise).
        """
        try:
            return future.result()
        except BaseException as err:
            failure = _engine_failure(err, self._own) if self.pooled else err
            if failure is err:
                raise
            raise failure from err

    def pilot(self, draws: Sequence[tuple[Any, int, tuple[int, ...]]]) -> Pilot:
        """Describe the first ``n`` samples at ``key`` of each ``(dataset, n, key)`` as a
        :class:`Pilot` that the workers draw themselves (the same outputs as :meth:`sample`).

        Fixes the output schema first when no batch has fixed it yet: the parent then draws
        the first batch of the first dataset, as :meth:`sample` would.

        When the own pool has not started yet and starts by forking (Linux), this process
        draws the pilot itself before the pool starts: the forked workers find it in memory
        (:meth:`~dpaudit.audit.batches.Pilot.hold`) instead of each drawing it again, and
        their tasks start at once (about 10 ms of a one-dimensional two-worker audit's
        critical path).  Elsewhere (started pool, spawn or forkserver, Dask) every worker
        draws it, as it would anyway.
        """
        first = None
        if self.schema is None:
            dataset, n, key = draws[0]
            size, seed = self._batches(n, key)[0]
            first = draw(self.mechanism, dataset, size, seed)
            self.schema = self.infer(first)
        pilot = Pilot(
            uuid.uuid4().hex,
            self.mechanism,
            self.schema,
            tuple((d, tuple(self._batches(n, key))) for d, n, key in draws),
        )
        inherit = (
            self._pool_wanted and self._own is None and multiprocessing.get_start_method() == "fork"
        )
        if inherit:
            pilot.hold(first)  # in this process, inherited by the workers forked next
        self._engine()
        if inherit:  # the workers have their copies: this process need not keep it
            release_pilot()
        return pilot

    def _reduce(
        self,
        fn: Callable[..., list[np.ndarray]],
        jobs: list[tuple[Any, ...]],
        sizes: list[int],
        owners: list[int],
        n_owners: int,
    ) -> list[list[np.ndarray] | None]:
        """Run ``fn`` (:func:`tally_task` or :func:`tally_chunk`) on every job and sum the
        results per owner as they arrive, with at most :data:`IN_FLIGHT` jobs per worker
        submitted at once, so memory stays flat in the number of batches. Sums of integer
        counts do not depend on the order."""
        engine = self._engine()
        totals: list[list[np.ndarray] | None] = [None] * n_owners

        def add(part: list[np.ndarray], size: int, owner: int) -> None:
            held = totals[owner]
            totals[owner] = (
                part if held is None else [a + b for a, b in zip(held, part, strict=True)]
            )
            self._bar.update(size)

        if engine is None:
            for job, size, owner in zip(jobs, sizes, owners, strict=True):
                add(fn(*job), size, owner)
            return totals
        window = IN_FLIGHT * (
            self.workers if self._own is not None or self.pooled else EXTERNAL_WORKERS
        )
        pending: deque[tuple[Any, int, int]] = deque()
        try:
            for job, size, owner in zip(jobs, sizes, owners, strict=True):
                pending.append((engine.submit(fn, *job), size, owner))
                if len(pending) >= window:
                    fut, done, who = pending.popleft()
                    add(fut.result(), done, who)
            while pending:
                fut, done, who = pending.popleft()
                add(fut.result(), done, who)
        except BaseException as err:
            for fut, _, _ in pending:
                fut.cancel()
            failure = _engine_failure(err, engine)
            if failure is err:
                raise
            raise failure from err
        return totals

    def tally(
        self,
        tasks: Sequence[tuple[Any, int, tuple[int, ...]]],
        sketches: Sequence[Any],
        skip: int = 0,
    ) -> list[list[np.ndarray]]:
        """Draw fresh outputs and sum each sketch's per-batch tally, in the workers.

        Only the tallies travel back (one small integer array per sketch and task), so
        memory is flat in the number of samples; the sums are exact integers, the same
        whatever the number of workers, the batches each task groups (:data:`MAX_CHUNK`) or
        the order the tasks finish in. The batches of all datasets share one queue, so the
        workers stay busy from one dataset to the next.

        Args:
            tasks: ``(dataset, n, key)`` per dataset: ``n`` samples at seed position ``key``.
            sketches: objects with ``tally(outputs) -> int64 array`` of a fixed length (the
                protocol of :mod:`dpaudit.audit.streaming`).
            skip: leave out the first ``skip`` batches of each key (drawn already, e.g. as
                the held selection samples).

        Returns:
            Per task, the summed tally of each sketch.

        Raises:
            RuntimeError: before the first :meth:`sample`, or when a task has no batch left.
        """
        if self.schema is None:
            raise RuntimeError(
                "tally() needs the output schema that sample() fixes; call sample() first"
            )
        # one object: a Dask executor sends it to the cluster once; the own pool's workers
        # unpickle it once each
        shared: Any = SentOnce(tuple(sketches)) if self.pooled else tuple(sketches)
        planned = [self._batches(n, key, skip) for _, n, key in tasks]
        groups = guided_groups([len(b) for b in planned], self.workers if self.pooled else 0)
        jobs: list[tuple[Any, ...]] = []
        sizes, owners = [], []
        for t, start, stop in groups:
            dataset, group = tasks[t][0], planned[t][start:stop]
            if self.pooled:
                jobs.append((self.mechanism, dataset, tuple(group), self.schema, shared))
            else:
                ((size, seed),) = group
                jobs.append((self.mechanism, dataset, size, seed, self.schema, shared))
            sizes.append(sum(size for size, _ in group))
            owners.append(t)
        fn: Callable[..., list[np.ndarray]] = tally_chunk if self.pooled else tally_task
        totals = self._reduce(fn, jobs, sizes, owners, len(tasks))
        if any(t is None for t in totals):
            raise RuntimeError("tally(): a task has no batch left after skipping")
        return [t for t in totals if t is not None]

    def count(
        self, dataset: Any, n: int, key: tuple[int, ...], events: Sequence[Any]
    ) -> np.ndarray:
        """Draw ``n`` fresh outputs on ``dataset`` and count the hits of each event."""
        return self.tally([(dataset, n, key)], [EventCounts(tuple(events))])[0][0]

    def sample(self, dataset: Any, n: int, key: tuple[int, ...]) -> np.ndarray:
        """Draw ``n`` outputs on ``dataset`` as an array in the audit's schema.

        The schema is fixed from the first batch the audit ever draws.
        """
        batches = self._batches(n, key)
        parts = []
        if self.pooled:  # the pool's workers start while this process draws the first batch
            self._engine()
        if self.schema is None:
            size, seed = batches.pop(0)
            raw = draw(self.mechanism, dataset, size, seed)
            self.schema = self.infer(raw)
            parts.append(to_array(raw, self.schema))
            self._bar.update(size)
        jobs = [(self.mechanism, dataset, size, seed, self.schema) for size, seed in batches]
        parts += self.run(sample_task, jobs, [s for s, _ in batches])
        return np.concatenate(parts)
