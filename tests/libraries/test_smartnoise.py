"""smartnoise-sql 1.0.10 audited as its README calls it
(``mechanisms/libraries/smartnoise_adapters.py``).

smartnoise-sql pins opendp < 0.15 and pandas < 3: it has its own environment and this module is
skipped elsewhere (run it with ``nox -s hunt_smartnoise -- --pytest``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _libraries import require

require("snsql", "hunt_smartnoise")

from mechanisms.libraries import smartnoise_adapters as sn  # noqa: E402

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("sql", "censor", "cost"),
    [
        (sn.COUNT_BY_KEY, True, sn.COUNT_COST),
        (sn.COUNT_BY_KEY, False, sn.COUNT_COST),
        (sn.SUM, False, sn.SUM_COST),
    ],
)
def test_claims_are_the_readers_own_cost(sql: str, censor: bool, cost: tuple[float, float]) -> None:
    assert sn.privacy_cost(sql, censor) == cost


def test_the_memoised_noise_scale_is_the_searched_one() -> None:
    """The adapters memoise smartnoise's noise-scale search: the scale is the one a fresh search
    finds, for the bounds and epsilons the adapters use."""
    sn._snsql()
    from snsql.sql._mechanisms.laplace import Laplace

    search = Laplace._compute_noise_scale.__wrapped__
    for epsilon, lower, upper in [(1.0, 0.0, 1.0), (0.5, 0.0, 1.0), (1.0, -1.0, 3.0)]:
        memo = Laplace(epsilon, lower=lower, upper=upper, max_contrib=1)
        fresh = Laplace.__new__(Laplace)
        fresh.__dict__.update(memo.__dict__)
        fresh.scale = None
        search(fresh)
        assert fresh.scale == memo.scale
        assert Laplace(epsilon, lower=lower, upper=upper, max_contrib=1).scale == memo.scale


def test_uncensored_groups_are_exactly_the_keys_present() -> None:
    """The fact behind the key-set finding: with censor_dims False every key present is
    released, and no other (20 of 20 queries)."""
    data = np.array([[0, 0.5], [2, 0.1]])
    for _ in range(20):
        assert set(sn.smartnoise_count_by_key_uncensored(data, RNG)) == {0, 2}


def test_censored_groups_hide_small_counts() -> None:
    data = np.array([[0, 0.5], [2, 0.1]])
    assert all(sn.smartnoise_count_by_key(data, RNG) == {} for _ in range(10))
    many = np.array([[1, 0.5]] * 40)
    assert 1 in sn.smartnoise_count_by_key(many, RNG)
