"""Exceptions as outputs (issue 32, item 4, the audit side): ``audit(..., on_error="output")``.

Each audit: 4,000 samples per dataset (25% selection), confidence 0.95 (alpha 0.05), seed 0.
A mechanism that raises on one dataset only gives a zero-count witness (certified about
ln(3000 / 4.4) = 6.5); one that raises at random, equally on both, is exactly 1-DP and is
flagged with probability at most 0.05 (here, at seed 0, not).
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import numpy as np
import pytest
from _structured_mechanisms import EPSILON, RaisesAtRandom, RaisesOnEmpty

from dpaudit.audit import audit
from dpaudit.audit.batches import ErrorsAsOutputs, draw
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.outputs import Raised
from dpaudit.cli import main

SAMPLES = 4_000


def test_by_default_an_exception_aborts_the_audit() -> None:
    with pytest.raises(MechanismError, match="raised ValueError: data must be non-empty"):
        audit(RaisesOnEmpty(), [], [1.0], epsilon=EPSILON, samples=SAMPLES, seed=0)


def test_a_mechanism_raising_on_one_dataset_only_is_flagged() -> None:
    result = audit(
        RaisesOnEmpty(), [], [1.0], epsilon=EPSILON, samples=SAMPLES, seed=0, on_error="output"
    )
    assert result.violation and result.epsilon_lower > 5
    assert result.event == "the mechanism raised ValueError"  # the type, not the message
    assert result.reproducible  # the message's random number is not part of the outcome


def test_a_mechanism_raising_at_random_on_both_is_not_flagged() -> None:
    result = audit(
        RaisesAtRandom(), [1.0], [], epsilon=EPSILON, samples=SAMPLES, seed=0, on_error="output"
    )
    assert not result.violation and result.epsilon_lower <= EPSILON


def test_numbers_and_exceptions_are_searched_together() -> None:
    """The raised outcome sits beside thresholds on the values: with the exception equally
    likely on both datasets, the count's values still give the certified event."""
    result = audit(
        RaisesAtRandom(),
        [1.0] * 5,
        [1.0] * 5 + [2.0] * 30,
        epsilon=EPSILON,
        samples=SAMPLES,
        seed=0,
        on_error="output",
    )
    assert result.violation and result.family == "threshold"
    assert result.event.startswith("the output ")


def test_a_failing_batch_falls_back_to_one_outcome_per_sample() -> None:
    wrapped = ErrorsAsOutputs(RaisesOnEmpty())
    out = draw(wrapped, [], 3, np.random.SeedSequence(0))
    assert out == [Raised("ValueError")] * 3
    assert list(draw(wrapped, [1.0], 3, np.random.SeedSequence(0))) == list(
        RaisesOnEmpty().batch([1.0], 3, np.random.default_rng(np.random.SeedSequence(0)))
    )
    assert pickle.loads(pickle.dumps(wrapped)).mechanism.__class__ is RaisesOnEmpty


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, MemoryError, MechanismError])
def test_process_and_auditor_errors_are_never_outputs(error: type[BaseException]) -> None:
    def mechanism(data: Any, rng: np.random.Generator) -> float:
        raise error("stop")

    with pytest.raises(error):
        ErrorsAsOutputs(mechanism)([], np.random.default_rng(0))


def test_raised_names_the_type_qualified_by_its_module() -> None:
    class LibraryError(Exception):
        pass

    assert Raised.of(ValueError("x 0.123")) == Raised("ValueError")
    assert Raised.of(LibraryError()).type_name.endswith("LibraryError")
    assert Raised.of(LibraryError()).type_name.startswith(__name__)


def test_a_mechanism_raising_everywhere_is_reported() -> None:
    def wrong_signature(data: Any) -> float:  # called as (data, rng): TypeError every time
        return 0.0

    result = audit(wrong_signature, [1.0], [], epsilon=1.0, samples=200, seed=0, on_error="output")
    assert not result.violation
    assert any("raised on every probe run" in w for w in result.warnings)


def test_bad_on_error_is_refused() -> None:
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'output', got 'skip'"):
        audit(RaisesOnEmpty(), [], [1.0], epsilon=1.0, samples=100, on_error="skip")


def test_cli_on_error_output(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "audit",
        "_structured_mechanisms:RaisesOnEmpty",
        "--d0",
        "[]",
        "--d1",
        "[1.0]",
        "--epsilon",
        "1",
        "--samples",
        "2000",
        "--seed",
        "0",
        "--json",
    ]
    assert main(argv) == 2  # default: the exception is bad input
    capsys.readouterr()
    assert main([*argv, "--on-error", "output"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["event"] == "the mechanism raised ValueError"
