"""Benchmark: compositions of N *distinct* events (issue 19 part 1), dpaudit against Google's
dp_accounting PLD accountant (value discretisation 1e-4) in the same process.

The schedule is DP-SGD whose noise multiplier moves from 0.8 to 1.2 over N phases of 100 steps
each, with sampling rates cycling through 1%, 1.33% and 1.67%, a Gaussian release (sigma
20 + i, sensitivity 1) after phases 3, 8, 13, ... and a Laplace release (scale 10 + i) after
phases 5, 10, 15, ...: N + 2N/5 distinct parts.  Run
``python bench/heterogeneous.py [N ...] > bench/heterogeneous.md``; prints a Markdown table of
dpaudit's certified [lower, upper] epsilon at delta 1e-6 beside dp_accounting's estimate, with
both wall times (one run each, dpaudit's memo cleared) and their ratio.  The machine is shared:
compare the ratio, not the seconds.

dp_accounting runs in a child process stopped after ``PEER_CAP`` times dpaudit's time (at least
``PEER_MIN_SECONDS``): a row where it was stopped says so (``> t``), and the ratio is then an
upper bound on dpaudit's share.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import resource
import sys
import time
from typing import Any

import sympy

from dpaudit import events as ev
from dpaudit.accountant import account

DELTA = 1e-6
#: dp_accounting is stopped after this many times dpaudit's wall time ...
PEER_CAP = 3.0
#: ... but never before this many seconds.
PEER_MIN_SECONDS = 120.0


def schedule(n: int) -> list[tuple[str, float, float, int]]:
    """``(kind, parameter, rate, steps)`` of the N phases and the Gaussian and Laplace
    releases."""
    parts: list[tuple[str, float, float, int]] = []
    for i in range(n):
        sigma = 0.8 + 0.4 * i / max(1, n - 1)
        q = 0.01 * (1 + (i % 3) / 3)
        parts.append(("sgd", sigma, q, 100))
        if i % 5 == 2:
            parts.append(("gaussian", 20.0 + i, 1.0, 1))
        if i % 5 == 4:
            parts.append(("laplace", 10.0 + i, 1.0, 1))
    return parts


def dpaudit_run(n: int) -> tuple[float, float, float]:
    from dpaudit.accountant import currencies

    with currencies._PLD_MEMO_LOCK:
        currencies._PLD_MEMO.clear()
    events: list[ev.Event] = []
    for kind, param, q, steps in schedule(n):
        p = sympy.Rational(param) if kind == "sgd" else sympy.nsimplify(param)
        if kind == "sgd":
            events.append(
                ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(p), sympy.Rational(q)), steps)
            )
        elif kind == "gaussian":
            events.append(ev.Gaussian(p))
        else:
            events.append(ev.Laplace(p))
    start = time.perf_counter()
    g = account(ev.Composed(events), delta=sympy.Rational(1, 10**6))
    elapsed = time.perf_counter() - start
    upper = float(g.epsilon_upper)
    lower = g.epsilon_lower_float or 0.0
    return lower, upper, elapsed


def dp_accounting_run(n: int) -> tuple[float, float]:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    start = time.perf_counter()
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    events = []
    for kind, param, q, steps in schedule(n):
        if kind == "sgd":
            inner = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(param))
            events.append(dp_accounting.SelfComposedDpEvent(inner, steps))
        elif kind == "gaussian":
            events.append(dp_accounting.GaussianDpEvent(param))
        else:
            events.append(dp_accounting.LaplaceDpEvent(param))
    acc.compose(dp_accounting.ComposedDpEvent(events))
    eps = acc.get_epsilon(DELTA)
    return eps, time.perf_counter() - start


def _peer_child(n: int, out: Any) -> None:
    out.put(dp_accounting_run(n))


def capped_peer_run(n: int, cap: float) -> tuple[float | None, float]:
    """dp_accounting's ``(estimate, seconds)``, or ``(None, cap)`` when stopped at ``cap``."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=_peer_child, args=(n, out))
    child.start()
    deadline = time.perf_counter() + cap
    try:
        while True:  # wait for the result; give up at the cap or if the child died
            try:
                est, seconds = out.get(timeout=min(5.0, max(0.1, deadline - time.perf_counter())))
                break
            except queue.Empty:
                if time.perf_counter() >= deadline or not child.is_alive():
                    raise
    except queue.Empty:
        child.terminate()
        child.join()
        return None, cap
    child.join()
    return est, seconds


def main(sizes: list[int]) -> None:
    load = os.getloadavg()[0]
    print(f"Load average at start: {load:.2f} (2 cores). delta = {DELTA:g}.\n")
    print(
        "| distinct phases N (parts) | dpaudit [lower, upper] | dpaudit s | dpaudit peak RSS "
        "| dp_accounting (estimate) | dp_accounting s | time ratio dpaudit/dp_accounting "
        "| upper vs estimate |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        lo, hi, t_ours = dpaudit_run(n)
        # the process's peak so far (sizes run in increasing order; dp_accounting runs in a
        # child process and is not counted)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
        print(
            f"N = {n}: dpaudit [{lo:.5f}, {hi:.5f}] in {t_ours:.1f} s", file=sys.stderr, flush=True
        )
        est, t_peer = capped_peer_run(n, max(PEER_MIN_SECONDS, PEER_CAP * t_ours))
        parts = len(schedule(n))
        if est is None:
            peer, peer_s, ratio, gap = "stopped", f"> {t_peer:.0f}", f"< {t_ours / t_peer:.2f}", ""
        else:
            peer, peer_s = f"{est:.5f}", f"{t_peer:.1f}"
            ratio, gap = f"{t_ours / t_peer:.2f}", f"{100 * (hi / est - 1):+.3f}%"
        print(
            f"| {n} ({parts}) | [{lo:.5f}, {hi:.5f}] | {t_ours:.1f} | {rss:.2f} GiB | {peer} "
            f"| {peer_s} | "
            f"{ratio} | {gap} |",
            flush=True,
        )


if __name__ == "__main__":
    main(sorted(int(a) for a in sys.argv[1:]) or [10, 30, 100])
