"""smartnoise-sql (``pip install smartnoise-sql``; audited at 1.0.10, which pins opendp < 0.15
and pandas < 3, so it runs in its own environment: ``noxfile.py``, session ``hunt_smartnoise``)
as its README calls it: ``snsql.from_df(df, privacy=Privacy(epsilon, delta),
metadata=...)`` and ``reader.execute(sql)``, one row of the table per individual
(``row_privacy: True``), so the claim is about adding or removing a row.

The claim of each adapter is the reader's own accounting, ``reader.get_privacy_cost(sql)``
(smartnoise-sql docs, "Privacy cost"): epsilon and delta of one query under the reader's
``Privacy`` (the adapters use epsilon 1 and delta 1e-5; a SUM spends a count and a sum, so it
costs epsilon 2).

The output of a query is what ``execute`` returns without its header row: a ``GROUP BY``
query gives the dict ``{key: noisy count}`` of the rows released (the set of keys is part of
the output), a scalar query its one value, or None when smartnoise returns no row.

``censor_dims`` (table metadata, default True) drops the groups whose noisy count is below a
threshold tau (smartnoise-sql's ``private_reader.py``): that is what makes a released key set
differentially private.  The metadata may set it to False, "if you know that small dimensions
cannot expose privacy" (``PrivateReaderOptions``); with the keys drawn from the data, they then
leak (the ``count-by-key-uncensored`` adapter).

Randomness: smartnoise-sql draws its noise through OpenDP (the OS CSPRNG): no audit of these
adapters is reproducible from its seed (dpaudit says so).

Speed: every ``execute`` rebuilds the query's mechanisms, and each Laplace mechanism searches
its noise scale with OpenDP's ``binary_search_param`` (about 80% of a query's 150 ms).  That
scale is a deterministic function of epsilon, the bounds and the contribution limit, so the
adapters memoise ``Laplace._compute_noise_scale`` by them (:func:`_memoised_scale`): the scale
and every output's distribution are unchanged (``tests/libraries/test_smartnoise.py`` checks
the scale against a fresh search).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from mechanisms.libraries import LibraryAdapter, adapter_maker, by_name, import_library

__all__ = [
    "ADAPTERS",
    "DELTA",
    "EPSILON",
    "smartnoise_count_by_key",
    "smartnoise_count_by_key_uncensored",
    "smartnoise_sum",
]

#: The reader's privacy parameters.
EPSILON = 1.0
DELTA = 1e-5
#: Largest dataset searched, and the keys of a record's first column.
MAX_SIZE = 8
KEYS = [0, 1, 2]
#: Largest dataset of the censored count: groups below about 12 rows are never released.
CENSORED_SIZE = 20
COUNT_BY_KEY = "SELECT k, COUNT(*) AS n FROM db.t GROUP BY k"
SUM = "SELECT SUM(v) AS s FROM db.t"


@functools.cache
def _snsql() -> Any:
    snsql = import_library("snsql", "smartnoise-sql==1.0.10")
    laplace = import_library("snsql.sql._mechanisms.laplace", "smartnoise-sql==1.0.10").Laplace
    if not getattr(laplace._compute_noise_scale, "_dpaudit_memoised", False):
        laplace._compute_noise_scale = _memoised_scale(laplace._compute_noise_scale)
    return snsql


def _memoised_scale(compute: Callable[[Any], None]) -> Callable[[Any], None]:
    """smartnoise's ``Laplace._compute_noise_scale`` remembered by what it reads: the scale it
    searches (``binary_search_param`` over OpenDP's bounded sum and Laplace measurement) is a
    function of ``epsilon``, ``lower``, ``upper`` and ``max_contrib`` alone
    (``snsql/sql/_mechanisms/laplace.py``)."""
    cache: dict[tuple[Any, ...], Any] = {}

    def memo(self: Any) -> None:
        if self.scale is not None:
            return
        key = (float(self.epsilon), float(self.lower), float(self.upper), self.max_contrib)
        if key not in cache:
            compute(self)
            cache[key] = self.scale
        self.scale = cache[key]

    memo._dpaudit_memoised = True  # type: ignore[attr-defined]
    memo.__wrapped__ = compute  # type: ignore[attr-defined]
    return memo


def _metadata(censor: bool) -> dict[str, Any]:
    table = {
        "row_privacy": True,
        "censor_dims": censor,
        "k": {"type": "int"},
        "v": {"type": "float", "lower": 0.0, "upper": 1.0},
    }
    return {"": {"db": {"t": table}}}


def _frame(data: np.ndarray) -> Any:
    import pandas as pd

    keys = np.rint(data[:, 0]).astype(int) if data.shape[1] > 0 else np.zeros(0, int)
    values = data[:, 1] if data.shape[1] > 1 else np.zeros(len(data))
    return pd.DataFrame({"k": keys, "v": values.astype(float)})


def _reader(data: np.ndarray, censor: bool) -> Any:
    snsql = _snsql()
    privacy = snsql.Privacy(epsilon=EPSILON, delta=DELTA)
    return snsql.from_df(_frame(data), privacy=privacy, metadata=_metadata(censor))


def _execute(data: np.ndarray, sql: str, censor: bool) -> list[list[Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(_reader(data, censor).execute(sql))[1:]


def privacy_cost(sql: str, censor: bool = True) -> tuple[float, float]:
    """smartnoise-sql's own cost of ``sql`` under the adapters' ``Privacy``:
    ``reader.get_privacy_cost(sql)`` as (epsilon, delta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps, delta = _reader(np.zeros((1, 2)), censor).get_privacy_cost(sql)
    return float(eps), float(delta)


def _by_key(censor: bool) -> Callable[[np.ndarray, np.random.Generator], dict[int, float]]:
    def release(data: np.ndarray, rng: np.random.Generator) -> dict[int, float]:
        return {int(k): float(n) for k, n in _execute(data, COUNT_BY_KEY, censor)}

    return release


def _sum(data: np.ndarray, rng: np.random.Generator) -> float | None:
    rows = _execute(data, SUM, censor=False)
    return None if not rows or rows[0][0] is None else float(rows[0][0])


_adapter = adapter_maker("smartnoise-sql", "smartnoise")

#: smartnoise-sql 1.0.10's cost of the queries below (reader.get_privacy_cost with epsilon 1
#: and delta 1e-5, as it prints them; tests/libraries/test_smartnoise.py checks them).
COUNT_COST = (1.0, 1.4999949999983109e-05)
SUM_COST = (1.0, 5.000000000032756e-06)

smartnoise_count_by_key = _adapter(
    "count-by-key",
    "snsql.from_df(df, privacy=Privacy(epsilon=1, delta=1e-5), metadata=...)"
    f'.execute("{COUNT_BY_KEY}")',
    "Count of rows per key (a row is a key in {0, 1, 2} and a value), groups censored below "
    "smartnoise's threshold (censor_dims, the default); the output is {key: noisy count}: "
    "(1, 1.5e-5)-DP under add/remove of a row (reader.get_privacy_cost).  Datasets of up to "
    f"{CENSORED_SIZE} rows: a group is released only when its noisy count passes tau = "
    "1 - ln(2 delta) / epsilon, about 11.8.",
    [KEYS, (0.0, 1.0)],
    (0, CENSORED_SIZE),
    _by_key(censor=True),
    epsilon=COUNT_COST[0],
    delta=COUNT_COST[1],
)
smartnoise_count_by_key_uncensored = _adapter(
    "count-by-key-uncensored",
    f'the same with censor_dims: False in the table metadata, .execute("{COUNT_BY_KEY}")',
    "Count of rows per key with censor_dims set to False in the metadata (smartnoise: 'set to "
    "False if you know that small dimensions cannot expose privacy'); the output is {key: "
    "noisy count} for the keys present: claimed (1, 1.5e-5)-DP by reader.get_privacy_cost.",
    [KEYS, (0.0, 1.0)],
    (0, MAX_SIZE),
    _by_key(censor=False),
    epsilon=COUNT_COST[0],
    delta=COUNT_COST[1],
    finding="Finding (smartnoise-sql 1.0.10, documented): with censor_dims False the groups "
    "released are exactly the keys present in the data, so adding the only row of a key "
    "adds that key to the output with probability 1 while reader.get_privacy_cost still "
    "reports (1, 1.5e-5): no finite epsilon.",
)
smartnoise_sum = _adapter(
    "sum",
    f'the table with censor_dims: False (no GROUP BY), .execute("{SUM}")',
    "Sum of the rows' values, clamped by smartnoise to the metadata's bounds [0, 1]; the "
    "output is the noisy sum: (1, 5e-6)-DP under add/remove (reader.get_privacy_cost).",
    [[0], (-1.0, 2.0)],
    (0, MAX_SIZE),
    _sum,
    epsilon=SUM_COST[0],
    delta=SUM_COST[1],
)

#: Every smartnoise-sql adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = by_name(
    smartnoise_count_by_key, smartnoise_count_by_key_uncensored, smartnoise_sum
)
