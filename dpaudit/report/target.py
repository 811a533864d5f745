"""What a report is about: a :class:`Target` bundles a claim, a declared plan and a runnable
mechanism with the neighbouring pairs to audit it on.

Targets are registered by name (``catalogue/laplace-count``, ``002/private-pac-learner``) in
:data:`TARGETS` by the package that owns them: :func:`load_targets` calls every entry point of
the group ``dpaudit.report_targets`` (see :mod:`dpaudit.plugins`; this repository's
``mechanisms`` package registers its catalogue and the source documents' claims there), and
:func:`claim_target` builds the target of a registered claim.  Users point ``dpaudit report``
at their own with ``MODULE:OBJECT``: a :class:`Target`, a list of them, a class or zero-argument
factory returning either, or a mechanism itself -- a function or object called as
``mechanism(dataset, rng)`` -- whose claim comes from its attributes (``epsilon``, ``delta``,
``pairs``, optionally ``plan()``) or from the command line as in ``dpaudit audit``
(``--epsilon``, ``--delta``, ``--d0``/``--d1`` or ``--records``: a :class:`MechanismClaim`).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dpaudit.events import Event
from dpaudit.plugins import GROUPS, TargetError, load_group, load_object, raise_on_errors
from dpaudit.report.listing import Listed, matches, unknown_specs

__all__ = [
    "TARGETS",
    "MechanismClaim",
    "OneRun",
    "Records",
    "Target",
    "UnknownTargetError",
    "claim_target",
    "load_targets",
    "register_target",
    "resolve_targets",
    "target_from_mechanism",
]

#: Default samples per dataset of a report's audit.
DEFAULT_SAMPLES = 200_000


class UnknownTargetError(KeyError):
    """A target name or pattern that matches nothing (the message lists what exists)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown target"


@dataclasses.dataclass(frozen=True)
class OneRun:
    """How a target is audited by one training run with m canaries instead of by the Monte
    Carlo auditor on neighbouring pairs (:func:`dpaudit.audit.audit_one_run`; Steinke,
    Nasr, Jagielski 2023, "Privacy auditing with one (1) training run").

    Attributes:
        train: zero-argument callable returning the trainer ``train(included, rng)``, which
            trains once with the boolean mask of included canaries and returns m scores
            (higher = more likely included).
        m: number of canaries, an integer >= 1.
        guesses: the ``(k_plus, k_minus)`` guess counts to try, fixed before the run (None:
            :func:`dpaudit.audit.one_run.default_guesses`).
    """

    train: Callable[[], Callable[..., Any]]
    m: int
    guesses: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self) -> None:
        if not callable(self.train):
            raise ValueError(
                "OneRun: train must be a zero-argument callable returning the trainer "
                f"train(included, rng), got {self.train!r}"
            )
        if isinstance(self.m, bool) or not isinstance(self.m, int) or self.m < 1:
            raise ValueError(f"OneRun: m (canaries) must be an integer >= 1, got {self.m!r}")
        if self.guesses is not None:
            ok = isinstance(self.guesses, tuple) and len(self.guesses) >= 1
            for g in self.guesses if ok else ():
                ok = ok and (
                    isinstance(g, tuple)
                    and len(g) == 2
                    and all(isinstance(k, int) and not isinstance(k, bool) for k in g)
                    and min(g) >= 0
                    and 1 <= g[0] + g[1] <= self.m
                )
            if not ok:
                raise ValueError(
                    "OneRun: guesses must be None or a non-empty tuple of (k_plus, k_minus) "
                    f"integer pairs >= 0 with 1 <= k_plus + k_minus <= m = {self.m}, got "
                    f"{self.guesses!r}"
                )


