"""Batched, seeded, optionally parallel sampling of a mechanism.

Work is cut into batches of a fixed size. Each batch gets its own ``SeedSequence``, derived
from the audit's root seed and the batch's *position* (phase, pair, dataset, batch index),
never from the worker that runs it, so an audit's result depends on its seed (and batch size)
only, not on the number of workers or on the engine that runs the batches.

Engines: in-process (``workers=1``), a local process pool (``workers>1``), or any executor
offering ``submit(fn, *args) -> future`` with ``future.result()`` (a
``concurrent.futures.Executor``). A Dask ``distributed.Client`` or scheduler address is
wrapped in :class:`dpaudit.audit.distributed.DaskExecutor` (retries, one task per batch).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from dpaudit.audit.distributed import DaskExecutor, is_dask_target
from dpaudit.audit.outputs import OutputSchema, infer_schema, to_array

__all__ = ["DEFAULT_BATCH_SIZE", "PROGRESS_THRESHOLD", "Runner", "draw", "seed_sequence"]

#: Samples per batch; part of what fixes an audit's result together with the seed.
DEFAULT_BATCH_SIZE = 100_000
#: Audits drawing at least this many samples in total show a progress bar (when on a terminal).
PROGRESS_THRESHOLD = 2_000_000


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
        ValueError: if ``batch`` returns a number of outputs other than ``n``.
    """
    rng = np.random.default_rng(seed)
    batch = getattr(mechanism, "batch", None)
    if callable(batch):
        out = batch(dataset, n, rng)
        if len(out) != n:
            raise ValueError(f"mechanism.batch(dataset, n={n}, rng) returned {len(out)} outputs")
        return out
    return [mechanism(dataset, rng) for _ in range(n)]


def _sample_task(
    mechanism: Any, dataset: Any, n: int, seed: np.random.SeedSequence, schema: OutputSchema
) -> np.ndarray:
    return to_array(draw(mechanism, dataset, n, seed), schema)


def _count_task(
    mechanism: Any,
    dataset: Any,
    n: int,
    seed: np.random.SeedSequence,
    schema: OutputSchema,
    events: Sequence[Any],
) -> np.ndarray:
    x = to_array(draw(mechanism, dataset, n, seed), schema)
    return np.array([int(np.count_nonzero(e.contains(x))) for e in events], dtype=np.int64)


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
    """

    mechanism: Any
    root: np.random.SeedSequence
    batch_size: int = DEFAULT_BATCH_SIZE
    workers: int = 1
    executor: Any = None
    progress: bool = False
    total: int = 0
    schema: OutputSchema | None = None

    def __enter__(self) -> Runner:
        self._own = None
        if self.executor is None and self.workers > 1:
            self._own = ProcessPoolExecutor(max_workers=self.workers)
        elif is_dask_target(self.executor):  # a distributed.Client or a scheduler address
            self._own = DaskExecutor(self.executor)
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
        if self._own is not None:
            self._own.shutdown()

    def _batches(self, n: int, key: tuple[int, ...]) -> list[tuple[int, np.random.SeedSequence]]:
        count = math.ceil(n / self.batch_size)
        seeds = [seed_sequence(self.root, *key, b) for b in range(count)]
        sizes = [self.batch_size] * (count - 1) + [n - self.batch_size * (count - 1)]
        return list(zip(sizes, seeds, strict=True))

    def _run(self, fn: Callable[..., Any], jobs: list[tuple[Any, ...]], sizes: list[int]) -> list:
        engine = self._own if self._own is not None else self.executor
        if engine is None:
            results = []
            for job, size in zip(jobs, sizes, strict=True):
                results.append(fn(*job))
                self._bar.update(size)
            return results
        futures = [engine.submit(fn, *job) for job in jobs]
        results = []
        for fut, size in zip(futures, sizes, strict=True):
            results.append(fut.result())
            self._bar.update(size)
        return results

    def sample(self, dataset: Any, n: int, key: tuple[int, ...]) -> np.ndarray:
        """Draw ``n`` outputs on ``dataset`` as an array in the audit's schema.

        The schema is fixed from the first batch the audit ever draws.
        """
        batches = self._batches(n, key)
        parts = []
        if self.schema is None:
            size, seed = batches.pop(0)
            raw = draw(self.mechanism, dataset, size, seed)
            self.schema = infer_schema(raw)
            parts.append(to_array(raw, self.schema))
            self._bar.update(size)
        jobs = [(self.mechanism, dataset, size, seed, self.schema) for size, seed in batches]
        parts += self._run(_sample_task, jobs, [s for s, _ in batches])
        return np.concatenate(parts)

    def count(
        self, dataset: Any, n: int, key: tuple[int, ...], events: Sequence[Any]
    ) -> np.ndarray:
        """Draw ``n`` fresh outputs on ``dataset`` and count the hits of each event."""
        if self.schema is None:
            raise RuntimeError(
                "count() needs the output schema that sample() fixes; call sample() first"
            )
        batches = self._batches(n, key)
        jobs = [
            (self.mechanism, dataset, size, seed, self.schema, tuple(events))
            for size, seed in batches
        ]
        return np.sum(self._run(_count_task, jobs, [s for s, _ in batches]), axis=0)
