"""Learning curves of the registered private learners (issue 20, part 4).

:func:`learning_curves` computes one learner's test error against n and epsilon, beside a
non-private and a peer private baseline (:mod:`dpaudit.learning_curves.compute`), on the
data of :mod:`dpaudit.learning_curves.data`;
:func:`write_pages` writes the plots and pages (:mod:`dpaudit.learning_curves.pages`);
``dpaudit learn --curves`` runs both for every learner.
"""

from __future__ import annotations

from dpaudit.learning_curves.compute import (
    FULL_GRID,
    QUICK_GRID,
    CurvePoint,
    CurveSet,
    Dataset,
    breast_cancer,
    datasets_for,
    diffprivlib_available,
    digits,
    learning_curves,
    synthetic,
)
from dpaudit.learning_curves.pages import curve_plot, learner_page, verdict, write_pages

__all__ = [
    "FULL_GRID",
    "QUICK_GRID",
    "CurvePoint",
    "CurveSet",
    "Dataset",
    "breast_cancer",
    "curve_plot",
    "datasets_for",
    "diffprivlib_available",
    "digits",
    "learner_page",
    "learning_curves",
    "synthetic",
    "verdict",
    "write_pages",
]
