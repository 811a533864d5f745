"""The one-run certifications against the papers' reference code, at recorded values.

Oracle: Google DeepMind's ``jax_privacy.auditing`` (jax-privacy 2.0.0), run once by
bench/one_run_papers.py's peer loader (its ``auditing.py`` alone; the package imports jax):
``_epsilon_one_run(0, m, k, c, 0.05, 1e-5)`` (Steinke, Nasr, Jagielski 2023, Theorem 5.2 /
Corollary 5.4, its p-value ``_one_run_p_value``) and ``_epsilon_one_run_fdp(0, m, k, c,
0.05, 1e-5)`` (Mahloujifar, Melis, Chaudhuri 2025, the recursion ``audit_rh_with_cap`` on the
mu-GDP curve whose epsilon at delta is the claim; Meta's PrivacyGuard ``FDPAnalysisNode``
has the same recursion).  jax-privacy finds each root with brentq at xtol 1e-6, so its
values are within 1e-6 of the exact bound; ours is a verified bisection point rounded down,
so ours lies in [reference - 1e-5, reference + 1e-6].  Deterministic: no sampling, no
alpha.  bench/one_run_papers.md compares the two live on every count of idealized runs.
"""

from __future__ import annotations

import pytest

from dpaudit.audit.one_run import one_run_epsilon_lower
from dpaudit.audit.one_run_audit import _gdp_epsilon_down
from dpaudit.audit.one_run_fdp import fdp_theta_lower

#: (m, k guesses, c correct, jax-privacy Steinke epsilon, jax-privacy f-DP (GDP) epsilon),
#: level 0.05, delta 1e-5, recorded from jax-privacy 2.0.0.
REFERENCE = (
    (1_000, 100, 80, 0.9553185001776855, 1.4022146738385823),
    (1_000, 500, 330, 0.5039753382725872, 0.8860250168734625),
    (10_000, 1_000, 760, 1.0259162707659153, 1.3985617052074715),
    (10_000, 200, 190, 2.352564506114941, 3.0392186762746407),
)
LEVEL, DELTA, REF_TOL, OUR_TOL = 0.05, 1e-5, 1e-6, 1e-5


@pytest.mark.parametrize(("m", "k", "c", "steinke", "fdp"), REFERENCE)
def test_steinke_matches_jax_privacy(m, k, c, steinke, fdp):
    ours = one_run_epsilon_lower(m, k, c, delta=DELTA, confidence=1 - LEVEL)
    assert steinke - OUR_TOL <= ours <= steinke + REF_TOL


@pytest.mark.parametrize(("m", "k", "c", "steinke", "fdp"), REFERENCE)
def test_fdp_gdp_recursion_matches_jax_privacy(m, k, c, steinke, fdp):
    ours = _gdp_epsilon_down(fdp_theta_lower(m, k, c, LEVEL, "gaussian"), DELTA)
    assert fdp - OUR_TOL <= ours <= fdp + REF_TOL
