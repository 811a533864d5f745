"""mpmath's process-global working precision, changed only under one lock.

The rest of the package changes mpmath's precision only through these context managers
(tests/numeric/test_precision_lock.py scans for raw changes outside :mod:`dpaudit.numeric`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import mpmath

#: mpmath's working precisions (``mp.prec``, ``iv.prec``) are process-global, not per thread.
#: Code that changes them (:func:`interval`, :func:`iv_precision`, the accountant) holds this
#: reentrant lock, so threads never compute at, or restore, one another's precision.
PRECISION_LOCK = threading.RLock()


@contextlib.contextmanager
def mp_precision(bits: int) -> Iterator[None]:
    """``mpmath.workprec(bits)`` holding :data:`PRECISION_LOCK`: the only way code outside this
    module changes mpmath's (process-global) working precision, so a thread never computes at
    the precision another thread set (tests/numeric/test_precision_lock.py)."""
    with PRECISION_LOCK, mpmath.workprec(bits):
        yield


@contextlib.contextmanager
def mp_digits(dps: int) -> Iterator[None]:
    """``mpmath.workdps(dps)`` holding :data:`PRECISION_LOCK` (see :func:`mp_precision`)."""
    with PRECISION_LOCK, mpmath.workdps(dps):
        yield


@contextlib.contextmanager
def iv_precision(bits: int) -> Iterator[None]:
    """Run a block with mpmath's interval context at ``bits`` of precision (restored after;
    holds :data:`PRECISION_LOCK` meanwhile)."""
    with PRECISION_LOCK:
        old = mpmath.iv.prec
        mpmath.iv.prec = bits
        try:
            yield
        finally:
            mpmath.iv.prec = old
