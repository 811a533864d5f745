"""IBM diffprivlib (``pip install diffprivlib``; audited at 0.6.6, which needs
scikit-learn <= 1.7.2) as a user would audit it: its noise primitives
(``diffprivlib.mechanisms``), its tools (``diffprivlib.tools``: histogram, mean, variance) and
its models (``diffprivlib.models``), each audited against the epsilon (and delta) it is given.

Relations: diffprivlib's documentation defines its guarantees on neighbouring datasets of the
same size for statistics whose sensitivity uses the dataset size (mean, variance, models), so
those adapters are audited under replace-one; counts and histograms under add/remove.

Randomness: every diffprivlib API takes ``random_state``; each adapter derives one from the
injected ``rng`` (a 32-bit seed drawn from it for one output; one ``RandomState`` seeded from
it for a batch), so audits are reproducible from their seed.

Vector outputs (a histogram, a model's coefficients) are returned as tuples of floats; the
auditor reads them through projected one-dimensional features (:mod:`dpaudit.audit.selection`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import dpaudit.events as ev
from mechanisms.libraries import LibraryAdapter, adapter_maker, import_library

__all__ = [
    "ADAPTERS",
    "DELTA",
    "diffprivlib_gaussian_analytic_sum",
    "diffprivlib_gaussian_nb",
    "diffprivlib_geometric_count",
    "diffprivlib_histogram",
    "diffprivlib_laplace_sum",
    "diffprivlib_linear_regression",
    "diffprivlib_logistic_regression",
    "diffprivlib_mean",
    "diffprivlib_variance",
]

#: The delta of the approximate-DP adapters.
DELTA = 1e-5
#: Largest dataset searched.
MAX_SIZE = 8


@functools.cache
def _dpl() -> Any:
    return import_library("diffprivlib", "diffprivlib")


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**32 - 1))


def _quiet(call: Callable[[], Any]) -> Any:
    """Run ``call`` without diffprivlib's PrivacyLeakWarning / DiffprivlibCompatibilityWarning
    chatter (audits run it hundreds of thousands of times; the warnings are about clipping,
    which is what the record domain tests)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


_make = adapter_maker("diffprivlib", "diffprivlib", seedable=True)


def _adapter(
    name: str,
    api: str,
    summary: str,
    domain: list[Any],
    relation: str,
    sizes: tuple[int, int],
    one: Callable[[np.ndarray, Any], Any],
    epsilon: float = 1.0,
    delta: float = 0.0,
    make: Callable[[Any], Any] | None = None,
    finding: str = "",
    plan: Callable[[], Any] | None = None,
) -> LibraryAdapter:
    """An adapter whose output on ``data`` is ``one(data, made)``, ``made`` being
    ``make(random_state)`` (a diffprivlib mechanism, built once per batch: the analytic
    Gaussian calibrates its scale when built) or the ``random_state`` itself.  Single outputs
    get a seed drawn from ``rng``, a batch one ``RandomState`` seeded from ``rng`` and drawn
    from in turn."""
    build = make if make is not None else (lambda state: state)

    def release(data: np.ndarray, rng: np.random.Generator) -> Any:
        return _quiet(lambda: one(data, build(_seed(rng))))

    def release_batch(data: np.ndarray, n: int, rng: np.random.Generator) -> Any:
        made = build(np.random.RandomState(_seed(rng)))
        out = _quiet(lambda: [one(data, made) for _ in range(n)])
        return np.asarray(out, dtype=float)

    return _make(
        name,
        api,
        summary,
        domain,
        sizes,
        release,
        epsilon=epsilon,
        delta=delta,
        relation=relation,
        finding=finding,
        release_batch=release_batch,
        plan=plan,
    )


def _clipped_sum(data: np.ndarray, mechanism: Any) -> float:
    return float(mechanism.randomise(float(np.clip(data[:, 0], 0.0, 1.0).sum())))


def _count(data: np.ndarray, mechanism: Any) -> float:
    return float(mechanism.randomise(int(np.count_nonzero(data[:, 0] >= 0.5))))


def _laplace(state: Any) -> Any:
    return _dpl().mechanisms.Laplace(epsilon=1.0, sensitivity=1.0, random_state=state)


def _geometric(state: Any) -> Any:
    return _dpl().mechanisms.Geometric(epsilon=1.0, sensitivity=1, random_state=state)


