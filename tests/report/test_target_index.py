"""``dpaudit report --list`` reads the plugins' target index instead of building every target
(which imports every mechanism, the accountant and the auditor: 4 s); the index must list
exactly what the plugins register, in order."""

from __future__ import annotations

import pytest

from dpaudit.plugins import GROUPS, load_group
from dpaudit.report.listing import Listed, target_index, unknown_specs
from mechanisms import report_target_index


def _registered(name: str) -> list[tuple[str, str, str]]:
    (load,) = load_group(GROUPS["report_targets"], names=(name,))
    assert load.status == "loaded", load.line()
    return [(t.name, t.group, t.title) for t in load.result]


@pytest.mark.parametrize(
    ("plugin", "index"),
    [
        ("mechanisms", lambda: list(report_target_index.MECHANISMS)),
        ("libraries", report_target_index.libraries),
    ],
)
def test_the_index_lists_exactly_the_registered_targets(plugin: str, index) -> None:  # type: ignore[no-untyped-def]
    registered = _registered(plugin)
    listed = [tuple(row) for row in index()]
    rows = "".join(f"    {row!r},\n" for row in registered)
    assert listed == registered, (
        f"mechanisms/report_target_index.py is out of date for the {plugin!r} targets; "
        f"the registered ones are:\n{rows}"
    )


def test_list_reads_the_index_and_agrees_with_the_registry() -> None:
    """What ``--list`` shows (the index) is what loading every plugin registers, in the same
    order (plugins by entry-point name, targets in registration order)."""
    registered = [
        (t.name, t.group, t.title)
        for load in load_group(GROUPS["report_targets"])
        for t in load.result
    ]
    assert [(t.name, t.group, t.title) for t in target_index()] == registered


def test_unknown_specs_resolve_as_resolve_targets_does() -> None:
    listed = [
        Listed("catalogue/laplace-count", "catalogue", "L"),
        Listed("broken/x", "broken", "X"),
    ]
    for spec in ("catalogue/laplace-count", "catalogue", "catalogue/*", "catalogue/", "all", "m:o"):
        assert unknown_specs([spec], listed) is None, spec
    message = unknown_specs(["catalogue/laplace-cont"], listed)
    assert message is not None and "(closest: catalogue/laplace-count" in message
    assert "groups: broken, catalogue; 2 targets" in message


def test_a_plugin_without_an_index_is_loaded_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from dpaudit.report import listing

    def fake(group: str) -> list[importlib.metadata.EntryPoint]:
        if group == GROUPS["report_targets"]:
            return [
                importlib.metadata.EntryPoint("theirs", "tests_report_plugin:register", group=group)
            ]
        return []  # no index

    import sys
    import types

    from dpaudit.report import Target

    module = types.ModuleType("tests_report_plugin")
    module.register = lambda: [  # type: ignore[attr-defined]
        Target(name="theirs/one", title="One", group="theirs", epsilon=1.0)
    ]
    monkeypatch.setitem(sys.modules, "tests_report_plugin", module)
    monkeypatch.setattr("dpaudit.plugins.entry_points", fake)
    assert listing.target_index() == [Listed("theirs/one", "theirs", "One")]


def test_list_takes_patterns(capsys: pytest.CaptureFixture[str]) -> None:
    from dpaudit.cli import main

    assert main(["report", "--list", "catalogue", "broken/*sparse*"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows and all(r.startswith(("catalogue/", "broken/broken-sparse")) for r in rows)
    assert main(["report", "--list", "catalog"]) == 2
    assert "(closest: catalogue)" in capsys.readouterr().err
