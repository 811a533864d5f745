"""``audit_records`` hunts where bugs hide: edge values, refused candidates, claims that depend
on the dataset, and a search that costs at most twice the final audit.

Statistical design: every audit certifies at confidence 0.95 (alpha = 0.05 per audit: a
function meeting its claim is flagged with probability at most 0.05, by the Clopper-Pearson
certification on fresh samples), with 20,000 samples per dataset in the final audit (unless a
test says otherwise) and a search of at most 80,000 samples (both datasets, every stage);
seeds are fixed, so each test is deterministic. Each finding is paired with the same code
shown *not* flagged where it is correct (edge values off for code correct on finite inputs,
the right size-dependent claim), so that a test passing shows the feature, not a search that
flags everything.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import numpy as np
import pytest
from _records_mechanisms import (
    ClippedSum,
    CountingSum,
    NeedsRecords,
    PassesNaN,
    RaisesOnNonFinite,
    SizeScaledNoise,
    always_raises,
    fails_on_empty,
)

from dpaudit.audit import audit_records
from dpaudit.audit.claims import Claim
from dpaudit.audit.domain import check_domain
from dpaudit.audit.errors import MechanismError
from dpaudit.audit.record_pairs import structured
from dpaudit.audit.record_search import unique_pairs

ALPHA = 0.05
SAMPLES = 20_000
EPSILON = 1.0


def run(fn: Any, domain: Any = ((0.0, 1.0),), **kwargs: Any) -> Any:
    kwargs.setdefault("epsilon", EPSILON)
    kwargs.setdefault("samples", SAMPLES)
    kwargs.setdefault("confidence", 1 - ALPHA)
    kwargs.setdefault("seed", 0)
    return audit_records(fn, list(domain), **kwargs)


def test_nan_through_a_clamp_is_found_with_only_a_domain_and_the_claim() -> None:
    """pipeline-dp 0.3.1's SUM clamps with np.clip, which passes NaN: one NaN record makes
    every release NaN (no finite epsilon). Found with nothing but the domain and the claim
    (Laplace noise of scale 1 for a sum clamped to [0, 1]: correct on finite inputs)."""
    result = run(PassesNaN(0.0, 1.0, 1.0 / EPSILON))
    assert result.violation and result.epsilon_lower > 5.0
    assert any(e.value == "NaN" for e in result.pair_edge_values)
    assert any(np.isnan(d).any() for d in result.pair)
    assert "a record with value NaN in column 0" in result.pair_description
    assert "edge values" in str(result)
    data = json.loads(result.to_json(), parse_constant=_no_constant)  # valid JSON: no NaN token
    assert "nan" in json.dumps(data["pair"]) and data["pair_edge_values"]


def _no_constant(name: str) -> None:
    raise AssertionError(f"JSON holds the non-standard constant {name}")


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_nan_is_the_second_candidate_tried(relation: str) -> None:
    """A slow library scores only a few candidates within its time budget (smartnoise-sql: 1
    to 4 under load): NaN, then +inf and -inf, come second, fourth and sixth in the structured
    order (the first ordinary candidate stays first), not after the ordinary block."""
    domain = check_domain([[0, 1], (-1.0, 2.0)])
    sizes = (0, 8) if relation == "add-remove" else (1, 8)
    order = unique_pairs(
        structured(domain, relation, sizes, np.random.default_rng(0), edge_values=True), 2, set()
    )
    pairs = [pair for _, pair in itertools.islice(order, 6)]
    assert np.isfinite(pairs[0][0]).all() and np.isfinite(pairs[0][1]).all()
    assert np.isnan(pairs[1][1]).all()  # the differing record: NaN in every column
    held = [set(np.concatenate([d.ravel() for d in pair]).tolist()) for pair in pairs]
    assert any(math.inf in h for h in held[2:4]) and any(-math.inf in h for h in held[2:6])


@pytest.mark.parametrize("samples", [200, 400, 1_000])
def test_nan_is_found_by_a_search_that_scores_few_candidates(samples: int) -> None:
    """At these samples the search scores 6 to 11 candidates (each on at least 100 samples
    per dataset, the search drawing at most twice the final audit): NaN through np.clip is
    certified at every one (3.5 to 5.1 > 1 at seed 1; with the edge records after the
    ordinary block, as before, none of the three searches tried NaN: 0.0, 0.56, 0.0)."""
    result = run(
        PassesNaN(0.0, 1.0, 1.0 / EPSILON),
        relation="add-remove",
        sizes=(0, 8),
        samples=samples,
        seed=1,
    )
    assert result.candidates_searched <= 12 and result.search_samples <= 4 * samples
    assert result.violation and any(e.value == "NaN" for e in result.pair_edge_values)


def test_the_same_clamp_is_not_flagged_with_edge_values_off() -> None:
    """Correct on finite inputs (noise 1 for sensitivity 1): with edge_values=False (inputs
    validated upstream) it is not flagged, and the pair holds ordinary records only."""
    result = run(PassesNaN(0.0, 1.0, 1.0 / EPSILON), edge_values=False)
    assert not result.violation and result.epsilon_lower > 0.6  # its worst pair was found
    assert result.pair_edge_values == () and not result.edge_values
    assert all(np.isfinite(d).all() and ((d >= 0) & (d <= 1)).all() for d in result.pair)


@pytest.mark.parametrize("edge_values", [True, False])
def test_a_missing_clamp_above_the_range_is_found_only_with_edge_values(
    edge_values: bool,
) -> None:
    """A sum clamped from below only, correct for records in [0, 1] but not above: the
    declared domain hides the bug, a record just or well outside the range shows it."""

    class ClampsBelowOnly(ClippedSum):
        def total(self, data: np.ndarray) -> float:
            return float(np.maximum(np.nan_to_num(data[:, 0]), self.low).sum())

    result = run(
        ClampsBelowOnly(0.0, 1.0, 1.0 / EPSILON), arithmetic="real", edge_values=edge_values
    )
    assert result.violation is edge_values
    if edge_values:
        assert result.pair_edge_values and result.epsilon_lower > 2.0


def test_a_function_raising_on_nan_is_audited_to_a_verdict_with_the_refusals_listed() -> None:
    """A library validating its input raises on NaN and infinities: those candidates are
    refused (listed with the dataset, exception type and message) and the search goes on; the
    function is correct on everything it accepts, so it is not flagged."""
    result = run(RaisesOnNonFinite(0.0, 1.0, 1.0 / EPSILON))
    assert not result.violation and result.epsilon_lower > 0.6
    assert result.refused_count >= 3 and len(result.refused) == min(result.refused_count, 20)
    first = result.refused[0]
    assert first.exception == "ValueError" and "NaN or infinity" in first.message
    bad = {"d0": first.d0, "d1": first.d1, "d0 and d1": first.d0}[first.dataset]
    assert not np.isfinite(bad).all()
    assert all(np.isfinite(d).all() for d in result.pair)
    text = str(result)
    assert "refused" in text and "ValueError: input contains NaN or infinity" in text
    data = json.loads(result.to_json(), parse_constant=_no_constant)
    assert data["refused_count"] == result.refused_count
    assert data["refused"][0]["exception"] == "ValueError"


def test_a_function_raising_on_empty_data_is_audited_to_a_verdict() -> None:
    """The mean of no records raises (add-remove down to the empty dataset): those
    candidates are refused, the rest audited (mean of [0, 1] records plus Laplace(1): correct
    at epsilon 1 on finite inputs; edge values off)."""
    result = run(fails_on_empty, relation="add-remove", sizes=(0, 2), edge_values=False)
    assert not result.violation
    assert result.refused_count >= 1
    assert all(r.exception == "ZeroDivisionError" for r in result.refused)
    assert all(min(len(r.d0), len(r.d1)) == 0 for r in result.refused)
    assert min(len(d) for d in result.pair) >= 1


def test_the_probe_of_a_first_candidate_that_raises_does_not_abort() -> None:
    """The first candidates are datasets of one record, which this function refuses: the
    probe moves on to the next candidates, and the audit ends in a verdict."""
    fn = NeedsRecords(0.0, 1.0, 1.0 / EPSILON, fewest=2)
    result = run(fn, sizes=(1, 4))
    assert not result.violation
    assert result.refused and len(result.refused[0].d0) == 1
    assert all(len(d) >= 2 for d in result.pair)
    with pytest.raises(MechanismError, match=r"needs at least 2 records.*dataset 1 record"):
        run(fn, sizes=(1, 4), on_error="raise")


def test_every_candidate_refused_is_one_clear_error() -> None:
    with pytest.raises(
        MechanismError,
        match=r"fn raised on every candidate pair the search tried \(\d+\), e\.g\. "
        r"RuntimeError: not implemented for these inputs \(on d0 = 1 record",
    ):
        run(always_raises, samples=1_000)


def test_same_seed_same_result_with_edge_values_and_refusals() -> None:
    fn = RaisesOnNonFinite(0.0, 1.0, 0.5)
    one, again = run(fn, samples=5_000), run(fn, samples=5_000)
    assert one == again and one.refused_count == again.refused_count > 0
    other = run(fn, samples=5_000, seed=1)
    assert (other.hits_d0, other.hits_d1) != (one.hits_d0, one.hits_d1)


def test_on_error_output_is_passed_on_to_the_final_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    """on_error="output" is accepted now and handed to audit(); "skip" and "raise" are not
    (audit's own default, raise, applies to the final audit)."""
    import dpaudit.audit.records as records

    passed: list[dict[str, Any]] = []
    real = records.audit

    def spy(*args: Any, **kwargs: Any) -> Any:
        passed.append(dict(kwargs))
        kwargs.pop("on_error", None)
        return real(*args, **kwargs)

    monkeypatch.setattr(records, "audit", spy)
    fn = ClippedSum(0.0, 1.0, 1.0)
    for on_error in ("output", "skip", "raise"):
        run(fn, samples=1_000, on_error=on_error)
    assert [p.get("on_error") for p in passed] == ["output", None, None]


def test_with_on_error_output_a_pair_only_one_dataset_raises_on_is_audited_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception only the empty dataset gives is an outcome that tells the datasets apart:
    the search hands such a pair to the final audit (stopped here, before it runs)."""
    import dpaudit.audit.records as records

    class ChosenError(Exception):
        pass

    def stop(fn: Any, d0: np.ndarray, d1: np.ndarray, **kwargs: Any) -> Any:
        raise ChosenError(d0, d1, kwargs.get("on_error"))

    monkeypatch.setattr(records, "audit", stop)
    with pytest.raises(ChosenError) as chosen:
        run(
            fails_on_empty,
            relation="add-remove",
            sizes=(0, 2),
            edge_values=False,
            on_error="output",
        )
    d0, d1, on_error = chosen.value.args
    assert min(len(d0), len(d1)) == 0 and on_error == "output"
    with pytest.raises(ChosenError) as chosen:  # skipped, such pairs are refused
        run(fails_on_empty, relation="add-remove", sizes=(0, 2), edge_values=False)
    assert min(len(d) for d in chosen.value.args[:2]) >= 1


def test_an_exception_only_the_empty_dataset_gives_is_a_finding_with_on_error_output() -> None:
    """With on_error="output" an exception is an outcome: the mean raising on no records
    tells an observer the dataset is empty (no finite epsilon under add-remove)."""
    result = run(
        fails_on_empty, relation="add-remove", sizes=(0, 2), edge_values=False, on_error="output"
    )
    assert result.violation
    assert min(len(d) for d in result.pair) == 0
    # the search samples exceptions as outcomes too: no candidate is refused for raising
    assert result.refused_count == 0 and "raised ZeroDivisionError" in result.event


def test_bad_on_error_and_edge_values_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match=r"on_error must be one of \('skip', 'raise', 'output'\)"):
        run(ClippedSum(0, 1, 1.0), on_error="ignore")
    with pytest.raises(ValueError, match=r"edge_values must be True or False, got 'yes'"):
        run(ClippedSum(0, 1, 1.0), edge_values="yes")


def test_declared_domain_still_refuses_nan_and_infinity() -> None:
    with pytest.raises(ValueError, match=r"domain\[0\] .*finite.*nan"):
        run(ClippedSum(0, 1, 1.0), [(0.0, math.nan)])
    with pytest.raises(ValueError, match=r"domain\[0\] must list finite numbers.*inf"):
        run(ClippedSum(0, 1, 1.0), [[0.0, math.inf]])


# Claims that depend on the dataset.  SizeScaledNoise has true epsilon n / 2 on datasets of
# n records (sizes 1..8 searched: from 0.5 to 4).


def test_a_correct_size_dependent_claim_is_not_flagged() -> None:
    """Claim epsilon(n) = n / 2, the truth: not flagged; the result carries the pair's claim,
    and the certified bound is close to it (the pair at the claim's edge was found)."""
    result = run(SizeScaledNoise(), sizes=(1, 8), epsilon=lambda d: len(d) / 2)
    assert not result.violation
    n = len(result.pair[0])
    assert result.epsilon_claimed == n / 2
    assert result.epsilon_lower > 0.6 * n / 2
    assert "epsilon(dataset) =" in result.claim_description


def test_an_under_claim_at_large_sizes_is_found() -> None:
    """Claim epsilon(n) = n / 4, half the truth: flagged (the larger n, the larger the
    violation: at n = 8, 4 against a claim of 2)."""
    result = run(SizeScaledNoise(), sizes=(1, 8), epsilon=lambda d: len(d) / 4)
    assert result.violation
    assert result.epsilon_lower > result.epsilon_claimed == len(result.pair[0]) / 4


def test_pairs_are_ranked_by_how_far_they_exceed_their_own_claim() -> None:
    """The claim is right for every size but one record, where it says 0.1 (truth 0.5). The
    largest raw bound (4, at 8 records) meets its claim: a search ranking pairs by the raw
    bound certifies that pair and finds nothing. Ranked by the excess over each pair's claim,
    the one-record pair is audited and flagged."""

    def epsilon(data: np.ndarray) -> float:
        return 0.1 if len(data) == 1 else len(data) / 2

    result = run(SizeScaledNoise(), sizes=(1, 8), epsilon=epsilon)
    assert result.violation and len(result.pair[0]) == 1
    assert result.epsilon_claimed == 0.1 and result.epsilon_lower > 0.1


def test_an_add_remove_pair_is_checked_against_the_larger_claim_of_its_datasets() -> None:
    """Under add-remove a pair holds datasets of n and n + 1 records: its claim is the larger
    of epsilon(n) and epsilon(n + 1)."""
    claim = Claim(lambda d: 1.0 / (1 + len(d)), lambda d: 1e-3 * len(d))
    small, large = np.zeros((2, 1)), np.zeros((3, 1))
    assert claim.of_pair(small, large) == claim.of_pair(large, small) == (1 / 3, 3e-3)
    result = run(
        ClippedSum(0.0, 1.0, 1.0), relation="add-remove", sizes=(0, 3), epsilon=claim.epsilon
    )
    sizes = sorted(len(d) for d in result.pair)
    assert result.epsilon_claimed == 1.0 / (1 + sizes[0])


@pytest.mark.parametrize(
    ("epsilon", "delta", "match"),
    [
        (
            lambda d: -1.0,
            0.0,
            r"epsilon\(dataset\) on the dataset 1 record\(s\) \[\[0\.\]\] must be a number >= 0, "
            r"got -1\.0",
        ),
        (
            lambda d: "one",
            0.0,
            r"epsilon\(dataset\) on the dataset .* must be a number >= 0, got 'one'",
        ),
        (
            lambda d: 1 / (len(d) - 1),
            0.0,
            r"epsilon\(dataset\) on the dataset 1 record\(s\) .* must return a number, but it "
            r"raised ZeroDivisionError",
        ),
        (
            1.0,
            lambda d: 1.0,
            r"delta\(dataset\) on the dataset .* must be a number in \[0, 1\), got 1\.0",
        ),
        (1.0, lambda d: math.nan, r"delta\(dataset\) .* got nan"),
    ],
)
def test_bad_claim_values_are_refused_naming_the_claim_the_dataset_and_the_value(
    epsilon: Any, delta: Any, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        run(ClippedSum(0, 1, 1.0), epsilon=epsilon, delta=delta, samples=1_000)


# Search cost.


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
@pytest.mark.parametrize("edge_values", [True, False])
@pytest.mark.parametrize("samples", [2_000, 20_000])
def test_search_draws_at_most_twice_the_final_audit_and_says_so_honestly(
    relation: str, edge_values: bool, samples: int
) -> None:
    """search_samples (both datasets, every stage) is at most twice the final audit's samples
    (2 x samples: both datasets), samples_drawn adds the two, and the function was asked for
    exactly that many outputs (plus the probes' few runs)."""
    fn = CountingSum(-1.0, 10.0, 11.0)
    sizes = (0, 8) if relation == "add-remove" else (1, 8)
    result = run(
        fn, [(-1.0, 10.0)], relation=relation, sizes=sizes, samples=samples, edge_values=edge_values
    )
    final = 2 * samples
    assert 0 < result.search_samples <= 2 * final
    assert result.samples_drawn == final + result.search_samples
    assert result.samples_drawn <= fn.drawn <= result.samples_drawn + 200  # probe runs aside
    stages = result.search_stages
    assert result.refused_count == 0 and stages[0][0] == result.candidates_searched
    assert result.search_samples == sum(2 * k * n for k, n in stages)
