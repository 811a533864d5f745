"""Learning curves (:mod:`dpaudit.learning_curves`, ``dpaudit learn --curves``): the
computation on tiny grids, a utility check with fixed seeds, the baselines, input validation,
the files the command writes, and the learners' sample-complexity notes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from dpaudit.cli import main
from dpaudit.learning_curves import (
    CurveSet,
    Dataset,
    breast_cancer,
    diffprivlib_available,
    digits,
    learning_curves,
    synthetic,
)
from dpaudit.learning_curves import compute as curves_compute
from mechanisms.estimators import (
    DecisionListClassifier,
    DPWinnowClassifier,
    KernelMarginClassifier,
    NetMarginClassifier,
    ThresholdClassifier,
)

TINY = {"ns": [30, 200], "epsilons": [0.5, 2.0], "fixed_n": 200, "seeds": 2}


def _threshold_data(test: int = 500) -> list[Dataset]:
    return [synthetic("threshold", 1, test)]


@pytest.mark.slow
def test_tiny_grid_has_the_learner_and_the_non_private_baseline() -> None:
    curves = learning_curves("pac-threshold", **TINY)
    assert isinstance(curves, CurveSet)
    names = [name for name, _ in curves.datasets]
    assert names == ["threshold", "breast-cancer", "digits"]
    paper = "paper's constants (regime='paper')"
    for dataset in names:
        for axis in ("n", "epsilon"):
            panel = curves.select(dataset=dataset, axis=axis)
            assert ("pac-threshold", "defaults") in panel
            assert (("pac-threshold", paper) in panel) == (axis == "n")  # regimes: against n
            assert ("non-private", "baseline") in panel
            for points in panel.values():
                for p in points:
                    assert len(p.errors) == 2 and 0.0 <= p.mean <= 1.0
                    assert math.isfinite(p.half_width)
                    q1, q3 = p.quartiles
                    assert min(p.errors) <= q1 <= p.median <= q3 <= max(p.errors)
        assert 0.0 < curves.chance[dataset] <= 0.5
    learner = [p for p in curves.points if p.method == "pac-threshold"]
    assert all(
        p.accounted_epsilon is not None and p.accounted_epsilon <= p.epsilon for p in learner
    )


def test_error_falls_with_n_for_a_learner_that_learns() -> None:
    """Utility, fixed seeds (5 seeds, base seed 0, 1000 test rows): pac-threshold at
    epsilon = 1 on x ~ U[0, 1], label x >= 0.37, has mean test error <= 0.02 at n = 2000
    and more at n = 20.  The same check on a broken input (labels shuffled, no signal) has
    error >= 0.25 at n = 2000: the test can fail."""
    curves = learning_curves(
        "pac-threshold",
        ns=[20, 2000],
        epsilons=[1.0],
        fixed_epsilon=1.0,
        fixed_n=2000,
        seeds=5,
        datasets=_threshold_data(1000),
        baselines=False,
    )
    by_n = {p.n: p for p in curves.points if p.axis == "n"}
    assert by_n[2000].mean <= 0.02 < by_n[20].mean

    base = synthetic("threshold", 1, 1000)

    def shuffled(n: int, rng: np.random.Generator):
        X, y, Xt, yt = base.draw(n, rng)
        return X, rng.permutation(y), Xt, rng.permutation(yt)

    broken = Dataset("shuffled", "labels shuffled", shuffled, 1.0, True)
    curves = learning_curves(
        "pac-threshold",
        ns=[2000],
        epsilons=[1.0],
        fixed_epsilon=1.0,
        seeds=5,
        datasets=[broken],
        baselines=False,
    )
    assert next(p.mean for p in curves.points if p.axis == "n") >= 0.25


def test_reproducible_with_the_same_seed() -> None:
    kwargs = {**TINY, "datasets": _threshold_data(), "seed": 7, "baselines": False}
    a = learning_curves("pac-threshold", **kwargs)
    b = learning_curves("pac-threshold", **kwargs)
    assert [p.errors for p in a.points] == [p.errors for p in b.points]
    c = learning_curves("pac-threshold", **{**kwargs, "seed": 8})
    assert [p.errors for p in a.points] != [p.errors for p in c.points]


def test_diffprivlib_baseline_present_or_skipped_with_a_note() -> None:
    curves = learning_curves("pac-threshold", **TINY, datasets=_threshold_data())
    methods = {p.method for p in curves.points}
    if diffprivlib_available():
        assert "diffprivlib" in methods
    else:
        assert "diffprivlib" not in methods
        assert any(n.startswith("diffprivlib is") and "left out" in n for n in curves.notes)


def test_diffprivlib_absent_is_a_note_not_an_error(monkeypatch) -> None:
    monkeypatch.setattr(
        curves_compute, "_diffprivlib", lambda: (None, "diffprivlib is not installed (pip ...)")
    )
    curves = learning_curves("pac-threshold", **TINY, datasets=_threshold_data())
    assert "diffprivlib" not in {p.method for p in curves.points}
    assert curves.notes[0] == (
        "diffprivlib is not installed (pip ...): its LogisticRegression baseline is left out."
    )


def test_diffprivlib_used_when_importable(monkeypatch) -> None:
    """A stand-in peer class (a plain LogisticRegression taking diffprivlib's arguments)
    shows the baseline is fitted at each epsilon with the dataset's norm bound."""
    from sklearn.linear_model import LogisticRegression

    seen: list[tuple[float, float]] = []

    def peer(epsilon: float, data_norm: float, random_state: int) -> LogisticRegression:
        seen.append((epsilon, data_norm))
        return LogisticRegression()

    monkeypatch.setattr(curves_compute, "_diffprivlib", lambda: (peer, ""))
    curves = learning_curves("pac-threshold", **TINY, datasets=_threshold_data())
    assert "diffprivlib" in {p.method for p in curves.points}
    assert {e for e, _ in seen} == {0.5, 1.0, 2.0} and {d for _, d in seen} == {1.0}


def test_refused_points_keep_the_learners_message(monkeypatch) -> None:
    """A regime whose localisation asks for more rounds than rows (64 rounds, n = 30) is
    refused at n = 30, with the learner's message, and fitted at n = 200."""
    monkeypatch.setattr(NetMarginClassifier, "CURVE_REGIMES", {"64 rounds": {"rounds": 64}})
    curves = learning_curves(
        "net-margin",
        ns=[30, 200],
        epsilons=[1.0],
        fixed_n=200,
        seeds=2,
        datasets=[synthetic("halfspace", 3, 100)],
        baselines=False,
    )
    refused = [p for p in curves.points if p.refused]
    assert [(p.regime, p.n) for p in refused] == [("64 rounds", 30)]
    assert refused[0].refused.startswith("rounds must be an integer in [1, 30]")
    assert refused[0].errors == [] and math.isnan(refused[0].median)


def test_every_epsilon_is_accepted_and_the_run_epsilon_recorded() -> None:
    """decision-list used to refuse epsilon >= 1 ('must be in (0, 1)'); now every epsilon
    of the grid is fitted, the accounted epsilon never above the one asked."""
    curves = learning_curves(
        "decision-list",
        ns=[60],
        epsilons=[0.5, 2.0, 40.0],
        fixed_n=60,
        seeds=2,
        datasets=[synthetic("boolean", 6, 100)],
        baselines=False,
    )
    assert not [p for p in curves.points if p.refused]
    for p in curves.points:
        assert p.accounted_epsilon is not None and p.accounted_epsilon <= p.epsilon


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ns": []}, r"ns must be a non-empty list of integers in \[2, inf\), got \[\]"),
        ({"ns": [10, 1]}, r"ns must be a non-empty list of integers in \[2, inf\), got 1 in"),
        ({"ns": "100"}, r"ns must be a non-empty list of integers in \[2, inf\), got '100'"),
        ({"ns": [10.5]}, r"ns must be .* got 10.5 in"),
        ({"epsilons": [0.0]}, r"epsilons must be a non-empty list of numbers in \(0, inf\), got 0"),
        ({"epsilons": [math.nan]}, r"epsilons must be .* got nan"),
        ({"epsilons": [True]}, r"epsilons must be .* got True"),
        ({"fixed_epsilon": -1.0}, r"fixed_epsilon must be .* in \(0, inf\), got -1"),
        ({"fixed_n": 1}, r"fixed_n must be .* in \[2, inf\), got 1"),
        ({"seeds": 1}, r"seeds must be .* in \[2, inf\), got 1"),
        ({"seed": -3}, r"seed must be .* in \[0, inf\), got -3"),
        ({"delta": 1.5}, r"delta must be a number in \(0, 1\), got 1.5"),
    ],
)
def test_bad_settings_name_parameter_range_and_value(kwargs, match) -> None:
    settings = {**TINY, "datasets": _threshold_data(), **kwargs}
    with pytest.raises(ValueError, match=match):
        learning_curves("pac-threshold", **settings)


