"""Targets: validation, registry look-up, MODULE:OBJECT loading."""

from __future__ import annotations

import pytest

from dpaudit.report import (
    TARGETS,
    Target,
    UnknownTargetError,
    load_targets,
    resolve_targets,
    target_from_mechanism,
)
from mechanisms.catalogue import LaplaceCount


def test_target_validation_names_the_field() -> None:
    with pytest.raises(ValueError, match="name must be"):
        Target(name="bad name", title="x", group="g", epsilon=1.0)
    with pytest.raises(ValueError, match="delta must be in"):
        Target(name="a/b", title="x", group="g", epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError, match="expect must be"):
        Target(name="a/b", title="x", group="g", epsilon=1.0, expect="maybe")
    with pytest.raises(ValueError, match="samples must be"):
        Target(name="a/b", title="x", group="g", epsilon=1.0, samples=3)


def test_builtin_targets_cover_catalogue_broken_and_every_claim() -> None:
    from dpaudit.verify import CLAIMS
    from mechanisms.broken import broken_mechanisms
    from mechanisms.catalogue import correct_mechanisms

    load_targets()
    groups = [t.group for t in TARGETS.values()]
    assert groups.count("catalogue") == len(correct_mechanisms())
    # the broken catalogue mechanisms, and the broken trainer audited by one run
    one_run_broken = [t for t in TARGETS.values() if t.group == "broken" and t.one_run]
    assert [t.name for t in one_run_broken] == ["broken/noisy-gd-too-little-noise-one-run"]
    assert groups.count("broken") == len(broken_mechanisms()) + len(one_run_broken)
    assert set(CLAIMS) <= set(TARGETS)
    assert all(t.expect == "broken" for t in TARGETS.values() if t.group == "broken")


def test_resolve_by_name_group_glob_and_order() -> None:
    load_targets()
    assert [t.name for t in resolve_targets(["catalogue/laplace-count"])] == [
        "catalogue/laplace-count"
    ]
    assert {t.group for t in resolve_targets(["broken"])} == {"broken"}
    names = [t.name for t in resolve_targets(["catalogue/laplace-*", "catalogue/laplace-count"])]
    assert names == ["catalogue/laplace-count", "catalogue/laplace-histogram"]
    with pytest.raises(UnknownTargetError, match="no target matches 'nope'"):
        resolve_targets(["nope"])


def test_module_object_spec_loads_a_mechanism() -> None:
    (t,) = resolve_targets(["mechanisms.catalogue:LaplaceCount"])
    assert t.epsilon == 1.0 and t.group == "user" and t.mechanism is not None
    with pytest.raises(UnknownTargetError, match="has no 'Nope'"):
        resolve_targets(["mechanisms.catalogue:Nope"])
    with pytest.raises(UnknownTargetError, match="cannot import"):
        resolve_targets(["no_such_module_xyz:thing"])


def test_target_from_mechanism_requires_a_claim() -> None:
    with pytest.raises(ValueError, match=r"needs its claimed epsilon .* and the datasets"):
        target_from_mechanism(lambda d, rng: 0)
    t = target_from_mechanism(LaplaceCount(0.5), name="mine/laplace")
    assert t.name == "mine/laplace" and t.epsilon == 0.5 and t.expect == "private"
