"""The registry of private learners that ``dpaudit learn`` lists and runs.

dpaudit has no learners of its own and never imports the packages that provide them: a
package registers each learner with :func:`register_learner` from a ``register()`` function
it declares as an entry point of the group ``dpaudit.learners`` (see :mod:`dpaudit.plugins`;
this repository's ``mechanisms`` package does, in ``mechanisms/estimators/__init__.py``).

A package may register a learner without importing it: give ``factory`` as the import path
``"package.module:ClassName"`` (the class is imported when the learner is first fitted,
:attr:`LearnerInfo.estimator`), so that ``dpaudit learn --list`` and its argument errors
import no learner's code.

A learner is a scikit-learn-compatible classifier class: constructed with keyword
arguments (its privacy parameters among them, e.g. ``epsilon``, ``delta``, ``random_state``),
``fit(X, y)`` on a numeric matrix and two class labels, then ``predict`` / ``score``, and,
after fit, ``guarantee_``: a mapping with at least ``"epsilon"`` and ``"delta"`` (accounted
upper bounds, rounded up).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dpaudit.plugins import GROUPS, load_group, load_object, raise_on_errors
from dpaudit.suggestions import closest_hint

__all__ = [
    "LEARNERS",
    "PRIVACY_KINDS",
    "LearnerInfo",
    "get_learner",
    "load_learners",
    "progress",
    "register_learner",
    "report_progress",
]

#: What kind of guarantee a learner gives: ``pure`` (epsilon-DP), ``approximate``
#: ((epsilon, delta)-DP), ``label`` (DP with respect to the labels only, features public),
#: ``prediction`` (each answered prediction is private; the model is not released).
PRIVACY_KINDS = ("pure", "approximate", "label", "prediction")


@dataclasses.dataclass(frozen=True)
class LearnerInfo:
    """One registered learner.

    Attributes:
        name: the name ``dpaudit learn NAME`` takes (lower case, words joined by ``-``).
        task: what it learns: ``"halfspace"`` (halfspace / margin learners over real
            features), ``"boolean"`` (decision lists, Winnow and other learners over 0/1
            features), or another task named plainly (e.g. ``"threshold"``).
        source: the document and algorithm it implements.
        privacy: one of :data:`PRIVACY_KINDS`.
        factory: the estimator class (called with keyword arguments), or its import path
            ``"package.module:ClassName"``, imported on first use (:attr:`estimator`).
        summary: one line on what it does.
        efficient: runs in polynomial time (benchmarked at n = 10^5, d = 100); the others
            enumerate a cover or net exponential in a (small) projected dimension.
        requirements: what it needs of its input (``features``: ``"real"`` or
            ``"boolean"``; ``min_features``, ``max_features`` (None: no limit); ``epsilon``:
            the range it accepts; ``delta``: whether it takes a delta; ``note``: how it treats
            what its theorem does not cover).  Empty when the package does not say.
        regimes: its parameter regimes, each a mapping of parameter to value (as text): by
            convention ``"practical"`` (the defaults: tuned constants) and ``"paper"`` (the
            source document's).  Empty when the package does not say.
    """

    name: str
    task: str
    source: str
    privacy: str
    factory: Callable[..., Any] | str
    summary: str = ""
    efficient: bool = True
    requirements: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    regimes: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if self.privacy not in PRIVACY_KINDS:
            raise ValueError(
                f"privacy must be one of {', '.join(PRIVACY_KINDS)}, got {self.privacy!r}"
            )
        if isinstance(self.factory, str):
            module, sep, attribute = self.factory.partition(":")
            if not (sep and module and attribute):
                raise ValueError(
                    "factory must be callable or an import path 'package.module:ClassName', "
                    f"got {self.factory!r}"
                )
        elif not callable(self.factory):
            raise ValueError(f"factory must be callable, got {self.factory!r}")

    @property
    def estimator(self) -> Callable[..., Any]:
        """The estimator class (imported now when ``factory`` is an import path).

        Raises:
            dpaudit.plugins.TargetError: when the path names nothing importable.
        """
        if not isinstance(self.factory, str):
            return self.factory
        found = _IMPORTED.get(self.factory)
        if found is None:
            found = load_object(self.factory, f"learner {self.name}'s factory")
            _IMPORTED[self.factory] = found
        return found

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (without the factory; nothing is imported)."""
        if isinstance(self.factory, str):
            estimator = self.factory.replace(":", ".")
        else:
            estimator = f"{self.factory.__module__}.{self.factory.__qualname__}"
        return {
            "name": self.name,
            "task": self.task,
            "source": self.source,
            "privacy": self.privacy,
            "summary": self.summary,
            "efficient": self.efficient,
            "estimator": estimator,
            "requirements": dict(self.requirements),
            "regimes": {k: dict(v) for k, v in self.regimes.items()},
        }

    def described(self) -> dict[str, Any]:
        """:meth:`to_dict` with ``requirements`` and ``regimes`` filled in from the learner
        class's ``requirements()`` / ``regimes()`` when they were not given at registration
        (this imports the class; ``dpaudit learn --list`` shows them).

        Raises:
            dpaudit.plugins.TargetError: when the factory's path names nothing importable.
        """
        out = self.to_dict()
        for hook in ("requirements", "regimes"):
            if not out[hook]:
                out[hook] = _from_class(self, hook)
        return out


def _from_class(info: LearnerInfo, hook: str) -> dict[str, Any]:
    """A learner class's ``requirements()`` or ``regimes()`` (imports the class), {} when it
    has none: what ``to_dict`` lists for a learner registered without them."""
    method = getattr(info.estimator, hook, None)
    return dict(method()) if callable(method) else {}


#: Estimator classes imported from their paths, by path (an import is idempotent, so two
#: threads importing at once find the same class).
_IMPORTED: dict[str, Callable[..., Any]] = {}


#: The registered learners, by name, in registration order.
LEARNERS: dict[str, LearnerInfo] = {}


def register_learner(info: LearnerInfo) -> LearnerInfo:
    """Register a learner (re-registering a name replaces it).

    Raises:
        ValueError: if ``info`` is not a :class:`LearnerInfo`.
    """
    if not isinstance(info, LearnerInfo):
        raise ValueError(f"register_learner: info must be a LearnerInfo, got {info!r}")
    LEARNERS[info.name] = info
    return info


def load_learners() -> list[LearnerInfo]:
    """Call every entry point of the group ``dpaudit.learners`` (each registers its learners).

    Returns:
        Every registered learner, in registration order.

    Raises:
        dpaudit.plugins.PluginError: naming every plugin that failed to load (one line each).
    """
    raise_on_errors(load_group(GROUPS["learners"]))
    return list(LEARNERS.values())


def get_learner(name: str) -> LearnerInfo:
    """The learner registered as ``name`` (plugins loaded first).

    Raises:
        KeyError: naming the learners there are, for an unknown name.
    """
    if name not in LEARNERS:
        load_learners()
    if name not in LEARNERS:
        known = ", ".join(sorted(LEARNERS)) or "none"
        raise KeyError(
            f"learner must be one of {known}; got {name!r}{closest_hint(name, LEARNERS)} (see "
            "`dpaudit learn --list`)"
        )
    return LEARNERS[name]


_PROGRESS: contextvars.ContextVar[Callable[[int, int], None] | None] = contextvars.ContextVar(
    "dpaudit_learner_progress", default=None
)


@contextlib.contextmanager
def progress(callback: Callable[[int, int], None]) -> Iterator[None]:
    """While active, a learner's long loops call ``callback(done, total)`` now and then
    (``dpaudit learn`` draws its progress bar with it).  Per thread / asyncio task.

    Raises:
        ValueError: if ``callback`` is not callable.
    """
    if not callable(callback):
        raise ValueError(f"callback must be callable, got {callback!r}")
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def report_progress(done: int, total: int) -> None:
    """Tell the active :func:`progress` callback (if any) that ``done`` of ``total`` units of
    the current loop are done.  Learners call it; it never changes what they compute."""
    callback = _PROGRESS.get()
    if callback is not None:
        callback(int(done), int(total))
