"""Opacus (``pip install opacus``; audited at 1.6.0 with torch 2.13.0 on the CPU) as its
tutorials call it: a PyTorch model, an optimizer and a ``DataLoader`` handed to
``PrivacyEngine().make_private(module, optimizer, data_loader, noise_multiplier,
max_grad_norm)`` (Poisson sampling, the default), one epoch of DP-SGD, and the trained model
released.

The model is the smallest one that shows the mechanism: one weight ``w`` (``nn.Linear(1, 1,
bias=False)``, starting at 0), the loss ``w * x`` of a record ``x`` (so a record's gradient is
``x``, clipped by Opacus to norm 1), learning rate 1, batch size 2, noise multiplier 5.  The
output is the trained weight, a float32 torch tensor of one element, as Opacus computes it
(per-sample gradients, clipping and Gaussian noise in float32).

The claim is Opacus's own accountant: ``make_private`` sets the sample rate to
``1 / len(data_loader)`` = batch / n and the number of steps of an epoch to ``len(data_loader)``,
and ``PrivacyEngine.get_epsilon(delta)`` is the RDP accountant's epsilon for that history
(``opacus/privacy_engine.py``, ``make_private``; ``opacus/accountants/rdp.py``).  So the claim
depends on the dataset size: :func:`opacus_epsilon` computes it with ``RDPAccountant`` for a
dataset of n records, and the adapter's ``epsilon`` is that function of the dataset (a pair is
checked against the larger claim of its two datasets).

Randomness: Opacus draws its noise and its Poisson sampling from torch's global generator
(``secure_mode=False``, the default); the adapter seeds it from the injected ``rng`` before
each run (``torch.manual_seed``), so audits are reproducible from their seed.
"""

from __future__ import annotations

import functools
import logging
import math
import warnings
from typing import Any

import numpy as np

from mechanisms.libraries import LibraryAdapter, import_library

__all__ = [
    "ADAPTERS",
    "BATCH_SIZE",
    "DELTA",
    "NOISE_MULTIPLIER",
    "opacus_dp_sgd",
    "opacus_dp_sgd_full_batch",
    "opacus_epsilon",
]

#: DP-SGD's settings: noise multiplier, batch size (the expected batch under Poisson
#: sampling), clipping norm, and the delta the accountant's epsilon is taken at.
NOISE_MULTIPLIER = 5.0
BATCH_SIZE = 2
MAX_GRAD_NORM = 1.0
DELTA = 1e-5
#: Dataset sizes searched.
SIZES = (1, 8)


@functools.cache
def _torch() -> Any:
    torch = import_library("torch", "torch==2.13.0 opacus==1.6.0")
    import_library("opacus", "opacus==1.6.0")
    torch.set_num_threads(1)  # one tiny model: threads cost more than they give
    # Opacus warns on every run whose Poisson batch is empty ("First batch is empty")
    logging.getLogger("opacus").setLevel(logging.ERROR)
    return torch


def _steps(n: int) -> int:
    """Steps of one epoch: ``len(data_loader)`` for n records and batch size BATCH_SIZE."""
    return math.ceil(n / BATCH_SIZE)


def opacus_epsilon(data: np.ndarray) -> float:
    """Opacus's claim for a dataset: its RDP accountant's epsilon at :data:`DELTA` after one
    epoch on ``len(data)`` records (sample rate ``1 / len(data_loader)``, ``len(data_loader)``
    steps), as ``PrivacyEngine.get_epsilon`` reports it after training.

    Raises:
        ValueError: for an empty dataset (Opacus cannot train on one: make_private divides by
            ``len(data_loader)``).
    """
    n = len(data)
    if n < 1:
        raise ValueError("opacus_epsilon: Opacus has no claim for an empty dataset")
    accountants = import_library("opacus.accountants", "opacus==1.6.0")
    accountant = accountants.RDPAccountant()
    steps = _steps(n)
    accountant.history = [(NOISE_MULTIPLIER, 1.0 / steps, steps)]
    return float(accountant.get_epsilon(DELTA))


