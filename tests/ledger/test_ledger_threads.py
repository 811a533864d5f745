"""Ledgers under threads: a shared ledger conserves every count, the stack of active ledgers
is per thread, and nested ledgers guarded in opposite orders do not deadlock."""

from __future__ import annotations

import threading

import pytest

from dpaudit.events import Laplace
from dpaudit.filters import BudgetExceededError, PrivacyFilter
from dpaudit.ledger import Ledger, record

THREADS = 16
ROUNDS = 20


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_a_ledger_entered_by_many_threads_conserves_every_count(run_threads) -> None:
    """16 threads enter one shared ledger and record 30 runs each, with counts 1..3, 20
    rounds: every entry arrives once and the counts add up."""
    for _ in range(ROUNDS):
        ledger = Ledger()

        def work(i: int, ledger: Ledger = ledger) -> None:
            with ledger:
                for j in range(30):
                    record(Laplace(10), 1 + (i + j) % 3, label=f"t{i}")

        run_threads(THREADS, work)
        assert len(ledger) == THREADS * 30
        assert sum(e.count for e in ledger.entries) == sum(
            1 + (i + j) % 3 for i in range(THREADS) for j in range(30)
        )
        for i in range(THREADS):
            assert sum(1 for e in ledger.entries if e.label == f"t{i}") == 30


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_a_guarded_ledger_shared_by_threads_records_exactly_what_its_filter_admitted(
    run_threads,
) -> None:
    """16 threads add to one ledger guarded by a filter of budget 1 until refused: the
    ledger's entries are exactly the filter's steps (count conservation), within budget."""
    for _ in range(ROUNDS):
        f = PrivacyFilter(1)
        ledger = Ledger(guard=f)

        def work(i: int, ledger: Ledger = ledger) -> None:
            while True:
                try:
                    ledger.add(Laplace(40), 1 + i % 2)
                except BudgetExceededError:
                    return

        run_threads(THREADS, work)
        assert sum(e.count for e in ledger.entries) <= 40
        assert len(f.spent_epsilons) == len(ledger)
        assert ledger.guarantee().epsilon_upper <= 1.0


def test_a_ledger_in_one_thread_does_not_capture_another_threads_runs() -> None:
    """Each thread has its own stack of active ledgers: the main thread's ``with Ledger()``
    sees only its own runs, a worker's ledger only the worker's, also for a thread started
    inside the main thread's block."""
    worker_ledgers: list[Ledger] = []
    started = threading.Event()
    go_on = threading.Event()

    def worker() -> None:
        record(Laplace(3))  # no ledger active in this thread: recorded nowhere
        with Ledger() as mine:
            started.set()
            go_on.wait(10)
            for _ in range(5):
                record(Laplace(2))
        worker_ledgers.append(mine)

    with Ledger() as main:
        t = threading.Thread(target=worker)
        t.start()
        started.wait(10)
        record(Laplace(1), 3)
        go_on.set()
        t.join(10)
    assert [(e.event, e.count) for e in main.entries] == [(Laplace(1), 3)]
    assert [(e.event, e.count) for e in worker_ledgers[0].entries] == [(Laplace(2), 1)] * 5


def test_ledgers_must_be_left_in_reverse_order() -> None:
    a, b = Ledger(), Ledger()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    record(Laplace(1))
    assert len(a) == len(b) == 0


def test_a_ledger_entered_twice_records_each_run_once() -> None:
    f = PrivacyFilter(1)
    with Ledger(guard=f) as ledger, ledger:
        record(Laplace(4))
    assert len(ledger) == 1 and len(f.spent_epsilons) == 1


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_ledgers_nested_in_opposite_orders_in_two_threads_do_not_deadlock(run_threads) -> None:
    """Thread A records inside L1(f1) then L2(f2), thread B inside L2 then L1: the locks are
    taken in one global order, so both finish, and both filters count every run."""
    f1, f2 = PrivacyFilter(100), PrivacyFilter(100)
    l1, l2 = Ledger(guard=f1), Ledger(guard=f2)

    def work(i: int) -> None:
        outer, inner = (l1, l2) if i % 2 else (l2, l1)
        with outer, inner:
            for _ in range(40):
                record(Laplace(100))

    run_threads(8, work)
    assert len(l1) == len(l2) == len(f1.spent_epsilons) == len(f2.spent_epsilons) == 320
