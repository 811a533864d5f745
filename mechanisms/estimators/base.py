"""The common scikit-learn interface of the private learners.

:class:`PrivateClassifier` turns one of the learners of :mod:`mechanisms` (a ``fit(X, y,
rng)`` on internal labels, a ``plan(n)`` event) into a scikit-learn classifier:

* constructor arguments are stored as given (scikit-learn's convention); they are checked in
  :meth:`~PrivateClassifier.fit`, where a bad privacy parameter raises a ``ValueError``
  naming the parameter, its admissible range and the value received;
* any two class labels: ``classes_`` holds them sorted, the first maps to the learner's
  negative label (-1 or 0), the second to its positive label;
* ``random_state`` (None, an int, a :class:`numpy.random.Generator` or a legacy
  ``RandomState``) becomes a :class:`numpy.random.Generator` at each fit, so an int seed
  makes every fit reproducible;
* the run executes inside a :class:`~mechanisms.ledger.Ledger`; before it runs, the plan's
  guarantee is accounted and the fit is *refused* (nothing runs) when it exceeds the
  requested epsilon or delta; after it ran, the ledger is checked against the plan
  (:meth:`~mechanisms.ledger.Ledger.check_within`) and ``guarantee_`` holds the accounted
  upper bounds (rounded up) of what the run spent;
* ``regime`` (:mod:`mechanisms.estimators.regimes`): ``"practical"`` (default) fills the
  parameters left at None with tuned, data-independent constants, ``"paper"`` with the source
  document's; ``settings_`` holds what the fit ran with, ``guarantee_`` the regime and the
  epsilon the run's formulas used (``run_epsilon``, at most the request: a theorem stated
  for epsilon < 1 runs at :data:`~mechanisms.estimators.regimes.BELOW_ONE` when asked for
  more, and ``guarantee_["notes"]`` says so).
"""

from __future__ import annotations

import math
import numbers
import threading
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from dpaudit.accountant import Accountant, Guarantee
from dpaudit.events import Event, PostProcessed
from mechanisms.estimators.regimes import check_regime, described, requirements, resolve
from mechanisms.ledger import Ledger, LedgerExceededError

__all__ = [
    "PAPER_CURVE",
    "AccountedGuarantee",
    "PrivateClassifier",
    "as_generator",
    "check_in_range",
    "check_integer",
]

#: The label of the paper regime in the learning curves (``CURVE_REGIMES``, ``CURVE_MAX_N``).
PAPER_CURVE = "paper's constants (regime='paper')"

#: Guarantees of plans already accounted, by (event, delta): sklearn's checks fit the same
#: learner on the same sizes many times, and accounting a noisy-SGD plan takes about a second.
_ACCOUNTED: dict[tuple[Event, Any], Guarantee] = {}
_ACCOUNTED_LOCK = threading.Lock()


def _accounted(event: Event, delta: Any) -> Guarantee:
    key = (event, delta)
    with _ACCOUNTED_LOCK:
        found = _ACCOUNTED.get(key)
    if found is None:
        found = Accountant().guarantee(event, delta)
        with _ACCOUNTED_LOCK:
            if len(_ACCOUNTED) > 256:
                _ACCOUNTED.clear()
            _ACCOUNTED[key] = found
    return found


def _json_ready(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings of a fit as plain JSON values (a Generator ``random_state`` as its
    type name)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, (bool, str)) or value is None:
            out[key] = value
        elif isinstance(value, numbers.Integral):
            out[key] = int(value)
        elif isinstance(value, numbers.Real):
            out[key] = float(value)
        else:
            out[key] = type(value).__name__
    return out


def _is_boolean(X: np.ndarray) -> bool:
    return bool(((X == 0) | (X == 1)).all())


def as_generator(random_state: Any) -> np.random.Generator:
    """A :class:`numpy.random.Generator` from scikit-learn-style ``random_state``.

    Args:
        random_state: None (fresh entropy), an int >= 0 (a reproducible seed), a
            ``Generator`` (used as is: successive fits continue its stream) or a
            ``numpy.random.RandomState`` (a seed drawn from it, as scikit-learn draws
            from one).

    Raises:
        ValueError: for anything else (naming the value received).
    """
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if int(random_state) < 0:
            raise ValueError(
                f"random_state must be None, an integer in [0, inf) or a numpy Generator, "
                f"got {random_state!r}"
            )
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    raise ValueError(
        f"random_state must be None, an integer in [0, inf) or a numpy Generator, "
        f"got {random_state!r}"
    )


