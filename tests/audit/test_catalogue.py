"""Every broken catalogue mechanism is flagged at its claim; no correct one is."""

from __future__ import annotations

import math

import pytest

from dpaudit.audit import audit
from mechanisms.broken import broken_mechanisms
from mechanisms.catalogue import correct_mechanisms, primitive_mechanisms

#: Sample budget per dataset (selection + certification) and confidence of these audits.
BUDGET = 100_000
CONFIDENCE = 0.95
SEED = 2024

BROKEN = broken_mechanisms(1.0)
CORRECT = correct_mechanisms(1.0)
#: The project's real primitives (mechanisms.primitives), audited as they are.
PRIMITIVES = primitive_mechanisms(1.0)


@pytest.mark.parametrize("mechanism", BROKEN, ids=lambda m: m.name)
def test_broken_mechanism_is_flagged(mechanism):
    result = audit(
        mechanism,
        pairs=mechanism.pairs,
        epsilon=mechanism.epsilon,
        delta=mechanism.delta,
        samples=BUDGET,
        confidence=CONFIDENCE,
        seed=SEED,
    )
    assert result.violation, str(result)
    if mechanism.true_epsilon is not None:
        assert result.epsilon_lower <= mechanism.true_epsilon


@pytest.mark.parametrize("mechanism", CORRECT + PRIMITIVES, ids=lambda m: m.name)
def test_correct_mechanism_is_not_flagged(mechanism):
    result = audit(
        mechanism,
        pairs=mechanism.pairs,
        epsilon=mechanism.epsilon,
        delta=mechanism.delta,
        samples=BUDGET,
        confidence=CONFIDENCE,
        seed=SEED,
    )
    assert not result.violation, str(result)
    assert result.epsilon_lower <= (mechanism.true_epsilon or mechanism.epsilon)


def test_catalogue_documents_every_claim():
    for m in BROKEN + CORRECT:
        assert m.pairs and m.epsilon > 0 and m.__doc__
        assert m.true_epsilon is None or m.true_epsilon >= 0
    assert all(m.true_epsilon is None or m.true_epsilon > m.epsilon for m in BROKEN)
    assert all(m.true_epsilon is None or m.true_epsilon <= m.epsilon + 1e-12 for m in CORRECT)
    assert math.inf in {m.true_epsilon for m in BROKEN}


def test_catalogue_parameters_are_validated():
    from mechanisms.catalogue import LaplaceCount, LaplaceHistogram

    with pytest.raises(ValueError, match="epsilon must be a finite number > 0, got -1"):
        LaplaceCount(-1)
    with pytest.raises(ValueError, match="neighbouring must be 'replace' or 'add-remove'"):
        LaplaceHistogram(1.0, neighbouring="swap")
