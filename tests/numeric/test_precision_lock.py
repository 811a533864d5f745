"""mpmath's working precision is process-global: every change of it in the package goes
through :mod:`dpaudit.numeric`'s context managers, which hold ``PRECISION_LOCK``.

Without this, a verifier thread that set 80 bits could make an accountant thread evaluate a
bound at 80 bits instead of its own precision (or restore the wrong precision afterwards).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import mpmath
import pytest

from dpaudit import numeric

#: the dpaudit package (numeric is a package inside it: its parent is dpaudit/)
PACKAGE = Path(numeric.__file__).resolve().parents[1]
#: the numeric layer, which implements the locked context managers
NUMERIC = Path(numeric.__file__).resolve().parent
#: Ways to change mpmath's precision other than numeric's locked context managers.
#: (decimal's ``localcontext().prec`` is per thread and allowed.)
_RAW = re.compile(r"\b(workprec|workdps|extraprec|extradps)\(|\b(mp|iv)\.(prec|dps)\s*=(?!=)")


def raw_precision_changes(root: Path) -> list[str]:
    """``file:line`` of every raw change of mpmath's precision under ``root``, except in
    :mod:`dpaudit.numeric` (which implements the locked ones)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.resolve().parent == NUMERIC:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _RAW.search(line.split("#")[0]):
                found.append(f"{path.relative_to(root)}:{number}")
    return found


def test_the_package_changes_precision_only_under_the_lock() -> None:
    assert raw_precision_changes(PACKAGE) == []


def test_the_scan_finds_a_raw_change(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "import mpmath\nwith mpmath.workprec(80):\n    pass\nmpmath.iv.prec = 53\n"
    )
    assert raw_precision_changes(tmp_path) == ["bad.py:2", "bad.py:4"]


@pytest.mark.parametrize(
    ("manager", "argument", "attribute", "expected"),
    [
        (numeric.mp_precision, 200, "prec", 200),
        (numeric.mp_digits, 60, "dps", 60),
        (numeric.iv_precision, 300, None, 300),
    ],
)
def test_a_precision_block_holds_the_lock(manager, argument, attribute, expected) -> None:
    """While one thread is inside a precision block, another cannot take the lock (so cannot
    change the precision); the precision is the requested one inside and restored after."""
    before = (mpmath.mp.prec, mpmath.iv.prec)
    taken: list[bool] = []
    with manager(argument):
        inside = getattr(mpmath.mp, attribute) if attribute else mpmath.iv.prec
        other = threading.Thread(
            target=lambda: taken.append(numeric.PRECISION_LOCK.acquire(timeout=0.2))
        )
        other.start()
        other.join()
    assert inside == expected
    assert taken == [False]
    assert (mpmath.mp.prec, mpmath.iv.prec) == before
