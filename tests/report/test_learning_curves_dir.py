"""``reports/learning-curves/`` (written by ``dpaudit learn --curves``) lives beside the audit
reports: generating reports keeps it and the up-to-date check does not complain about it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpaudit.report import Target, check_up_to_date, generate


@pytest.mark.slow
def test_report_generation_keeps_the_learning_curves_directory(
    tmp_path: Path, laplace_target: Target
) -> None:
    curves = tmp_path / "learning-curves"
    curves.mkdir()
    (curves / "index.md").write_text("# Learning curves\n", encoding="utf-8")
    (curves / "net-margin.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    generate([laplace_target], tmp_path, seed=5, progress=False)
    assert (curves / "index.md").read_text(encoding="utf-8") == "# Learning curves\n"
    assert (curves / "net-margin.png").exists()
    assert check_up_to_date(tmp_path, [laplace_target]) == []
