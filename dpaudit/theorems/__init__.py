"""The registry of named privacy results (layer 3).

Results are grouped by family: :mod:`~dpaudit.theorems.primitives` (one per primitive
mechanism), :mod:`~dpaudit.theorems.composition`, :mod:`~dpaudit.theorems.zcdp`, ...
Importing this package registers them all in :data:`THEOREMS`.
"""

from dpaudit.theorems import composition, primitives, zcdp
from dpaudit.theorems.base import THEOREMS, Theorem, get, register

__all__ = ["THEOREMS", "Theorem", "composition", "get", "primitives", "register", "zcdp"]
