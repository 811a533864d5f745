"""Privacy claims as papers state them, and the registry ``dpaudit verify --all`` reads.

A :class:`Claim` is one stated privacy theorem: "the algorithm whose event tree is ``plan``
is (``epsilon``, ``delta``)-DP for every parameter value in ``domain``", where ``plan``,
``epsilon`` and ``delta`` are written in the same parameters (sympy symbols, matched by
name).  The verifier (:func:`dpaudit.verify.verify_claim`) decides it:

* **proved** when the accountant's guarantee for ``plan`` (an upper bound on the true
  epsilon, derived from registered theorems whose own domains are checked) is at most the
  claimed epsilon at the claimed delta on the whole domain;
* **refuted** only with a concrete point of the domain where a *certified lower bound* on the
  true epsilon of ``plan`` exceeds the claimed epsilon (an exact privacy profile from the
  accountant, or the claim's own ``lower`` bound with its source), or where an inequality the
  proof rests on (``steps``) fails -- the latter refutes that step, and the row says so;
* **unknown** otherwise, saying what was left undecided.

Algorithm modules register their papers' theorems at import::

    from dpaudit.verify.claims import Claim, register_claim
    register_claim(Claim(key="004/lemma-a1", document="004 Bun, Fang", theorem="Lemma A.1",
                         statement="...", plan=..., epsilon=..., delta=..., domain=...))

and their package declares an entry point of the group ``dpaudit.claims`` in its
``pyproject.toml`` that imports those modules (see :mod:`dpaudit.plugins`)::

    [project.entry-points."dpaudit.claims"]
    mechanisms = "mechanisms.claims:register"

``dpaudit verify --all`` imports dpaudit's own claim modules (:data:`CLAIM_MODULES`) and every
module of that group (:func:`load_claim_modules`), then prints one row per claim.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Iterable
from typing import Any

import sympy

from dpaudit.events import Event
from dpaudit.expressions import as_expr
from dpaudit.numeric import exact
from dpaudit.plugins import GROUPS, load_group
from dpaudit.suggestions import closest_hint
from dpaudit.verify.domain import Domain, by_name

__all__ = [
    "CLAIMS",
    "CLAIM_MODULES",
    "Claim",
    "ModuleLoad",
    "Step",
    "get_claim",
    "load_claim_modules",
    "register_claim",
]


@dataclasses.dataclass(frozen=True)
class Step:
    """An inequality a proof rests on, checked over the claim's domain.

    Attributes:
        name: where it is used, e.g. ``"proof of Lemma A.1, eq. (7)"``.
        relation: a sympy relation ``lhs <= rhs`` (or ``<``, ``>=``, ``>``) in the claim's
            parameters.
        domain: the step's own domain when it quantifies over variables of the proof that
            are not parameters of the claim (default: the claim's domain).
    """

    name: str
    relation: Any
    domain: Domain | None = None

    def __post_init__(self) -> None:
        rel = as_expr(self.relation)
        if not isinstance(rel, sympy.core.relational.Relational) or rel.rel_op not in (
            "<",
            "<=",
            ">",
            ">=",
        ):
            raise ValueError(
                f"Step {self.name!r}: relation must be an inequality such as "
                f"lhs <= rhs, got {self.relation!r}"
            )
        object.__setattr__(self, "relation", rel)


@dataclasses.dataclass(frozen=True)
class Claim:
    """A stated privacy theorem over a parameter domain.

    Attributes:
        key: a unique identifier, e.g. ``"004/lemma-a1"``.
        document: the source, e.g. ``"004 Bun, Fang 2020"``.
        theorem: the result's number, e.g. ``"Lemma A.1"``.
        statement: the claim in words, as the document states it.
        plan: the algorithm's event tree, symbolic in the domain's parameters.
        epsilon: the claimed epsilon (an expression in the parameters).
        delta: the claimed delta (default 0: pure DP).
        domain: where the document asserts it.
        note: anything a reader needs (reconstructed formulas, what was corrected).
        lower: optional certified lower bound on the *true* epsilon of ``plan`` at ``delta``
            (an expression in the parameters), used to refute; needs ``lower_source``.
        lower_source: why ``lower`` is a lower bound (a citation or a construction).
        steps: inequalities the document's proof rests on, each checked over the domain.
        correction: the statement that does hold, when the stated one does not.
        witnesses: candidate counterexample points (values by name) the verifier checks
            first, rigorously, against ``lower``; a wrong witness is simply not used.

    Privacy:
        The claim asserts: for all points of ``domain``, all neighbouring D, D' and output
        sets S, P[plan(D) in S] <= e^epsilon P[plan(D') in S] + delta.

    Raises:
        ValueError: for a missing field, a plan that is not an event, a delta outside
            [0, 1) at a number, or an expression mentioning a parameter with no range.
    """

    key: str
    document: str
    theorem: str
    statement: str
    plan: Event
    epsilon: Any
    delta: Any
    domain: Domain
    note: str = ""
    lower: Any = None
    lower_source: str = ""
    steps: tuple[Step, ...] = ()
    correction: str = ""
    witnesses: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        for name in ("key", "document", "theorem", "statement"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Claim: {name} must be a non-empty string, got {value!r}")
        if not re.fullmatch(r"[\w./:-]+", self.key):
            raise ValueError(
                f"Claim: key must be letters, digits and . / : - _ only, got {self.key!r}"
            )
        if not isinstance(self.plan, Event):
            raise ValueError(f"Claim {self.key}: plan must be an event, got {self.plan!r}")
        if not isinstance(self.domain, Domain):
            raise ValueError(f"Claim {self.key}: domain must be a Domain, got {self.domain!r}")
        object.__setattr__(self, "epsilon", exact(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", exact(self.delta, "delta"))
        d = self.delta
        if not d.free_symbols and not (0 <= d < 1):
            raise ValueError(f"Claim {self.key}: delta must be in [0, 1), got {d}")
        if self.lower is not None:
            object.__setattr__(self, "lower", exact(self.lower, "lower"))
            if not self.lower_source.strip():
                raise ValueError(
                    f"Claim {self.key}: lower needs lower_source (why it is a "
                    "lower bound on the true epsilon)"
                )
        steps = tuple(self.steps)
        for s in steps:
            if not isinstance(s, Step):
                raise ValueError(f"Claim {self.key}: steps must be Step objects, got {s!r}")
        object.__setattr__(self, "steps", steps)
        object.__setattr__(
            self,
            "witnesses",
            tuple({str(k): exact(v, str(k)) for k, v in w.items()} for w in self.witnesses),
        )
        known = set(self.domain.names)
        used: set[str] = {s.name for s in self.plan.free_symbols}
        for expr in (
            self.epsilon,
            self.delta,
            self.lower,
            *(s.relation for s in steps if s.domain is None),
        ):
            if expr is not None:
                used |= set(by_name(expr))
        unknown = used - known
        if unknown:
            raise ValueError(
                f"Claim {self.key}: {', '.join(sorted(unknown))} has no range in "
                f"the domain ({self.domain})"
            )

    def row(self) -> dict[str, str]:
        """The identifying columns of the ``verify --all`` table."""
        return {
            "document": self.document,
            "theorem": self.theorem,
            "domain": self.domain.text(),
            "key": self.key,
        }


#: Every registered claim by key, in registration order.
CLAIMS: dict[str, Claim] = {}


def register_claim(claim: Claim) -> Claim:
    """Add a claim to :data:`CLAIMS` and return it (registering the same claim twice is a
    no-op, so modules may be re-imported).

    Raises:
        ValueError: if a different claim is registered under the same key.
    """
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be a Claim, got {claim!r}")
    existing = CLAIMS.get(claim.key)
    if existing is not None and existing != claim:
        raise ValueError(
            f"a different claim is already registered as {claim.key!r} "
            f"({existing.document}, {existing.theorem})"
        )
    CLAIMS[claim.key] = claim
    return claim


def get_claim(key: str) -> Claim:
    """The registered claim ``key``.

    Raises:
        KeyError: naming the unknown key and the known ones.
    """
    try:
        return CLAIMS[key]
    except KeyError:
        hint = closest_hint(str(key), CLAIMS)
        raise KeyError(f"no claim {key!r}{hint}; known: {', '.join(CLAIMS) or 'none'}") from None


#: dpaudit's own modules that register claims at import; the claims of other packages come
#: from the entry points of the group ``dpaudit.claims`` (:func:`load_claim_modules`).
CLAIM_MODULES: tuple[str, ...] = ("dpaudit.verify.cover_claims",)


@dataclasses.dataclass(frozen=True)
class ModuleLoad:
    """How importing one claim module went: ``"loaded"``, ``"absent"`` or ``"error"``."""

    module: str
    status: str
    detail: str = ""


def _import(name: str) -> ModuleLoad:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is not None and (name == err.name or name.startswith(err.name + ".")):
            return ModuleLoad(name, "absent", "no such module")
        return ModuleLoad(name, "error", f"{type(err).__name__}: {err}")
    except Exception as err:  # reported as an error row, never skipped
        return ModuleLoad(name, "error", f"{type(err).__name__}: {err}")
    return ModuleLoad(name, "loaded")


def load_claim_modules(modules: Iterable[str] | None = None) -> list[ModuleLoad]:
    """Import claim modules so that their claims are registered.

    Args:
        modules: the modules to import (default: :data:`CLAIM_MODULES`, then every entry
            point of the group ``dpaudit.claims``, see :mod:`dpaudit.plugins`).

    Returns:
        One :class:`ModuleLoad` per module.  A module named in ``modules`` that does not
        exist is ``"absent"``; one that exists but raises on import is ``"error"`` with the
        exception, so a broken module is never mistaken for a missing one.  An entry point
        that fails to load (its module missing included: the metadata promised it) is an
        ``"error"`` whose detail names the plugin.
    """
    if modules is not None:
        return [_import(name) for name in modules]
    out = [_import(name) for name in CLAIM_MODULES]
    for load in load_group(GROUPS["claims"]):
        detail = (
            ""
            if load.status == "loaded"
            else (f"{load.detail} (plugin {load.name!r} of {load.group})")
        )
        out.append(ModuleLoad(load.value, load.status, detail))
    return out
