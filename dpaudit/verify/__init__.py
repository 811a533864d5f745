"""Verification of privacy claims and of the inequalities proofs rest on (layer 5).

:mod:`~dpaudit.verify.domain` describes parameter domains, :mod:`~dpaudit.verify.claims`
states claims and keeps the registry ``dpaudit verify --all`` reads.
"""

from dpaudit.verify.claims import (
    CLAIM_MODULES,
    CLAIMS,
    Claim,
    ModuleLoad,
    Step,
    get_claim,
    load_claim_modules,
    register_claim,
)
from dpaudit.verify.domain import Domain, Range

__all__ = [
    "CLAIMS",
    "CLAIM_MODULES",
    "Claim",
    "Domain",
    "ModuleLoad",
    "Range",
    "Step",
    "get_claim",
    "load_claim_modules",
    "register_claim",
]