@dataclasses.dataclass(frozen=True)
class Records:
    """How a target is audited with no designed pair: the neighbouring datasets are searched
    over a record domain (:func:`dpaudit.audit.audit_records`), then the worst pair found is
    certified.  The target's ``mechanism()`` is then ``fn(data, rng)`` over record datasets
    (2-D float arrays, one row per record).

    Attributes:
        domain: the record domain, one entry per column: ``(low, high)`` or a list of values.
        relation: ``"replace-one"`` or ``"add-remove"``.
        sizes: ``(min, max)`` dataset sizes searched.
    """

    domain: tuple[Any, ...]
    relation: str = "replace-one"
    sizes: tuple[int, int] = (1, 8)

    def __post_init__(self) -> None:
        from dpaudit.audit.domain import check_domain
        from dpaudit.audit.records import RELATIONS

        check_domain(list(self.domain))
        if self.relation not in RELATIONS:
            raise ValueError(f"Records: relation must be one of {RELATIONS}, got {self.relation!r}")
        ok = (
            isinstance(self.sizes, tuple)
            and len(self.sizes) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in self.sizes)
            and 0 <= self.sizes[0] <= self.sizes[1]
        )
        if not ok:
            raise ValueError(
                f"Records: sizes must be a (min, max) tuple of integers with 0 <= min <= max, "
                f"got {self.sizes!r}"
            )

    def spec(self) -> dict[str, Any]:
        """The search's inputs, JSON-ready (for the report and its fingerprint)."""
        return {
            "domain": repr(list(self.domain)),
            "relation": self.relation,
            "sizes": list(self.sizes),
        }


