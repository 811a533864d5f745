"""The names, groups and titles of this repository's report targets, readable without
importing their code: the entry points ``mechanisms`` and ``libraries`` of the group
``dpaudit.report_target_index`` (``pyproject.toml``), which ``dpaudit report --list`` and its
argument errors read instead of building every target (:mod:`dpaudit.report.listing`).

Each must list exactly the targets its ``register()`` registers, in order
(``tests/report/test_target_index.py`` checks it and prints the rows to paste after a target
is added, removed or renamed).  A library target's title carries the installed version of
the library, read here as ``mechanisms.libraries.library_version`` reads it (from the
package metadata, importing neither the library nor NumPy).
"""

from __future__ import annotations

import importlib.metadata

__all__ = ["LIBRARY_APIS", "MECHANISMS", "libraries"]

#: The targets of ``mechanisms.report_targets:register``: (name, group, title).
MECHANISMS = (
    ("000/theorem-3", "source documents", "000 Nguyen, Ullman, Zakynthinou 2020: Theorem 3"),
    ("000/theorem-5", "source documents", "000 Nguyen, Ullman, Zakynthinou 2020: Theorem 5"),
    (
        "001/label-dp",
        "source documents",
        "001 Bassily, Mohri, Suresh 2022: Appendix E (reconstructed)",
    ),
    (
        "001/lemma-3.1",
        "source documents",
        "001 Bassily, Mohri, Suresh 2022: Lemma 3.1 (privacy of Algorithm 4)",
    ),
    (
        "001/margin-selection",
        "source documents",
        "001 Bassily, Mohri, Suresh 2022: Appendix F (reconstructed)",
    ),
    ("001/theorem-3.1", "source documents", "001 Bassily, Mohri, Suresh 2022: Theorem 3.1"),
    (
        "001/theorem-3.2",
        "source documents",
        "001 Bassily, Mohri, Suresh 2022: Theorem 3.2 (privacy)",
    ),
    ("001/theorem-5.1", "source documents", "001 Bassily, Mohri, Suresh 2022: Theorem 5.1"),
    (
        "002/exponential-mechanism",
        "source documents",
        "002 Lecture 4: What can we learn privately?: Exponential mechanism, proof of privacy",
    ),
    (
        "002/private-pac-learner",
        "source documents",
        "002 Lecture 4: What can we learn privately?: Private PAC learning (generic learner over a finite class)",  # noqa: E501 (a title as registered)
    ),
    ("003/corollary-1", "source documents", "003 Dagan, Feldman 2020: Corollary 1 (privacy part)"),
    ("003/lemma-5", "source documents", "003 Dagan, Feldman 2020: Lemma 5"),
    ("003/lemma-7", "source documents", "003 Dagan, Feldman 2020: Lemma 7 (stability part)"),
    ("004/lemma-a1", "source documents", "004 Bun, Fang (decision lists, DP-Winnow): Lemma A.1"),
    (
        "004/lemma-a1-small-lambda",
        "source documents",
        "004 Bun, Fang (decision lists, DP-Winnow): Lemma A.1 (lambda <= 5/4)",
    ),
    (
        "004/theorem-3.5",
        "source documents",
        "004 Bun, Fang: Privately Learning Decision Lists and a DP Winnow: Theorem 3.5 (privacy), Proof A.7",  # noqa: E501 (a title as registered)
    ),
    (
        "004/theorem-4.4",
        "source documents",
        "004 Bun, Fang: Privately Learning Decision Lists and a DP Winnow: Theorem 4.4",
    ),
    (
        "003/theorem-2",
        "source documents",
        "003 Dagan, Feldman 2020: Theorem 2 (reconstructed claim)",
    ),
    ("catalogue/laplace-count", "catalogue", "LaplaceCount"),
    ("catalogue/laplace-histogram", "catalogue", "LaplaceHistogram"),
    ("catalogue/gaussian-sum", "catalogue", "GaussianSum"),
    ("catalogue/report-noisy-max-laplace", "catalogue", "ReportNoisyMax[laplace]"),
    ("catalogue/report-noisy-max-exponential", "catalogue", "ReportNoisyMax[exponential]"),
    ("catalogue/exponential-mechanism", "catalogue", "ExponentialMechanism"),
    ("catalogue/randomized-response", "catalogue", "RandomizedResponse"),
    ("catalogue/sparse-vector", "catalogue", "SparseVector"),
    ("broken/broken-laplace-too-little-noise", "broken", "BrokenLaplaceTooLittleNoise"),
    ("broken/broken-laplace-wrong-sensitivity", "broken", "BrokenLaplaceWrongSensitivity"),
    ("broken/broken-histogram-wrong-sensitivity", "broken", "BrokenHistogramWrongSensitivity"),
    ("broken/broken-gaussian-without-clipping", "broken", "BrokenGaussianWithoutClipping"),
    (
        "broken/broken-noisy-max-releases-value-laplace",
        "broken",
        "BrokenNoisyMaxReleasesValue[laplace]",
    ),
    (
        "broken/broken-noisy-max-releases-value-exponential",
        "broken",
        "BrokenNoisyMaxReleasesValue[exponential]",
    ),
    ("broken/broken-noisy-max-wrong-noise-scale", "broken", "BrokenNoisyMaxWrongNoiseScale"),
    ("broken/broken-sparse-vector-roth2011", "broken", "BrokenSparseVectorRoth2011"),
    ("broken/broken-sparse-vector-lee-clifton2014", "broken", "BrokenSparseVectorLeeClifton2014"),
    ("broken/broken-sparse-vector-stoddard2014", "broken", "BrokenSparseVectorStoddard2014"),
    ("broken/broken-sparse-vector-chen2015", "broken", "BrokenSparseVectorChen2015"),
    ("floating-point/broken-naive-float-laplace", "floating point", "BrokenNaiveFloatLaplace"),
    ("floating-point/broken-box-muller-gaussian", "floating point", "BrokenBoxMullerGaussian"),
    ("floating-point/broken-float32clamped-sum", "floating point", "BrokenFloat32ClampedSum"),
    ("floating-point/snapping-laplace", "floating point", "SnappingLaplace"),
    ("floating-point/geometric-count", "floating point", "GeometricCount"),
    (
        "one-run/noisy-gd-gradient-canaries",
        "one-run training",
        "noisy-gd-gradient-canaries (one-run audit)",
    ),
    (
        "one-run/noisy-sgd-margin-input-canaries",
        "one-run training",
        "noisy-sgd-margin-input-canaries (one-run audit)",
    ),
    (
        "broken/noisy-gd-too-little-noise-one-run",
        "broken",
        "broken-noisy-gd-gradient-canaries-noise/10 (one-run audit)",
    ),
)

