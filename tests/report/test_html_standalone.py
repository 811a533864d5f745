"""An HTML report is one self-contained file: its plots are embedded as PNG data URIs.

A page copied alone to another directory (no ``plots/`` beside it) still shows its plots: no
``src=`` refers to a file, and every embedded image decodes to the PNG written beside it.
"""

from __future__ import annotations

import base64
import io
import shutil
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import pytest

from dpaudit.report import Target, generate
from dpaudit.report.render import png_data_uri, to_html

PNG_URI = "data:image/png;base64,"


class _Sources(HTMLParser):
    """Every ``src`` attribute of a page, by tag."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.sources += [(tag, value or "") for name, value in attrs if name == "src"]


def _sources(page: Path) -> list[tuple[str, str]]:
    parser = _Sources()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.sources


@pytest.mark.slow
def test_html_report_embeds_its_plots_and_links_no_file(
    tmp_path: Path, broken_target: Target
) -> None:
    generate([broken_target], tmp_path / "out", fmt="html", seed=1, progress=False)
    alone = tmp_path / "alone"
    alone.mkdir()
    page = Path(shutil.copy(tmp_path / "out" / "test--broken.html", alone))
    sources = _sources(page)
    assert [tag for tag, _ in sources] == ["img", "img"]  # privacy curve, audit growth
    for (_, src), name in zip(sources, ("curve", "growth"), strict=True):
        assert src.startswith(PNG_URI), f"relative src= in a standalone page: {src[:60]}"
        data = base64.b64decode(src[len(PNG_URI) :], validate=True)
        assert data == (tmp_path / "out" / "plots" / f"test--broken-{name}.png").read_bytes()
        pixels = matplotlib.image.imread(io.BytesIO(data), format="png")
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert _sources(tmp_path / "out" / "index.html") == []


@pytest.mark.slow
def test_markdown_report_still_links_its_plot_files(tmp_path: Path, broken_target: Target) -> None:
    generate([broken_target], tmp_path, fmt="md", seed=1, progress=False)
    page = (tmp_path / "test--broken.md").read_text(encoding="utf-8")
    assert "(plots/test--broken-curve.png)" in page and "data:" not in page


def test_the_check_fails_on_a_page_that_links_a_file(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(to_html([("img", "plots/x.png", "a plot")], "t"), encoding="utf-8")
    assert _sources(page) == [("img", "plots/x.png")]
    assert not _sources(page)[0][1].startswith(PNG_URI)


def test_png_data_uri_refuses_a_file_that_is_not_png(tmp_path: Path) -> None:
    fake = tmp_path / "plot.png"
    fake.write_bytes(b"<svg/>")
    with pytest.raises(ValueError, match=r"path must name a PNG file, got .*plot\.png"):
        png_data_uri(fake)