@dataclasses.dataclass(frozen=True)
class Target:
    """One algorithm or mechanism to report on.

    Attributes:
        name: unique slug, ``group/short-name`` (letters, digits, ``. _ / -``); it is also the
            report's file name (``/`` becomes ``--``).
        title: a human title.
        group: ``"source documents"``, ``"catalogue"``, ``"broken"`` or a user's own.
        epsilon: the claimed epsilon at the concrete parameters audited.
        delta: the claimed delta.
        summary: one or two sentences: what it is, and for a broken mechanism what is wrong.
        claim: a registered claim key (:data:`dpaudit.verify.CLAIMS`), a
            :class:`dpaudit.verify.Claim`, or None (the report then builds a concrete claim
            "plan is (epsilon, delta)-DP" from the plan).
        plan: the declared event tree at the audited parameters, or a zero-argument callable
            returning it (None: use the claim's plan with ``parameters`` substituted).
        parameters: values of the claim's symbols for the concrete instance audited.
        mechanism: zero-argument callable returning the auditable mechanism
            (``mechanism(dataset, rng)``, optionally ``.batch``); None when the algorithm has
            no auditable form yet (the report says so).
        pairs: zero-argument callable returning the neighbouring pairs (sequences
            ``(d0, d1)`` or :class:`dpaudit.audit.NeighbouringPair`); default: the
            mechanism's ``pairs`` attribute.
        samples: samples per dataset of the audit.
        audit_options: further keyword arguments for :func:`dpaudit.audit.audit` (for
            :func:`dpaudit.audit.audit_records` with ``records``: ``edge_values``,
            ``on_error``, ``budget_seconds``, ...); the report lists them.
        true_epsilon: the mechanism's true epsilon where known (math.inf: none finite).
        expect: ``"private"``, ``"broken"`` (the audit is *expected* to flag it) or
            ``"refuted"`` (a document's claim known not to hold as stated: the verifier is
            expected to refute it).
        source: where the code lives (module and object), for the reader.
        not_audited: why the target has no audit (``mechanism`` None), one sentence; shown
            in the report and in its verdict line on the index.
        one_run: a :class:`OneRun`: audit the target by one training run with m canaries
            (:func:`dpaudit.audit.audit_one_run`, at the target's epsilon and delta and the
            report's confidence and seed) instead of by the Monte Carlo auditor; then
            ``mechanism``, ``pairs`` and ``not_audited`` must be left empty and ``samples``
            is not used.
        records: a :class:`Records`: search the neighbouring pair over a record domain
            (:func:`dpaudit.audit.audit_records`) instead of auditing given ``pairs`` (which
            must then be None).
        regenerate: the ``dpaudit report`` arguments that name this target (its report's
            "Regenerate:" line): a ``MODULE:OBJECT`` spec and its options for a user's target
            (set by :func:`resolve_targets`); empty for a registered target (its name).
    """

    name: str
    title: str
    group: str
    epsilon: float
    delta: float = 0.0
    summary: str = ""
    claim: Any = None
    plan: Event | Callable[[], Event] | None = None
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)
    mechanism: Callable[[], Any] | None = None
    pairs: Callable[[], Sequence[Any]] | None = None
    samples: int = DEFAULT_SAMPLES
    audit_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    true_epsilon: float | None = None
    expect: str = "private"
    source: str = ""
    not_audited: str = ""
    one_run: OneRun | None = None
    records: Records | None = None
    regenerate: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not re.fullmatch(r"[\w.\-]+(/[\w.\-]+)*", self.name):
            raise ValueError(
                f"Target: name must be letters, digits and . _ - separated by /, got {self.name!r}"
            )
        if not isinstance(self.epsilon, (int, float)) or not self.epsilon >= 0:
            raise ValueError(
                f"Target {self.name}: epsilon must be a number >= 0, got {self.epsilon!r}"
            )
        if not isinstance(self.delta, (int, float)) or not 0 <= self.delta < 1:
            raise ValueError(f"Target {self.name}: delta must be in [0, 1), got {self.delta!r}")
        if not isinstance(self.samples, int) or self.samples < 10:
            raise ValueError(
                f"Target {self.name}: samples must be an integer >= 10, got {self.samples!r}"
            )
        if self.not_audited and self.mechanism is not None:
            raise ValueError(
                f"Target {self.name}: not_audited (a reason for having no audit) "
                f"must be empty when a mechanism is given, got "
                f"{self.not_audited!r}"
            )
        if self.one_run is not None:
            if not isinstance(self.one_run, OneRun):
                raise ValueError(
                    f"Target {self.name}: one_run must be None or a OneRun(train, m), got "
                    f"{self.one_run!r}"
                )
            given = [
                f
                for f in ("mechanism", "pairs", "not_audited")
                if getattr(self, f) not in (None, "")
            ]
            if given:
                raise ValueError(
                    f"Target {self.name}: a target audited by one run (one_run) takes no "
                    f"{', '.join(given)}: got "
                    + ", ".join(f"{f}={getattr(self, f)!r}" for f in given)
                )
        if self.records is not None and (
            not isinstance(self.records, Records)
            or self.mechanism is None
            or self.pairs is not None
            or self.one_run is not None
        ):
            raise ValueError(
                f"Target {self.name}: records must be a Records(domain, relation, sizes) given "
                f"with a mechanism and without pairs or one_run, got {self.records!r}"
            )
        if self.expect not in ("private", "broken", "refuted"):
            raise ValueError(
                f"Target {self.name}: expect must be 'private', 'broken' or "
                f"'refuted', got {self.expect!r}"
            )

    @property
    def slug(self) -> str:
        """The file stem of the report (``/`` replaced by ``--``)."""
        return self.name.replace("/", "--")


#: Every registered target by name, in registration order.
TARGETS: dict[str, Target] = {}


def register_target(target: Target) -> Target:
    """Add ``target`` to :data:`TARGETS` (re-registering the same name replaces it).

    Returns:
        The target.

    Raises:
        ValueError: if ``target`` is not a :class:`Target`.
    """
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target, got {target!r}")
    TARGETS[target.name] = target
    return target


def load_targets() -> list[Target]:
    """Register the targets of every installed plugin: call each entry point of the group
    ``dpaudit.report_targets`` (a ``register()`` that registers its targets with
    :func:`register_target` and returns them).

    Returns:
        The targets the plugins returned, in order.

    Raises:
        dpaudit.plugins.PluginError: naming every plugin that failed to load (one line each;
            the other plugins' targets are registered).
    """
    loads = load_group(GROUPS["report_targets"])
    raise_on_errors(loads)
    return [t for load in loads for t in (load.result or ()) if isinstance(t, Target)]


