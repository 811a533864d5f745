"""Tumult Core 0.20.0 audited through its measurements (``mechanisms/libraries/tmlt_adapters.py``).

tmlt.core pins numpy < 2 and pandas < 2: it has its own environment and this module is skipped
elsewhere (run it with ``nox -s hunt_tmlt -- --pytest``).  Audits certify at confidence 0.95
(alpha = 0.05).
"""

from __future__ import annotations

import numpy as np
import pytest
from _libraries import require

require("tmlt.core", "hunt_tmlt")

from dpaudit.audit import audit_records  # noqa: E402
from mechanisms.libraries import tmlt_adapters as tm  # noqa: E402


@pytest.mark.parametrize("name", ["geometric-count", "laplace-sum", "noisy-median"])
def test_claims_are_the_measurements_privacy_function(name: str) -> None:
    assert tm.tmlt_claim(name) == tm.ADAPTERS[f"tmlt-{name}"].epsilon == 1.0


def test_outputs_are_noisy_and_unseeded() -> None:
    data = np.array([[0.2], [0.7], [0.9]])
    for adapter in tm.ADAPTERS.values():
        outs = {adapter(data, np.random.default_rng(0)) for _ in range(20)}
        assert len(outs) > 1


def test_geometric_count_is_not_flagged() -> None:
    a = tm.tmlt_geometric_count
    r = audit_records(a, a.domain, samples=600, seed=0, **a.audit_kwargs())
    assert not r.violation
