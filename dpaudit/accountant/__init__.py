"""The accountant (layer 4): event trees in, guarantees with derivations out."""

from dpaudit.accountant.core import (
    Accountant,
    Guarantee,
    UnsupportedEventError,
    account,
    substitute,
)
from dpaudit.accountant.rules import RULES, register_rule
from dpaudit.accountant.statements import (
    Approx,
    Candidate,
    Concentrated,
    GaussianDP,
    Pure,
    Statement,
    Step,
)

__all__ = [
    "RULES",
    "Accountant",
    "Approx",
    "Candidate",
    "Concentrated",
    "GaussianDP",
    "Guarantee",
    "Pure",
    "Statement",
    "Step",
    "UnsupportedEventError",
    "account",
    "register_rule",
    "substitute",
]
from dpaudit.accountant import tight as _tight  # noqa: F401  (registers PLD/optimal/RDP rules)
from dpaudit.theorems import cover as _cover  # noqa: F401  (registers the EMCover rule)
from dpaudit.theorems import stability as _stability  # noqa: F401  (registers the 003 rules)
