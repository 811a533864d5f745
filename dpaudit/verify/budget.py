"""The verifier's working precisions, default budgets and clock.

Shared by the engine's parts (:mod:`dpaudit.verify.engine` and the modules it uses).
"""

from __future__ import annotations

import time

#: Working precision (bits) of box evaluations and of counterexample checks.
BOX_PRECISION = 64
POINT_PRECISION = 120

#: The clock of the time safety net: this process's CPU time.
_clock = time.process_time

#: Levels of monotonicity-from-a-face (see :meth:`_Search.nonneg`).
FACE_DEPTH = 2

#: Default budgets.  The deterministic ones govern every verdict: boxes examined, and work
#: units (:data:`WORK_SYMBOLIC` per symbolic computation the search makes -- a derivative, a
#: face or reciprocal substitution, a factorisation -- and :data:`WORK_CHECK` per premise
#: check of monotonicity from a face).  The time limit (CPU seconds) is a generous safety
#: net only: when it fires, the verdict says so ("time safety net").
MAX_BOXES = 3000
MAX_WORK = 5000
TIME_LIMIT = 120.0
WORK_SYMBOLIC = 10
WORK_CHECK = 1
#: Work is weighted by expression size: one unit per this many operations (plus one).
WORK_OPS = 20
#: Side proofs of a reformulation (a log's argument positive, a derivative's sign) get
#: 1/SIDE_PROOF_SHARE of the caller's box and work budgets each.
SIDE_PROOF_SHARE = 2
