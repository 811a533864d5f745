"""Benchmark: dpaudit's accountant against dp_accounting and prv_accountant.

The cases of issue 3 and the homogeneous workloads of issue 34 (part 5).

Run ``python bench/accountants.py > bench/accountants.md``; prints one Markdown table with our
certified [lower, upper] epsilon and time beside each peer's epsilon and time.  Times are CPU
seconds of this process (``time.process_time``; every accountant here computes in one thread,
and on a shared machine wall-clock time measures the neighbours), for dpaudit and dp_accounting
the best of ``REPEATS`` runs each, interleaved (dpaudit's PLD memo is cleared before each run, so
nothing is reused), the first run's beside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sympy

from dpaudit import events as ev
from dpaudit.accountant import account

R = sympy.Rational

#: Runs per case for the timing (best of them is reported, and the first).
REPEATS = 3

CASES: list[tuple[str, Callable[[], ev.Event], str, float]] = [
    ("100 x Laplace eps0=0.1", lambda: ev.SelfComposed(ev.Laplace(10), 100), "1e-6", 4.6927),
    ("50 x generic (0.5,0)-DP", lambda: ev.SelfComposed(ev.PureDP(R(1, 2)), 50), "1e-5", 18.9333),
    (
        "100 x binary RR eps0=1",
        lambda: ev.SelfComposed(ev.RandomizedResponse(1), 100),
        "1e-6",
        83.5307,
    ),
    (
        "DP-SGD sigma 1.1 q=256/60000 x14062",
        lambda: ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(R(11, 10)), R(256, 60000)), 14062),
        "1e-5",
        2.3816,
    ),
    (
        "DP-SGD sigma 0.8 q=0.01 x10000",
        lambda: ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(R(4, 5)), R(1, 100)), 10000),
        "1e-6",
        11.1832,
    ),
    (
        "100 x exponential mechanism eps0=0.1",
        lambda: ev.SelfComposed(ev.Exponential(R(1, 10)), 100),
        "1e-6",
        2.42,
    ),
    # the homogeneous workloads of issue 34, part 5 (dpaudit was slower than dp_accounting)
    ("one Gaussian sigma=50", lambda: ev.Gaussian(50), "1e-5", 0.05863),
    (
        "100 x Laplace eps0=0.1 at delta 1e-10",
        lambda: ev.SelfComposed(ev.Laplace(10), 100),
        "1e-10",
        6.1796,
    ),
    (
        "DP-SGD sigma 1 q=0.001 x1,000,000",
        lambda: ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(1), R(1, 1000)), 10**6),
        "1e-5",
        6.0296,
    ),
]


def _ours(build: Callable[[], ev.Event], delta: str) -> tuple[object, float]:
    from dpaudit.accountant import currencies

    currencies._PLD_MEMO.clear()  # a cold accountant for every timed run
    start = time.process_time()
    g = account(build(), delta=R(delta))
    return g, time.process_time() - start


def _dp_accounting(index: int) -> tuple[float | None, float]:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    events = [
        (dp_accounting.LaplaceDpEvent(10.0), 100, 1e-6),
        (None, 50, 1e-5),  # dp_accounting 0.6 has no generic (eps, delta) event
        (
            dp_accounting.RandomizedResponseDpEvent(
                noise_parameter=2 / (1 + 2.718281828459045), num_buckets=2
            ),
            100,
            1e-6,
        ),
        (
            dp_accounting.PoissonSampledDpEvent(256 / 60000, dp_accounting.GaussianDpEvent(1.1)),
            14062,
            1e-5,
        ),
        (
            dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(0.8)),
            10000,
            1e-6,
        ),
        (None, 100, 1e-6),  # no exponential-mechanism event
        (dp_accounting.GaussianDpEvent(50.0), 1, 1e-5),
        (dp_accounting.LaplaceDpEvent(10.0), 100, 1e-10),
        (
            dp_accounting.PoissonSampledDpEvent(0.001, dp_accounting.GaussianDpEvent(1.0)),
            10**6,
            1e-5,
        ),
    ]
    event, count, delta = events[index]
    if event is None:
        return None, 0.0
    # dp_accounting accepts randomized response only under replace-one
    relation = (
        dp_accounting.NeighboringRelation.REPLACE_ONE
        if index == 2
        else dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    start = time.process_time()
    try:
        acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=relation)
        acc.compose(event, count)
        return acc.get_epsilon(delta), time.process_time() - start
    except Exception:  # a peer failing is a result to report
        return None, time.process_time() - start


def _prv(index: int) -> tuple[tuple[float, float, float] | None, float]:
    if index not in (3, 4):
        return None, 0.0
    from prv_accountant import Accountant

    sigma, q, steps, delta = [(1.1, 256 / 60000, 14062, 1e-5), (0.8, 0.01, 10000, 1e-6)][index - 3]
    start = time.process_time()
    acc = Accountant(
        noise_multiplier=sigma,
        sampling_probability=q,
        delta=delta,
        eps_error=0.01,
        max_compositions=steps,
    )
    result = acc.compute_epsilon(num_compositions=steps)
    return result, time.process_time() - start


def main() -> None:
    print(
        "| case | tight value | dpaudit [lower, upper] | dpaudit s (best; first) "
        "| dp_accounting PLD | s (best; first) | prv_accountant (lo, est, hi) | s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for i, (name, build, delta, tight) in enumerate(CASES):
        ours_t: list[float] = []
        peer_t: list[float] = []
        for _ in range(REPEATS):
            g, t = _ours(build, delta)
            ours_t.append(t)
            peer, t = _dp_accounting(i)
            peer_t.append(t)
        lower = g.epsilon_lower_float
        lo_text = f"{lower:.5f}" if lower is not None else "-"
        prv, prv_t = _prv(i)
        peer_text = f"{peer:.5f}" if peer is not None else "n/a"
        peer_time = f"{min(peer_t):.3f}; {peer_t[0]:.3f}" if peer is not None else "-"
        prv_text = ", ".join(f"{x:.4f}" for x in prv) if prv else "-"
        prv_time = f"{prv_t:.1f}" if prv else "-"
        print(
            f"| {name}, delta={delta} | {tight} | [{lo_text}, {g.epsilon_upper:.5f}] | "
            f"{min(ours_t):.3f}; {ours_t[0]:.3f} | {peer_text} | {peer_time} | {prv_text} | "
            f"{prv_time} |"
        )


if __name__ == "__main__":
    main()