def claim_target(
    key: str,
    parameters: Mapping[str, Any] | None = None,
    *,
    group: str = "source documents",
    mechanism: Callable[[], Any] | None = None,
    pairs: Callable[[], Sequence[Any]] | None = None,
    samples: int = DEFAULT_SAMPLES,
    source: str = "",
    not_audited: str = "",
) -> Target:
    """The target of the registered claim ``key`` at a concrete parameter point.

    Its claimed epsilon and delta are the claim's at ``parameters`` (0.0 where a symbol is
    left free); it is expected to be refuted when the claim carries a correction.

    Args:
        key: a key of :data:`dpaudit.verify.CLAIMS` (registered before the call).
        parameters: values of the claim's symbols, by name (exact: strings such as
            ``"1/10"``, integers, or sympy numbers).
        group: the group the target is listed under.
        mechanism: zero-argument callable returning the auditable form (None: not audited).
        pairs: zero-argument callable returning the neighbouring pairs.
        samples: samples per dataset of the audit.
        source: where the audited code lives, for the reader.
        not_audited: why there is no audit (only without ``mechanism``).

    Returns:
        The :class:`Target` named ``key``.

    Raises:
        KeyError: if no claim ``key`` is registered.
        ValueError: for a parameter value that is not an exact number.
    """
    import sympy

    from dpaudit.numeric import exact
    from dpaudit.verify import get_claim

    claim = get_claim(key)
    params = dict(parameters or {})
    values = {sympy.Symbol(k): exact(v, k) for k, v in params.items()}

    def at(expr: sympy.Expr) -> float:  # the claim's exact expression at the point
        value = expr.xreplace(
            {
                s: values[sympy.Symbol(s.name)]
                for s in expr.free_symbols
                if sympy.Symbol(s.name) in values
            }
        )
        return float(value) if not value.free_symbols else 0.0

    return Target(
        name=key,
        title=f"{claim.document}: {claim.theorem}",
        group=group,
        epsilon=at(claim.epsilon),
        delta=at(claim.delta),
        summary=claim.statement,
        claim=key,
        parameters=params,
        mechanism=mechanism,
        pairs=pairs,
        samples=samples,
        source=source,
        not_audited=not_audited,
        expect="refuted" if claim.correction else "private",
    )


@dataclasses.dataclass(frozen=True)
class MechanismClaim:
    """What the command line states for a bare mechanism named as ``MODULE:OBJECT``, as
    ``dpaudit audit`` takes it: the claim and the datasets to audit on.

    Attributes:
        epsilon: the claimed epsilon (None: the object's ``epsilon`` attribute).
        delta: the claimed delta (None: the object's ``delta``, else 0).
        pairs: the neighbouring pairs ``(d0, d1)`` (None: the object's ``pairs``).
        records: search the pair over a record domain instead (:class:`Records`).
        samples: samples per dataset of the audit (None: the object's ``samples``, else
            :data:`DEFAULT_SAMPLES`).
        arguments: the command-line words that state the above, for the report's
            "Regenerate:" line.
        audit_options: further keyword arguments of the audit (``--no-edge-values``,
            ``--on-error``: ``{"edge_values": False, "on_error": "output"}``), the target's
            ``audit_options``.
    """

    epsilon: float | None = None
    delta: float | None = None
    pairs: tuple[tuple[Any, Any], ...] | None = None
    records: Records | None = None
    samples: int | None = None
    arguments: tuple[str, ...] = ()
    audit_options: dict[str, Any] = dataclasses.field(default_factory=dict)

    def given(self) -> bool:
        """Whether the command line stated anything."""
        return bool(self.audit_options) or any(
            v is not None
            for v in (self.epsilon, self.delta, self.pairs, self.records, self.samples)
        )


