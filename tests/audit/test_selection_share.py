"""The default selection share (``selection_fraction=None``): 25% at delta = 0; at delta > 0
``max(20%, 10^5 samples)``, at most 25% (the share that kept the Gaussian audit within 0.02 of
the one-event limit from 10^5 to 10^9 samples a side: bench/approx_dp_limit.md), and
``max(5%, 10^5 samples)`` with the Clopper-Pearson rectangle. No statistical test here: exact
values."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.audit import audit
from dpaudit.audit.options import default_selection_fraction


@pytest.mark.parametrize(
    ("samples", "delta", "share"),
    [
        (10**4, 0.0, 0.25),
        (10**9, 0.0, 0.25),
        (10**4, 1e-5, 0.25),
        (4 * 10**5, 1e-5, 0.25),
        (10**6, 1e-5, 0.2),
        (10**8, 1e-5, 0.2),
        (10**9, 1e-6, 0.2),
    ],
)
def test_default_selection_share(samples: int, delta: float, share: float) -> None:
    assert default_selection_fraction(samples, delta) == share
    assert default_selection_fraction(samples, delta, "joint") == share


@pytest.mark.parametrize(
    ("samples", "delta", "share"),
    [
        (10**4, 0.0, 0.25),
        (10**9, 0.0, 0.25),
        (10**5, 1e-5, 0.25),
        (10**6, 1e-5, 0.1),
        (10**7, 1e-5, 0.05),
        (10**9, 1e-6, 0.05),
    ],
)
def test_default_selection_share_of_the_rectangle(samples: int, delta: float, share: float):
    assert default_selection_fraction(samples, delta, "clopper-pearson") == share


class _Gaussian:
    arithmetic = "real"

    def __call__(self, d: float, rng: np.random.Generator) -> float:
        return float(d + rng.normal())

    def batch(self, d: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return d + rng.normal(0.0, 1.0, n)


@pytest.mark.parametrize(
    ("certification", "selection", "certifying"),
    [("auto", 200_000, 800_000), ("clopper-pearson", 100_000, 900_000)],
)
def test_an_approximate_dp_audit_selects_on_its_default_share(
    certification: str, selection: int, certifying: int
) -> None:
    result = audit(
        _Gaussian(),
        0.0,
        1.0,
        epsilon=5.0,
        delta=1e-5,
        samples=10**6,
        seed=0,
        certification=certification,
    )
    assert (result.selection_samples, result.samples_d0) == (selection, certifying)
