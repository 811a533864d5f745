"""Write requirements/ci-constraints.txt: the exact installed versions of everything
``pip install -e '.[dev]'`` pulls in (dpaudit's dependencies and its dev and dask extras,
followed through their own requirements).  Run in the environment CI should reproduce:

    python requirements/freeze.py
"""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

OUT = Path(__file__).with_name("ci-constraints.txt")
HEADER = """\
# Exact versions that CI (.ci/run) and report generation install:
#     pip install -c requirements/ci-constraints.txt -e '.[dev]'
# pyproject.toml keeps open ranges for users; this file makes CI and reports/ reproducible.
# Regenerate with `python requirements/freeze.py` after changing dependencies.
"""


def closure(root: str, extras: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Installed distributions required by ``root[extras]``, by canonical name."""
    seen: dict[str, tuple[str, str, set[str]]] = {}

    def visit(name: str, wanted: tuple[str, ...]) -> None:
        key = canonicalize_name(name)
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            return
        first = key not in seen
        entry = seen.setdefault(key, (dist.metadata["Name"], dist.version, set()))
        new_extras = [e for e in wanted if e not in entry[2]]
        if not first and not new_extras:
            return
        entry[2].update(new_extras)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None:
                needed = first
            else:
                needed = any(req.marker.evaluate({"extra": e}) for e in ["", *new_extras])
            if needed:
                visit(req.name, tuple(req.extras))

    visit(root, extras)
    return {k: (n, v) for k, (n, v, _) in seen.items() if k != canonicalize_name(root)}


def main() -> None:
    pins = sorted(f"{n}=={v}" for n, v in closure("dpaudit", ("dev", "dask")).values())
    OUT.write_text(HEADER + "\n".join(pins) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(pins)} pins")


if __name__ == "__main__":
    main()
