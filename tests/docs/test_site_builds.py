"""The documentation site builds with ``mkdocs build --strict``: no broken link, no warning
from the API reference, every page in the navigation.

It needs the ``docs`` extra (``pip install -e '.[docs]'``; ``.ci/run`` installs it) and is
skipped, saying so, without it.  About 10 s of CPU (most of it the API reference, read from
the sources by griffe without importing them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

mkdocs = pytest.importorskip(
    "mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]'; .ci/run does)"
)


def _nav_pages(entry: object) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict):
        return [p for value in entry.values() for p in _nav_pages(value)]
    if isinstance(entry, list):
        return [p for item in entry for p in _nav_pages(item)]
    return []


def test_every_page_is_in_the_navigation() -> None:
    import yaml

    class _Loader(yaml.SafeLoader):  # mkdocs.yml may use !!python/name tags: ignore them
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    listed = set(_nav_pages(config["nav"]))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages - listed == set(), "pages missing from the nav of mkdocs.yml"
    assert listed - pages == set(), "nav entries without a page"


@pytest.mark.slow
def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "--site-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert (tmp_path / "index.html").exists() and (tmp_path / "api" / "index.html").exists()
    assert (tmp_path / "teaching" / "cover-bound" / "index.html").exists()
