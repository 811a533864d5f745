"""Bits events in the outputs' own float format (issue 32, item 2).

Textbook Laplace noise computed in float32 (as torch computes it) or float16 misses, from one
input, whole classes of the format's floats that its neighbour reaches (Mironov 2012, the
attack on the textbook sampler). Widened to doubles, those classes are invisible (a float32
has 29 trailing zero bits as a double whatever its value), so before the bits were read in the
output's own format the float32 audit certified 0.09 against the claim 0.1 (the float64 one
6.8). Every audit here: 100,000 samples per dataset (25% selection), confidence 0.95
(alpha 0.05), seed 0.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pytest

from dpaudit.audit import audit, audit_records
from dpaudit.audit.float_bits import ClassKey, class_keys, fields, trailing_zeros
from dpaudit.audit.outputs import infer_schema, to_array

SAMPLES = 100_000
EPSILON = 0.1


def textbook_laplace(dtype: Any) -> Any:
    """``x + Laplace(1 / EPSILON)`` computed in ``dtype`` (noise drawn in doubles, rounded to
    ``dtype``, then added in ``dtype``)."""

    def mechanism(x: float, rng: np.random.Generator) -> Any:
        return dtype(x) + dtype(rng.laplace(0.0, 1 / EPSILON))

    mechanism.batch = lambda x, n, rng: dtype(x) + rng.laplace(0.0, 1 / EPSILON, n).astype(dtype)
    return mechanism


@pytest.mark.parametrize(("dtype", "name"), [(np.float32, "float32"), (np.float16, "float16")])
def test_textbook_laplace_in_low_precision_is_flagged_at_its_claim(dtype: Any, name: str) -> None:
    result = audit(textbook_laplace(dtype), 1.0, 0.0, epsilon=EPSILON, samples=SAMPLES, seed=0)
    assert result.violation and result.family == "bits"
    assert result.epsilon_lower > 6  # 0.09 before: the bits were read as doubles
    assert f"of the {name})" in result.event  # the event names the format it reads


def test_float64_audit_is_unchanged() -> None:
    result = audit(textbook_laplace(np.float64), 1.0, 0.0, epsilon=EPSILON, samples=SAMPLES, seed=0)
    # the same number as before the formats (measured on main at the same seed)
    assert result.epsilon_lower == 6.816069892986093 and result.family == "bits"
    assert "of the float" not in result.event  # doubles are the default: not named


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_real_arithmetic_drops_the_bits_family_for_every_precision(dtype: Any) -> None:
    mechanism = textbook_laplace(dtype)
    result = audit(mechanism, 1.0, 0.0, epsilon=EPSILON, samples=SAMPLES, seed=0, arithmetic="real")
    assert not result.violation and result.family != "bits"


class Float32DiscreteLaplace:
    """A count plus discrete Laplace noise (the difference of two geometric variables,
    Ghosh, Roughgarden, Sundararajan 2009), released as float32: every output is an integer
    of at most 2^24 in magnitude, exactly a float32, and the mechanism is exactly
    EPSILON-DP, so no event of its float32 bits can certify more."""

    def __call__(self, x: float, rng: np.random.Generator) -> np.float32:
        return self.batch(x, 1, rng)[0]

    def batch(self, x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        p = 1.0 - math.exp(-EPSILON)
        noise = rng.geometric(p, n) - rng.geometric(p, n)
        return (x + noise).astype(np.float32)


def test_a_correct_float32_mechanism_is_not_flagged() -> None:
    result = audit(Float32DiscreteLaplace(), 1.0, 0.0, epsilon=EPSILON, samples=SAMPLES, seed=0)
    assert result.epsilon_lower <= EPSILON and not result.violation


def _f32(sign: int, exponent: int, significand: int) -> float:
    bits = (sign << 31) | (exponent << 23) | significand
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def test_fields_are_read_in_the_output_format() -> None:
    cases = [(0, 127, 0), (1, 126, 1), (0, 0, 5), (0, 254, (1 << 23) - 1)]
    x = np.array([_f32(*c) for c in cases])  # float32 values, widened exactly to doubles
    assert list(zip(*fields(x, "float32"), strict=True)) == cases
    # the same values read as doubles: the low 29 bits of the significand are always 0
    assert (fields(x, "float64")[2] % (1 << 29) == 0).all()
    assert trailing_zeros(np.array([1.5, 1.25]), "float16").tolist() == [9, 8]
    # bfloat16 is the upper half of a float32: 1 + 2^-7 has significand 1 (its last bit)
    assert fields(np.array([1 + 2**-7]), "bfloat16")[2].tolist() == [1]
    key = ClassKey("low-bits", 1, "float16")
    assert key.describe() == "binade and last 1 significand bit, of the float16"
    assert key.size == 2 * 32 * 2 and key.codes(np.array([65504.0])).max() < key.size
    assert [k.k for k in class_keys("bfloat16") if k.kind == "low-bits"] == [1, 4, 7]


def test_schema_remembers_the_precision() -> None:
    x32 = np.array([0.1, 0.2], dtype=np.float32)
    assert infer_schema(x32).precision == "float32"
    assert infer_schema([np.float16(0.5), np.float16(0.25)]).precision == "float16"
    assert infer_schema(np.array([0.1])).precision == "float64"
    assert infer_schema(np.array([1, 2])).precision == "float64"  # integers: as before
    # widening is exact: the float32 values come back bit for bit
    back = to_array(x32, infer_schema(x32)).astype(np.float32)
    assert back.tobytes() == x32.tobytes()
    assert infer_schema([{"a": np.float32(1.5)}]).precision == "float32"


class FakeTensor:
    """The part of torch.Tensor the conversion uses (duck-typed; torch is not a dependency),
    here for a bfloat16 tensor: ``.float()`` widens it to float32 exactly."""

    __module__ = "torch"

    def __init__(self, values: np.ndarray, dtype: str) -> None:
        self.values, self.dtype = values, dtype

    def detach(self) -> FakeTensor:
        return self

    def cpu(self) -> FakeTensor:
        return self

    def float(self) -> FakeTensor:
        return FakeTensor(self.values.astype(np.float32), "torch.float32")

    def numpy(self) -> np.ndarray:
        return self.values


def test_tensors_are_converted_without_importing_torch() -> None:
    values = np.array([1.0, 1 + 2**-7], dtype=np.float32)
    schema = infer_schema(FakeTensor(values, "torch.bfloat16"))
    assert schema.precision == "bfloat16" and schema.kind == "scalar"
    assert to_array(FakeTensor(values, "torch.bfloat16"), schema).tolist() == [1.0, 1 + 2**-7]
    listed = [FakeTensor(np.float32(v), "torch.float32") for v in values]
    assert infer_schema(listed).precision == "float32"


def test_torch_float32_laplace_is_flagged() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (a test dependency only)")

    def mechanism(x: float, rng: np.random.Generator) -> Any:
        return mechanism.batch(x, 1, rng)[0]

    def batch(x: float, n: int, rng: np.random.Generator) -> Any:
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        u = torch.rand(n, generator=gen) - 0.5  # float32, as torch's own Laplace sampler
        noise = -(1 / EPSILON) * torch.sign(u) * torch.log1p(-2 * torch.abs(u))
        return torch.tensor(x, dtype=torch.float32) + noise

    mechanism.batch = batch
    result = audit(mechanism, 1.0, 0.0, epsilon=EPSILON, samples=SAMPLES, seed=0)
    assert result.violation and "float32" in result.event


def _float32_clamped_sum(data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    total = np.float32(np.clip(np.nan_to_num(np.asarray(data, float)[:, 0]), 0.0, 1.0).sum())
    return total + rng.laplace(0.0, 1 / EPSILON, n).astype(np.float32)


def float32_clamped_sum(data: Any, rng: np.random.Generator) -> Any:
    """A sum of records clamped to [0, 1] (NaN read as 0) with textbook Laplace noise added
    in float32: the real-number mechanism is 0.1-DP; its float32 outputs are not."""
    return _float32_clamped_sum(data, 1, rng)[0]


float32_clamped_sum.batch = _float32_clamped_sum  # type: ignore[attr-defined]


def test_float32_laplace_is_found_by_the_record_search_with_no_designed_pair() -> None:
    """audit_records with only the domain and the claim (10,000 samples per dataset, alpha
    0.05, seed 0) certifies far above 0.1 through float32 bit-pattern events; with
    ``arithmetic="real"`` (no bits events) the same search is not flagged."""
    found = audit_records(
        float32_clamped_sum, [(0.0, 1.0)], epsilon=EPSILON, samples=10_000, seed=0
    )
    assert found.violation and found.family == "bits" and found.epsilon_lower > 2
    assert "of the float32" in found.event
    real = audit_records(
        float32_clamped_sum, [(0.0, 1.0)], epsilon=EPSILON, samples=10_000, seed=0,
        arithmetic="real",
    )  # fmt: skip
    assert not real.violation
