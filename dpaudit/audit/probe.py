"""Probe runs of a mechanism before an audit samples: output type, size and reproducibility.

:func:`probe` draws :data:`PROBE_SAMPLES` outputs twice with one seed. It learns the output
schema (refusing outputs the auditor cannot handle; for structured outputs and exceptions
as outputs it also runs the mechanism on the audit's other datasets, so that the schema
names the keys and exception types each of them produces) and finds mechanisms whose
results the audit's seed does not fix:

* a mechanism that draws from NumPy's global random state (``np.random.laplace(...)`` and the
  other module functions) or from Python's ``random`` instead of the ``rng`` it is given;
* a mechanism that returns different outputs for the same seed from another source (a
  generator of its own, the OS, the clock).

Such an audit is still a valid audit of the code (its bound holds at its confidence), but it
is not reproducible from its seed, and worker processes that share a global state could
repeat each other's draws; the result says so (``reproducible=False`` and a warning).

The evidence is always the outputs: runs with one seed that disagree. Runs of a
low-entropy mechanism (one bit, mostly NaN) agree by chance, so the probe keeps drawing
longer runs (doubling) until the chance that two runs of an unseeded mechanism with the
outputs seen agree is below :data:`CHANCE_AGREEMENT`, estimated from the collisions among
the draws (Laplace-smoothed, so that two distinct draws do not settle it), or until
``max_draws``; outputs that stay (nearly) constant leave it undecided, and the probe says so
(``reproducible=None``) rather than claiming either.

The cause of a disagreement is found by experiment: the runs are repeated with NumPy's and
Python's global states reset to one saved state before each run. If they then agree, a
global state is the cause (and resetting each alone says which); if they still disagree,
the cause is another source, and no global state is blamed. The global states are
process-wide, so another thread of the calling process may draw from them between a reset
and a run; each experiment is tried twice, and the outputs, never a changed state alone,
are the evidence.
"""

from __future__ import annotations

import math
import pickle
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.batches import draw
from dpaudit.audit.limits import MAX_OUTPUT_DIMENSION
from dpaudit.audit.outputs import OutputSchema, Raised, infer_schema, to_array

__all__ = [
    "CHANCE_AGREEMENT",
    "COULD_NOT_TELL",
    "GLOBAL_NUMPY",
    "GLOBAL_PYTHON",
    "PROBE_SAMPLES",
    "UNSEEDED",
    "Probe",
    "probe",
]

#: Outputs drawn by each of the two first probe runs.
PROBE_SAMPLES = 2
#: Runs that agree are taken as reproducible once two runs of an unseeded mechanism with
#: the outputs seen would agree by chance with at most this probability.
CHANCE_AGREEMENT = 1e-3
#: Default most draws per probe run (the auditor passes a share of its samples).
MAX_PROBE_DRAWS = 512
#: Outputs drawn on each dataset of the audit to name the keys and exception types of
#: structured outputs (at most :data:`STRUCTURE_PROBE_TOTAL` over all datasets).
STRUCTURE_PROBE_SAMPLES = 32
STRUCTURE_PROBE_TOTAL = 256
#: Further datasets probed for reproducibility when the first one's outputs are too constant.
MORE_DATASETS = 3
#: Draws that estimate how often outputs repeat before the reset experiments are sized.
ESTIMATE_DRAWS = 64
#: Attempts of each reset experiment (another thread may draw between a reset and a run).
RESET_ATTEMPTS = 2

GLOBAL_NUMPY = (
    "the mechanism draws from NumPy's global random state (np.random.* functions) instead of "
    "the rng it is given (its runs agreed once that state was reset before each): the audit "
    "is not reproducible from its seed"
)
GLOBAL_PYTHON = (
    "the mechanism draws from Python's random module instead of the rng it is given (its "
    "runs agreed once that state was reset before each): the audit is not reproducible from "
    "its seed"
)
UNSEEDED = (
    "the mechanism returned different outputs for the same seed, even with NumPy's and "
    "Python's global random states reset before each run: it uses another source of "
    "randomness (a generator of its own, the OS, the clock) instead of the rng it is given; "
    "the audit is not reproducible from its seed"
)
COULD_NOT_TELL = (
    "could not tell whether the audit is reproducible from its seed: the mechanism's "
    "outputs agreed over {draws} probe runs per side, but they repeat so often ({what}) that "
    "an unseeded mechanism's runs would agree too"
)


