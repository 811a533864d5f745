"""The accountant shared by threads: mpmath's process-global precision is never left changed
or mixed between threads, and the PLD memo survives concurrent use."""

from __future__ import annotations

import random

import mpmath
import pytest

from dpaudit.accountant import Accountant, currencies
from dpaudit.events import Gaussian, Laplace, SelfComposed


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_concurrent_guarantees_restore_mpmath_precision_and_agree_with_serial_ones(
    run_threads,
) -> None:
    """4 threads each ask for 4 guarantees whose theorems raise mpmath's precision (optimal
    composition, the analytic Gaussian): afterwards mp.prec and iv.prec are back at their
    defaults (without the lock, interleaved save/restore left them at 103 and 80), and each
    answer equals the serial one."""
    cases = [(SelfComposed(Laplace(1), 7 + k), "1e-6") for k in range(12)]
    cases += [(Gaussian(3 + k), "1e-5") for k in range(4)]
    prec, iv_prec = mpmath.mp.prec, mpmath.iv.prec
    results: dict[int, float] = {}

    def work(i: int) -> None:
        for k in range(i, len(cases), 4):
            event, delta = cases[k]
            results[k] = Accountant().guarantee(event, delta).epsilon_upper

    run_threads(4, work)
    assert (mpmath.mp.prec, mpmath.iv.prec) == (prec, iv_prec)
    for k, (event, delta) in enumerate(cases):
        assert results[k] == Accountant().guarantee(event, delta).epsilon_upper


@pytest.mark.slow  # about 4 s
@pytest.mark.usefixtures("fast_switching")
def test_the_pld_memo_survives_concurrent_lookups_and_evictions(run_threads) -> None:
    """16 threads x 40000 lookups of 52 keys in the 48-entry PLD memo (constant eviction):
    every lookup returns its own value, no KeyError from a key evicted between lookup and
    move-to-end (seen without the lock: a few per run)."""

    def work(i: int) -> None:
        rng = random.Random(i)
        for _ in range(40000):
            k = rng.randrange(52)
            assert currencies._memo(("thread-test", k), lambda k=k: ("pld", k)) == ("pld", k)

    try:
        run_threads(16, work)
    finally:
        with currencies._PLD_MEMO_LOCK:
            for key in [k for k in currencies._PLD_MEMO if k[0] == "thread-test"]:
                del currencies._PLD_MEMO[key]
    assert len(currencies._PLD_MEMO) <= currencies._PLD_MEMO_SIZE
