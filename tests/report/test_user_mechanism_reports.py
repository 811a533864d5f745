"""``dpaudit report MODULE:OBJECT`` for a plain function or a mechanism instance, the natural
first try: it called the object as a zero-argument factory and exited 3 ("internal error ...
this is a bug in dpaudit").  A bare mechanism is now reported directly, its claim and datasets
given as ``dpaudit audit`` takes them (``--epsilon``, ``--d0``/``--d1``, ``--records``) or read
from its attributes; without them the command exits 2 saying what a target is.  The report's
"Regenerate:" line names the ``MODULE:OBJECT`` spec and its options (it named
``user/<name>``, which only exists for built-in targets), and running it regenerates the
report byte for byte.
"""

from __future__ import annotations

import json
import shlex
import textwrap
from pathlib import Path

import pytest

from dpaudit.cli import main
from dpaudit.report import MechanismClaim, Target, resolve_targets

MODULE = textwrap.dedent(
    '''
    import numpy as np


    def noisy_count(data, rng):
        """Number of records plus Laplace noise."""
        return float(len(data) + rng.laplace(0.0, 4.0))

    noisy_count.arithmetic = "real"


    def clipped_sum(data, rng):  # NaN read as 0 (np.clip passes NaN: the search tries it)
        return float(np.clip(np.nan_to_num(data[:, 0]), -1, 10).sum() + rng.laplace(0.0, 11.0))

    clipped_sum.arithmetic = "real"


    def nan_sum(data, rng):  # np.clip passes NaN: one NaN record makes every release NaN
        return float(np.clip(data[:, 0], 0, 1).sum() + rng.laplace(0.0, 1.0))

    nan_sum.arithmetic = "real"


    def count_or_raise(data, rng):  # raises on the empty dataset (as pipeline-dp's COUNT)
        if len(data) == 0:
            raise ValueError("col must be non-empty")
        return float(len(data) + rng.laplace(0.0, 1.0))

    count_or_raise.arithmetic = "real"


    class Count:
        """Count plus noise, with its claim as attributes."""

        arithmetic = "real"
        epsilon = 1.0
        pairs = (([1, 2, 3], [1, 2]),)

        def __call__(self, data, rng):
            return float(len(data) + rng.laplace(0.0, 4.0))


    count = Count()


    class NoDatasets:
        epsilon = 1.0

        def __call__(self, data, rng):
            return 0.0


    no_datasets = NoDatasets()


    def per_dataset(data, rng):  # a claim read per dataset (as dpaudit audit --records does)
        return 0.0

    per_dataset.epsilon = lambda data: 1.0 + len(data)
    per_dataset.pairs = (([1], []),)


    class OddClaims:
        epsilon = "one"
        delta = float("nan")
        samples = 2.5
        pairs = (([1], []),)

        def __call__(self, data, rng):
            return 0.0


    odd = OddClaims()


    def make_target():
        from dpaudit.report import Target

        return Target(name="mine/count", title="Count", group="mine", epsilon=1.0,
                      mechanism=Count, samples=2_000)
    '''
)


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "usermod.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _regenerate_line(page: Path) -> str:
    line = next(x for x in page.read_text(encoding="utf-8").splitlines() if "Regenerate:" in x)
    return line.split("`")[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["usermod:noisy_count", "--epsilon", "1", "--d0", "[1, 2, 3]", "--d1", "[1, 2]"],
        ["usermod:clipped_sum", "--epsilon", "1", "--records", "(-1,10)", "--sizes", "1,3"],
        ["usermod:count"],  # an instance carrying its claim
        ["usermod:Count", "--epsilon", "0.5"],  # a class, its claim overridden
        [
            *("usermod:clipped_sum", "--epsilon", "1", "--records", "(-1,10)", "--sizes", "1,3"),
            *("--no-edge-values", "--on-error", "raise"),
        ],
    ],
    ids=["function+pair", "function+records", "instance", "class+epsilon", "records+options"],
)
def test_a_function_or_instance_is_reported_and_its_regenerate_line_works(
    argv: list[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = project / "first"
    code = main(["report", *argv, "--samples", "2000", "--out", str(first), "--seed", "3"])
    assert code == 0, capsys.readouterr()
    (page,) = [p for p in first.glob("user--*.md")]
    command = _regenerate_line(page)
    assert command.startswith(f"dpaudit report {argv[0]} ") and "--samples 2000" in command
    # the line, run as a user would (DIR and SEED filled in), gives the same report
    words = shlex.split(command.replace("DIR", str(project / "again")).replace("SEED", "3"))
    assert main(words[1:]) == 0
    again = project / "again" / page.name
    assert again.read_text(encoding="utf-8") == page.read_text(encoding="utf-8")
    data = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    assert (
        data["target"]["regenerate"] == command.removeprefix("dpaudit report ").split(" --out")[0]
    )
    assert data["audit"]["epsilon_lower"] >= 0 and "error" not in data["audit"]


def test_a_function_reports_its_name_source_and_docstring(project: Path) -> None:
    claim = MechanismClaim(epsilon=1.0, pairs=(([1, 2], [1]),), arguments=("--epsilon", "1"))
    (t,) = resolve_targets(["usermod:noisy_count"], claim=claim)
    assert (t.name, t.title, t.source) == ("user/noisy_count", "noisy_count", "usermod:noisy_count")
    assert t.summary == "Number of records plus Laplace noise."
    assert t.regenerate == "usermod:noisy_count --epsilon 1"


#: a user function with its claim and one pair of datasets: the audit is fully stated
WITH_PAIR = ["usermod:noisy_count", "--epsilon", "1", "--d0", "[1]", "--d1", "[]"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["usermod:noisy_count"], "needs its claimed epsilon (--epsilon E) and the datasets"),
        (["usermod:no_datasets"], "needs the datasets to audit it on"),
        (["usermod:noisy_count", "--epsilon", "1", "--d0", "[1]"], "--d0 and --d1 must be"),
        (["usermod:make_target", "--epsilon", "1"], "is a Target, which carries its own"),
        (["catalogue/laplace-count", "--epsilon", "1"], "state the claim of a mechanism"),
        (["usermod:noisy_count", "--epsilon", "1e999", "--d0", "[1]", "--d1", "[]"], "finite"),
        # an attribute that is no number was exit 3 (float() of a function or a string)
        (["usermod:per_dataset"], "per_dataset.epsilon is a function of the dataset, which"),
        (["usermod:odd"], "OddClaims.epsilon must be a number (or give --epsilon E), got 'one'"),
        (["usermod:odd", "--epsilon", "1"], "OddClaims.delta must be a finite number (or give"),
        (["usermod:odd", "--epsilon", "1", "--delta", "0"], "OddClaims.samples must be an int"),
        ([*WITH_PAIR, "--no-edge-values"], "--no-edge-values must be combined with --records"),
        (
            [*WITH_PAIR, "--on-error", "skip"],
            "--on-error must be 'raise' or 'output' without --records",
        ),
        (["catalogue/laplace-count", "--on-error", "raise"], "state the claim of a mechanism"),
    ],
)
def test_a_mechanism_without_its_claim_is_bad_input_saying_what_a_target_is(
    argv: list[str], message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", *argv, "--out", str(project / "out"), "--no-audit"]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err


def test_a_target_factory_named_as_module_object_keeps_working(project: Path) -> None:
    (t,) = resolve_targets(["usermod:make_target"])
    assert (
        isinstance(t, Target) and t.name == "mine/count" and t.regenerate == "usermod:make_target"
    )


#: A record search that finds both bugs at these samples (seed 3): the NaN record of nan_sum
#: (certified 5.8 > 1 with edge values), the exception of count_or_raise on [] (5.8 > 1 with
#: on_error="output"; refused and skipped without it).
SEARCH = ("--epsilon", "1", "--records", "(0,1)", "--relation", "add-remove", "--sizes", "0,2")


@pytest.mark.parametrize(
    ("argv", "options", "code"),
    [
        (["usermod:nan_sum", "--no-edge-values"], {"edge_values": False}, 0),
        (["usermod:count_or_raise", "--on-error", "output"], {"on_error": "output"}, 1),
    ],
    ids=["no-edge-values", "on-error-output"],
)
def test_the_record_search_options_reach_the_audit_and_the_report(
    argv: list[str],
    options: dict[str, object],
    code: int,
    project: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--no-edge-values`` and ``--on-error`` as ``dpaudit audit --records`` takes them: the
    report's audit runs with them (no NaN record found / the exception certified as an
    outcome), its JSON and its page list them, and its "Regenerate:" line repeats them."""
    out = project / "out"
    words = [*argv[:1], *SEARCH, *argv[1:], "--samples", "2000"]
    assert main(["report", *words, "--out", str(out), "--seed", "3", "--no-progress"]) == code, (
        capsys.readouterr()
    )
    (page,) = out.glob("user--*.md")
    data = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    assert data["target"]["audit_options"] == options
    assert data["target"]["regenerate"] == shlex.join(words)
    assert shlex.join(argv[1:]) in _regenerate_line(page)
    assert "| audit options |" in page.read_text(encoding="utf-8")
    if "edge_values" in options:  # the default search certifies NaN: 5.8 > 1
        assert "edge values" not in data["audit"]["pair"] and not data["audit"]["violation"]
    else:  # the default search refuses the pairs with [] and finds nothing
        assert "raised ValueError" in data["audit"]["event"] and data["audit"]["violation"]
