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

Each point is the mean error over the seeds with a 95% Student-t interval (mean +- t_{0.975,
s-1} * sd / sqrt(s) over s seeds: the spread of the runs, not a bound).  A point the learner
refuses (an epsilon outside its theorem's range, an n too small for its subsample) is kept,
marked refused, with the learner's own message.

Optional hooks a learner class may define (read with ``getattr``; see docs/learners.md):

* ``N_FEATURES``: the exact feature count it needs (e.g. 2 for learners of R^2): the data
  are cut to that many columns;
* ``CURVE_REGIMES``: ``{label: parameters}``, other parameter settings to draw beside the
  defaults (e.g. a practical regime whose privacy proof still holds), each clearly labelled;
* ``sample_complexity_notes(epsilon, delta, d, n)``: lines stating the paper's own
  sample-complexity numbers at these parameters (why a learner cannot learn at practical n).

Data (:func:`datasets_for`): per task, a synthetic distribution standard for it and a real
dataset bundled with scikit-learn (breast cancer, Wolberg et al., 569 rows, 30 features).
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

__all__ = [
    "FULL_GRID",
    "QUICK_GRID",
    "CurvePoint",
    "CurveSet",
    "Dataset",
    "breast_cancer",
    "datasets_for",
    "diffprivlib_available",
    "learning_curves",
    "synthetic",
]

Draw = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: The grid of the committed curves (``dpaudit learn --curves``): keyword arguments of
#: :func:`learning_curves` and ``test`` (synthetic test rows per seed).
FULL_GRID: dict[str, Any] = {
    "ns": [100, 300, 1000, 3000],
    "epsilons": [0.1, 0.3, 0.9, 3.0],
    "fixed_epsilon": 0.9,
    "fixed_n": 1000,
    "seeds": 3,
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


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A source of training and test rows.

    Attributes:
        name: short name (``synthetic`` / ``breast-cancer``).
        description: one sentence on the distribution and preprocessing.
        draw: ``draw(n, rng)`` -> (X_train of n rows, y_train, X_test, y_test).
        feature_norm: a public bound on the rows' Euclidean norm (given to the learners that
            take ``feature_norm`` and to diffprivlib as ``data_norm``).
        fit_intercept: whether the classes are split by a halfspace through the origin
            (False) or need an intercept (True).
        max_n: the largest training size available (None: unbounded).
    """

    name: str
    description: str
    draw: Callable[[int, np.random.Generator], Draw]
    feature_norm: float = 1.0
    fit_intercept: bool = False
    max_n: int | None = None


# ---- data ------------------------------------------------------------------------------------


def _margin_rows(
    n: int, w: np.ndarray, margin: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """n unit vectors of R^d with |<w, x>| >= margin (uniform on the sphere, by rejection),
    labelled sign(<w, x>) in {-1, +1}: 000's margin distribution."""
    rows: list[np.ndarray] = []
    have = 0
    while have < n:
        Z = rng.standard_normal((2 * (n - have) + 16, w.size))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        Z = Z[np.abs(Z @ w) >= margin]
        rows.append(Z)
        have += len(Z)
    X = np.concatenate(rows)[:n]
    return X, np.where(X @ w >= 0, 1, -1)


def synthetic(task: str, d: int, test: int = 1000) -> Dataset:
    """The synthetic data of a task.

    * ``halfspace`` (and any task not below): unit vectors of R^d with margin 0.1 around a
      random halfspace through the origin (000's distribution), labels -1/+1;
    * ``boolean``: uniform 0/1 vectors of length d labelled by the decision list "if x0 then
      1, elif not x2 then 0, else 1";
    * ``threshold``: x uniform in [0, 1] (one feature), label x >= 0.37.

    Raises:
        ValueError: for d < 1 (or < 3 for ``boolean``) or test < 1.
    """
    low = 3 if task == "boolean" else 1
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < low:
        raise ValueError(f"d must be an integer in [{low}, oo), got {d!r}")
    if isinstance(test, bool) or not isinstance(test, numbers.Integral) or test < 1:
        raise ValueError(f"test must be an integer in [1, oo), got {test!r}")

    if task == "boolean":

        def draw_boolean(n: int, rng: np.random.Generator) -> Draw:
            B = (rng.random((n + test, d)) < 0.5).astype(float)
            y = np.where(B[:, 0] == 1, 1, np.where(B[:, 2] == 0, 0, 1))
            return B[:n], y[:n], B[n:], y[n:]

        text = (
            f"uniform 0/1 vectors of length {d}, labelled by the decision list 'if x0 then 1, "
            f"elif not x2 then 0, else 1'; {test} fresh test rows per seed"
        )
        return Dataset("synthetic", text, draw_boolean, math.sqrt(d), True)
    if task == "threshold":

        def draw_threshold(n: int, rng: np.random.Generator) -> Draw:
            x = rng.random((n + test, 1))
            y = (x[:, 0] >= 0.37).astype(int)
            return x[:n], y[:n], x[n:], y[n:]

        text = f"x uniform in [0, 1], label x >= 0.37; {test} fresh test rows per seed"
        return Dataset("synthetic", text, draw_threshold, 1.0, True)
    if d < 2:
        raise ValueError(f"d must be an integer in [2, oo) for task {task!r}, got {d!r}")

    def draw(n: int, rng: np.random.Generator) -> Draw:
        w = rng.standard_normal(d)
        w /= np.linalg.norm(w)
        X, y = _margin_rows(n + test, w, 0.1, rng)
        return X[:n], y[:n], X[n:], y[n:]

    text = (
        f"unit vectors of R^{d} with margin 0.1 around a random halfspace through the origin "
        f"(000's distribution); {test} fresh test rows per seed"
    )
    return Dataset("synthetic", text, draw, 1.0, False)


#: Breast-cancer columns in the order a learner of k features takes its first k (fixed in
#: advance, not chosen on the data): worst concave points, worst radius, then the rest.
_CANCER_ORDER = (27, 20, *[j for j in range(30) if j not in (27, 20)])


def breast_cancer(task: str, d: int | None = None, test_fraction: float = 0.3) -> Dataset:
    """scikit-learn's bundled breast-cancer data (569 rows, 30 features; malignant = 0).

    Each seed splits the rows at random: ``test_fraction`` held out, the first n of the
    rest for training.  Features are scaled to [-1/2, 1/2] with each column's range over
    the whole file, and for ``boolean`` binarised at each column's median (the ranges and
    medians are treated as public, as diffprivlib's bounds are); ``threshold`` takes worst
    concave points scaled to [0, 1], with malignant as label 1 (the class of large values,
    which a threshold x >= t names).  ``d`` keeps the first d columns of a fixed order
    (worst concave points, worst radius, then the rest).

    Raises:
        ValueError: for d outside [1, 30] or test_fraction outside (0, 1).
    """
    from sklearn.datasets import load_breast_cancer

    if d is not None and (
        isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 1 <= d <= 30
    ):
        raise ValueError(f"d must be an integer in [1, 30] or None, got {d!r}")
    if not (isinstance(test_fraction, numbers.Real) and 0 < test_fraction < 1):
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    raw = load_breast_cancer()
    X = np.asarray(raw.data, dtype=float)[:, list(_CANCER_ORDER)]
    y = np.asarray(raw.target)
    low, high = X.min(axis=0), X.max(axis=0)
    U = (X - low) / np.where(high > low, high - low, 1.0)
    if task == "threshold":
        # thresholds x >= t name the positive class: malignant (label 1 here) has the larger
        # worst concave points
        Z, y = U[:, :1], 1 - y
        norm, how = 1.0, "worst concave points scaled to [0, 1]; label 1 = malignant"
    elif task == "boolean":
        Z = (np.median(X, axis=0) < X).astype(float)
        norm, how = math.sqrt(Z.shape[1]), "features binarised at their medians"
    else:
        Z, how = U - 0.5, "features scaled to [-1/2, 1/2]"
        norm = 0.0
    if d is not None:
        Z = Z[:, : int(d)]
    if task not in ("threshold", "boolean"):
        norm = math.sqrt(Z.shape[1]) / 2
    test = round(len(Z) * float(test_fraction))

    def draw(n: int, rng: np.random.Generator) -> Draw:
        order = rng.permutation(len(Z))
        held, pool = order[:test], order[test:]
        if n > len(pool):
            raise ValueError(f"n must be at most {len(pool)} for breast-cancer, got {n}")
        return Z[pool[:n]], y[pool[:n]], Z[held], y[held]

    text = (
        f"scikit-learn's breast-cancer data ({len(Z)} rows, {Z.shape[1]} feature"
        f"{'' if Z.shape[1] == 1 else 's'}; {how}); per seed a random {test}-row test split"
    )
    return Dataset("breast-cancer", text, draw, norm, True, len(Z) - test)


def datasets_for(info: LearnerInfo, d: int = 10, test: int = 1000) -> list[Dataset]:
    """The synthetic data of the learner's task (d features, or the learner's
    ``N_FEATURES``; ``test`` test rows per seed) and the breast-cancer data (cut to
    ``N_FEATURES`` columns if set)."""
    fixed = getattr(info.factory, "N_FEATURES", None)
    return [synthetic(info.task, fixed or d, test), breast_cancer(info.task, fixed)]


# ---- results ---------------------------------------------------------------------------------


@dataclasses.dataclass
class CurvePoint:
    """One point: a method at (n, epsilon) on a dataset, its test errors over the seeds.

    ``method`` is the learner's name, ``non-private`` or ``diffprivlib``; ``regime`` the
    parameter setting (``defaults`` or a label of the learner's ``CURVE_REGIMES``); ``axis``
    ``"n"`` or ``"epsilon"``; ``refused`` the learner's message when it would not run.
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

    @property
    def mean(self) -> float:
        return float(np.mean(self.errors)) if self.errors else math.nan

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
        out.update(mean=self.mean, half_width=self.half_width)
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
    shown = f"{'integers' if integer else 'numbers'} in ({low:g}, oo)"
    if integer:
        shown = f"integers in [{int(low)}, oo)"
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
        est = info.factory()
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
    fixed_epsilon: float = 0.9,
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
        regimes: also draw the learner's ``CURVE_REGIMES``.
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
        regime_map.update(getattr(info.factory, "CURVE_REGIMES", {}) or {})
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
            majority.append(float(min(np.mean(yt == v) for v in np.unique(y))))
            fit_seed = int(rng.integers(2**31 - 1))
            for axis, n, eps in grid:
                Xn, yn = X[:n], y[:n]
                if len(np.unique(yn)) < 2:
                    continue  # too few rows to hold both classes: no method can fit
                methods: list[tuple[str, str, Callable[[], Any]]] = [
                    (info.name, label, _learner_factory(info, data, eps, delta, fit_seed, params))
                    for label, params in regime_map.items()
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
    hook = getattr(info.factory, "sample_complexity_notes", None)
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
    )


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
