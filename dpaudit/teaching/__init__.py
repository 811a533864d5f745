"""Teaching views (layer 7): the formulas, sources and orderings behind every number.

* :mod:`~dpaudit.teaching.formulas` -- a theorem card's formula as text and LaTeX, with the
  numbers substituted and evaluated (rounded up);
* :mod:`~dpaudit.teaching.comparison` -- k-fold composition under every method, each with
  its theorem, citation, assumptions and formula, and notes on why the methods order as they
  do (``dpaudit compare``);
"""
