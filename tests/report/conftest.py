"""Shared helpers of the report tests: small, fast targets."""

from __future__ import annotations

import pytest

from dpaudit.report import Target
from mechanisms.broken import BrokenLaplaceTooLittleNoise
from mechanisms.catalogue import LaplaceCount, RandomizedResponse

#: Samples of the quick audits in these tests (enough to separate 1 from 2 for Laplace).
QUICK = 20_000


def quick_target(
    mechanism: object, name: str, expect: str = "private", epsilon: float | None = None
) -> Target:
    """A target around a catalogue mechanism object, audited with few samples."""
    from mechanisms.catalogue_report_targets import _declared_plan

    pairs = tuple(mechanism.pairs)  # type: ignore[attr-defined]
    return Target(
        name=name,
        title=name,
        group="test",
        epsilon=float(epsilon if epsilon is not None else mechanism.epsilon),  # type: ignore[attr-defined]
        plan=_declared_plan(mechanism),
        mechanism=lambda: mechanism,
        pairs=lambda: pairs,
        samples=QUICK,
        expect=expect,
        source=f"{type(mechanism).__module__}:{type(mechanism).__qualname__}",
    )


@pytest.fixture
def laplace_target() -> Target:
    return quick_target(LaplaceCount(1.0), "test/laplace")


@pytest.fixture
def broken_target() -> Target:
    return quick_target(BrokenLaplaceTooLittleNoise(1.0), "test/broken", expect="broken")


@pytest.fixture
def rr_target() -> Target:
    return quick_target(RandomizedResponse(1.0), "test/rr")
