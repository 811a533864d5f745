"""The ledger now lives in :mod:`dpaudit.ledger` (shared state of the toolkit); this module
re-exports it so ``from mechanisms.ledger import Ledger, record, ...`` keeps working."""

from dpaudit.ledger import (
    Entry,
    Guard,
    Ledger,
    LedgerExceededError,
    StepRefusedError,
    record,
    recorded_as,
    recorded_as_one,
    recorded_jointly,
    transaction,
)

__all__ = [
    "Entry",
    "Guard",
    "Ledger",
    "LedgerExceededError",
    "StepRefusedError",
    "record",
    "recorded_as",
    "recorded_as_one",
    "recorded_jointly",
    "transaction",
]
