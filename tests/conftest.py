"""Fixtures shared by the layers' tests: running code in many threads at once."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import pytest


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Make the interpreter switch threads every microsecond while the test runs (default
    5 ms), so an unlocked read-modify-write is interrupted within a few steps."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _run_threads(threads: int, work: Callable[[int], object]) -> None:
    """Run ``work(i)`` in ``threads`` threads released together by a barrier; fail on a hung
    thread or on any exception a thread raised (a thread must not fail silently)."""
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def target(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    pool = [threading.Thread(target=target, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=60)
        assert not t.is_alive(), "a thread hung (deadlock?)"
    assert not errors, errors


@pytest.fixture
def run_threads() -> Callable[[int, Callable[[int], object]], None]:
    """:func:`_run_threads`: ``run_threads(n, work)``."""
    return _run_threads


#: Time limit of a slow (statistical, end-to-end) test without its own ``timeout`` mark; the
#: default tests have pyproject's ``timeout`` (300 s).  A hang fails one test, not all of CI.
SLOW_TEST_TIMEOUT = 1800


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT))
