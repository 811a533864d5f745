"""Why a method the reader expects has no column (``compare``) or no candidate (``explain``).

A student comparing composition theorems expects basic, advanced and optimal composition,
zCDP, RDP and the privacy loss distribution.  When one of them gives no number, the reason is
read from what the accountant did, in this order:

1. it was outside its theorem's domain (the guarantee's ``rejected`` list);
2. it was not computed because another bound is already exact (the derivation's note: a
   privacy loss distribution cannot improve an exact analytic profile);
3. it was computed at the composed node but dominated there by a tighter statement of the
   same kind (the node's ``considered`` statements);
4. its rule has nothing to compose: the part has no statement of the kind the rule needs
   (advanced composition needs one fixed (eps, delta) or eps-DP statement per part; optimal
   composition an eps-DP part; zCDP a zCDP part; ...), or the count is beyond a documented
   limit.  The part's own statements are listed, so the reader sees what it has instead.

Nothing is guessed: a method with none of these reasons is reported as such.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpaudit import events as ev
from dpaudit.accountant import Guarantee
from dpaudit.accountant.currencies import _binomial_exact
from dpaudit.events import Event
from dpaudit.theorems import optimal

__all__ = ["EXPECTED", "Absence", "absent_methods"]

#: The methods a reader expects, by the label of their column, with the keys of the theorems
#: whose statements carry them at the composed node and the kind of part statement their rule
#: composes (None: every part has one).
EXPECTED: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("basic composition", ("basic_composition",), None),
    ("advanced composition", ("advanced_composition",), "a fixed (eps_0, delta_0) or eps_0-DP"),
    ("optimal composition", ("optimal_composition",), "an eps_0-DP"),
    ("zCDP to (eps, delta)", ("zcdp_composition", "pure_to_zcdp"), "a zCDP"),
    ("RDP to (eps, delta) (improved conversion)", ("rdp_composition",), "a Renyi (RDP)"),
    ("privacy loss distribution", ("pld_fft",), "a privacy loss distribution"),
)

#: What the part statements of each kind are concluded by (theorem keys).
_PART_KINDS: dict[str, tuple[str, ...]] = {
    "a fixed (eps_0, delta_0) or eps_0-DP": (
        "laplace",
        "declared",
        "discrete_laplace",
        "randomized_response",
        "exponential_mechanism",
        "report_noisy_max",
        "above_threshold",
        "amplification_poisson",
        "amplification_without_replacement",
    ),
    "an eps_0-DP": (
        "laplace",
        "declared",
        "discrete_laplace",
        "randomized_response",
        "exponential_mechanism",
        "report_noisy_max",
        "above_threshold",
    ),
}


@dataclasses.dataclass(frozen=True)
class Absence:
    """A method with no number, and why."""

    method: str
    reason: str

    def __str__(self) -> str:
        return f"{self.method}: {self.reason}"


def _count(event: Event) -> int | None:
    if isinstance(event, ev.SelfComposed):
        try:
            return int(event.count)
        except TypeError:
            return None
    if isinstance(event, ev.Composed):
        return len(event.events)
    return None


def _node(g: Guarantee, event: Event) -> Any:
    return next((c for c in g.considered if c.event == event), None)


def _part(event: Event) -> Event | None:
    if isinstance(event, ev.SelfComposed):
        return event.event
    if isinstance(event, ev.Composed):
        parts = event.events
        return parts[0] if all(p == parts[0] for p in parts[1:]) else None
    return None


def _why(g: Guarantee, label: str, keys: tuple[str, ...], kind: str | None) -> str:
    for r in g.rejected:
        if getattr(r, "theorem", None) is not None and r.theorem.key in keys:
            return f"not applicable: {r}"
    note = g.derivation.note or ""
    if label in note and "not computed" in note:
        return (
            f"not computed: the chosen bound ({g.theorem.name}) is exact -- its certified lower "
            "and upper bounds agree within 1e-9 -- so no other method can be below it"
        )
    top = _node(g, g.event)
    if top is not None:
        found = [s for s in top.found if s.theorem.key in keys]
        if found and not any(k for s, k in zip(top.found, top.kept, strict=True) if s in found):
            return (
                f"computed at {g.event}, and dominated there by a tighter statement of its kind, "
                "so it is not carried up"
            )
    part = _part(g.event)
    if part is None:
        if label == "optimal composition" and isinstance(g.event, ev.Composed):
            return "optimal composition is computed here for k copies of one part only"
        return "its rule composes copies of one part; this event is not such a composition"
    count = _count(g.event)
    if label == "optimal composition" and count is not None and count > optimal.MAX_EXACT_COUNT:
        return (
            f"k = {count} is above {optimal.MAX_EXACT_COUNT}: the exact sum of Kairouz, Oh, "
            "Viswanath 2015, Theorem 3.3 has k + 1 terms"
        )
    if label == "privacy loss distribution" and count is not None and _binomial_exact(part, count):
        return (
            "optimal composition is exact for k copies of this mechanism (its privacy loss takes "
            "two values, so the k-fold loss is binomial); a discretised PLD could only "
            "approximate it"
        )
    node = _node(g, part)
    has = [] if node is None else [s.theorem.name for s in node.found]
    shown = ", ".join(dict.fromkeys(has)) or "none"
    if kind is not None:
        kinds = _PART_KINDS.get(kind)
        if kinds is None or node is None or not any(s.theorem.key in kinds for s in node.found):
            extra = ""
            if label.startswith("zCDP") and isinstance(part, ev.PoissonSampled):
                extra = (
                    " (Poisson subsampling does not amplify zCDP in general; its Renyi "
                    "curve, which it does amplify, is kept instead)"
                )
            return (
                f"it composes {kind} statement of each part; {part} has none{extra} -- its "
                f"statements: {shown}"
            )
    return f"no rule gave it for {g.event} (the part's statements: {shown})"


def absent_methods(g: Guarantee, present: set[str]) -> list[Absence]:
    """The expected methods not among ``present`` (column labels), each with its reason read
    from ``g`` (the guarantee of the composed event).

    Args:
        g: the accountant's guarantee for the composed event (with its ``considered``).
        present: the labels that have a number.

    Returns:
        One :class:`Absence` per expected method without a number, in :data:`EXPECTED` order.
    """
    out = []
    for label, keys, kind in EXPECTED:
        if label in present or (
            label.startswith("zCDP") and any(p.startswith("zCDP") for p in present)
        ):
            continue
        out.append(Absence(label, _why(g, label, keys, kind)))
    return out
