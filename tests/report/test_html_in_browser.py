"""The HTML reports render in a real headless browser (Debian ``chromium``).

The test copies a generated page, adds a probe script to the copy (the reports themselves
have no scripts), loads it with ``chromium --headless --dump-dom`` and reads back what the
browser computed: every image decoded with a non-zero size, the verdict box and the tables
laid out, nothing wider than the window.  Skipped when chromium is not installed
(``apt-get install -y chromium``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dpaudit.report import Target, generate

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)

pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no headless browser: install Debian's chromium "
    "(apt-get install -y chromium) to check that HTML reports render",
)

PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => i.naturalWidth + 'x' + i.naturalHeight);
  const v = document.getElementById('verdict');
  const wide = [...document.querySelectorAll('table, pre, img')]
      .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).length;
  const out = document.createElement('div');
  out.id = 'probe';
  out.textContent = 'images=' + imgs.join(',') + ';verdict=' + (v ? v.offsetHeight : -1) +
      ';tables=' + document.querySelectorAll('table tr').length + ';overflow=' + wide +
      ';title=' + document.title;
  document.body.appendChild(out);
});
</script>"""


def _render(page: Path) -> str:
    probe = page.with_name("probe-" + page.name)
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8"
    )
    done = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1280,900",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found = re.search(r'<div id="probe">([^<]*)</div>', done.stdout)
    assert found, f"the browser did not run the page: {done.stderr[-500:]}"
    return found.group(1)


@pytest.mark.slow  # about 4 s
def test_html_report_and_index_render(tmp_path: Path, broken_target: Target) -> None:
    generate([broken_target], tmp_path, fmt="html", seed=1, progress=False)
    probe = dict(kv.split("=", 1) for kv in _render(tmp_path / "test--broken.html").split(";"))
    images = probe["images"].split(",")
    assert len(images) == 2 and all(not s.startswith("0x") for s in images), probe
    assert int(probe["verdict"]) > 0 and int(probe["tables"]) > 10
    assert probe["overflow"] == "0", "content wider than a 1280 px window"
    assert probe["title"] == broken_target.title
    index = dict(kv.split("=", 1) for kv in _render(tmp_path / "index.html").split(";"))
    assert int(index["tables"]) >= 2 and index["overflow"] == "0"