def test_unknown_learner_and_bad_dataset_arguments() -> None:
    with pytest.raises(KeyError, match="learner must be one of"):
        learning_curves("no-such-learner", **TINY)
    with pytest.raises(ValueError, match=r"d must be an integer in \[3, inf\), got 2"):
        synthetic("boolean", 2)
    with pytest.raises(ValueError, match=r"d must be an integer in \[1, 30\] or None, got 31"):
        breast_cancer("halfspace", 31)
    with pytest.raises(ValueError, match=r"n must be at most 398 for breast-cancer, got 399"):
        breast_cancer("halfspace").draw(399, np.random.default_rng(0))


def test_breast_cancer_and_digits_views_per_task() -> None:
    rng = np.random.default_rng(0)
    X, _, Xt, _ = breast_cancer("boolean").draw(50, rng)
    assert set(np.unique(X)) <= {0.0, 1.0} and X.shape == (50, 30) and len(Xt) == 171
    X, *_ = breast_cancer("halfspace", 2).draw(50, rng)
    assert X.shape == (50, 2) and np.abs(X).max() <= 0.5
    X, *_ = breast_cancer("threshold").draw(50, rng)
    assert X.shape == (50, 30) and X.min() >= 0.0 and X.max() <= 1.0
    data = digits("halfspace")
    X, y, Xt, yt = data.draw(1258, rng)
    assert X.shape == (1258, 64) and len(Xt) == 539 and np.abs(X).max() <= 0.5
    assert np.all(np.linalg.norm(X, axis=1) <= data.feature_norm)
    assert 0.45 < np.mean(np.concatenate([y, yt])) < 0.55  # 5-9 against 0-4: balanced
    X, *_ = digits("boolean").draw(20, rng)
    assert set(np.unique(X)) <= {0.0, 1.0}
    with pytest.raises(ValueError, match=r"n must be at most 1258 for digits, got 1259"):
        data.draw(1259, rng)


