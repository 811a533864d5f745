"""OpenDP (``pip install opendp``; audited at 0.16.0) as a user would audit it: measurements
built with OpenDP's framework API (``dp.t.then_*`` transformations chained into ``dp.m.then_*``
noise), run on record datasets, each audited against OpenDP's own privacy map.

Every adapter below is an :class:`~mechanisms.libraries.LibraryAdapter`; its ``epsilon`` is
OpenDP's privacy map at the neighbouring distance of its relation (symmetric distance 1 for
add/remove, 2 for replace-one on a sized domain), rounded up to 4 decimals
(``tests/libraries`` checks ``measurement.map(d_in) <= epsilon``).  Approximate-DP adapters
convert OpenDP's zCDP map with ``make_zCDP_to_approxDP`` and ``make_fix_delta`` at ``delta``.

Randomness: OpenDP samples from the operating system's CSPRNG and has no seed, so the injected
``rng`` is not used and no audit of these adapters is reproducible from its seed (dpaudit's
probe sees different outputs for one seed and reports ``reproducible=False``).  The bound such
an audit certifies still holds at its confidence.

Batches: ``batch(data, n, rng)`` runs OpenDP's transformation once and then OpenDP's noise
measurement of the same kind and scale on a vector of ``n`` copies of its value (OpenDP adds
independent noise to each coordinate with the same sampler), which is 5-10x faster than ``n``
calls of the chained measurement.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

import dpaudit.events as ev
from mechanisms.libraries import LibraryAdapter, adapter_maker, import_library

__all__ = [
    "ADAPTERS",
    "opendp_discrete_gaussian_count",
    "opendp_float_laplace_sum",
    "opendp_gaussian_mean",
    "opendp_geometric_sum",
    "opendp_histogram",
    "opendp_integer_laplace_sum",
    "opendp_laplace_variance",
    "opendp_randomized_response",
    "opendp_scalar_measurement",
]

#: The delta of the approximate-DP adapters.
DELTA = 1e-5
#: Sized adapters (mean, variance) use datasets of exactly this many records.
SIZE = 4
#: Largest dataset the unsized adapters are searched on.
MAX_SIZE = 8


@functools.cache
def _dp() -> Any:
    dp = import_library("opendp.prelude", "opendp")
    dp.enable_features("contrib")
    return dp


def _ints(data: np.ndarray) -> list[int]:
    return [int(v) for v in np.rint(data[:, 0])]


def _floats(data: np.ndarray) -> list[float]:
    return [float(v) for v in data[:, 0]]


def _approx(dp: Any, measurement: Any) -> Any:
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(measurement), DELTA)


@functools.cache
def _built(name: str) -> tuple[Any, Any, Any, str]:
    """``(transformation, measurement, noise, kind)`` of adapter ``name``: the measurement is
    ``transformation >> noise-step``; ``noise`` the same noise step on a vector domain, for
    batches; ``kind`` ``"int"``, ``"float"`` or ``"bool"``."""
    dp = _dp()
    ints = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    sized = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=SIZE), dp.symmetric_distance()
    int_vec = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    float_vec = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    float_vec2 = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    int_vec2 = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
    if name == "integer-laplace-sum":
        t = ints >> dp.t.then_clamp((0, 5)) >> dp.t.then_sum()
        return t, t >> dp.m.then_laplace(scale=5.0), int_vec >> dp.m.then_laplace(5.0), "int"
    if name == "geometric-sum":
        t = ints >> dp.t.then_clamp((0, 5)) >> dp.t.then_sum()
        geo = dp.m.then_geometric(scale=5.0, bounds=(-100, 100))
        return t, t >> geo, None, "int"
    if name == "float-laplace-sum":
        t = floats >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum()
        return t, t >> dp.m.then_laplace(scale=1.0), float_vec >> dp.m.then_laplace(1.0), "float"
    if name == "gaussian-mean":
        t = sized >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_mean()
        noise = float_vec2 >> dp.m.then_gaussian(1.0)
        return t, _approx(dp, t >> dp.m.then_gaussian(scale=1.0)), noise, "float"
    if name == "discrete-gaussian-count":
        t = ints >> dp.t.then_count()
        noise = int_vec2 >> dp.m.then_gaussian(4.0)
        return t, _approx(dp, t >> dp.m.then_gaussian(scale=4.0)), noise, "int"
    if name == "laplace-variance":
        t = sized >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_variance()
        return t, t >> dp.m.then_laplace(scale=0.25), float_vec >> dp.m.then_laplace(0.25), "float"
    if name == "histogram":
        t = ints >> dp.t.then_count_by_categories(categories=[0, 1, 2])
        return t, t >> dp.m.then_laplace(scale=1.0), int_vec >> dp.m.then_laplace(1.0), "int"
    if name == "randomized-response":
        return None, dp.m.make_randomized_response_bool(prob=0.75), None, "bool"
    raise KeyError(name)


def opendp_scalar_measurement(name: str) -> Any:
    """The OpenDP measurement behind adapter ``name`` (for its privacy map)."""
    return _built(name)[1]


def _input(kind: str, data: np.ndarray) -> Any:
    if kind == "bool":
        return bool(data[0, 0] >= 0.5)
    return _ints(data) if kind == "int" else _floats(data)


def _release(name: str) -> Callable[[np.ndarray, np.random.Generator], Any]:
    def release(data: np.ndarray, rng: np.random.Generator) -> Any:
        _, measurement, _, kind = _built(name)
        out = measurement(_input(kind, data))
        return tuple(out) if isinstance(out, list) else out

    return release


def _release_batch(name: str) -> Callable[[np.ndarray, int, np.random.Generator], Any]:
    def release_batch(data: np.ndarray, n: int, rng: np.random.Generator) -> Any:
        transformation, _, noise, kind = _built(name)
        value = transformation(_input(kind, data))
        if isinstance(value, list):  # a histogram: n noisy copies of the whole vector
            flat = noise([int(v) for v in value] * n)
            return np.asarray(flat, dtype=float).reshape(n, len(value))
        return np.asarray(noise([value] * n), dtype=float)

    return release_batch


_make = adapter_maker("opendp", "opendp")


def _adapter(
    name: str,
    api: str,
    summary: str,
    domain: list[Any],
    relation: str,
    sizes: tuple[int, int],
    epsilon: float,
    delta: float = 0.0,
    batch: bool = True,
    plan: Callable[[], Any] | None = None,
) -> LibraryAdapter:
    return _make(
        name,
        api,
        summary,
        domain,
        sizes,
        _release(name),
        epsilon=epsilon,
        delta=delta,
        relation=relation,
        release_batch=_release_batch(name) if batch else None,
        plan=plan,
    )


opendp_integer_laplace_sum = _adapter(
    "integer-laplace-sum",
    "then_clamp((0, 5)) >> then_sum() >> then_laplace(scale=5.0) on integers",
    "Sum of integer records clamped to [0, 5] with OpenDP's discrete Laplace noise of scale 5 "
    "(integer outputs): 1-DP under add/remove (OpenDP map at symmetric distance 1: 1.0).",
    [[0, 1, 2, 3, 4, 5, 7]],
    "add-remove",
    (0, MAX_SIZE),
    1.0,
    plan=lambda: ev.Laplace(5, 5),  # discrete Laplace: the same pure-DP bound (CKS 2020)
)
opendp_geometric_sum = _adapter(
    "geometric-sum",
    "then_clamp((0, 5)) >> then_sum() >> then_geometric(scale=5.0, bounds=(-100, 100))",
    "Sum of integer records clamped to [0, 5] with OpenDP's constant-time geometric noise of "
    "scale 5 (integer outputs): 1-DP under add/remove (OpenDP map: 1.0).",
    [[0, 1, 2, 3, 4, 5, 7]],
    "add-remove",
    (0, MAX_SIZE),
    1.0,
    batch=False,
    plan=lambda: ev.Laplace(5, 5),  # two-sided geometric: exp(-|k|/5), L1 sensitivity 5
)
opendp_float_laplace_sum = _adapter(
    "float-laplace-sum",
    "then_clamp((0.0, 1.0)) >> then_sum() >> then_laplace(scale=1.0) on floats",
    "Sum of float records clamped to [0, 1] with OpenDP's float Laplace noise of scale 1 "
    "(OpenDP samples it exactly on a lattice, not with textbook float arithmetic): "
    "1-DP under add/remove (OpenDP map at symmetric distance 1: 1.0000000093, which includes "
    "its bound on float rounding of the sum).",
    [(-2.0, 3.0)],
    "add-remove",
    (0, MAX_SIZE),
    1.0001,
    plan=lambda: ev.Laplace(1, 1),
)
opendp_gaussian_mean = _adapter(
    "gaussian-mean",
    f"then_clamp((0.0, 1.0)) >> then_mean() >> then_gaussian(scale=1.0), size {SIZE}, "
    f"make_zCDP_to_approxDP and make_fix_delta({DELTA:g})",
    f"Mean of exactly {SIZE} float records clamped to [0, 1] with OpenDP's Gaussian noise of "
    f"scale 1: (1.0123, {DELTA:g})-DP under replace-one (OpenDP's zCDP map at symmetric "
    "distance 2, converted: 1.0122866).",
    [(-1.0, 2.0)],
    "replace-one",
    (SIZE, SIZE),
    1.0123,
    DELTA,
    plan=lambda: ev.Gaussian(1, sympy.Rational(1, SIZE), relation=ev.Relation.REPLACE_ONE),
)
opendp_discrete_gaussian_count = _adapter(
    "discrete-gaussian-count",
    f"then_count() >> then_gaussian(scale=4.0), make_fix_delta({DELTA:g})",
    f"Count of records with OpenDP's discrete Gaussian noise of scale 4 (integer outputs): "
    f"(1.0123, {DELTA:g})-DP under add/remove (OpenDP's map, converted: 1.0122866).",
    [(0.0, 1.0)],
    "add-remove",
    (0, MAX_SIZE),
    1.0123,
    DELTA,
)
opendp_laplace_variance = _adapter(
    "laplace-variance",
    f"then_clamp((0.0, 1.0)) >> then_variance() >> then_laplace(scale=0.25), size {SIZE}",
    f"Sample variance of exactly {SIZE} float records clamped to [0, 1] with OpenDP's float "
    "Laplace noise of scale 0.25: 1-DP under replace-one (OpenDP map at symmetric distance 2: "
    "1.0000000000000082).",
    [(-1.0, 2.0)],
    "replace-one",
    (SIZE, SIZE),
    1.0001,
    plan=lambda: ev.Laplace(
        sympy.Rational(1, 4), sympy.Rational(1, 4), relation=ev.Relation.REPLACE_ONE
    ),
)
opendp_histogram = _adapter(
    "histogram",
    "then_count_by_categories(categories=[0, 1, 2]) >> then_laplace(scale=1.0) on integers",
    "Counts of the categories 0, 1, 2 and of everything else (a fourth bin) with OpenDP's "
    "discrete Laplace noise of scale 1 on each bin (a vector output): 1-DP under add/remove "
    "(OpenDP map: 1.0).",
    [[0, 1, 2, 3]],
    "add-remove",
    (0, MAX_SIZE),
    1.0,
    plan=lambda: ev.Laplace(1, 1),  # one bin moves by 1 when a record is added
)
opendp_randomized_response = _adapter(
    "randomized-response",
    "make_randomized_response_bool(prob=0.75)",
    "Randomized response on one boolean record (true with probability 0.75): ln(3)-DP when "
    "the record is replaced (OpenDP map: 1.0986123).",
    [[0, 1]],
    "replace-one",
    (1, 1),
    1.0987,
    batch=False,
    plan=lambda: ev.RandomizedResponse(sympy.log(3), 2, relation=ev.Relation.REPLACE_ONE),
)

#: Every OpenDP adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = {
    a.name: a
    for a in (
        opendp_integer_laplace_sum,
        opendp_geometric_sum,
        opendp_float_laplace_sum,
        opendp_gaussian_mean,
        opendp_discrete_gaussian_count,
        opendp_laplace_variance,
        opendp_histogram,
        opendp_randomized_response,
    )
}
