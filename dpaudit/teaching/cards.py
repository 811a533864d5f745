"""One theorem card explained: statement, assumptions, citation and a worked example.

    dpaudit explain advanced-composition

A card is named on the command line by its key with ``-`` for ``_``
(``advanced-composition``, ``zcdp-to-approx-cks20``), or by its human name
(``"heterogeneous advanced composition"``), case-insensitively; ``-``, ``_`` and spaces are
interchangeable.  The worked example evaluates the card's own ``bound`` at the documented
example parameters (:data:`dpaudit.theorems.examples.EXAMPLES`), rounded up.
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

from dpaudit.suggestions import closest_hint
from dpaudit.teaching.formulas import (
    Instance,
    card_formula,
    card_latex,
    instantiate,
    value_text,
    values_json,
)
from dpaudit.teaching.render import latex_escape
from dpaudit.theorems import examples
from dpaudit.theorems.base import THEOREMS, Theorem

__all__ = [
    "CardView",
    "UnknownTheoremError",
    "card_name",
    "card_names",
    "explain_card",
    "find_card",
]


class UnknownTheoremError(ValueError):
    """No theorem card has the name given; the message lists the names."""


def card_name(card: Theorem) -> str:
    """The card's command-line name: its key with ``-`` for ``_``."""
    return card.key.replace("_", "-")


def _normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", "-", text.strip().lower())


def find_card(name: str) -> Theorem:
    """The card called ``name`` (its command-line name or its human name, any case).

    Raises:
        UnknownTheoremError: naming the value received and listing the known names.
    """
    wanted = _normal(name)
    for card in THEOREMS.values():
        if wanted in (_normal(card.key), _normal(card.name)):
            return card
    names = sorted(card_name(c) for c in THEOREMS.values())
    hint = closest_hint(wanted, names)
    raise UnknownTheoremError(
        f"theorem must be a card's name or an event expression, got {name[:60]!r}{hint}; "
        f"theorems: {' '.join(names)}"
    )


def card_names() -> list[tuple[str, str]]:
    """(command-line name, human name) of every card, sorted."""
    return sorted((card_name(c), c.name) for c in THEOREMS.values())


@dataclasses.dataclass(frozen=True)
class CardView:
    """A card with its worked example.

    Attributes:
        card: the theorem.
        example: the card's bound at its documented example parameters (None for a card
            with no symbolic bound: the accountant applies it numerically).
    """

    card: Theorem
    example: Instance | None

    def text(self) -> str:
        """The card as text."""
        c = self.card
        lines = [
            f"{c.name}  ({card_name(c)})",
            f"   statement:   {c.statement}",
            f"   assumptions: {c.assumptions}",
            f"   source:      {c.citation}",
        ]
        if c.domain:
            lines.append(f"   domain:      {', '.join(str(d) for d in c.domain)}")
        lines.append(f"   formula:     {card_formula(c)}")
        if self.example is None:
            lines.append(
                "   example:     no closed-form bound; see `dpaudit explain EXPR` for it applied "
                "to an event"
            )
            return "\n".join(lines)
        values = ", ".join(f"{k} = {value_text(v)}" for k, v in examples.EXAMPLES[c.key].items())
        lines.append(f"   example:     at {values}")
        lines += [f"                {line}" for line in self.example.lines()]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the card's fields, its formula and the worked example."""
        c = self.card
        out: dict[str, Any] = {
            "theorem": c.name,
            "name": card_name(c),
            "citation": c.citation,
            "assumptions": c.assumptions,
            "statement": c.statement,
            "domain": [str(d) for d in c.domain or ()],
            "formula": card_formula(c),
            "latex": card_latex(c),
            "example": None,
        }
        if self.example is not None:
            out["example"] = {
                "values": values_json(examples.EXAMPLES[c.key]),
                **{k: v for k, v in self.example.to_dict().items() if k != "values"},
                "kind": "the card's bound at these values, rounded up",
            }
        return out

    def latex(self) -> str:
        """The card as a LaTeX paragraph (text mode, formulas in math mode)."""
        c = self.card
        out = [
            rf"\paragraph{{{latex_escape(c.name)}}} ({latex_escape(c.citation)}).",
            rf"Assumptions: {latex_escape(c.assumptions)}.",
            rf"Statement: {latex_escape(c.statement)}.",
        ]
        if card_latex(c):
            out.append(rf"\[ {card_latex(c)} \]")
        if self.example is not None:
            for name, tex in self.example.latex.items():
                r = self.example.results.get(name)
                value = "" if r is None else rf" = {r:.10g}"
                out.append(rf"Example: \[ {latex_escape(name)} = {tex}{value} \]")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        e = html.escape
        c = self.card
        parts = [
            f"<div class='dpaudit-theorem'><b>{e(c.name)}</b> <code>{e(card_name(c))}</code>",
            f"<br><i>{e(c.citation)}</i><br>statement: {e(c.statement)}",
            f"<br>assumptions: {e(c.assumptions)}",
        ]
        if card_latex(c):
            parts.append(rf"<br>\({e(card_latex(c))}\)")
        if self.example is not None:
            for line in self.example.lines():
                parts.append(f"<br>example: <code>{e(line)}</code>")
        parts.append("</div>")
        return "".join(parts)

    def _repr_latex_(self) -> str:
        c = self.card
        formula = card_latex(c) or rf"\text{{{latex_escape(c.statement)}}}"
        return rf"$\text{{{latex_escape(c.name)} ({latex_escape(c.citation)})}}:\ {formula}$"


def explain_card(name: str | Theorem) -> CardView:
    """The card ``name`` with its worked example (see :func:`find_card`).

    Raises:
        UnknownTheoremError: for an unknown name.
    """
    card = name if isinstance(name, Theorem) else find_card(name)
    example = instantiate(card, examples.EXAMPLES[card.key]) if card.bound else None
    return CardView(card, example)