def test_the_datasets_per_task() -> None:
    """Halfspace learners: margin data in d = 5, 20, 100 and the two real datasets; boolean
    learners: a decision list, a sparse disjunction over 30 features (balanced: each bit 1
    with probability 0.2, three literals), and the two real datasets."""
    from dpaudit.learners import get_learner
    from dpaudit.learning_curves import datasets_for

    names = [d.name for d in datasets_for(get_learner("net-margin"))]
    assert names == ["margin d=5", "margin d=20", "margin d=100", "breast-cancer", "digits"]
    boolean = datasets_for(get_learner("decision-list"))
    assert [d.name for d in boolean] == [
        "decision list d=10",
        "disjunction d=30",
        "breast-cancer",
        "digits",
    ]
    X, y, _, _ = boolean[1].draw(5000, np.random.default_rng(0))
    assert X.shape == (5000, 30) and np.array_equal(y, X[:, [0, 7, 19]].max(axis=1))
    assert 0.46 < y.mean() < 0.52


@pytest.mark.slow
def test_cli_writes_plot_page_json_and_index(tmp_path: Path, capsys) -> None:
    out = tmp_path / "curves"
    argv = ["learn", "--curves", "pac-threshold", "--quick", "--out", str(out), "--seed", "3"]
    assert main(argv) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["index.md", "pac-threshold.json", "pac-threshold.md", "pac-threshold.png"]
    assert (out / "pac-threshold.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "pac-threshold.md").read_text(encoding="utf-8")
    assert "dpaudit learn --curves pac-threshold --quick --seed 3" in page
    assert "### threshold: error against n (epsilon = 0.9)" in page
    assert "median error | quartiles" in page
    assert "002 Lecture 4 at alpha = 0.1" in page  # the paper's own sample-complexity number
    data = json.loads((out / "pac-threshold.json").read_text(encoding="utf-8"))
    assert data["learner"] == "pac-threshold" and data["seed"] == 3
    assert "[pac-threshold](pac-threshold.md)" in (out / "index.md").read_text(encoding="utf-8")
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(argv) == 0  # regenerating gives the same files
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["learn", "--curves", "--quick"], "--out is required with --curves"),
        (["learn", "--quick", "net-margin"], "--quick is used only with --curves"),
        (["learn", "--curves", "--list", "--out", "x"], "--curves and --list exclude"),
        (["learn", "--curves", "--out", "x", "--epsilon", "1"], "--epsilon is not used with"),
        (["learn", "a", "b"], "learn fits one learner NAME at a time, got a, b"),
    ],
)
def test_cli_curves_usage_errors(argv, message, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_sample_complexity_notes_state_the_papers_numbers() -> None:
    winnow = DPWinnowClassifier.sample_complexity_notes(0.9, 1e-6, 10, 1000)
    assert "004 Theorem 4.5" in winnow[0] and "switches" in winnow[0]
    assert "no update can happen" in winnow[1] and "No practical regime" in winnow[2]
    kernel = KernelMarginClassifier.sample_complexity_notes(0.9, 1e-6, 10, 1000)
    assert "D = 1.06e+07 features" in kernel[0]
    (cover,) = DecisionListClassifier.sample_complexity_notes(0.9, 1e-6, 10, 1000)
    assert "n >= 142,277 samples" in cover
    (pac,) = ThresholdClassifier.sample_complexity_notes(0.9, 1e-6, 1, 1000)
    assert "m >= 24,293 samples" in pac
    net, candidates = NetMarginClassifier.sample_complexity_notes(0.9, 1e-6, 10, 1000)
    assert "about 136 dimensions" in net and "runs at dimension 2" in net
    assert "McSherry-Talwar 2007 Theorem 6" in candidates


def test_a_learners_labelled_regimes_are_drawn_beside_its_defaults(monkeypatch) -> None:
    monkeypatch.setattr(
        ThresholdClassifier, "CURVE_REGIMES", {"coarse grid": {"grid_size": 10}}, raising=False
    )
    curves = learning_curves("pac-threshold", **TINY, datasets=_threshold_data(), baselines=False)
    assert {p.regime for p in curves.points} == {"defaults", "coarse grid"}
    assert {p.axis for p in curves.points if p.regime == "coarse grid"} == {"n"}
    # the page and the index give the regime its own verdict line / row
    from dpaudit.learning_curves.pages import _index, learner_page, verdict

    page = learner_page(curves, "cmd", "x.png")
    assert "  * *coarse grid*: " in page
    assert f"**{verdict(curves, 'threshold', 'coarse grid')}**" in page
    rows = [r for r in _index([curves], "cmd").splitlines() if r.startswith("| [pac-threshold]")]
    assert len(rows) == 2 and "*coarse grid*" in rows[1]
    monkeypatch.setattr(ThresholdClassifier, "CURVE_REGIMES", {"bad": {"no_such": 1}})
    with pytest.raises(TypeError, match="regime parameter 'no_such' is not a parameter of"):
        learning_curves("pac-threshold", **TINY, datasets=_threshold_data(), baselines=False)
    curves = learning_curves(
        "pac-threshold", **TINY, datasets=_threshold_data(), baselines=False, regimes=False
    )
    assert {p.regime for p in curves.points} == {"defaults"}


def test_a_setting_too_slow_at_large_n_is_marked_not_run_and_the_pages_say_why(
    monkeypatch,
) -> None:
    """``CURVE_MAX_N``: above its n a setting is not run; its points stay, marked with the
    reason, the notes say so, and the page's table, regime line and index cell show it."""
    paper = "paper's constants (regime='paper')"
    why = "too slow here (test)"
    monkeypatch.setattr(ThresholdClassifier, "CURVE_MAX_N", {paper: (30, why)})
    curves = learning_curves("pac-threshold", **TINY, datasets=_threshold_data(), baselines=False)
    by_n = {p.n: p for p in curves.points if p.regime == paper}
    assert by_n[30].errors and by_n[30].skipped is None
    assert by_n[200].errors == [] and by_n[200].skipped == f"not run above n = 30: {why}"
    defaults = [p for p in curves.points if p.regime == "defaults"]
    assert all(p.errors and p.skipped is None for p in defaults)
    assert f"{paper}: not run above n = 30 ({why})." in curves.notes
    from dpaudit.learning_curves.pages import _index, learner_page

    page = learner_page(curves, "cmd", "x.png")
    assert f"| pac-threshold | {paper} | 200 | 1 | not run above n = 30: {why} |" in page
    assert "at n = 30: **" in page and f"(not run above n = 30: {why})." in page
    rows = [r for r in _index([curves], "cmd").splitlines() if r.startswith("| [pac-threshold]")]
    assert ", n = 30)" in rows[1] and ", n = " not in rows[0]
    assert by_n[200].to_dict()["skipped"] == by_n[200].skipped
    monkeypatch.setattr(ThresholdClassifier, "CURVE_MAX_N", {paper: (30, "")})
    with pytest.raises(TypeError, match="CURVE_MAX_N of pac-threshold must map"):
        learning_curves("pac-threshold", **TINY, datasets=_threshold_data(), baselines=False)


def test_label_dp_paper_regime_is_capped_in_the_curves_with_its_cost() -> None:
    """label-dp-margin's paper regime (O(n^2) labelings) runs up to n = 3,000 in the curves,
    and the reason names its measured cost at n = 10^4."""
    from mechanisms.estimators import LabelDPClassifier

    ((label, (largest, why)),) = LabelDPClassifier.CURVE_MAX_N.items()
    assert label in LabelDPClassifier.CURVE_REGIMES and largest == 3000
    assert "O(n^2)" in why and "52 CPU s and 840 MB" in why