def check_in_range(
    name: str,
    value: Any,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = True,
    high_open: bool = True,
) -> float:
    """``value`` as a float in the interval (low, high) (ends open or closed as asked).

    Raises:
        ValueError: naming ``name``, the interval and the value received, for a value that
            is not a real number (bools refused) or lies outside the interval.
    """
    left = "(" if low_open else "["
    right = ")" if high_open or math.isinf(high) else "]"
    shown_high = "inf" if math.isinf(high) else f"{high:g}"
    message = f"{name} must be a number in {left}{low:g}, {shown_high}{right}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(message)
    if (v <= low if low_open else v < low) or (v >= high if high_open else v > high):
        raise ValueError(message)
    return v


def check_integer(name: str, value: Any, low: int = 1, high: float = math.inf) -> int:
    """``value`` as an int in [low, high].

    Raises:
        ValueError: naming ``name``, the range and the value received.
    """
    shown_high = "inf)" if math.isinf(high) else f"{int(high)}]"
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not low <= int(value) <= high
    ):
        raise ValueError(f"{name} must be an integer in [{low}, {shown_high}, got {value!r}")
    return int(value)


class AccountedGuarantee(dict):
    """What a fitted learner's run spent, from its ledger: a dict (JSON-ready) with

    * ``epsilon``, ``delta``: the privacy guarantee of the fitted model (of the kind
      ``privacy``): upper bounds (floats rounded up) the accountant derived from the declared,
      data-independent plan, checked before the run to be within what was requested;
    * ``spent_epsilon``: the accountant's bound on the run's ledger at ``delta`` (checked to
      be at most ``epsilon``; it may be smaller when the run stopped early -- a data-dependent
      quantity, not a guarantee);
    * ``planned_epsilon``: the same as ``epsilon``;
    * ``requested_epsilon``, ``requested_delta``: what the learner was asked for;
    * ``privacy``: ``pure``, ``approximate``, ``label`` or ``prediction``;
    * ``theorem``: the theorem that concluded the plan's guarantee;
    * ``plan``, ``ledger``: the event expressions of the plan and of what the run recorded;
    * ``regime``: ``practical`` (tuned constants) or ``paper`` (the document's);
    * ``run_epsilon``: the epsilon the learner's formulas ran at (at most the request; below
      it when the learner's theorem needs a smaller epsilon), ``notes`` saying why.

    Attribute access works too (``guarantee_.epsilon``).
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class PrivateClassifier(ClassifierMixin, BaseEstimator):
    """Base class of the private learners' scikit-learn interface.

    A subclass sets the class attributes below and implements :meth:`_learner` (the wrapped
    learner for the settings and data shape), :meth:`_fit_learner` (run it on features and
    internal labels) and :meth:`_decision` (real scores, > 0 for the positive class).  The
    hooks take ``s``, the settings of the fit (:func:`mechanisms.estimators.regimes.resolve`:
    the constructor's arguments with the regime's values filled in).

    Attributes:
        NAME, TASK, SOURCE, PRIVACY, SUMMARY: the registry entry (:mod:`dpaudit.learners`).
        LABELS: the learner's internal (negative, positive) labels, (-1, 1) or (0, 1).
        EFFICIENT: polynomial time (benchmarked at n = 10^5, d = 100).
        BOOLEAN: features must be 0/1 (checked in fit and predict).
        MIN_FEATURES, MAX_FEATURES: the number of features accepted (None: any).
        REGIME_DEFAULTS: regime -> {parameter: value or Rule} for the parameters whose
            constructor default is None.
        TUNED: parameter -> why its tuned value keeps the privacy proof (docstrings,
            ``learn --list``).
        EPSILON_NOTE: how the learner treats an epsilon its theorem does not cover.
        CURVE_REGIMES, CURVE_MAX_N, :meth:`sample_complexity_notes`: read by
            :mod:`dpaudit.learning_curves`.
    """

    NAME: ClassVar[str] = ""
    TASK: ClassVar[str] = ""
    SOURCE: ClassVar[str] = ""
    PRIVACY: ClassVar[str] = "pure"
    SUMMARY: ClassVar[str] = ""
    LABELS: ClassVar[tuple[int, int]] = (-1, 1)
    EFFICIENT: ClassVar[bool] = True
    BOOLEAN: ClassVar[bool] = False
    MIN_FEATURES: ClassVar[int] = 1
    MAX_FEATURES: ClassVar[int | None] = None
    REGIME_DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {"practical": {}, "paper": {}}
    TUNED: ClassVar[dict[str, str]] = {}
    EPSILON_NOTE: ClassVar[str] = ""
    #: Labelled parameter settings that learning curves draw beside the defaults; each must
    #: keep the privacy proof valid (the accountant checks the plan of every fit anyway).
    CURVE_REGIMES: ClassVar[dict[str, dict[str, Any]]] = {PAPER_CURVE: {"regime": "paper"}}
    #: {label ("defaults" or a CURVE_REGIMES label): (largest n, why)}: the learning curves
    #: do not run that setting above that n and say why on the page.
    CURVE_MAX_N: ClassVar[dict[str, tuple[int, str]]] = {}

    @classmethod
    def sample_complexity_notes(cls, epsilon: float, delta: float, d: int, n: int) -> list[str]:
        """Lines stating the source document's own sample-complexity numbers at these
        parameters (``d`` features, ``n`` the size of the learning curve's epsilon panel),
        for the learning-curve pages.  Default: none (the theorem's constants are hidden in
        an O(.))."""
        return []

    @classmethod
    def requirements(cls) -> dict[str, Any]:
        """What the learner needs (``learn --list --json``): feature kind, dimension limits,
        epsilon range, whether it takes delta, and how it handles the rest."""
        return requirements(
            "boolean" if cls.BOOLEAN else "real",
            cls.MIN_FEATURES,
            cls.MAX_FEATURES,
            "(0, inf)",
            "delta" in cls().get_params(),
            cls.EPSILON_NOTE,
        )

    @classmethod
    def regimes(cls) -> dict[str, dict[str, str]]:
        """The regimes' constants as text (``learn --list``)."""
        return described(cls.REGIME_DEFAULTS)

    # ---- to implement ------------------------------------------------------------------

    def _check_params(self, s: Any) -> None:
        """Raise ValueError (parameter, range, value) for a bad setting."""

    def _run_epsilon(self, s: Any) -> tuple[float, list[str]]:
        """The epsilon the learner's formulas run at and notes saying why it is below the
        request (default: the request).  Any value at most the request is private at the
        request: the plan is accounted and checked against the request before the run."""
        return float(self.epsilon), []

    def _reduction_notes(self, s: Any, d: int) -> list[str]:
        """Notes on a data-independent reduction the learner applies to d features (e.g. a
        projection to the dimension its algorithm is stated in); default none."""
        return []

    def _learner(self, s: Any, n: int, d: int) -> Any:
        """The wrapped learner (it has ``plan``) for n examples of d features."""
        raise NotImplementedError

    def _plan(self, s: Any, learner: Any, n: int, d: int) -> Event:
        return learner.plan(n)

    def _fit_learner(
        self, s: Any, learner: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator
    ) -> Any:
        raise NotImplementedError

    def _decision(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _target_delta(self) -> Any:
        """The delta the guarantee is stated at (None: the plan's natural guarantee)."""
        delta = getattr(self, "delta", None)
        return None if delta is None else float(delta)

    # ---- scikit-learn interface -----------------------------------------------------------

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _validate_X(self, X: Any, reset: bool) -> np.ndarray:
        X = validate_data(self, X, reset=reset, dtype=np.float64)
        if self.BOOLEAN and not _is_boolean(X):
            raise ValueError(
                f"X must hold boolean features (0/1) for the {self.NAME} learner, got values "
                f"outside {{0, 1}} (e.g. {X[(X != 0) & (X != 1)][0]!r})"
            )
        return X

    def _settings(self, n: int, d: int) -> Any:
        """The settings of a fit on n rows of d features (regime filled in, epsilon checked,
        the feature count checked against the learner's limits)."""
        check_regime(getattr(self, "regime", "practical"))
        check_in_range("epsilon", self.epsilon, 0.0)
        high = self.MAX_FEATURES
        if d < self.MIN_FEATURES or (high is not None and d > high):
            limit = f"[{self.MIN_FEATURES}, {'inf)' if high is None else f'{high}]'}"
            raise ValueError(
                f"X must have a number of features in {limit} for the {self.NAME} learner, got {d}"
            )
        return resolve(self.get_params(), self.REGIME_DEFAULTS, n, d)

    def fit(self, X: Any, y: Any) -> PrivateClassifier:
        """Fit privately on (X, y); ``guarantee_`` then holds the accounted guarantee.

        Args:
            X: (n, d) numeric features.
            y: n labels of exactly two classes.

        Returns:
            self.

        Raises:
            ValueError: for malformed data (not two classes, non-finite or, for a boolean
                learner, non-0/1 features) or a parameter outside its range; for a plan whose
                accounted guarantee exceeds the requested epsilon or delta (nothing runs).
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        if self.BOOLEAN and not _is_boolean(X):
            raise ValueError(
                f"X must hold boolean features (0/1) for the {self.NAME} learner, got values "
                f"outside {{0, 1}}"
            )
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        classes, internal = np.unique(y, return_inverse=True)
        if y_type != "binary" or len(classes) != 2:
            shown = ", ".join(map(repr, classes[:5].tolist())) + (
                ", ..." if len(classes) > 5 else ""
            )
            count = "one class" if len(classes) == 1 else f"{len(classes)} classes"
            raise ValueError(
                f"y must hold exactly two classes for the {self.NAME or 'private'} learner, got "
                f"{count} ({shown}). Only binary classification is supported. The type of the "
                f"target is {y_type}."
            )
        n, d = X.shape
        s = self._settings(n, d)
        self._check_params(s)
        s.epsilon, notes = self._run_epsilon(s)
        notes = [*notes, *self._reduction_notes(s, d)]
        learner = self._learner(s, n, d)
        plan = self._plan(s, learner, n, d)
        delta = self._target_delta()
        planned = _accounted(plan, delta)
        self._refuse_if_over(planned)
        labels = np.asarray(self.LABELS, dtype=np.int64)[internal.ravel()]
        self._run(s, notes, learner, X, labels, classes, plan, planned)
        return self

    def _run(
        self,
        s: Any,
        notes: list[str],
        learner: Any,
        X: np.ndarray,
        labels: np.ndarray,
        classes: np.ndarray,
        plan: Event,
        planned: Guarantee,
    ) -> None:
        """Run the learner in a ledger, check the ledger against the plan, then set
        ``classes_``, ``model_``, ``settings_`` and ``guarantee_`` (nothing is set when a step
        raises; a private-prediction learner overrides this: nothing runs at fit)."""
        delta = self._target_delta()
        rng = as_generator(self.random_state)
        with Ledger() as ledger:
            model = self._fit_learner(s, learner, X, labels, rng)
        recorded = ledger.event()
        # the plan of a learner that outputs a function of its mechanisms' outputs is
        # PostProcessed(what it records): the same guarantee, so the same accounting
        inner = plan
        while isinstance(inner, PostProcessed):
            inner = inner.event
        spent = planned if recorded == inner else _accounted(recorded, delta)
        if spent.epsilon_upper is None or spent.epsilon_upper > planned.epsilon_upper:
            raise LedgerExceededError(  # a bug in the learner: it spent more than it declared
                f"the run spent epsilon {spent.epsilon_upper} but its plan declares "
                f"{planned.epsilon_upper}"
            )
        self.classes_ = classes
        self.model_ = model
        self.settings_ = _json_ready(vars(s))
        # The guarantee is the plan's: what one run spends may depend on the data (how many
        # rounds a cover ran, how many AboveThreshold instances fired), so only the
        # data-independent plan bounds the privacy of the output; the ledger is checked to
        # stay within it.
        self.guarantee_ = self._accounted_guarantee(
            planned,
            plan,
            spent_epsilon=spent.epsilon_upper,
            requested_delta=None if delta is None else float(delta),
            ledger=recorded.expression(),
            regime=s.regime,
            run_epsilon=float(s.epsilon),
            notes=list(notes),
        )

    def _accounted_guarantee(
        self,
        planned: Guarantee,
        plan: Event,
        *,
        spent_epsilon: float | None,
        requested_delta: float | None,
        ledger: str,
        **extra: Any,
    ) -> AccountedGuarantee:
        """The ``guarantee_`` of a fit: the plan's accounted bounds, what the run spent, what
        was requested (see :class:`AccountedGuarantee`); ``extra`` entries come last."""
        return AccountedGuarantee(
            epsilon=planned.epsilon_upper,
            delta=planned.delta_upper,
            spent_epsilon=spent_epsilon,
            planned_epsilon=planned.epsilon_upper,
            requested_epsilon=float(self.epsilon),
            requested_delta=requested_delta,
            privacy=self.PRIVACY,
            theorem=planned.theorem.name,
            plan=plan.expression(),
            ledger=ledger,
            **extra,
        )

    def _refuse_if_over(self, planned: Guarantee) -> None:
        eps = float(self.epsilon)
        if planned.epsilon_upper is None or planned.epsilon_upper > eps:
            raise ValueError(
                f"epsilon: the {self.NAME} learner's plan at these parameters is accounted at "
                f"epsilon {planned.epsilon_upper}, above the requested {eps:g}; nothing ran "
                "(raise epsilon, or choose parameters whose plan costs less)"
            )
        delta = self._target_delta()
        if delta is not None and planned.delta_upper > delta:
            raise ValueError(
                f"delta: the {self.NAME} learner's plan is accounted at delta "
                f"{planned.delta_upper}, above the requested {delta:g}; nothing ran"
            )

    def decision_function(self, X: Any) -> np.ndarray:
        """Real scores, > 0 for ``classes_[1]`` (a post-processing of the fitted model)."""
        check_is_fitted(self)
        return np.asarray(self._decision(self._validate_X(X, reset=False)), dtype=float)

    def predict(self, X: Any) -> np.ndarray:
        """The class of each row of X: ``classes_[1]`` where the score is > 0, else
        ``classes_[0]`` (scikit-learn's convention; a tie at 0 goes to ``classes_[0]``)."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(np.int64)]
