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
#: Most canaries of a one-run audit (10^7): the inclusion mask, its uniform draws, the scores
#: and their ordering take about 40 bytes a canary (400 MB here, besides what the trainer
#: allocates); Steinke et al.'s experiments use at most 50,000, the size of CIFAR-10.
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


def _deep_size(value: Any, depth: int = 0) -> int:
    """Approximate bytes of one output object (tuple, list and dict elements included, a
    pandas object by its own memory usage)."""
    size = sys.getsizeof(value)
    if depth > 4:
        return size
    if isinstance(value, (tuple, list, set, frozenset)):
        size += sum(_deep_size(v, depth + 1) for v in value)
    elif isinstance(value, dict):
        size += sum(_deep_size(k, depth + 1) + _deep_size(v, depth + 1) for k, v in value.items())
    elif hasattr(value, "memory_usage") and type(value).__module__.startswith("pandas"):
        usage = value.memory_usage(deep=True)
        size += int(usage.sum() if hasattr(usage, "sum") else usage)
    return size


def estimate_memory(
    schema: OutputSchema,
    probe: Sequence[Any] | np.ndarray,
    selection_samples: int,
    batch: int,
    raw: Sequence[Any] = (),
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
        raw: the probe's raw outputs (structured outputs: a raw batch of dicts or frames is
            held, before conversion, beside the converted one).

    Returns:
        The estimated number of bytes.
    """
    if schema.kind == "categorical":
        per = 8 + max((_deep_size(v) for v in probe), default=64)
        return 2 * selection_samples * per + batch * 2 * per
    else:
        per = 8 * schema.width
        objects = max((_deep_size(v) for v in raw), default=0) if schema.layout else 0
        # a raw output may be a Python object before conversion
        raw_size = max(per + 8 * 16, 8 + objects)
        return 2 * selection_samples * per + batch * (per + raw_size)