def _gaussian_analytic(state: Any) -> Any:
    return _dpl().mechanisms.GaussianAnalytic(
        epsilon=1.0, delta=DELTA, sensitivity=1.0, random_state=state
    )


def _histogram(data: np.ndarray, state: Any) -> tuple[float, ...]:
    hist, _ = _dpl().tools.histogram(
        data[:, 0], epsilon=1.0, bins=3, range=(0.0, 3.0), random_state=state
    )
    return tuple(float(v) for v in hist)


def _mean(data: np.ndarray, state: Any) -> float:
    return float(_dpl().tools.mean(data[:, 0], epsilon=1.0, bounds=(0.0, 1.0), random_state=state))


def _variance(data: np.ndarray, state: Any) -> float:
    return float(_dpl().tools.var(data[:, 0], epsilon=1.0, bounds=(0.0, 1.0), random_state=state))


def _gaussian_nb(data: np.ndarray, state: Any) -> tuple[float, ...]:
    # classes given up front (partial_fit's classes=), the configuration diffprivlib does not
    # warn about; the output is the fitted mean, variance and class count of each label
    model = _dpl().models.GaussianNB(epsilon=1.0, bounds=([0.0], [1.0]), random_state=state)
    model.partial_fit(data[:, :1], data[:, 1].astype(int), classes=[0, 1])
    return (*model.theta_.ravel(), *model.var_.ravel(), *model.class_count_.ravel())


def _linear_regression(data: np.ndarray, state: Any) -> tuple[float, ...]:
    model = _dpl().models.LinearRegression(
        epsilon=1.0, bounds_X=(0.0, 1.0), bounds_y=(0.0, 1.0), random_state=state
    )
    model.fit(data[:, :1], data[:, 1])
    return (*np.ravel(model.coef_), float(model.intercept_))


def _logistic_regression(data: np.ndarray, state: Any) -> tuple[float, ...]:
    model = _dpl().models.LogisticRegression(epsilon=1.0, data_norm=1.0, random_state=state)
    model.fit(data[:, :1], data[:, 1].astype(int))
    return (*model.coef_.ravel(), *np.ravel(model.intercept_))


#: What the float-arithmetic audits found in diffprivlib 0.6.6's continuous noise (measured by
#: the ``bits`` event family, dpaudit.audit.float_bits, on the audit as it runs in doubles).
FLOAT_FINDING = (
    "Finding (diffprivlib 0.6.6, floating point): the noisy value is computed as "
    "value - scale * sample in double arithmetic. diffprivlib draws the Laplace sample from "
    "four uniforms (Holohan and Braghin 2021, meant to resist Mironov's 2012 attack), but the "
    "final rounding still depends on the value: some classes of outputs (a binade with a given "
    "number of trailing zero bits of the significand) occur under one dataset and never, or "
    "far more rarely, under its neighbour, so the released double leaks more than the claim. "
    "The real-number claim is not what is refuted: audited with arithmetic='real' the same "
    "function is consistent with it."
)