def _train(data: np.ndarray, rng: np.random.Generator, batch_size: int = BATCH_SIZE) -> Any:
    """One epoch of Opacus DP-SGD on the records (column 0); returns the trained weight."""
    torch = _torch()
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(int(rng.integers(0, 2**63 - 1)))
    x = torch.tensor(np.asarray(data[:, :1]), dtype=torch.float32)
    model = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    loader = DataLoader(TensorDataset(x), batch_size=batch_size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # secure_mode and empty-batch chatter, every run
        model, optimizer, loader = PrivacyEngine(accountant="rdp").make_private(
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=NOISE_MULTIPLIER,
            max_grad_norm=MAX_GRAD_NORM,
        )
        for (batch,) in loader:
            optimizer.zero_grad()
            model(batch).sum().backward()
            optimizer.step()
    return model._module.weight.detach().reshape(-1).clone()


opacus_dp_sgd = LibraryAdapter(
    name="opacus-dp-sgd",
    library="opacus",
    api=(
        "PrivacyEngine().make_private(module=Linear(1, 1), optimizer=SGD(lr=1), "
        "data_loader=DataLoader(x, batch_size=2), noise_multiplier=5, max_grad_norm=1); "
        "one epoch; the trained weight released"
    ),
    summary=(
        "One epoch of DP-SGD (Poisson sampling, per-sample clipping to norm 1, Gaussian noise "
        "of multiplier 5, all in float32) on a one-weight model whose gradient for a record x "
        "is x; the output is the trained weight (a float32 torch tensor). Claimed: Opacus's RDP "
        "accountant's epsilon at delta 1e-5 for the dataset's size n (sample rate 2/n, "
        "ceil(n/2) steps): 0.795 for n <= 2 down to 0.443 for n = 7, 8, under add/remove."
    ),
    domain=[(-2.0, 2.0)],
    relation="add-remove",
    sizes=SIZES,
    epsilon=opacus_epsilon,
    delta=DELTA,
    seedable=True,
    release=_train,
    finding=(
        "Finding (Opacus 1.6.0): the number of steps of an epoch (len(data_loader) = "
        "ceil(n / batch)) and the sample rate (1 / len(data_loader)) are functions of the "
        "dataset size, which adding or removing a record changes: two neighbours that "
        "straddle a step boundary (n = 2 and 3) get one and two noisy steps, and the variance "
        "of the released weight tells them apart far beyond the accountant's epsilon."
    ),
)


def _full_batch_epsilon(data: np.ndarray) -> float:
    """Opacus's claim with one batch holding every dataset searched: sample rate 1, one step,
    whatever the size (so the claim is one number)."""
    accountants = import_library("opacus.accountants", "opacus==1.6.0")
    accountant = accountants.RDPAccountant()
    accountant.history = [(NOISE_MULTIPLIER, 1.0, 1)]
    return float(accountant.get_epsilon(DELTA))


def _train_full_batch(data: np.ndarray, rng: np.random.Generator) -> Any:
    return _train(data, rng, batch_size=SIZES[1])


opacus_dp_sgd_full_batch = LibraryAdapter(
    name="opacus-dp-sgd-full-batch",
    library="opacus",
    api=(
        "the same with DataLoader(x, batch_size=8): one step of the whole dataset (sample "
        "rate 1) for every size searched"
    ),
    summary=(
        "DP-SGD as above with a batch size of 8, the largest dataset searched: every epoch is "
        "one step at sample rate 1 and the sum is normalised by 8 whatever the size, so the "
        "size does not leak and the claim is one number (0.795 at delta 1e-5). What remains to "
        "audit is the Gaussian mechanism on the clipped gradients as Opacus computes it, in "
        "float32 (torch.normal noise, secure_mode off, the default)."
    ),
    domain=[(-2.0, 2.0)],
    relation="add-remove",
    sizes=SIZES,
    epsilon=0.794522032537103,  # _full_batch_epsilon (tests/libraries/test_opacus.py)
    delta=DELTA,
    seedable=True,
    release=_train_full_batch,
)

#: Every Opacus adapter, by name.
ADAPTERS: dict[str, LibraryAdapter] = {a.name: a for a in (opacus_dp_sgd, opacus_dp_sgd_full_batch)}
