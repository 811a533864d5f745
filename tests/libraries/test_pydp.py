"""PyDP (python-dp 1.1.5) audited as its README calls it
(``mechanisms/libraries/pydp_adapters.py``).

python-dp is no dependency of dpaudit: this module is skipped unless it imports (run it in the
panel's environment, ``nox -s hunt_main -- --pytest``).  Audits certify at confidence 0.95
(alpha = 0.05).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _libraries import require

require("pydp", "hunt_main")

from dpaudit.audit import audit_records  # noqa: E402
from mechanisms.libraries import pydp_adapters as pydp  # noqa: E402

RNG = np.random.default_rng(0)


def test_outputs_are_noisy_and_the_library_cannot_be_seeded() -> None:
    data = np.array([[0.5], [0.2]])
    outs = {pydp.pydp_bounded_sum(data, np.random.default_rng(1)) for _ in range(20)}
    assert len(outs) == 20  # the injected rng does not fix python-dp's C++ noise


def test_count_is_an_integer_and_partition_selection_a_set_of_keys() -> None:
    data = np.array([[0.0]] * 40 + [[1.0]])
    assert isinstance(pydp.pydp_count(data, RNG), int)
    kept = pydp.pydp_partition_selection(data, RNG)
    assert isinstance(kept, frozenset) and kept <= {0, 1}
    assert 0 in kept  # 40 privacy units: kept with overwhelming probability


def test_a_nan_record_is_skipped_not_propagated() -> None:
    """Google's library skips NaN entries (AddEntry), so no release is NaN."""
    data = np.array([[0.5], [math.nan]])
    for adapter in (pydp.pydp_bounded_sum, pydp.pydp_bounded_mean):
        assert not any(math.isnan(adapter(data, RNG)) for _ in range(50))


def test_auto_bounds_raise_on_small_datasets() -> None:
    with pytest.raises(RuntimeError, match="approximate bounds"):
        pydp.pydp_auto_bounds_sum(np.full((8, 1), 0.5), RNG)
    assert math.isfinite(pydp.pydp_auto_bounds_sum(np.full((60, 1), 0.5), RNG))


@pytest.mark.parametrize("name", ["pydp-count", "pydp-bounded-sum", "pydp-partition-selection"])
def test_correct_functions_are_not_flagged(name: str) -> None:
    """Not flagged at their claims (alpha = 0.05, 600 samples per dataset, seed 0)."""
    a = pydp.ADAPTERS[name]
    r = audit_records(a, a.domain, samples=600, seed=0, **a.audit_kwargs())
    assert not r.violation, r.pair_description