#: The reports of ``mechanisms.libraries.report_targets:register``: (library, short name, the
#: API audited); each is listed as ``library/short`` in the group ``library <library>``.
LIBRARY_APIS = (
    (
        "opendp",
        "discrete-gaussian-count",
        "then_count() >> then_gaussian(scale=4.0), make_fix_delta(1e-05)",
    ),
    (
        "opendp",
        "float-laplace-sum",
        "then_clamp((0.0, 1.0)) >> then_sum() >> then_laplace(scale=1.0) on floats",
    ),
    (
        "opendp",
        "gaussian-mean",
        "then_clamp((0.0, 1.0)) >> then_mean() >> then_gaussian(scale=1.0), size 4, make_zCDP_to_approxDP and make_fix_delta(1e-05)",  # noqa: E501 (a title as registered)
    ),
    (
        "opendp",
        "geometric-sum",
        "then_clamp((0, 5)) >> then_sum() >> then_geometric(scale=5.0, bounds=(-100, 100))",
    ),
    (
        "opendp",
        "histogram",
        "then_count_by_categories(categories=[0, 1, 2]) >> then_laplace(scale=1.0) on integers",
    ),
    (
        "opendp",
        "integer-laplace-sum",
        "then_clamp((0, 5)) >> then_sum() >> then_laplace(scale=5.0) on integers",
    ),
    (
        "opendp",
        "laplace-variance",
        "then_clamp((0.0, 1.0)) >> then_variance() >> then_laplace(scale=0.25), size 4",
    ),
    ("opendp", "randomized-response", "make_randomized_response_bool(prob=0.75)"),
    (
        "diffprivlib",
        "gaussian-analytic-sum",
        "diffprivlib.mechanisms.GaussianAnalytic(epsilon=1, delta=1e-05, sensitivity=1)",
    ),
    (
        "diffprivlib",
        "gaussian-nb",
        "diffprivlib.models.GaussianNB(epsilon=1, bounds=([0], [1])).partial_fit(X, y, classes=[0, 1])",  # noqa: E501 (a title as registered)
    ),
    (
        "diffprivlib",
        "geometric-count",
        "diffprivlib.mechanisms.Geometric(epsilon=1, sensitivity=1).randomise(count)",
    ),
    ("diffprivlib", "histogram", "diffprivlib.tools.histogram(x, epsilon=1, bins=3, range=(0, 3))"),
    (
        "diffprivlib",
        "laplace-sum",
        "diffprivlib.mechanisms.Laplace(epsilon=1, sensitivity=1).randomise(sum)",
    ),
    ("diffprivlib", "mean", "diffprivlib.tools.mean(x, epsilon=1, bounds=(0, 1))"),
    ("diffprivlib", "variance", "diffprivlib.tools.var(x, epsilon=1, bounds=(0, 1))"),
)


def libraries() -> list[tuple[str, str, str]]:
    """The targets of ``mechanisms.libraries.report_targets:register``: (name, group, title),
    the title naming the installed version of the library."""
    out = []
    for library, short, api in LIBRARY_APIS:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        out.append((f"{library}/{short}", f"library {library}", f"{library} {version}: {api}"))
    return out
