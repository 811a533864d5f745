"""How the auditor's own pool starts a worker process (:class:`~dpaudit.audit.runner.Runner`
with ``workers > 1``): fresh global random states and a malloc that keeps its memory."""

from __future__ import annotations

import ctypes
import random
import sys

import numpy as np

__all__ = ["start_worker"]


def start_worker() -> None:
    """The own pool's worker-process initializer: fresh global NumPy and ``random`` states
    (forked workers would otherwise all start from the parent's state and repeat each
    other's draws), and a malloc that keeps its memory (:func:`_keep_heap`)."""
    np.random.seed(np.random.SeedSequence().generate_state(4))
    random.seed()
    _keep_heap()


#: glibc ``mallopt`` parameters and the values set in worker processes (bytes).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM_THRESHOLD, _MMAP_THRESHOLD = 256 * 2**20, 32 * 2**20


def _keep_heap() -> None:
    """Let glibc's malloc keep freed memory in a worker process (Linux only; a no-op
    elsewhere).

    A worker allocates and frees the same few batch-sized arrays thousands of times; by
    default glibc maps large ones afresh and returns freed heap to the system, so every batch
    pays page faults again (measured: a quarter of a worker's CPU time went to the kernel at
    100,000 samples per batch). Raising the mmap and trim thresholds keeps those pages;
    memory stays bounded by the largest batch's arrays.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    except (OSError, AttributeError):  # not glibc
        return
