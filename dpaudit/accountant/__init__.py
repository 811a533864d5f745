"""The accountant (layer 4): event trees in, guarantees with derivations out."""

from typing import TYPE_CHECKING

from dpaudit.accountant.core import (
    Accountant,
    Guarantee,
    UnsupportedEventError,
    account,
    substitute,
)
from dpaudit.accountant.profile import DeltaGuarantee
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
from dpaudit.deferred_imports import lazy_attributes

__all__ = [
    "RULES",
    "Accountant",
    "Approx",
    "Calibration",
    "CalibrationError",
    "Candidate",
    "Concentrated",
    "DeltaGuarantee",
    "GaussianDP",
    "Guarantee",
    "PrivacyCurve",
    "Pure",
    "Statement",
    "Step",
    "UnsupportedEventError",
    "account",
    "calibrate",
    "plot_privacy_curve",
    "register_rule",
    "substitute",
]
# The rule modules register at import, in this order (the order of RULES' lists).
# isort: off
from dpaudit.accountant import primitive_rules as _primitive_rules  # noqa: F401  (the leaves)
from dpaudit.accountant import combinator_rules as _combinator_rules  # noqa: F401  (combinators)
from dpaudit.accountant import tight as _tight  # noqa: F401  (registers PLD/optimal/RDP rules)
from dpaudit.accountant import sampling as _sampling  # noqa: F401  (registers amplification rules)
from dpaudit.accountant import cover as _cover  # noqa: F401  (registers the EMCover rule)
from dpaudit.accountant import stability as _stability  # noqa: F401  (registers the 003 rules)
# isort: on

if TYPE_CHECKING:
    from dpaudit.accountant.calibration import Calibration, CalibrationError, calibrate
    from dpaudit.accountant.curve import PrivacyCurve, plot_privacy_curve

#: Names imported on first use: the privacy curve needs numpy, which ``dpaudit account`` at
#: delta 0 does not (start-up, issue 19 part 4).
_LAZY = {
    "Calibration": "dpaudit.accountant.calibration",
    "CalibrationError": "dpaudit.accountant.calibration",
    "calibrate": "dpaudit.accountant.calibration",
    "PrivacyCurve": "dpaudit.accountant.curve",
    "plot_privacy_curve": "dpaudit.accountant.curve",
}


__getattr__ = lazy_attributes(globals(), _LAZY)
