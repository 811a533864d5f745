"""The README is a user document, and the docs resolve inside a clone.

* the README stays a manual (at most 400 lines) and keeps the two set-up commands `.ci/run`
  relies on, verbatim;
* every relative link of the README and of ``docs/`` names a file of the repository (and
  an anchor, where given, a heading of that file);
* nothing refers to what a clone does not contain (files outside the repository, issue
  numbers of the tracker).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
SETUP = ("pip install -e '.[dev]' && dpaudit demo", "python -m pytest")
#: Pages other parts of the project write (security, soundness, concurrency, the CLI
#: reference): a link to one of them is checked as soon as the page exists.
PENDING = {"security.md", "soundness.md", "concurrency.md", "cli.md"}

_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.S | re.M)


def _prose(path: Path) -> str:
    """The page without its code blocks (a link inside code is not a link)."""
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def _slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub and mkdocs agree on these)."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", text)).strip("-")


def _anchors(path: Path) -> set[str]:
    return {_slug(m[1]) for m in re.finditer(r"^#+\s+(.*)$", _prose(path), re.M)}


def test_readme_is_a_manual_with_the_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    commands = [line.split("#")[0].strip() for line in text.splitlines()]
    for command in SETUP:
        assert command in commands, f"the README's set-up line changed: {command!r}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install" in ci and "-e '.[dev]'" in ci and "python -m pytest\n" in ci


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for m in _LINK.finditer(_prose(page)):
        target = m["target"]
        if re.match(r"[a-z]+:", target) or target == "#":
            continue  # an external address
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            if path.name not in PENDING:
                broken.append(target)
            continue
        if anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(target)
    assert not broken, f"links that do not resolve in a clone: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_no_reference_outside_the_clone(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    outside = re.findall(r"\.\./shared|shared/seeds|\bissue\s+#?\d+|#\d{1,4}\b(?!\))", text)
    assert not outside, f"references a clone cannot resolve: {outside}"


def test_the_checks_can_fail(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "# Title\n\nSee [x](missing.md), [y](#title), [z](#nowhere).\n"
        "```text\n[not a link](gone.md)\n```\n",
        encoding="utf-8",
    )
    assert [m["target"] for m in _LINK.finditer(_prose(page))] == [
        "missing.md",
        "#title",
        "#nowhere",
    ]
    assert _anchors(page) == {"title"}
    assert _slug("Noise samplers: exact discrete, floating-point `x`") == (
        "noise-samplers-exact-discrete-floating-point-x"
    )


def _paragraphs(path: Path) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", _prose(path))]


def test_the_regeneration_promise_names_its_exception_and_its_time() -> None:
    # "byte for byte" held for every report but OpenDP's, whose CSPRNG no seed fixes; a page
    # promising it says so in the same paragraph, and the README gives the command's time
    promises = [
        (page.relative_to(ROOT).as_posix(), paragraph)
        for page in (README, ROOT / "docs" / "design-notes.md", ROOT / "docs" / "development.md")
        for paragraph in _paragraphs(page)
        if re.search(r"byte[ -]for[ -]byte", paragraph) and "reports/" in paragraph
    ]
    assert len(promises) >= 3, promises
    assert all("OpenDP" in paragraph for _, paragraph in promises), promises
    (readme,) = [p for name, p in promises if name == "README.md"]
    assert "dpaudit report all" in readme and re.search(r"about \d+ minutes", readme)
