"""Tumult Core (``pip install tmlt.core``; audited at 0.20.0, which pins numpy < 2, pandas < 2 and
sympy < 1.13 on Python 3.11, so it runs in its own environment: ``noxfile.py``, session
``hunt_tmlt``) as its API reference builds measurements: a measurement object constructed with
its domain and noise parameter, called on its input, its claim read from its own
``privacy_function(d_in)``.

The adapters use the measurements that run without Spark (each output is one call, 0.3-0.4 ms;
the Spark aggregations of ``tmlt.core.measurements.aggregations`` start a JVM and take a
second a query, too slow for an audit's tens of thousands of runs):

- ``AddGeometricNoise(alpha=1)`` on the number of records (absolute difference 1 under
  add/remove): ``privacy_function(1)`` = 1;
- ``AddLaplaceNoise(NumpyFloatDomain(), scale=1)`` on the sum of the records' values clamped to
  [0, 1] by the caller (NaN-safe: what is audited is Tumult Core's noise, not the adapter's
  clamp; Tumult Core's own clamping is a Spark transformation): ``privacy_function(1)`` = 1;
- ``NoisyQuantile(PandasSeriesDomain(NumpyFloatDomain()), PureDP(), quantile=0.5, lower=0,
  upper=1, epsilon=1)`` on the records' values as a pandas Series, symmetric difference 1
  (add/remove): ``privacy_function(1)`` = 1.  Its input domain excludes NaN
  (``NumpyFloatDomain(allow_nan=False)``, the default) but the call does not check it.

Randomness: Tumult Core samples from RDRAND or ``os.urandom`` (``tmlt/core/random/rng.py``)
and cannot be seeded: no audit of these adapters is reproducible from its seed (dpaudit says
so); each bound still holds at its confidence.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from mechanisms.libraries import LibraryAdapter, adapter_maker, by_name, import_library

__all__ = ["ADAPTERS", "tmlt_geometric_count", "tmlt_laplace_sum", "tmlt_noisy_median"]

#: Largest dataset searched.
MAX_SIZE = 8


@functools.cache
def _built(name: str) -> Any:
    """The Tumult Core measurement of adapter ``name`` (built once: building checks types)."""
    install = "tmlt.core==0.20.0 (its own environment: nox -s hunt_tmlt)"
    noise = import_library("tmlt.core.measurements.noise_mechanisms", install)
    numpy_domains = import_library("tmlt.core.domains.numpy_domains", install)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "geometric-count":
            return noise.AddGeometricNoise(alpha=1)
        if name == "laplace-sum":
            return noise.AddLaplaceNoise(input_domain=numpy_domains.NumpyFloatDomain(), scale=1)
        if name == "noisy-median":
            series = import_library("tmlt.core.measurements.pandas_measurements.series", install)
            pandas_domains = import_library("tmlt.core.domains.pandas_domains", install)
            measures = import_library("tmlt.core.measures", install)
            return series.NoisyQuantile(
                pandas_domains.PandasSeriesDomain(numpy_domains.NumpyFloatDomain()),
                output_measure=measures.PureDP(),
                quantile=0.5,
                lower=0.0,
                upper=1.0,
                epsilon=1,
            )
    raise KeyError(name)


def tmlt_claim(name: str) -> float:
    """Tumult Core's own claim for adapter ``name``: ``privacy_function(1)`` (an exact number)
    as a float rounded up."""
    return float(_built(name).privacy_function(1).to_float(round_up=True))


def _count(data: np.ndarray, rng: np.random.Generator) -> float:
    return float(_built("geometric-count")(np.int64(len(data))))


def _laplace_sum(data: np.ndarray, rng: np.random.Generator) -> float:
    # the caller's clamp, NaN-safe (np.clip passes NaN: that would audit this adapter's
    # clamping, not Tumult Core's noise): NaN counts as 0, infinities as the nearer bound
    values = np.nan_to_num(data[:, 0], nan=0.0, posinf=1.0, neginf=0.0)
    return float(_built("laplace-sum")(np.float64(np.clip(values, 0.0, 1.0).sum())))


def _median(data: np.ndarray, rng: np.random.Generator) -> float:
    import pandas as pd

    return float(_built("noisy-median")(pd.Series(data[:, 0], dtype=float)))


# epsilon 1: privacy_function(1) of each (tests/libraries/test_tmlt.py checks it)
_adapter = adapter_maker("tmlt.core", "tmlt", epsilon=1.0)


tmlt_geometric_count = _adapter(
    "geometric-count",
    "AddGeometricNoise(alpha=1)(np.int64(len(x)))",
    "Number of records with Tumult Core's two-sided geometric noise: 1-DP under add/remove "
    "(privacy_function(1) = 1).",
    [(0.0, 1.0)],
    (0, MAX_SIZE),
    _count,
)
tmlt_laplace_sum = _adapter(
    "laplace-sum",
    "AddLaplaceNoise(NumpyFloatDomain(), scale=1)(np.clip(x, 0, 1).sum())",
    "Sum of the records' values clamped to [0, 1] by the caller, with Tumult Core's Laplace "
    "noise (sampled with exact interval arithmetic): 1-DP under add/remove.",
    [(-1.0, 2.0)],
    (0, MAX_SIZE),
    _laplace_sum,
)
tmlt_noisy_median = _adapter(
    "noisy-median",
    "NoisyQuantile(PandasSeriesDomain(NumpyFloatDomain()), PureDP(), quantile=0.5, lower=0, "
    "upper=1, epsilon=1)(pd.Series(x))",
    "Median of the records' values (clamped to [0, 1]) by Tumult Core's exponential-mechanism "
    "quantile on a pandas Series: 1-DP under add/remove (privacy_function(1) = 1).",
    [(-1.0, 2.0)],
    (0, MAX_SIZE),
    _median,
)

#: Every Tumult Core adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = by_name(
    tmlt_geometric_count, tmlt_laplace_sum, tmlt_noisy_median
)
