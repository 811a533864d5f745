"""Benchmark: audit throughput on Dask against the local engines, by number of worker processes.

Run ``python bench/distributed.py > bench/distributed.md``. Every engine runs the same audits
(same seed, same batch size) and must certify the same bound; the script stops if one does
not. Two workloads:

* ``vectorised``: a Laplace mechanism offering ``batch`` (NumPy draws millions of samples per
  second, so the engine's per-task cost and the transfer of selection samples dominate);
* ``per-call``: the same mechanism without ``batch``, one Python call per sample (the shape of
  an expensive mechanism, where the work per task dominates).

Engines: in-process (``workers=1``), the local process pool (``workers=k``) and a Dask
``LocalCluster`` of k single-threaded worker processes on 127.0.0.1 (``executor=client``). The
Dask cluster is started before the clock starts (it stands for an existing cluster; its
start-up time is reported apart); the local pool is started by each audit, as users run it.
Throughput counts every sample drawn (selection and certification, both datasets); the
audits search threshold events only, so that their time is mostly sampling.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

# This script shares its name with the ``distributed`` package: keep its directory (put first
# on ``sys.path`` when it runs as a script) from shadowing that package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import dask  # noqa: E402
import distributed  # noqa: E402
import numpy as np  # noqa: E402

from dpaudit.audit import audit  # noqa: E402

#: Repetitions per cell; the median wall time is reported.
REPEATS = 3
#: Worker process counts measured (this machine has 2 cores).
WORKERS = (1, 2)


class VectorisedLaplace:
    """``d + Laplace(1)`` with a vectorised ``batch``."""

    name = "laplace(1), batch"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace(0.0, 1.0))

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.laplace(0.0, 1.0, n)


class PerCallLaplace:
    """``d + Laplace(1)``, one call per sample (no ``batch``)."""

    name = "laplace(1), per call"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.laplace(0.0, 1.0))


#: Threshold events only: the event search runs in the client, the same for every engine, so
#: a cheap search keeps the measurement on sampling, the part the engines share out.
_SEARCH: dict[str, Any] = {"families": ("threshold",)}

#: (workload name, mechanism, audit arguments).
WORKLOADS: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "vectorised",
        VectorisedLaplace(),
        dict(epsilon=1.0, samples=4_000_000, seed=1, batch_size=200_000, **_SEARCH),
    ),
    (
        "per-call",
        PerCallLaplace(),
        dict(epsilon=1.0, samples=150_000, seed=1, batch_size=7_500, **_SEARCH),
    ),
]


def _timed(run: Callable[[], Any]) -> tuple[float, float]:
    """Median wall time over ``REPEATS`` runs, and the certified bound (equal on every run)."""
    times, bounds = [], set()
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
        bounds.add(result.epsilon_lower)
    if len(bounds) != 1:
        raise SystemExit(f"one engine gave different bounds across repeats: {bounds}")
    return statistics.median(times), bounds.pop()


def _dask_cluster(workers: int) -> tuple[distributed.LocalCluster, distributed.Client, float]:
    start = time.perf_counter()
    cluster = distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address="127.0.0.1:0",
    )
    client = distributed.Client(cluster, set_as_default=False)
    client.wait_for_workers(workers)
    return cluster, client, time.perf_counter() - start


def main() -> None:
    """Measure every workload on every engine and print the Markdown report."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    dask.config.set({"distributed.worker.multiprocessing-method": method})
    cells: dict[tuple[str, str, int], tuple[float, float]] = {}
    for name, mechanism, kwargs in WORKLOADS:
        for engine, k in [("in-process", 1)] + [("process pool", k) for k in WORKERS]:
            cells[(name, engine, k)] = _timed(
                lambda mechanism=mechanism, kwargs=kwargs, k=k: audit(
                    mechanism, 0.0, 1.0, workers=k, progress=False, **kwargs
                )
            )
    startup: dict[int, float] = {}
    for k in WORKERS:  # one cluster at a time: an idle cluster still costs CPU
        cluster, client, startup[k] = _dask_cluster(k)
        try:
            for name, mechanism, kwargs in WORKLOADS:
                cells[(name, "dask", k)] = _timed(
                    lambda mechanism=mechanism, kwargs=kwargs, client=client: audit(
                        mechanism, 0.0, 1.0, executor=client, progress=False, **kwargs
                    )
                )
        finally:
            client.close()
            cluster.close()
    rows = []
    for name, _, kwargs in WORKLOADS:
        drawn = 2 * kwargs["samples"]
        tasks = _tasks(kwargs["samples"], kwargs["batch_size"])
        order = [("in-process", 1)] + [(e, k) for k in WORKERS for e in ("process pool", "dask")]
        for engine, k in order:
            seconds, bound = cells[(name, engine, k)]
            rows.append((name, engine, k, seconds, bound, drawn, tasks))
    bounds = {(r[0], r[4]) for r in rows}
    if len(bounds) != len(WORKLOADS):
        raise SystemExit(f"engines disagree on the certified bound: {sorted(bounds)}")
    _print(rows, startup)


def _tasks(samples: int, batch_size: int) -> int:
    """Batches an engine runs in a one-pair audit (the runner draws the very first locally)."""
    selection = max(1, int(samples * 0.25))  # the auditor's default selection_fraction
    per_dataset = math.ceil(selection / batch_size) + math.ceil((samples - selection) / batch_size)
    return 2 * per_dataset - 1


def _print(
    rows: list[tuple[str, str, int, float, float, int, int]], startup: dict[int, float]
) -> None:
    pool = {(r[0], r[2]): r[3] for r in rows if r[1] == "process pool"}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# Audit throughput: Dask against the local engines\n")
    print(
        f"`python bench/distributed.py` on {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, dask.distributed {distributed.__version__}, "
        f"{REPEATS} repeats (median), 1-minute load average {load:.1f} at the end "
        "(other jobs share this machine, so absolute times are noisy).\n"
    )
    print(
        "| workload | engine | worker processes | samples drawn | tasks | wall time (s) "
        "| samples/s | time / process pool | overhead per task (ms) | certified epsilon_lower |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, engine, k, seconds, bound, drawn, tasks in rows:
        ratio = overhead = ""
        if engine == "dask":
            ratio = f"{seconds / pool[(name, k)]:.2f}"
            overhead = f"{1000 * (seconds - pool[(name, k)]) / tasks:.0f}"
        print(
            f"| {name} | {engine} | {k} | {drawn:,} | {tasks} | {seconds:.2f} "
            f"| {drawn / seconds:,.0f} | {ratio} | {overhead} | {bound:.6f} |"
        )
    print()
    method = dask.config.get("distributed.worker.multiprocessing-method")
    print(
        "Dask cluster start-up (not in the times above; an existing cluster is the use case): "
        + ", ".join(f"{k} worker(s) {s:.1f} s" for k, s in sorted(startup.items()))
        + f" (worker processes started with the `{method}` method)."
    )
    print()
    print(
        "Every engine certified the same bound for each workload (checked by the script): the "
        "seed of a batch depends on its position only, never on the engine or the worker."
    )


if __name__ == "__main__":
    sys.exit(main())
