"""Fixtures shared by the layers' tests: running code in many threads at once."""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
from collections.abc import Callable, Generator, Iterator

import pytest
from hypothesis import settings

# Hypothesis in CI is derandomized: the examples a property test tries are the same on every
# machine and every run, so a run cannot meet a slow or failing example that the previous run
# did not (CI is a gate, not an exploration), and a slow machine is no reason to fail (no
# deadline).  ``HYPOTHESIS_PROFILE=explore`` draws fresh random examples, for looking for bugs
# locally; a failure found that way is added to the test with ``@example``.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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


#: Seconds past a test's pytest-timeout limit after which the process running it is ended.
#: pytest-timeout interrupts Python code; a call that holds the interpreter lock (a C routine
#: on huge numbers, say) cannot be interrupted that way, and once hung a whole CI run.
#: faulthandler's watchdog is a C thread that needs no lock: it prints every thread's stack
#: and exits the worker, which pytest-xdist reports as this test's failure and replaces.
HARD_KILL_GRACE = 120


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT))


def _timeout_of(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    if marker is not None and "timeout" in marker.kwargs:
        return float(marker.kwargs["timeout"])
    return float(item.config.getini("timeout") or 300)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    limit = _timeout_of(item)
    if limit > 0:  # 0: the test asked for no time limit
        faulthandler.dump_traceback_later(limit + HARD_KILL_GRACE, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


#: Seconds a test process may take to exit once its tests are done.  A pool, cluster or
#: thread a test left behind can keep a pytest-xdist worker from exiting, which would hang
#: the whole run with every test passed; past this, the process prints its stacks and exits.
EXIT_GRACE = 300


def _arm_exit_watchdog() -> None:
    faulthandler.dump_traceback_later(EXIT_GRACE, exit=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        # A pytest-xdist worker whose share is done idles, by design, until the controller
        # closes it when the *last* worker is done (a long test elsewhere can take many
        # minutes): a watchdog armed here fired on a healthy idle worker and printed a
        # misleading 'Timeout' stack dump into a green CI log.  What can hang is the
        # interpreter's exit, which joins the threads a test left behind: arm the watchdog
        # there, at the start of that join (concurrent.futures registers its own exit hook the
        # same way; the hook runs before any non-daemon thread is joined).
        threading._register_atexit(_arm_exit_watchdog)  # type: ignore[attr-defined]
    else:
        _arm_exit_watchdog()
