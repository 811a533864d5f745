"""Learning curves of the registered private learners: test error against n and epsilon.

For a learner of :mod:`dpaudit.learners` (by name; dpaudit never imports the package that
provides it), :func:`learning_curves` fits it on nested training sets of the sizes asked,
at the privacy levels asked, over several seeds, and measures the 0-1 error on held-out
rows; beside it, on the same rows, two baselines:

* ``non-private``: scikit-learn's ``LogisticRegression`` (no privacy at all: the floor);
* ``diffprivlib``: IBM diffprivlib's ``LogisticRegression`` (epsilon-DP, objective
  perturbation of Chaudhuri, Monteleoni, Sarwate 2011), a peer private learner at the same
  epsilon, when diffprivlib is installed (``pip install diffprivlib``); otherwise it is left
  out and :attr:`CurveSet.notes` says so.

Each point holds the test errors of every seed; the curves show their median with the
quartiles (the spread of the runs over seeds, not a bound: a learner's defaults are chosen
for the median, and a wide interquartile range says the result swings by seed); the mean
with a 95% Student-t interval is kept too.  A point the learner refuses (an n too small for
its subsample, ...) is kept, marked refused, with the learner's own message.

Optional hooks a learner class may define (read with ``getattr``; see docs/learners.md):

* ``N_FEATURES``: the exact feature count it needs (a plugin's learner of a fixed
  dimension): the data are cut to that many columns;
* ``CURVE_REGIMES``: ``{label: parameters}``, other parameter settings to draw beside the
  defaults (e.g. a practical regime whose privacy proof still holds), each clearly labelled;
* ``CURVE_MAX_N``: ``{label: (largest n, why)}`` (``"defaults"`` or a ``CURVE_REGIMES``
  label): a setting too slow above that n is not run there; each point left out is kept,
  marked not run with the reason, and the notes say so (never silently missing);
* ``sample_complexity_notes(epsilon, delta, d, n)``: lines stating the paper's own
  sample-complexity numbers at these parameters (why a learner cannot learn at practical n);
* ``PEER_NOTE``: why the learner's algorithm may trail diffprivlib's (the pages quote it
  where it does).

Data (:func:`datasets_for`): per task, synthetic distributions standard for it (margin data
in d = 5, 20, 100 for the halfspace learners) and two real datasets bundled with
scikit-learn (breast cancer; the digits turned binary).
Randomness: every draw comes from ``numpy.random.Generator`` objects seeded from
``(seed, dataset index, seed index)``, so a run is reproducible.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import numbers
import re
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpaudit.learners import LearnerInfo, get_learner
from dpaudit.learning_curves.data import Dataset, breast_cancer, datasets_for, digits, synthetic

__all__ = [
    "FULL_GRID",
    "QUICK_GRID",
    "CurvePoint",
    "CurveSet",
    "Dataset",
    "breast_cancer",
    "datasets_for",
    "diffprivlib_available",
    "digits",
    "learning_curves",
    "synthetic",
]

#: The grid of the committed curves (``dpaudit learn --curves``): keyword arguments of
#: :func:`learning_curves` and ``test`` (synthetic test rows per seed).
FULL_GRID: dict[str, Any] = {
    "ns": [100, 300, 1000, 3000, 10000],
    "epsilons": [0.1, 0.3, 1.0, 3.0],
    "fixed_epsilon": 1.0,
    "fixed_n": 1000,
    "seeds": 5,
    "test": 1000,
}
#: A grid of seconds per learner (``--quick``, tests).
QUICK_GRID: dict[str, Any] = {
    "ns": [40, 120],
    "epsilons": [0.5, 0.9],
    "fixed_epsilon": 0.9,
    "fixed_n": 120,
    "seeds": 2,
    "test": 200,
}


#: A private-prediction learner (and its baselines, on the same rows) is scored on the first
#: this many test rows of each draw: every answered row is a fresh run of its mechanism.
PREDICTION_ROWS = 200


# ---- results ---------------------------------------------------------------------------------


@dataclasses.dataclass
class CurvePoint:
    """One point: a method at (n, epsilon) on a dataset, its test errors over the seeds.

    ``method`` is the learner's name, ``non-private`` or ``diffprivlib``; ``regime`` the
    parameter setting (``defaults`` or a label of the learner's ``CURVE_REGIMES``); ``axis``
    ``"n"`` or ``"epsilon"``; ``refused`` the learner's message when it would not run;
    ``skipped`` why the curves did not run it there (the learner's ``CURVE_MAX_N``).
    """

    method: str
    regime: str
    dataset: str
    axis: str
    n: int
    epsilon: float
    errors: list[float]
    seconds: float = 0.0
    refused: str | None = None
    accounted_epsilon: float | None = None
    skipped: str | None = None

    @property
    def mean(self) -> float:
        return float(np.mean(self.errors)) if self.errors else math.nan

    @property
    def median(self) -> float:
        """The median test error over the seeds (what the curves draw)."""
        return float(np.median(self.errors)) if self.errors else math.nan

    @property
    def quartiles(self) -> tuple[float, float]:
        """The first and third quartiles of the test errors over the seeds (numpy's linear
        interpolation; the spread of the runs, not a bound)."""
        if not self.errors:
            return math.nan, math.nan
        q1, q3 = np.percentile(self.errors, [25, 75])
        return float(q1), float(q3)

    @property
    def half_width(self) -> float:
        """Half-width of the 95% Student-t interval over the seeds (nan for one seed)."""
        s = len(self.errors)
        if s < 2:
            return math.nan
        from scipy.stats import t

        return float(t.ppf(0.975, s - 1) * np.std(self.errors, ddof=1) / math.sqrt(s))

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        q1, q3 = self.quartiles
        out.update(mean=self.mean, half_width=self.half_width, median=self.median, q1=q1, q3=q3)
        return out


@dataclasses.dataclass
class CurveSet:
    """Every point of one learner's curves, with the settings and notes."""

    learner: str
    task: str
    source: str
    privacy: str
    datasets: list[tuple[str, str]]
    ns: list[int]
    epsilons: list[float]
    fixed_epsilon: float
    fixed_n: int
    seeds: int
    seed: int
    delta: float
    points: list[CurvePoint]
    notes: list[str]
    chance: dict[str, float] = dataclasses.field(default_factory=dict)
    #: why the learner may trail diffprivlib (its class's ``PEER_NOTE``; "" if none).
    peer_note: str = ""

    def select(self, *, dataset: str, axis: str) -> dict[tuple[str, str], list[CurvePoint]]:
        """The points of one panel, grouped by (method, regime), in grid order."""
        out: dict[tuple[str, str], list[CurvePoint]] = {}
        for p in self.points:
            if p.dataset == dataset and p.axis == axis:
                out.setdefault((p.method, p.regime), []).append(p)
        return out


# ---- computation -----------------------------------------------------------------------------


def _diffprivlib() -> tuple[Any, str]:
    """diffprivlib's LogisticRegression class and "" or (None, why it cannot be used)."""
    if importlib.util.find_spec("diffprivlib") is None:
        return None, "diffprivlib is not installed (pip install diffprivlib)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from diffprivlib.models import LogisticRegression as DPLogisticRegression

            DPLogisticRegression(epsilon=1.0, data_norm=1.0)
    except Exception as err:  # an installed version that does not work with this scikit-learn
        import sklearn

        why = re.sub(r"\s*\([^()]*[/\\][^()]*\)", "", str(err).splitlines()[0] if str(err) else "")
        return None, (
            f"diffprivlib is installed but does not run with scikit-learn {sklearn.__version__} "
            f"({type(err).__name__}: {why})"
        )
    return DPLogisticRegression, ""


def diffprivlib_available() -> bool:
    """Whether diffprivlib's LogisticRegression (the peer baseline) can be used here."""
    return _diffprivlib()[0] is not None


def _grid(name: str, values: Any, low: float, integer: bool) -> list[Any]:
    shown = f"{'integers' if integer else 'numbers'} in ({low:g}, inf)"
    if integer:
        shown = f"integers in [{int(low)}, inf)"
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name} must be a non-empty list of {shown}, got {values!r}")
    out: list[Any] = []
    for v in values:
        ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))
        if integer:
            ok = ok and isinstance(v, numbers.Integral) and int(v) >= low
        else:
            ok = ok and float(v) > low
        if not ok:
            raise ValueError(f"{name} must be a non-empty list of {shown}, got {v!r} in {values!r}")
        out.append(int(v) if integer else float(v))
    return sorted(set(out))


