"""The registry of named privacy results (layer 3).

Results are grouped by family: :mod:`~dpaudit.theorems.primitives` (one per primitive
mechanism), :mod:`~dpaudit.theorems.composition`, :mod:`~dpaudit.theorems.zcdp`, ...
Each module registers its cards at import; the first read of :data:`THEOREMS` imports
every module of the package, so the registry is complete whatever was imported first.
"""

from dpaudit.theorems import composition, primitives, zcdp
from dpaudit.theorems.base import THEOREMS, Theorem, get, register

__all__ = ["THEOREMS", "Theorem", "composition", "get", "primitives", "register", "zcdp"]
