"""The PLD's FFTs are numpy's and equal scipy's bit for bit (start-up, issue 19 part 4).

``dpaudit.pld.fft`` used ``scipy.fft`` (about 0.8 s to import) and now uses ``numpy.fft``;
both are pocketfft.  Oracle: on the transform lengths the module uses (factors 2, 3 and 5,
:func:`~dpaudit.pld.fft.fast_length`) and on measures like the ones it convolves (non-negative,
spanning many orders of magnitude), the forward and inverse transforms of the two libraries
are *identical* arrays, so every composed PLD and its error bound are unchanged.  A
Hypothesis sweep draws lengths up to 20 000 and seeds; the final case shows the comparison
can fail (a one-ulp change is detected).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.pld.fft import convolve, fast_length, self_convolve

scipy_fft = pytest.importorskip("scipy.fft")


def _measure(size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.random(size) ** 12  # masses over many orders of magnitude
    return x / x.sum()


@settings(max_examples=40)
@given(size=st.integers(min_value=2, max_value=20_000), seed=st.integers(0, 2**32 - 1))
def test_transforms_identical_to_scipy(size, seed):
    x = _measure(size, seed)
    n = fast_length(size + size // 3)
    spec = np.fft.rfft(x, n)
    assert np.array_equal(spec, scipy_fft.rfft(x, n))
    assert np.array_equal(np.fft.irfft(spec, n), scipy_fft.irfft(spec, n))


@pytest.mark.parametrize("size", [100, 4097, 60_000])
def test_convolutions_identical_to_the_scipy_version(size, monkeypatch):
    x = _measure(size, size)
    y = _measure(size // 2 + 70, size + 1)
    ours = (self_convolve(x, -5, 7, (-35, 7 * size)), convolve(x, 0, y, 3, (0, 2 * size)))
    import dpaudit.pld.fft as module

    class _ScipyAsNumpy:
        fft = scipy_fft

        def __getattr__(self, name):
            return getattr(np, name)

    monkeypatch.setattr(module, "np", _ScipyAsNumpy())
    theirs = (self_convolve(x, -5, 7, (-35, 7 * size)), convolve(x, 0, y, 3, (0, 2 * size)))
    for (a, lo_a, l1_a), (b, lo_b, l1_b) in zip(ours, theirs, strict=True):
        assert lo_a == lo_b and l1_a == l1_b
        assert np.array_equal(a, b)


def test_the_comparison_detects_a_one_ulp_change():
    x = _measure(1000, 1)
    spec = np.fft.rfft(x, 1000)
    spec[3] = np.nextafter(spec[3].real, np.inf) + 1j * spec[3].imag
    assert not np.array_equal(spec, scipy_fft.rfft(x, 1000))
