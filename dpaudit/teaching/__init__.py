"""Teaching views (layer 7): the formulas, sources and orderings behind every number.

* :mod:`~dpaudit.teaching.formulas` -- a theorem card's formula as text and LaTeX, with the
  numbers substituted and evaluated (rounded up);
* :mod:`~dpaudit.teaching.comparison` -- k-fold composition under every method, each with
  its theorem, citation, assumptions and formula (``dpaudit compare``), with the notes of
  :mod:`~dpaudit.teaching.orderings` on why the methods order as they do;
* :mod:`~dpaudit.teaching.explanation` -- every candidate theorem at every node of a
  derivation (``dpaudit explain EXPR``);
* :mod:`~dpaudit.teaching.cards` -- one theorem card with a worked example
  (``dpaudit explain THEOREM``).

Each view renders itself in a notebook (``_repr_html_``, ``_repr_latex_``).
"""

from dpaudit.teaching.cards import CardView, explain_card, find_card
from dpaudit.teaching.comparison import Comparison, compare_methods
from dpaudit.teaching.explanation import Explanation, explain_candidates

__all__ = [
    "CardView",
    "Comparison",
    "Explanation",
    "compare_methods",
    "explain_candidates",
    "explain_card",
    "find_card",
]
