"""Thread tests switch threads often, so races show up in few steps."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Make the interpreter switch threads every microsecond while the test runs (default
    5 ms), so an unlocked read-modify-write is interrupted within a few steps."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)
