"""A few probe runs of a mechanism before an audit samples: output type, size and
reproducibility.

:func:`probe` draws :data:`PROBE_SAMPLES` outputs twice with one seed, and watches NumPy's
global random state (``np.random.get_state()``) and Python's ``random.getstate()`` around
the first draw.  It learns the output schema (refusing outputs the auditor cannot handle)
and finds mechanisms whose results the audit's seed does not fix:

* a mechanism that draws from NumPy's global state (``np.random.laplace(...)`` and the other
  module functions) or from Python's ``random`` instead of the ``rng`` it is given;
* a mechanism that returns different outputs for the same seed (another source of
  randomness: the clock, ``os.urandom``, a generator of its own).

Such an audit is still a valid audit of the code (its bound holds at its confidence), but it
is not reproducible from its seed, and worker processes that share a global state could
repeat each other's draws; the result says so (``reproducible=False`` and a warning).

The evidence is always the outputs: two runs with one seed that disagree (and, for outputs
that could agree by chance, two longer runs).  The global states only *name* the cause of a
disagreement.  They are process-wide, so another thread of the calling process (a Dask
scheduler or comm thread in the same process, a user's own thread) may advance them while the
probe runs; a changed state alone is therefore not taken as evidence.  A mechanism that
advances a global state without its outputs depending on it (shuffling before a sum) is
reproducible, and is reported so.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.batches import draw
from dpaudit.audit.limits import MAX_OUTPUT_DIMENSION
from dpaudit.audit.outputs import OutputSchema, infer_schema, to_array

__all__ = ["PROBE_SAMPLES", "Probe", "probe"]

#: Outputs drawn by each of the two probe runs.
PROBE_SAMPLES = 2
#: Outputs drawn by each of two further runs when the first two agree on outputs that are
#: not distinct floats (a one-bit output coincides by chance: for randomized response at
#: epsilon 1 two draws agree with probability 0.61^2 = 0.37, sixteen with 0.61^16 < 4e-4).
LOW_ENTROPY_PROBE_SAMPLES = 16

GLOBAL_NUMPY = (
    "the mechanism draws from NumPy's global random state (np.random.* functions) instead of "
    "the rng it is given: the audit is not reproducible from its seed"
)
GLOBAL_PYTHON = (
    "the mechanism draws from Python's random module instead of the rng it is given: the "
    "audit is not reproducible from its seed"
)
UNSEEDED = (
    "the mechanism returned different outputs for the same seed (it uses randomness other "
    "than the rng it is given): the audit is not reproducible from its seed"
)


@dataclass(frozen=True)
class Probe:
    """What the probe runs learnt.

    Attributes:
        schema: the output schema.
        outputs: the first probe run's outputs, converted with ``schema``.
        warnings: why the audit is not reproducible from its seed (empty when it is).
    """

    schema: OutputSchema
    outputs: np.ndarray
    warnings: tuple[str, ...]


def _numpy_state_equal(a: Iterable[Any], b: Iterable[Any]) -> bool:
    # np.random.get_state() returns the legacy tuple; numpy's stubs say dict[str, Any]
    return all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(a, b, strict=True)
    )


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and all(
            x == y for x, y in zip(a.tolist(), b.tolist(), strict=True)
        )
    return np.array_equal(a, b, equal_nan=True)


def _low_entropy(outputs: np.ndarray) -> bool:
    """Whether two runs could agree by chance: outputs that are not floats, whole numbers
    (counts, bits, indices; the schema stores them as floats), or floats that repeat among
    the probe's draws."""
    if outputs.dtype.kind != "f":
        return True
    rows = outputs.reshape(len(outputs), -1)
    finite = rows[np.isfinite(rows)]
    if np.array_equal(finite, np.round(finite)):
        return True
    return len(np.unique(rows, axis=0)) < len(rows)


def _repeats(mechanism: Any, dataset: Any, seed: np.random.SeedSequence, schema: Any) -> bool:
    """Whether two runs of :data:`LOW_ENTROPY_PROBE_SAMPLES` draws with one seed agree."""
    longer = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, 1))
    try:
        first = to_array(draw(mechanism, dataset, LOW_ENTROPY_PROBE_SAMPLES, longer), schema)
        second = to_array(draw(mechanism, dataset, LOW_ENTROPY_PROBE_SAMPLES, longer), schema)
    except ValueError:
        return False
    return _same(first, second)


def probe(mechanism: Any, dataset: Any, seed: np.random.SeedSequence) -> Probe:
    """Run ``mechanism`` on ``dataset`` twice with ``seed`` and report what was learnt.

    Args:
        mechanism: the mechanism under audit.
        dataset: a dataset of the audit.
        seed: the probe's seed (apart from every batch's seed).

    Returns:
        The :class:`Probe`.

    Raises:
        MechanismError: (a ValueError) if the mechanism raises or returns outputs the
            auditor cannot handle.
        ValueError: if its outputs are vectors of more than :data:`MAX_OUTPUT_DIMENSION`
            coordinates (refused before drawing again).
    """
    numpy_before, python_before = np.random.get_state(), random.getstate()
    first = draw(mechanism, dataset, PROBE_SAMPLES, seed)
    numpy_changed = not _numpy_state_equal(numpy_before, np.random.get_state())
    python_changed = random.getstate() != python_before
    second = draw(mechanism, dataset, PROBE_SAMPLES, seed)
    schema = infer_schema(first)
    if schema.width > MAX_OUTPUT_DIMENSION:
        raise ValueError(
            f"output dimension must be at most {MAX_OUTPUT_DIMENSION} (MAX_OUTPUT_DIMENSION), "
            f"got vector outputs of {schema.width} coordinates"
        )
    outputs = to_array(first, schema)
    try:
        again = to_array(second, schema)
    except ValueError:
        again = None
    reproducible = (
        again is not None
        and _same(outputs, again)
        and (not _low_entropy(outputs) or _repeats(mechanism, dataset, seed, schema))
    )
    warnings = []
    if not reproducible:
        # the global states name the cause; they are not the evidence (see the module's text)
        if numpy_changed:
            warnings.append(GLOBAL_NUMPY)
        if python_changed:
            warnings.append(GLOBAL_PYTHON)
        if not warnings:
            warnings.append(UNSEEDED)
    return Probe(schema, outputs, tuple(warnings))
