"""Theorem objects and the registry of named results (layer 3).

A :class:`Theorem` is the citation card of one result: its name, where it is proved, the
assumptions under which it holds, the privacy contract it gives as an inequality, and a
symbolic form of its bound (sympy) with the domain of parameters on which it holds.  The
formula itself lives in exactly one function of the theorem's family module
(``theorems/composition.py``, ``theorems/zcdp.py``, ...); the accountant calls that function
and cites the card.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import sympy

__all__ = ["THEOREMS", "Theorem", "get", "register"]


@dataclasses.dataclass(frozen=True)
class Theorem:
    """A named privacy result.

    Attributes:
        key: a short unique identifier, e.g. ``"basic_composition"``.
        name: a human name, e.g. ``"basic composition"``.
        citation: paper and theorem number, e.g. ``"Dwork and Roth 2014, Theorem 3.16"``.
        assumptions: the neighbouring relation, adaptivity and parameter ranges it needs.
        statement: the privacy contract it concludes, as an inequality in words/symbols.
        bound: the symbolic bound, e.g. ``{"epsilon": Delta/b}`` in the theorem's symbols.
        domain: conditions (sympy relations) on those symbols under which it holds.
        latex: the bound as LaTeX, for teaching views.
    """

    key: str
    name: str
    citation: str
    assumptions: str
    statement: str
    bound: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    domain: tuple[Any, ...] = dataclasses.field(default=(), compare=False)
    latex: str = ""

    def __str__(self) -> str:
        return f"{self.name} ({self.citation})"

    def symbols(self) -> frozenset[sympy.Symbol]:
        """The symbols of the symbolic bound."""
        found: set[sympy.Symbol] = set()
        for expr in self.bound.values():
            found |= sympy.sympify(expr).free_symbols
        return frozenset(found)


#: Every registered theorem by key.
THEOREMS: dict[str, Theorem] = {}


def register(theorem: Theorem) -> Theorem:
    """Add a theorem to :data:`THEOREMS` (its key must be new) and return it."""
    if theorem.key in THEOREMS and THEOREMS[theorem.key] != theorem:
        raise ValueError(f"a different theorem is already registered as {theorem.key!r}")
    THEOREMS[theorem.key] = theorem
    return theorem


def get(key: str) -> Theorem:
    """The registered theorem ``key``.

    Raises:
        KeyError: naming the unknown key and the known ones.
    """
    try:
        return THEOREMS[key]
    except KeyError:
        raise KeyError(f"no theorem {key!r}; known: {', '.join(sorted(THEOREMS))}") from None