#: What ``dpaudit report MODULE:OBJECT`` accepts, for the messages.
WHAT_A_TARGET_IS = (
    "a report target is a registered name (dpaudit report --list) or MODULE:OBJECT naming a "
    "dpaudit.report.Target, a list of them, a class or zero-argument factory returning either, "
    "or a mechanism called as mechanism(dataset, rng) with its claim: --epsilon (or an "
    "epsilon attribute) and the datasets, --d0/--d1, --records DOMAIN or a pairs attribute"
)


def _label(obj: Any) -> str:
    """A mechanism's name: its ``name`` attribute, a function's name, or its class's."""
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        return name
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return obj.__name__
    return type(obj).__name__


def _source(obj: Any) -> str:
    """Where a mechanism's code lives, ``module:qualname``."""
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return f"{obj.__module__}:{obj.__qualname__}"
    return f"{type(obj).__module__}:{type(obj).__qualname__}"


def target_from_mechanism(
    obj: Any,
    name: str | None = None,
    group: str = "user",
    claim: MechanismClaim | None = None,
) -> Target:
    """A target for a mechanism: a function or object called as ``mechanism(dataset, rng)``.

    Args:
        obj: the mechanism; its claim comes from ``claim`` or from its attributes
            ``epsilon`` and ``pairs`` (optionally ``delta``, ``name``, ``true_epsilon``,
            ``samples`` and a ``plan()`` method returning its declared event).
        name: the target name (default ``group/<the mechanism's name>``).
        group: the group it is listed under.
        claim: what the command line states (``--epsilon``, ``--d0``/``--d1``,
            ``--records``, ...), overriding the attributes.

    Returns:
        A :class:`Target`.

    Raises:
        ValueError: if ``obj`` is not callable, or no epsilon or no datasets are known (the
            message says what a target is and which options give them).
    """
    claim = claim or MechanismClaim()
    if not callable(obj):
        raise ValueError(f"{WHAT_A_TARGET_IS}; got {obj!r}, which is not callable")
    label = _label(obj)
    epsilon: Any = claim.epsilon if claim.epsilon is not None else getattr(obj, "epsilon", None)
    given_pairs = claim.pairs if claim.pairs is not None else getattr(obj, "pairs", None)
    records = claim.records
    missing = []
    if epsilon is None:
        missing.append("its claimed epsilon (--epsilon E)")
    if records is None and not given_pairs:
        missing.append("the datasets to audit it on (--d0 D0 --d1 D1, or --records DOMAIN)")
    if missing:
        raise ValueError(
            f"{WHAT_A_TARGET_IS}; the mechanism {label!r} ({_source(obj)}) needs "
            f"{' and '.join(missing)}"
        )
    slug = re.sub(r"[^\w.\-]+", "-", label).strip("-").lower() or "mechanism"
    plan = getattr(obj, "plan", None)
    pairs = None if records is not None else tuple(given_pairs or ())
    if claim.epsilon is None:
        epsilon = _number_attribute(obj, label, "epsilon", epsilon, "--epsilon E")
    delta = claim.delta
    if delta is None:
        delta = _number_attribute(obj, label, "delta", getattr(obj, "delta", 0.0), "--delta D")
    samples = claim.samples
    if samples is None and getattr(obj, "samples", None) is not None:
        count = _number_attribute(obj, label, "samples", obj.samples, "--samples N")
        if count != int(count):
            raise ValueError(
                f"{label}.samples must be an integer (or give --samples N), got {obj.samples!r}"
            )
        samples = int(count)
    return Target(
        name=name or f"{group}/{slug}",
        title=label,
        group=group,
        epsilon=float(epsilon),
        delta=float(delta),
        summary=(inspect.getdoc(obj) or "").strip().split("\n\n")[0],
        plan=plan if callable(plan) else None,
        mechanism=lambda: obj,
        pairs=None if pairs is None else (lambda: pairs),
        samples=int(samples) if samples is not None else DEFAULT_SAMPLES,
        true_epsilon=getattr(obj, "true_epsilon", None),
        expect="broken" if label.startswith("Broken") else "private",
        source=_source(obj),
        records=records,
        audit_options=dict(claim.audit_options),
    )