def _fit_error(
    make: Callable[[], Any], X: np.ndarray, y: np.ndarray, Xt: np.ndarray, yt: np.ndarray
) -> tuple[float, float, Any]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X, y)
        error = 1.0 - float(model.score(Xt, yt))
    return error, time.perf_counter() - start, model


def _learner_factory(
    info: LearnerInfo, data: Dataset, epsilon: float, delta: float, seed: int, regime: dict
) -> Callable[[], Any]:
    def make() -> Any:
        est = info.estimator()
        accepted = est.get_params()
        wanted: dict[str, Any] = {"epsilon": epsilon, "random_state": seed, **regime}
        if "delta" in accepted:
            wanted["delta"] = delta
        if "feature_norm" in accepted:
            wanted["feature_norm"] = data.feature_norm
        if "fit_intercept" in accepted:
            wanted["fit_intercept"] = data.fit_intercept
        unknown = [k for k in wanted if k not in accepted]
        if unknown:
            raise TypeError(f"regime parameter {unknown[0]!r} is not a parameter of {info.name}")
        return est.set_params(**wanted)

    return make


def _baselines(data: Dataset, epsilon: float, seed: int) -> dict[str, Callable[[], Any]]:
    from sklearn.linear_model import LogisticRegression

    out: dict[str, Callable[[], Any]] = {
        "non-private": lambda: LogisticRegression(max_iter=1000),
    }
    peer = _diffprivlib()[0]
    if peer is not None:
        out["diffprivlib"] = lambda: peer(
            epsilon=epsilon, data_norm=data.feature_norm, random_state=seed
        )
    return out


