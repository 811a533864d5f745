"""The learners' committed index (``mechanisms/estimators/learner_index.json``): what
``dpaudit learn --list`` shows of each learner's requirements and regimes without importing
it must be what the classes say."""

from __future__ import annotations

import mechanisms.estimators as estimators
from dpaudit.learners import LEARNERS, load_learners


def test_the_committed_index_is_what_the_classes_state() -> None:
    assert estimators.learner_index() == estimators.build_learner_index(), (
        'mechanisms/estimators/learner_index.json is stale: run python -c "import '
        'mechanisms.estimators as e; e.write_learner_index()"'
    )


def test_every_registered_learner_lists_its_requirements_and_regimes() -> None:
    load_learners()
    for name, *_ in estimators.LEARNER_TABLE:
        described = LEARNERS[name].to_dict()  # to_dict imports nothing
        assert described["requirements"]["features"] in ("real", "boolean"), name
        assert set(described["regimes"]) == {"practical", "paper"}, name
