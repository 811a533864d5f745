"""Benchmark: streamed audits, throughput and peak memory by sample size and worker count.

    python bench/streaming.py > bench/streaming.md           # 10^6 .. 10^8, Dask at 10^7
    python bench/streaming.py --profile >> bench/streaming.md  # CPU per sample, by step
    python bench/streaming.py --big >> bench/streaming.md    # 10^9 per dataset, 2 workers
    python bench/streaming.py --cells 1d:1e7,10d:1e7 --repeat 3  # some cells, 1 and 2
                                                             # workers interleaved, 3 times
    python bench/streaming.py --ceiling --cells 1d:1e7 --repeat 7  # what two busy cores
                                                             # allow two workers
    python bench/streaming.py --help

Every cell runs in a fresh Python process (``--run``), so its peak memory is its own. Memory
is measured two ways, both over *all* processes of the audit (the parent and its workers):

* ``peak tree PSS`` (and RSS): the largest sum of proportional (and resident) set sizes over
  the process tree, sampled every 50 ms with psutil by this script. PSS is what the machine
  has to provide: forked workers share the parent's pages, which RSS counts in every process
  and PSS once;
* ``maxrss self + children``: ``resource.getrusage`` of the run itself (``RUSAGE_SELF``) plus
  the largest of its workers (``RUSAGE_CHILDREN`` reports the largest child, not the sum).

Throughput counts every sample drawn (selection and certification, both datasets) per second
of wall time, and per core used (the worker count; the parent works while the workers do, on
its pilot search). Workloads: the catalogue's ``LaplaceCount`` (epsilon 1, a vectorised
one-dimensional mechanism offering ``batch``) and a 10-dimensional Laplace vector (every
coordinate one count plus Laplace noise, searched with every family). All audits use seed 1,
confidence 0.95 and the default settings (25% of the samples select the event).

The machine is shared: the 1-minute load average before each cell is printed with it, and the
ratios (workers 2 / workers 1) mean more than the absolute times. ``--repeat`` runs each
chosen cell's one-worker and two-worker audits in turn, that many times, and reports the
median of the ratios of neighbouring runs (the load changes less between neighbours).

``--ceiling`` measures what the machine allows two workers, whatever the auditor does: per
round, a one-worker audit alone, then two one-worker audits of the same cell at once (two
fresh processes, no pool), then the two-worker audit. Two audits at once each take longer than
one alone (the cores share caches, memory bandwidth and the package's clock), by the
*slowdown*; two workers with no overhead at all could then be at most ``2 / slowdown`` times
faster than one: the *ceiling* the two-worker ratio is measured against.

The memory monitor is not free: psutil's PSS read (``/proc/PID/smaps_rollup`` of each
process) costs about 3.5 ms of CPU per sample, about 7% of a core at one sample per 50 ms,
which a two-worker audit on two cores loses (both cores busy) and a one-worker audit does
not (the monitor takes the idle core). So with ``--repeat``, only the first round watches
memory; the later rounds run unwatched (memory columns "-") and the ratio table uses them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

# bench/ holds distributed.py, which would shadow the ``distributed`` package when this
# script runs (its directory comes first on sys.path): take that directory off the path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import numpy as np  # noqa: E402

#: Worker counts and the seed of every audit.
WORKERS = (1, 2)
SEED = 1
#: Samples per dataset of the cells (one-dimensional; ten-dimensional).
SIZES_1D = (10**6, 10**7, 10**8)
SIZES_10D = (10**6, 10**7)
BIG = 10**9
#: Psutil sampling period of the memory monitor (seconds).
PERIOD = 0.05
#: Sampling period of the workers' CPU times, in the audit's own process (seconds; at 0.02
#: the sampling thread took 0.7 s of the parent's CPU in a 45 s audit on a loaded machine).
CLOCK_PERIOD = 0.1


class LaplaceVector:
    """Ten counts, each plus Laplace(1) noise; d0 and d1 differ by one in the first count."""

    name = "laplace vector (10 coordinates), batch"
    width = 10

    def __call__(self, d: float, rng: np.random.Generator) -> np.ndarray:
        return self.batch(d, 1, rng)[0]

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        out = rng.laplace(0.0, 1.0, (n, self.width))
        out[:, 0] += d
        return out


def _run(samples: int, workers: int, width: int, dask_workers: int) -> dict[str, Any]:
    """One audit in this process; returns its figures."""
    from dpaudit.audit import audit
    from mechanisms.catalogue import LaplaceCount

    kwargs: dict[str, Any] = dict(samples=samples, seed=SEED, progress=False)
    if width == 1:
        mechanism: Any = LaplaceCount(1.0)
        kwargs.update(pairs=mechanism.pairs, epsilon=1.0)
    else:
        mechanism = LaplaceVector()
        kwargs.update(d0=0.0, d1=1.0, epsilon=1.0)
    cluster = client = None
    if dask_workers:
        import dask
        import distributed

        dask.config.set({"distributed.worker.multiprocessing-method": "fork"})

        cluster = distributed.LocalCluster(
            n_workers=dask_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address="127.0.0.1:0",
        )
        client = distributed.Client(cluster, set_as_default=False)
        client.wait_for_workers(dask_workers)
        kwargs["executor"] = client
    else:
        kwargs["workers"] = workers
    before = resource.getrusage(resource.RUSAGE_SELF)
    watcher = _WorkerClock()
    if workers > 1 and not dask_workers:
        watcher.start()
    start = time.perf_counter()
    result = audit(mechanism, **kwargs)
    wall = time.perf_counter() - start
    watcher.stop.set()
    if watcher.is_alive():
        watcher.join()
    if client is not None:
        client.close()
        cluster.close()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return dict(
        wall=wall,
        drawn=result.samples_drawn,
        epsilon_lower=result.epsilon_lower,
        event=result.event,
        maxrss=(me.ru_maxrss + kids.ru_maxrss) * 1024,
        parent_cpu=me.ru_utime + me.ru_stime - before.ru_utime - before.ru_stime,
        children_cpu=kids.ru_utime + kids.ru_stime,
        busiest_cpu=watcher.busiest(kids.ru_utime + kids.ru_stime),
    )


class _WorkerClock(threading.Thread):
    """Samples the CPU time of each worker process of this one every :data:`CLOCK_PERIOD`
    (``multiprocessing.active_children()`` and ``/proc/PID/stat``), for the busiest worker's
    CPU time (approximate: what the workers use after the last sample is shared evenly)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.seen: dict[int, float] = {}
        self.tick = os.sysconf("SC_CLK_TCK")

    def run(self) -> None:
        import multiprocessing

        while not self.stop.wait(CLOCK_PERIOD):
            for child in multiprocessing.active_children():
                try:
                    with open(f"/proc/{child.pid}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                # utime and stime: fields 14 and 15 of proc(5), 12 and 13 after the name
                self.seen[child.pid] = (int(fields[11]) + int(fields[12])) / self.tick

    def busiest(self, total: float) -> float:
        """The busiest worker's CPU time: the largest sampled, plus an equal share of what
        the workers used after their last sample (``total`` is all children's CPU time)."""
        if not self.seen:
            return total
        unseen = max(0.0, total - sum(self.seen.values()))
        return max(self.seen.values()) + unseen / len(self.seen)


def _tree_memory(proc: Any) -> tuple[int, int]:
    """Sums of RSS and of PSS over the process tree (PSS shares the pages forked workers
    share with the parent among them, so the sum counts each page once)."""
    import psutil

    rss = pss = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            info = p.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss, pss


def _start(samples: int, workers: int, width: int, dask_workers: int = 0) -> subprocess.Popen:
    """Start one cell in a fresh process (its figures come on its standard output)."""
    cmd = [sys.executable, __file__, "--run", str(samples), str(workers), str(width)]
    cmd.append(str(dask_workers))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def _figures(child: subprocess.Popen) -> dict[str, Any]:
    """The figures a cell started by :func:`_start` prints, once it has ended."""
    out, _ = child.communicate()
    if child.returncode:
        raise SystemExit(f"cell {child.args} failed with exit code {child.returncode}")
    return json.loads(out.strip().splitlines()[-1])


def _measure(
    samples: int, workers: int, width: int, dask_workers: int = 0, watch: bool = True
) -> dict[str, Any]:
    """Run one cell in a fresh process and, with ``watch``, watch its process tree's memory
    (peaks None without)."""
    import psutil

    load = os.getloadavg()[0]
    child = _start(samples, workers, width, dask_workers)
    proc = psutil.Process(child.pid)
    peak: int | None = 0 if watch else None
    peak_pss: int | None = 0 if watch else None
    while watch and child.poll() is None:
        try:
            rss, pss = _tree_memory(proc)
        except psutil.Error:
            rss = pss = 0
        peak, peak_pss = max(peak or 0, rss), max(peak_pss or 0, pss)
        time.sleep(PERIOD)
    data = _figures(child)
    data.update(
        peak_tree=peak, peak_pss=peak_pss, load=load, samples=samples, workers=workers, width=width
    )
    data.update(dask=dask_workers)
    return data


def _mb(n: float | None) -> str:
    return "-" if n is None else f"{n / 2**20:,.0f} MB"


def _table(cells: list[dict[str, Any]]) -> None:
    print(
        "| output | samples per dataset | engine | workers | load before | wall (s) "
        "| samples drawn | samples/s | samples/s/core | peak tree PSS | peak tree RSS "
        "| maxrss self+children "
        "| parent CPU (s) | workers CPU (s) | busiest worker CPU (s) | epsilon_lower |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in cells:
        cores = c["dask"] or c["workers"]
        rate = c["drawn"] / c["wall"]
        engine = "Dask LocalCluster" if c["dask"] else ("in-process" if cores == 1 else "pool")
        print(
            f"| {c['width']}-d | {c['samples']:.0e} | {engine} | {cores} | {c['load']:.1f} "
            f"| {c['wall']:.2f} | {c['drawn']:,} | {rate:,.0f} | {rate / cores:,.0f} "
            f"| {_mb(c['peak_pss'])} | {_mb(c['peak_tree'])} | {_mb(c['maxrss'])} "
            f"| {c['parent_cpu']:.2f} | {c['children_cpu']:.2f} "
            f"| {c.get('busiest_cpu', 0.0):.2f} | {c['epsilon_lower']:.6f} |"
        )


def profile(batches: int = 50) -> None:
    """Where a streamed one-dimensional audit's time goes, per sample, in one process: the
    mechanism's draws, each selection sketch's tally, and certification's count."""
    from dpaudit.audit.batches import EventCounts
    from dpaudit.audit.estimators import predicted_bounds
    from dpaudit.audit.outputs import OutputSchema
    from dpaudit.audit.streaming import propose_sketches
    from mechanisms.catalogue import LaplaceCount

    mechanism = LaplaceCount(1.0)
    d0, d1 = mechanism.pairs[0].d0, mechanism.pairs[0].d1
    rng = np.random.default_rng(SEED)
    pilot = mechanism.batch(d0, 250_000, rng), mechanism.batch(d1, 250_000, rng)

    def scorer(num: np.ndarray, den: np.ndarray, n: int) -> np.ndarray:
        return predicted_bounds(num, den, n, 10**7, 0.0125, 0.0)

    sketches = propose_sketches(*pilot, OutputSchema("scalar"), scorer, rng=rng)
    events = EventCounts(
        tuple(
            c.event
            for c in sketches[0].candidates(
                sketches[0].tally(pilot[0]), sketches[0].tally(pilot[1]), 250_000, scorer
            )
        )
    )
    size = 100_000
    costs: dict[str, float] = {"draw (mechanism.batch)": 0.0}
    for _ in range(batches):
        start = time.process_time()
        x = mechanism.batch(d0, size, rng)
        costs["draw (mechanism.batch)"] += time.process_time() - start
        for sketch in sketches:
            name = f"selection tally: {sketch.family} on {sketch.feature.describe()[:40]}"
            start = time.process_time()
            sketch.tally(x)
            costs[name] = costs.get(name, 0.0) + time.process_time() - start
        start = time.process_time()
        events.tally(x)
        costs["certification count (2 events)"] = (
            costs.get("certification count (2 events)", 0.0) + time.process_time() - start
        )
    print("\n## Where the time goes (`python bench/streaming.py --profile`)\n")
    print(
        f"CPU time per sample, {batches} batches of {size:,} in one process, load "
        f"{os.getloadavg()[0]:.1f}:\n"
    )
    print("| step | ns per sample |\n|---|---:|")
    for name, seconds in costs.items():
        print(f"| {name} | {1e9 * seconds / (batches * size):.1f} |")


def big() -> None:
    """The 10^9-sample cell alone (two workers), as a section to append to the report."""
    cell = _measure(BIG, 2, 1)
    print("\n## 10^9 samples per dataset (`python bench/streaming.py --big`)\n")
    _table([cell])
    print(
        f"\nTarget: 10^9 samples per dataset in at most 300 s with at most 2 GB across all "
        f"processes; measured {cell['wall']:.0f} s and {_mb(cell['peak_pss'])} (PSS), "
        f"{_mb(cell['peak_tree'])} (RSS), with the 1-minute load average at "
        f"{cell['load']:.1f} when it started."
    )


def _cell(text: str) -> tuple[int, int]:
    """``"1d:1e7"`` -> (width 1, 10^7 samples per dataset)."""
    try:
        width, samples = text.split(":")
        return int(width.removesuffix("d")), int(float(samples))
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"a cell is WIDTHd:SAMPLES such as 1d:1e7, got {text!r}"
        ) from err


def _ratios(cells: list[dict[str, Any]], plan: list[tuple[int, int]]) -> None:
    """The workers 2 / workers 1 table: per cell, the median over repeats of the ratio of
    neighbouring runs' wall times, their range, and the CPU-bound ratio (median)."""
    print("\n## Workers 2 / workers 1\n")
    unwatched = [c for c in cells if c.get("round", 0) > 0]
    if unwatched:
        print(
            "Rounds 2 and later only (no memory monitor: see the script's docstring); the "
            "CPU-bound ratio is one worker's CPU time over the two-worker run's parent CPU "
            "plus half its workers' CPU, the busiest-worker ratio over its parent CPU plus "
            "its busiest worker's CPU.\n"
        )
        cells = unwatched
    print(
        "| output | samples per dataset | runs | load (min-max) | wall 1 / wall 2 (median) "
        "| range | CPU-bound ratio (median) | busiest-worker ratio (median) |"
    )
    print("|---|---:|---:|---|---:|---|---:|---:|")
    for width, n in plan:
        mine = [c for c in cells if (c["samples"], c["width"], c["dask"]) == (n, width, 0)]
        ones = [c for c in mine if c["workers"] == 1]
        twos = [c for c in mine if c["workers"] == 2]
        walls = [a["wall"] / b["wall"] for a, b in zip(ones, twos, strict=True)]
        cpus = [_cpu_ratio(a, b) for a, b in zip(ones, twos, strict=True)]
        busiest = [_busiest_ratio(a, b) for a, b in zip(ones, twos, strict=True)]
        loads = [c["load"] for c in mine]
        print(
            f"| {width}-d | {n:.0e} | {len(walls)} | {min(loads):.1f}-{max(loads):.1f} "
            f"| {statistics.median(walls):.2f} | {min(walls):.2f}-{max(walls):.2f} "
            f"| {statistics.median(cpus):.2f} | {statistics.median(busiest):.2f} |"
        )


def main(plan: list[tuple[int, int]], repeat: int, dask: bool) -> None:
    """Measure the cells of ``plan`` ((width, samples) pairs; one and two workers each,
    interleaved, ``repeat`` times) and print the Markdown report."""
    cells = []
    for round_ in range(repeat):
        for width, samples in plan:
            for workers in WORKERS:
                cell = _measure(samples, workers, width, watch=round_ == 0)
                cells.append(dict(cell, round=round_))
                print(
                    f"done {samples:.0e} {width}-d workers={workers} (round {round_ + 1})",
                    file=sys.stderr,
                )
    if dask:
        cells.append(_measure(10**7, 2, 1, dask_workers=2))
    print("# Streamed audits: throughput and memory\n")
    print(
        f"`python bench/streaming.py` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Each cell is a fresh "
        "process; see the script's docstring for what is measured. The machine was shared "
        "with other jobs (load averages below): absolute times are upper bounds.\n"
    )
    _table(cells)
    _ratios(cells, plan)
    same = {c["epsilon_lower"] for c in cells if c["samples"] == 10**7 and c["width"] == 1}
    if same:
        print(
            "\nAt 10^7 one-dimensional samples, "
            + ("in-process, the pool and Dask" if dask else "in-process and the pool")
            + " certified "
            + ("the same bound" if len(same) == 1 else f"DIFFERENT bounds {sorted(same)}")
            + " (the result depends on the seed and batch size only)."
        )


def ceiling(plan: list[tuple[int, int]], repeat: int) -> None:
    """Per cell of ``plan`` and round: one one-worker audit alone, two at once, and the
    two-worker audit (fresh processes, no memory monitor); print the slowdown of two audits
    at once, the ceiling ``2 / slowdown`` and the two-worker ratio beside it."""
    print("# What two busy cores allow two workers\n")
    print(
        f"`python bench/streaming.py --ceiling` on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}; {repeat} rounds per cell, each: a "
        "one-worker audit alone, two one-worker audits at once, the two-worker audit. "
        "Slowdown: the mean wall time of the two audits at once over the lone audit's, per "
        "round; ceiling: 2 / slowdown; ratio: the lone one-worker audit's wall time over the "
        "two-worker audit's (medians over the rounds, ranges beside them).\n"
    )
    print(
        "| output | samples per dataset | rounds | load (min-max) | one alone (s, median) "
        "| two at once (s, median) | slowdown | ceiling | two workers (s, median) | ratio "
        "| ratio / ceiling |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for width, n in plan:
        alone, together, pooled, loads = [], [], [], []
        for round_ in range(repeat):
            loads.append(os.getloadavg()[0])
            alone.append(_figures(_start(n, 1, width))["wall"])
            pair = [_start(n, 1, width), _start(n, 1, width)]
            together.append(statistics.mean(_figures(c)["wall"] for c in pair))
            pooled.append(_figures(_start(n, 2, width))["wall"])
            print(f"done {n:.0e} {width}-d round {round_ + 1}", file=sys.stderr)
        slow = [b / a for a, b in zip(alone, together, strict=True)]
        ratio = [a / b for a, b in zip(alone, pooled, strict=True)]
        top = [2 / s for s in slow]
        share = [r / c for r, c in zip(ratio, top, strict=True)]

        def spread(xs: list[float]) -> str:
            return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"

        print(
            f"| {width}-d | {n:.0e} | {repeat} | {min(loads):.1f}-{max(loads):.1f} "
            f"| {statistics.median(alone):.2f} | {statistics.median(together):.2f} "
            f"| {spread(slow)} | {spread(top)} | {statistics.median(pooled):.2f} "
            f"| {spread(ratio)} | {spread(share)} |"
        )


def _cpu_ratio(one: dict[str, Any], two: dict[str, Any]) -> float:
    """The speed-up a quiet machine would give if the workers shared the work evenly: one
    worker's CPU time over the two-worker run's parent CPU plus half its workers' CPU."""
    single = one["parent_cpu"] + one["children_cpu"]
    return single / (two["parent_cpu"] + two["children_cpu"] / 2)


def _busiest_ratio(one: dict[str, Any], two: dict[str, Any]) -> float:
    """The same over the parent's CPU plus the busiest worker's: what the uneven share of
    the work costs (still not the idle time at phase boundaries)."""
    single = one["parent_cpu"] + one["children_cpu"]
    return single / (two["parent_cpu"] + two.get("busiest_cpu", two["children_cpu"] / 2))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Streamed audits: throughput, memory and the speed-up of two workers.",
        epilog="Without options: every cell (1-d at 1e6, 1e7, 1e8; 10-d at 1e6, 1e7), one "
        "and two workers, once, and Dask at 1-d 1e7.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--profile", action="store_true", help="CPU per sample, by step")
    mode.add_argument("--big", action="store_true", help="10^9 per dataset, two workers")
    mode.add_argument(
        "--ceiling",
        action="store_true",
        help="the speed-up two busy cores allow: one-worker audits alone and two at once, "
        "beside the two-worker audit (--cells, default 1d:1e7; --repeat rounds)",
    )
    parser.add_argument(
        "--cells",
        type=lambda text: [_cell(c) for c in text.split(",")],
        help="comma-separated cells WIDTHd:SAMPLES, e.g. 1d:1e7,10d:1e7 (no Dask cell "
        "unless --dask)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of one- and two-worker runs (default 1)"
    )
    parser.add_argument("--dask", action="store_true", help="add the Dask cell (1-d, 1e7)")
    return parser.parse_args()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        n, w, d, k = (int(a) for a in sys.argv[2:6])
        print(json.dumps(_run(n, w, d, k)))
    else:
        args = _arguments()
        if args.big:
            big()
        elif args.ceiling:
            ceiling(args.cells or [(1, 10**7)], max(args.repeat, 1))
        elif args.profile:
            profile()
        else:
            everything = [(1, n) for n in SIZES_1D] + [(10, n) for n in SIZES_10D]
            main(args.cells or everything, args.repeat, args.dask or not args.cells)