def _number_attribute(obj: Any, label: str, attribute: str, value: Any, option: str) -> float:
    """A claim read from the mechanism's attribute: a real number (a report states one claim;
    a function of the dataset, which ``dpaudit audit --records`` reads per pair, is not one).

    Raises:
        ValueError: naming the attribute, the option that states it instead, and the value.
    """
    if callable(value):
        raise ValueError(
            f"{label}.{attribute} is a function of the dataset, which a report cannot state as "
            f"one claim: give {option} on the command line (got "
            f"{getattr(value, '__name__', type(value).__name__)})"
        )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{label}.{attribute} must be a number (or give {option}), got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(
            f"{label}.{attribute} must be a finite number (or give {option}), got {value!r}"
        )
    return float(value)


def _required_positional(obj: Any) -> int | None:
    """How many positional arguments calling ``obj`` requires (None: unknown)."""
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in kinds and p.default is inspect.Parameter.empty for p in parameters)


def _load_object(spec: str, claim: MechanismClaim | None = None) -> list[Target]:
    try:
        obj = load_object(spec, "target")
    except TargetError as err:
        raise UnknownTargetError(str(err)) from None
    if isinstance(obj, type) or (
        callable(obj) and not isinstance(obj, Target) and _required_positional(obj) == 0
    ):
        obj = obj()  # a class or a factory returning targets or a mechanism
    items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    claim = claim or MechanismClaim()
    regenerate = shlex.join([spec, *claim.arguments])
    out = []
    for item in items:
        if isinstance(item, Target):
            if claim.given():
                raise ValueError(
                    f"{spec} is a Target, which carries its own claim and datasets: the "
                    f"options {' '.join(claim.arguments)} apply to a bare mechanism only"
                )
            out.append(item if item.regenerate else dataclasses.replace(item, regenerate=spec))
        else:
            target = target_from_mechanism(item, claim=claim)
            out.append(dataclasses.replace(target, regenerate=regenerate))
    return out


def resolve_targets(
    specs: Iterable[str] | None = None, claim: MechanismClaim | None = None
) -> list[Target]:
    """The targets named by ``specs``, in order, without duplicates.

    A spec is a registered name, a glob pattern over names (``catalogue/*``), a group name
    (``broken``), ``all``, or ``MODULE:OBJECT`` (see :data:`WHAT_A_TARGET_IS`).  No specs
    means every registered target.

    Args:
        specs: the specs.
        claim: the claim and datasets the command line gives a bare mechanism named as
            ``MODULE:OBJECT`` (refused for any other spec).

    Returns:
        The targets.

    Raises:
        UnknownTargetError: for a spec that matches nothing (naming it and what exists).
        ValueError: for a mechanism without its claim or datasets, or ``claim`` given with a
            spec that is not a bare mechanism.
    """
    specs = list(specs or ["all"])
    if claim is not None and claim.given() and not any(":" in spec for spec in specs):
        raise ValueError(
            f"{' '.join(claim.arguments)}: these options state the claim of a mechanism named "
            f"as MODULE:OBJECT, got the registered target(s) {' '.join(specs)}, which carry "
            "their own"
        )
    found: dict[str, Target] = {}
    for spec in specs:
        if ":" in spec:
            for t in _load_object(spec, claim):
                found.setdefault(t.name, t)
            continue
        listed = {t.name: Listed(t.name, t.group, t.title) for t in TARGETS.values()}
        matched = [t for t in TARGETS.values() if matches(spec, listed[t.name])]
        if not matched:
            raise UnknownTargetError(unknown_specs([spec], list(listed.values())))
        for t in matched:
            found.setdefault(t.name, t)
    return list(found.values())