def learning_curves(
    name: str,
    *,
    ns: Sequence[int],
    epsilons: Sequence[float],
    fixed_epsilon: float = 1.0,
    fixed_n: int | None = None,
    seeds: int = 3,
    seed: int = 0,
    delta: float = 1e-6,
    datasets: Sequence[Dataset] | None = None,
    regimes: bool = True,
    baselines: bool = True,
) -> CurveSet:
    """Test error of learner ``name`` against n (at ``fixed_epsilon``) and against epsilon
    (at ``fixed_n``, default the median of ``ns``), with the baselines, over ``seeds`` seeds.

    Args:
        name: a registered learner (:func:`dpaudit.learners.get_learner`).
        ns: training sizes (integers >= 2); sizes above a dataset's ``max_n`` are skipped
            for it (a note says so).
        epsilons: privacy levels (> 0) of the epsilon curve.
        fixed_epsilon: the epsilon of the n curve (> 0).
        fixed_n: the n of the epsilon curve (>= 2; capped at a dataset's ``max_n``).
        seeds: number of seeds (>= 2: the interval needs two).
        seed: base seed (>= 0).
        delta: delta for the approximate learners, in (0, 1).
        datasets: default :func:`datasets_for`.
        regimes: also draw the learner's ``CURVE_REGIMES`` (against n only).
        baselines: also draw the non-private and diffprivlib baselines.

    Returns:
        A :class:`CurveSet`.

    Raises:
        ValueError: naming the parameter, its range and the value, for bad grids or settings.
        KeyError: for an unknown learner.
    """
    n_grid = _grid("ns", ns, 2, True)
    eps_grid = _grid("epsilons", epsilons, 0.0, False)
    fixed_eps = _grid("fixed_epsilon", [fixed_epsilon], 0.0, False)[0]
    n_fixed = (
        n_grid[len(n_grid) // 2] if fixed_n is None else _grid("fixed_n", [fixed_n], 2, True)[0]
    )
    count = _grid("seeds", [seeds], 2, True)[0]
    base = _grid("seed", [seed], 0, True)[0]
    if not (isinstance(delta, numbers.Real) and 0 < float(delta) < 1):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    info = get_learner(name)
    data_list = list(datasets) if datasets is not None else datasets_for(info)
    regime_map: dict[str, dict[str, Any]] = {"defaults": {}}
    if regimes:
        regime_map.update(getattr(info.estimator, "CURVE_REGIMES", {}) or {})
    limits = _limits(info.name, getattr(info.estimator, "CURVE_MAX_N", {}) or {})
    notes: list[str] = []
    if baselines and not diffprivlib_available():
        notes.append(f"{_diffprivlib()[1]}: its LogisticRegression baseline is left out.")
    points: list[CurvePoint] = []
    chance: dict[str, float] = {}
    for k, data in enumerate(data_list):
        cap = data.max_n if data.max_n is not None else max([*n_grid, n_fixed])
        sizes = [n for n in n_grid if n <= cap]
        if len(sizes) < len(n_grid):
            sizes.append(cap)
            notes.append(
                f"{data.name}: the training pool has {cap} rows: n above it replaced by {cap}."
            )
        n_eps = min(n_fixed, cap)
        grid = [("n", n, fixed_eps) for n in sizes] + [("epsilon", n_eps, e) for e in eps_grid]
        n_max = max(n for _, n, _ in grid)
        majority: list[float] = []
        for s in range(count):
            rng = np.random.default_rng([base, k, s])
            X, y, Xt, yt = data.draw(n_max, rng)
            if info.privacy == "prediction":  # each answered row is a run of the mechanism
                Xt, yt = Xt[:PREDICTION_ROWS], yt[:PREDICTION_ROWS]
            majority.append(float(min(np.mean(yt == v) for v in np.unique(y))))
            fit_seed = int(rng.integers(2**31 - 1))
            for axis, n, eps in grid:
                Xn, yn = X[:n], y[:n]
                if len(np.unique(yn)) < 2:
                    continue  # too few rows to hold both classes: no method can fit
                # the labelled regimes are drawn against n only (their epsilon panel would
                # repeat the n panel's story at the cost of the paper's slow optimisers)
                methods: list[tuple[str, str, Callable[[], Any]]] = [
                    (info.name, label, _learner_factory(info, data, eps, delta, fit_seed, params))
                    for label, params in regime_map.items()
                    if label == "defaults" or axis == "n"
                ]
                if baselines:
                    methods += [
                        (method, "baseline", make)
                        for method, make in _baselines(data, eps, fit_seed).items()
                    ]
                for method, regime, make in methods:
                    point = _point(points, method, regime, data.name, axis, n, eps)
                    if point.refused is not None:
                        continue
                    limit = limits.get(regime) if method == info.name else None
                    if limit is not None and n > limit[0]:
                        point.skipped = f"not run above n = {limit[0]}: {limit[1]}"
                        continue
                    if axis == "epsilon" and eps == fixed_eps and n in sizes:
                        # the same fit as the n curve's point (same rows, same seed)
                        twin = _point(points, method, regime, data.name, "n", n, eps)
                        point.errors, point.refused = twin.errors, twin.refused
                        point.accounted_epsilon = twin.accounted_epsilon
                        continue
                    try:
                        error, seconds, model = _fit_error(make, Xn, yn, Xt, yt)
                    except ValueError as err:
                        if method != info.name:
                            raise
                        point.refused = str(err).splitlines()[0]
                        point.errors.clear()
                        continue
                    point.errors.append(error)
                    point.seconds += seconds
                    g = getattr(model, "guarantee_", None)
                    if g is not None:
                        point.accounted_epsilon = max(
                            point.accounted_epsilon or 0.0, float(g["epsilon"])
                        )
        chance[data.name] = float(np.mean(majority))
    for label, (largest, why) in limits.items():
        if any(p.skipped and p.regime == label for p in points):
            notes.append(
                f"{'the defaults' if label == 'defaults' else label}: not run above "
                f"n = {largest} ({why})."
            )
    hook = getattr(info.estimator, "sample_complexity_notes", None)
    if callable(hook):
        d = data_list[0].draw(2, np.random.default_rng(0))[0].shape[1]
        notes += list(hook(fixed_eps, float(delta), d, n_fixed))
    return CurveSet(
        info.name,
        info.task,
        info.source,
        info.privacy,
        [(data.name, data.description) for data in data_list],
        n_grid,
        eps_grid,
        fixed_eps,
        n_fixed,
        count,
        base,
        float(delta),
        points,
        notes,
        chance,
        str(getattr(info.estimator, "PEER_NOTE", "") or ""),
    )


def _limits(name: str, raw: Any) -> dict[str, tuple[int, str]]:
    """A learner's ``CURVE_MAX_N``, checked: ``{label: (largest n >= 2, why)}``."""
    out: dict[str, tuple[int, str]] = {}
    for label, value in dict(raw).items():
        largest, why = value if isinstance(value, tuple) and len(value) == 2 else (None, None)
        if (
            not isinstance(largest, numbers.Integral)
            or isinstance(largest, bool)
            or int(largest) < 2
            or not isinstance(why, str)
            or not why.strip()
        ):
            raise TypeError(
                f"CURVE_MAX_N of {name} must map a regime label to (an integer n >= 2, a "
                f"non-empty reason), got {value!r} for {label!r}"
            )
        out[str(label)] = (int(largest), why.strip())
    return out


def _point(
    points: list[CurvePoint],
    method: str,
    regime: str,
    dataset: str,
    axis: str,
    n: int,
    eps: float,
) -> CurvePoint:
    for p in points:
        if (p.method, p.regime, p.dataset, p.axis, p.n, p.epsilon) == (
            method,
            regime,
            dataset,
            axis,
            n,
            eps,
        ):
            return p
    point = CurvePoint(method, regime, dataset, axis, n, eps, [])
    points.append(point)
    return point
