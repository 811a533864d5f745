"""The adapters of bench/peers.py hand every peer the same outputs dpaudit audits.

No peer needs to be installed: these check the encodings the adapters apply (DP-Sniper's and
DP-Auditorium's 64-bit features, StatDP's one-integer code for sparse-vector outputs) and the
"not installed" path. Deterministic (fixed seeds); no statistical test here.
"""

from __future__ import annotations

import importlib.util
import pathlib
import struct

import numpy as np

from mechanisms.broken import BrokenSparseVectorLeeClifton2014
from mechanisms.catalogue import LaplaceCount

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "peers.py"
_SPEC = importlib.util.spec_from_file_location("bench_peers", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
peers = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(peers)


def test_bit_features_are_the_ieee_pattern_most_significant_bit_first() -> None:
    values = np.array([1.0, -0.3, 2.0**-1074, 123456.789])
    got = peers._bits(values)
    for row, v in zip(got, values, strict=True):
        word = struct.unpack("!Q", struct.pack("!d", v))[0]
        want = [(word >> (63 - i)) & 1 for i in range(64)]
        assert row.tolist() == want


def test_statdp_code_is_lossless_on_sparse_vector_outputs() -> None:
    m = BrokenSparseVectorLeeClifton2014(1.0)
    rng = np.random.default_rng(0)
    outs = m.batch(m.pairs[0].d1, 2000, rng)
    codes = {}
    for row in outs:
        code = peers._StatDPAlgorithm(_Fixed(row))(rng, None)
        assert isinstance(code, np.int64)
        codes.setdefault(int(code), tuple(row))
        assert codes[int(code)] == tuple(row)  # one code, one output vector
    assert len(codes) > 1


def test_statdp_scalar_outputs_pass_unchanged() -> None:
    out = peers._StatDPAlgorithm(LaplaceCount(1.0))(np.random.default_rng(1), [1, 0])
    assert isinstance(out, np.float64)


def test_both_orders_of_every_pair_are_audited() -> None:
    m = LaplaceCount(1.0)
    pairs = peers._ordered_pairs(m)
    assert len(pairs) == 2 * len(m.pairs)
    assert pairs[1] == (m.pairs[0].d1, m.pairs[0].d0)


class _Fixed:
    """A mechanism that always outputs one given vector."""

    def __init__(self, row: np.ndarray) -> None:
        self.row = row

    def batch(self, dataset: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.tile(self.row, (n, 1))
