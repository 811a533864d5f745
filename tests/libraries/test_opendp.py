"""OpenDP's measurements audited as users would: ``audit_records`` over a record domain, no
designed pair (adapters in ``mechanisms/libraries/opendp_adapters.py``).

OpenDP draws from the OS CSPRNG, so these audits are not reproducible from their seed: every
CI run draws afresh, and a test that a correct mechanism is not flagged fails with probability
up to its alpha on every run (at confidence 0.95, one CI run in twenty per tight mechanism: it
happened, on the histogram, certified 1.001 against 1).  So these tests certify at
``CONFIDENCE`` = 0.9999 (alpha = 1e-4 per audit, at most 1e-3 for the nine audits of a full run)
and state their samples per dataset; the broken counterpart (a claim ten times too small) is
audited at the same confidence and shows that they can fail.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _libraries import require

require("opendp")

from dpaudit.audit import audit_records  # noqa: E402
from mechanisms.libraries import opendp_adapters as odp  # noqa: E402

#: Samples per dataset of the fast audits.
FAST_SAMPLES = 1_000
#: Confidence of every audit here (alpha = 1e-4: the draws are fresh on every run).
CONFIDENCE = 0.9999


@pytest.mark.parametrize("name", sorted(odp.ADAPTERS))
def test_claimed_epsilon_bounds_opendp_privacy_map(name: str) -> None:
    """Every adapter claims at least what OpenDP's own privacy map says at the neighbouring
    distance of its relation (1 for add/remove, 2 for replace-one on a sized domain)."""
    adapter = odp.ADAPTERS[name]
    d_in = 1 if adapter.relation == "add-remove" else 2
    mapped = odp.opendp_scalar_measurement(name.removeprefix("opendp-")).map(d_in)
    if adapter.delta:
        eps, delta = mapped
        assert eps <= adapter.epsilon and delta == adapter.delta
    else:
        assert mapped <= adapter.epsilon
        assert adapter.epsilon - mapped < 1e-3  # the claim is OpenDP's, not a looser one


@pytest.mark.parametrize("name", sorted(odp.ADAPTERS))
def test_batches_have_the_shape_of_single_outputs(name: str) -> None:
    adapter = odp.ADAPTERS[name]
    data = np.array([[1.0]] * max(1, adapter.sizes[0]))
    rng = np.random.default_rng(0)
    one = adapter(data, rng)
    many = np.asarray(adapter.batch(data, 5, rng), dtype=float)
    width = len(one) if isinstance(one, tuple) else None
    assert many.shape == ((5, width) if width else (5,))


def test_integer_laplace_is_not_flagged_and_the_audit_says_it_is_not_reproducible() -> None:
    """OpenDP's discrete Laplace sum at its claim (1-DP, add/remove): not flagged (alpha =
    1e-4, 1,000 samples per dataset); the probe sees that the seed does not fix its outputs."""
    a = odp.opendp_integer_laplace_sum
    r = audit_records(
        a, a.domain, samples=FAST_SAMPLES, seed=0, confidence=CONFIDENCE, **a.audit_kwargs()
    )
    assert not r.violation, (r.epsilon_lower, r.pair_description)
    assert r.reproducible is False
    assert any("not reproducible" in w for w in r.warnings)


def test_the_same_audit_flags_a_claim_ten_times_too_small() -> None:
    """The test above can fail: claiming epsilon 0.1 for the same 1-DP measurement is flagged
    (1,000 samples per dataset, confidence 0.9999)."""
    a = dataclasses.replace(odp.opendp_integer_laplace_sum, epsilon=0.1)
    r = audit_records(
        a, a.domain, samples=FAST_SAMPLES, seed=0, confidence=CONFIDENCE, **a.audit_kwargs()
    )
    assert r.violation and r.epsilon_lower > 0.1


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", sorted(odp.ADAPTERS))
def test_every_opendp_adapter_is_not_flagged(name: str) -> None:
    """Each OpenDP adapter audited at its claim with 10,000 samples per dataset (2,000 for
    the slow constant-time geometric and randomized response), alpha = 1e-4 each: none is
    flagged (a flag would be a finding, reported with its pair)."""
    a = odp.ADAPTERS[name]
    samples = 2_000 if name in ("opendp-geometric-sum", "opendp-randomized-response") else 10_000
    r = audit_records(
        a, a.domain, samples=samples, seed=1, confidence=CONFIDENCE, **a.audit_kwargs()
    )
    assert not r.violation, f"{name}: {r.epsilon_lower} > {a.epsilon} on {r.pair_description}"
