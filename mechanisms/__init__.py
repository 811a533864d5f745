"""Runnable mechanisms: the primitives, the ledger, and the algorithms of the source documents.

Algorithms are composed of the primitives in :mod:`mechanisms.primitives` only; each records
what it runs in the active :class:`~mechanisms.ledger.Ledger`.
"""
