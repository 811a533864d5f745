"""The auditor's documented limits: work and memory are checked before any sampling.

An audit holds at most :data:`dpaudit.audit.streaming.HELD_SELECTION_SAMPLES` selection
samples per dataset in memory (a pilot; the other selection batches are tallied in the
workers, :mod:`dpaudit.audit.streaming`) and streams its certification samples in batches, so
its memory does not grow with ``samples``.  Before
sampling, :func:`dpaudit.audit.audit` runs the mechanism on a few probe samples, learns the
output type and width, estimates the memory the audit needs (:func:`estimate_memory`) and
refuses, with a message naming the limit, what would exceed:

* ``samples`` <= :data:`MAX_SAMPLES` per dataset;
* a one-run audit (:func:`dpaudit.audit.audit_one_run`) has at most :data:`MAX_CANARIES`
  canaries (it holds the inclusion mask and one score per canary);
* ``workers`` <= :func:`worker_limit` (the CPUs of the machine, at least 2, at most
  :data:`MAX_WORKERS`): each worker is a real process;
* a vector output has at most :data:`MAX_OUTPUT_DIMENSION` coordinates;
* the estimated memory is at most ``max_memory_bytes`` (default
  :data:`DEFAULT_MAX_MEMORY_BYTES`, a parameter of ``audit`` and ``--max-memory`` on the
  command line).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpaudit.audit.outputs import OutputSchema

__all__ = [
    "DEFAULT_MAX_MEMORY_BYTES",
    "MAX_CANARIES",
    "MAX_OUTPUT_DIMENSION",
    "MAX_SAMPLES",
    "MAX_WORKERS",
    "estimate_memory",
    "worker_limit",
]

#: Most samples per dataset an audit accepts (10^9: hours of work for a fast mechanism).
MAX_SAMPLES = 10**9
#: Most canaries of a one-run audit (10^7: the inclusion mask, its uniform draws and the scores
#: take about 170 MB; the paper's experiments use at most 50,000, the size of CIFAR-10).
MAX_CANARIES = 10**7
#: Most worker processes, whatever the machine.
MAX_WORKERS = 64
#: Most coordinates of a vector output.
MAX_OUTPUT_DIMENSION = 10_000
#: Default memory limit of an audit's samples, in bytes (2 GiB).
DEFAULT_MAX_MEMORY_BYTES = 2 * 1024**3


def worker_limit() -> int:
    """Most local worker processes: the machine's CPUs, at least 2, at most MAX_WORKERS."""
    return min(MAX_WORKERS, max(2, os.cpu_count() or 1))


def _deep_size(value: Any) -> int:
    """Approximate bytes of one categorical output key (object, tuple elements included)."""
    size = sys.getsizeof(value)
    if isinstance(value, tuple):
        size += sum(_deep_size(v) for v in value)
    return size


def estimate_memory(
    schema: OutputSchema,
    probe: Sequence[Any] | np.ndarray,
    selection_samples: int,
    batch: int,
) -> int:
    """Bytes an audit's samples need at their peak (an estimate, from probe outputs).

    The held selection samples of both datasets (at most
    :data:`dpaudit.audit.streaming.HELD_SELECTION_SAMPLES` each: the caller passes the held
    count) are in memory at once (float64 per coordinate, or one pointer and one key object
    per categorical output), plus one raw batch being converted.

    Args:
        schema: the output schema learnt from the probe.
        probe: the probe's converted outputs (:func:`dpaudit.audit.outputs.to_array`).
        selection_samples: selection samples held per dataset.
        batch: samples of the largest batch.

    Returns:
        The estimated number of bytes.
    """
    if schema.kind == "categorical":
        per = 8 + max((_deep_size(v) for v in probe), default=64)
        raw = per
    else:
        per = 8 * schema.width
        raw = per + 8 * 16  # a raw output may be a Python object before conversion
    return 2 * selection_samples * per + batch * (per + raw)
