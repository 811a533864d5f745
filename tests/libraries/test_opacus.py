"""Opacus 1.6.0 (torch 2.13.0, CPU) audited as its tutorials call it
(``mechanisms/libraries/opacus_adapters.py``).

Opacus and torch are no dependencies of dpaudit: this module is skipped unless they import (run
it in the panel's environment, ``nox -s hunt_main -- --pytest``).  Audits certify at
confidence 0.95 (alpha = 0.05).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _libraries import require

torch = require("torch", "hunt_main")
require("opacus", "hunt_main")

from dpaudit.audit import audit  # noqa: E402
from mechanisms.libraries import opacus_adapters as op  # noqa: E402


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_the_claim_is_what_opacus_reports_after_training(n: int) -> None:
    """opacus_epsilon(n) equals PrivacyEngine.get_epsilon(delta) after one epoch on n records
    with the adapter's settings (Opacus's own accountant)."""
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    model = torch.nn.Linear(1, 1, bias=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    loader = DataLoader(TensorDataset(torch.zeros(n, 1)), batch_size=op.BATCH_SIZE)
    engine = PrivacyEngine(accountant="rdp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, optimizer, loader = engine.make_private(
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=op.NOISE_MULTIPLIER,
            max_grad_norm=op.MAX_GRAD_NORM,
        )
        for (batch,) in loader:
            optimizer.zero_grad()
            model(batch).sum().backward()
            optimizer.step()
    assert op.opacus_epsilon(np.zeros((n, 1))) == pytest.approx(engine.get_epsilon(op.DELTA))


def test_the_claim_depends_on_the_dataset_size() -> None:
    claims = [op.opacus_epsilon(np.zeros((n, 1))) for n in range(1, 9)]
    assert claims[0] == claims[1] > claims[2] == claims[3] > claims[7]
    with pytest.raises(ValueError, match="empty"):
        op.opacus_epsilon(np.zeros((0, 1)))


def test_outputs_are_float32_tensors_fixed_by_the_seed() -> None:
    data = np.array([[0.5], [1.5], [-1.0]])
    a = op.opacus_dp_sgd
    first = a(data, np.random.default_rng(3))
    assert first.dtype == torch.float32 and first.shape == (1,)
    assert torch.equal(first, a(data, np.random.default_rng(3)))
    assert not torch.equal(first, a(data, np.random.default_rng(4)))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_step_count_leaks_the_dataset_size() -> None:
    """The fact behind the Opacus finding, on the pair the search finds: 2 and 3 records (one
    and two noisy steps) certify far above the larger claim (alpha = 0.05, 3,000 samples per
    dataset, seed 0; measured 3.27 at 4,000 against 0.795)."""
    d2, d3 = np.zeros((2, 1)), np.zeros((3, 1))
    claim = max(op.opacus_epsilon(d2), op.opacus_epsilon(d3))
    r = audit(op.opacus_dp_sgd, d2, d3, epsilon=claim, delta=op.DELTA, samples=3_000, seed=0)
    assert r.violation and r.epsilon_lower > 2 * claim


def test_the_full_batch_claim_is_one_number_for_every_size() -> None:
    """With batch size 8 every dataset searched is one step at sample rate 1: Opacus's
    accountant gives one epsilon, the adapter's claim."""
    a = op.opacus_dp_sgd_full_batch
    for n in range(1, 9):
        assert op._full_batch_epsilon(np.zeros((n, 1))) == a.epsilon
    assert a.epsilon == op.opacus_epsilon(np.zeros((1, 1)))  # n = 1: one step at rate 1 too