diffprivlib_laplace_sum = _adapter(
    "laplace-sum",
    "diffprivlib.mechanisms.Laplace(epsilon=1, sensitivity=1).randomise(sum)",
    "Sum of records clipped to [0, 1] by the caller, with diffprivlib's Laplace mechanism "
    "(sensitivity 1): 1-DP under add/remove.",
    [(-2.0, 3.0)],
    "add-remove",
    (0, MAX_SIZE),
    _clipped_sum,
    make=_laplace,
    plan=lambda: ev.Laplace(1, 1),
    finding=FLOAT_FINDING,
)
diffprivlib_geometric_count = _adapter(
    "geometric-count",
    "diffprivlib.mechanisms.Geometric(epsilon=1, sensitivity=1).randomise(count)",
    "Count of records equal to 1 with diffprivlib's geometric (two-sided, integer) mechanism: "
    "1-DP under add/remove.",
    [[0, 1]],
    "add-remove",
    (0, MAX_SIZE),
    _count,
    make=_geometric,
    plan=lambda: ev.Laplace(1, 1),  # two-sided geometric: exp(-|k|), sensitivity 1
)
diffprivlib_gaussian_analytic_sum = _adapter(
    "gaussian-analytic-sum",
    f"diffprivlib.mechanisms.GaussianAnalytic(epsilon=1, delta={DELTA:g}, sensitivity=1)",
    "Sum of records clipped to [0, 1] by the caller, with diffprivlib's analytic Gaussian "
    f"mechanism: (1, {DELTA:g})-DP under add/remove.",
    [(-2.0, 3.0)],
    "add-remove",
    (0, MAX_SIZE),
    _clipped_sum,
    delta=DELTA,
    make=_gaussian_analytic,
    finding=FLOAT_FINDING,
)
diffprivlib_histogram = _adapter(
    "histogram",
    "diffprivlib.tools.histogram(x, epsilon=1, bins=3, range=(0, 3))",
    "Histogram of 3 bins over [0, 3) (records outside fall in no bin) with diffprivlib's "
    "geometric noise on every bin: 1-DP under add/remove.",
    [[0.5, 1.5, 2.5, 4.0]],
    "add-remove",
    (0, MAX_SIZE),
    _histogram,
)
diffprivlib_mean = _adapter(
    "mean",
    "diffprivlib.tools.mean(x, epsilon=1, bounds=(0, 1))",
    "Mean of the records (diffprivlib clips them to the bounds [0, 1]): 1-DP under "
    "replace-one (the dataset size is public).",
    [(-1.0, 2.0)],
    "replace-one",
    (1, MAX_SIZE),
    _mean,
    finding=FLOAT_FINDING,
)
diffprivlib_variance = _adapter(
    "variance",
    "diffprivlib.tools.var(x, epsilon=1, bounds=(0, 1))",
    "Variance of the records (clipped to [0, 1]): 1-DP under replace-one.",
    [(-1.0, 2.0)],
    "replace-one",
    (1, MAX_SIZE),
    _variance,
    finding=FLOAT_FINDING,
)
diffprivlib_gaussian_nb = _adapter(
    "gaussian-nb",
    "diffprivlib.models.GaussianNB(epsilon=1, bounds=([0], [1])).partial_fit(X, y, classes=[0, 1])",
    "Gaussian naive Bayes on records (x in [0, 1], label 0 or 1), the classes given up "
    "front; the output is the fitted means, variances and class counts of both labels (a "
    "vector): 1-DP under replace-one.",
    [(0.0, 1.0), [0, 1]],
    "replace-one",
    (2, 6),
    _gaussian_nb,
    finding="Finding (diffprivlib 0.6.6): whether a label is present in the data is released "
    "exactly. _noisy_class_counts noises the counts of the labels present only (it loops over "
    "np.unique(y)), so an absent label keeps class count 0, variance 0 and prior 0 (and "
    "predict_proba 0), a present one does not, even with the classes given up front: "
    "replacing the only record of a label changes the model with probability 1 (no finite "
    "epsilon; the certified bound is limited only by the samples).",
)
diffprivlib_linear_regression = _adapter(
    "linear-regression",
    "diffprivlib.models.LinearRegression(epsilon=1, bounds_X=(0, 1), bounds_y=(0, 1)).fit(X, y)",
    "Linear regression on records (x, y) in [0, 1]^2; the output is the coefficient and the "
    "intercept: 1-DP under replace-one.",
    [(0.0, 1.0), (0.0, 1.0)],
    "replace-one",
    (2, 6),
    _linear_regression,
)
diffprivlib_logistic_regression = _adapter(
    "logistic-regression",
    "diffprivlib.models.LogisticRegression(epsilon=1, data_norm=1).fit(X, y)",
    "Logistic regression (objective perturbation) on records (x in [-1, 1], label 0 or 1); "
    "the output is the coefficient and the intercept: 1-DP under replace-one.  About 40 fits "
    "per second, so it is audited only with small samples (slow tests).",
    [(-1.0, 1.0), [0, 1]],
    "replace-one",
    (2, 4),
    _logistic_regression,
)

#: Every diffprivlib adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = {
    a.name: a
    for a in (
        diffprivlib_laplace_sum,
        diffprivlib_geometric_count,
        diffprivlib_gaussian_analytic_sum,
        diffprivlib_histogram,
        diffprivlib_mean,
        diffprivlib_variance,
        diffprivlib_gaussian_nb,
        diffprivlib_linear_regression,
        diffprivlib_logistic_regression,
    )
}
