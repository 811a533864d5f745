"""Make the helper mechanisms of these tests importable (also from worker processes)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
