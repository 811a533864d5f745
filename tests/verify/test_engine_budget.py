"""Verdicts are decided by deterministic budgets (boxes, work units), not by CPU time: the same
claim gives the same verdict text twice, once with the machine loaded; the time limit is a
safety net that names itself when it fires."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from dpaudit.verify import Domain, get_claim, load_claim_modules
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.prove import verify_claim

#: A true inequality tight at two interior points (x = 1/2 +- tiny), where no coordinate is
#: monotone: branch-and-bound can only run out of budget on it.
TIGHT = "x*(1 - x) <= 1/4 + exp(x)/10**30"
UNIT = Domain.parse("0 <= x <= 1")


@contextmanager
def _loaded(processes: int = 3) -> Iterator[None]:
    """Busy-loop processes competing for the CPU while the block runs."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for p in busy:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_work_budget_decides_and_repeats_under_load() -> None:
    quiet = verify_inequality(TIGHT, UNIT, symbolic=False, max_boxes=10**6, max_work=300)
    with _loaded():
        busy = verify_inequality(TIGHT, UNIT, symbolic=False, max_boxes=10**6, max_work=300)
    assert quiet.status == "unknown"
    assert "work budget exhausted" in quiet.method
    assert quiet.summary() == busy.summary()
    assert quiet.boxes == busy.boxes


def test_box_budget_decides() -> None:
    v = verify_inequality(TIGHT, UNIT, symbolic=False, max_boxes=40)
    assert v.status == "unknown" and "box budget exhausted" in v.method, v.summary()
    assert v.boxes == 40


def test_time_safety_net_names_itself() -> None:
    v = verify_inequality(TIGHT, UNIT, symbolic=False, time_limit=1e-9)
    assert v.status == "unknown"
    assert "time safety net" in v.method and "may depend on the machine" in v.method


@pytest.mark.slow  # ~30-70 s of CPU: verifier runs repeated under load
def test_claim_verdict_identical_twice_one_run_under_load() -> None:
    load_claim_modules()
    claim = get_claim("003/corollary-1")
    budgets = {"max_boxes": 1200, "max_work": 4000, "time_limit": 300.0}
    first = verify_claim(claim, **budgets)
    with _loaded():
        second = verify_claim(claim, **budgets)
    assert first.status == "proved"
    assert first.detail == second.detail
    assert [s.summary() for _, s in first.steps] == [s.summary() for _, s in second.steps]
    # no seconds in the text a report embeds
    assert " s)" not in first.detail and "seconds" not in first.detail


@pytest.mark.slow  # ~30-70 s of CPU: verifier runs repeated under load
def test_unknown_claim_names_the_work_or_box_budget() -> None:
    # a claim cut short by a small budget says which deterministic budget ran out
    load_claim_modules()
    v = verify_claim(
        get_claim("003/lemma-5"), check_steps=False, max_boxes=1200, max_work=400, time_limit=300.0
    )
    assert v.status == "unknown", v.detail
    assert "work budget exhausted" in v.detail or "box budget exhausted" in v.detail
    again = verify_claim(
        get_claim("003/lemma-5"), check_steps=False, max_boxes=1200, max_work=400, time_limit=300.0
    )
    assert again.detail == v.detail