@dataclass(frozen=True)
class Probe:
    """What the probe runs learnt.

    Attributes:
        schema: the output schema.
        outputs: the first probe run's outputs, converted with ``schema``.
        warnings: why the audit is not (or may not be) reproducible from its seed (empty
            when it is), then other notes (a mechanism that raised on every probe run).
        raw: the raw outputs the schema was fixed from (the first run's and, for structured
            outputs, those on the other datasets): the runner's first batch adds to them.
        reproducible: True, False, or None when the probe could not tell.
    """

    schema: OutputSchema
    outputs: np.ndarray
    warnings: tuple[str, ...]
    raw: tuple[Any, ...] = ()
    reproducible: bool | None = True


def _fingerprints(raw: Any) -> list[bytes]:
    """One byte string per output, equal exactly when the outputs are bit for bit equal."""
    out = []
    for value in raw if not isinstance(raw, np.ndarray) else list(raw):
        try:
            out.append(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # an output that does not pickle: compared by its text
            out.append(repr(value).encode())
    return out


def _collision_estimate(prints: Sequence[bytes]) -> float:
    """An estimate (Laplace-smoothed, so that few distinct draws do not look like high
    entropy) of the probability that two draws of the mechanism are equal: ``(equal pairs
    + 1) / (pairs + 1)`` among ``prints``."""
    n = len(prints)
    equal = sum(c * (c - 1) // 2 for c in Counter(prints).values())
    return (equal + 1) / (n * (n - 1) // 2 + 1)


def _needed(p_equal: float, cap: int) -> int:
    """Draws per run after which two runs that do not depend on the state under test agree
    by chance with probability at most :data:`CHANCE_AGREEMENT` squared (a cause is named
    on firmer evidence than a disagreement needs; ``cap`` if more are needed)."""
    if p_equal <= 0:
        return 1
    if p_equal >= 1:
        return cap
    return min(cap, math.ceil(2 * math.log(CHANCE_AGREEMENT) / math.log(p_equal)))


def _child(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *key))


def _agree_after_reset(
    mechanism: Any,
    dataset: Any,
    n: int,
    seed: np.random.SeedSequence,
    reset_numpy: bool,
    reset_python: bool,
) -> bool:
    """Whether two runs agree when the chosen global states are reset to one saved state
    before each (:data:`RESET_ATTEMPTS` tries). The states are left as the last run left
    them (the process's randomness is not rewound)."""
    for _ in range(RESET_ATTEMPTS):
        saved_numpy, saved_python = np.random.get_state(), random.getstate()
        runs = []
        for _ in range(2):
            if reset_numpy:
                np.random.set_state(saved_numpy)
            if reset_python:
                random.setstate(saved_python)
            runs.append(_fingerprints(draw(mechanism, dataset, n, seed)))
        if runs[0] == runs[1]:
            return True
    return False


def _cause(mechanism: Any, dataset: Any, n: int, seed: np.random.SeedSequence) -> list[str]:
    """The warnings naming why runs with one seed disagree (see the module's text)."""
    if not _agree_after_reset(mechanism, dataset, n, seed, True, True):
        return [UNSEEDED]
    causes = []
    if _agree_after_reset(mechanism, dataset, n, seed, True, False):
        causes.append(GLOBAL_NUMPY)
    if _agree_after_reset(mechanism, dataset, n, seed, False, True):
        causes.append(GLOBAL_PYTHON)
    return causes or [GLOBAL_NUMPY, GLOBAL_PYTHON]  # needs both reset


def _structure_draws(
    mechanism: Any, datasets: Sequence[Any], seed: np.random.SeedSequence
) -> list[Any]:
    each = max(4, min(STRUCTURE_PROBE_SAMPLES, STRUCTURE_PROBE_TOTAL // max(1, len(datasets))))
    out: list[Any] = []
    for k, dataset in enumerate(datasets):
        out += list(draw(mechanism, dataset, each, _child(seed, 2, k)))
    return out


def _reproducibility(
    mechanism: Any,
    dataset: Any,
    seed: np.random.SeedSequence,
    first: Any,
    second: Any,
    max_draws: int,
) -> tuple[bool | None, list[str]]:
    """Whether runs with one seed agree (``first`` and ``second``, then longer runs while
    the outputs seen leave the chance agreement above :data:`CHANCE_AGREEMENT`), and the
    warnings: the cause of a disagreement, or that the probe could not tell."""
    history = _fingerprints(first)
    drawn, step, n = PROBE_SAMPLES, 0, PROBE_SAMPLES
    agree, seed_at = history == _fingerprints(second), seed
    while agree:
        p_equal = _collision_estimate(history)
        if p_equal**drawn <= CHANCE_AGREEMENT:
            return True, []
        if drawn >= max_draws:
            share = max(Counter(history).values()) / len(history)
            what = f"the most frequent output made {share:.0%} of them"
            return None, [COULD_NOT_TELL.format(draws=drawn, what=what)]
        step += 1
        n = min(drawn, max_draws - drawn)
        seed_at = _child(seed, 1, step)
        a = _fingerprints(draw(mechanism, dataset, n, seed_at))
        b = _fingerprints(draw(mechanism, dataset, n, seed_at))
        agree = a == b
        history += a
        drawn += n
    if len(history) < ESTIMATE_DRAWS:  # too few draws to size the experiments on
        history += _fingerprints(draw(mechanism, dataset, ESTIMATE_DRAWS, _child(seed, 5)))
    needed = _needed(_collision_estimate(history), max_draws)
    return False, _cause(mechanism, dataset, max(n, needed), seed_at)


def probe(
    mechanism: Any,
    dataset: Any,
    seed: np.random.SeedSequence,
    *,
    also: Sequence[Any] = (),
    raised: bool = False,
    max_draws: int = MAX_PROBE_DRAWS,
) -> Probe:
    """Run ``mechanism`` on ``dataset`` with ``seed`` and report what was learnt.

    Args:
        mechanism: the mechanism under audit.
        dataset: a dataset of the audit.
        seed: the probe's seed (apart from every batch's seed).
        also: the audit's other datasets: for structured outputs (and exceptions as
            outputs) the schema names what the mechanism returns on each of them too.
        raised: whether exceptions are outputs (``on_error="output"``; the mechanism is
            then wrapped in :class:`~dpaudit.audit.batches.ErrorsAsOutputs`).
        max_draws: most draws per probe run (>= :data:`PROBE_SAMPLES`).

    Returns:
        The :class:`Probe`.

    Raises:
        MechanismError: (a ValueError) if the mechanism raises (unless ``raised``) or
            returns outputs the auditor cannot handle.
        ValueError: if its outputs are vectors of more than :data:`MAX_OUTPUT_DIMENSION`
            coordinates (refused before drawing again).
    """
    first = draw(mechanism, dataset, PROBE_SAMPLES, seed)
    second = draw(mechanism, dataset, PROBE_SAMPLES, seed)
    extra: list[Any] = []
    for k, other in enumerate(also):
        extra += list(draw(mechanism, other, PROBE_SAMPLES, _child(seed, 3, k)))
    schema = infer_schema(first, also=extra, raised=raised)
    if schema.width > MAX_OUTPUT_DIMENSION:
        raise ValueError(
            f"output dimension must be at most {MAX_OUTPUT_DIMENSION} (MAX_OUTPUT_DIMENSION), "
            f"got vector outputs of {schema.width} coordinates"
        )
    layout = schema.layout
    if layout is not None and (layout.mapped or raised):
        extra += _structure_draws(mechanism, [dataset, *also], seed)
        schema = infer_schema(first, also=extra, raised=raised)
    outputs = to_array(first, schema)
    # reproducibility: on the first dataset, then the others while the outputs are too
    # constant to tell (a mechanism that always raises on an empty dataset)
    reproducible, warnings = _reproducibility(mechanism, dataset, seed, first, second, max_draws)
    for k, other in enumerate(also[:MORE_DATASETS]):
        if reproducible is not None:
            break
        again = _child(seed, 4, k)
        one, two = (draw(mechanism, other, PROBE_SAMPLES, again) for _ in range(2))
        reproducible, warnings = _reproducibility(mechanism, other, again, one, two, max_draws)
    if raised and all(isinstance(v, Raised) for v in [*list(first), *extra]):
        warnings.append(
            f"the mechanism raised on every probe run ({next(iter(first))!r}): with "
            "on_error='output' an exception is an output, so a mechanism called wrongly "
            "(check that it takes (dataset, rng)) looks private"
        )
    raw = tuple(list(first) + extra)
    return Probe(schema, outputs, tuple(warnings), raw, reproducible)
