"""Same-machine benchmark of dpaudit's auditor against the peer tools that install here.

    PYTHONPATH=$PWD python bench/peers.py > bench/peers.md
    PYTHONPATH=$PWD python bench/peers.py --large-only   # only dpaudit at 10^7 samples

Every tool audits the same mechanism code (the catalogue classes in ``mechanisms/``) on the
same neighbouring pairs (each catalogue entry's ``pairs``, both orders), at the same claimed
epsilon, with the same confidence (95%) and a comparable number of samples per dataset, on
this machine, one after the other, each with one worker process. What each tool reports is a
different kind of number, and the table says which:

* dpaudit: a certified lower bound on epsilon, rounded down, valid with probability >= 95%
  (Clopper-Pearson on fresh samples after selection); flagged when it exceeds the claim.
* DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box Discovery of
  Differential Privacy Violations using Classifiers", IEEE S&P 2021): its DD-Search over the
  same pairs, then ``compute_eps_high_precision``: also a certified lower bound on epsilon
  (Clopper-Pearson, confidence set to 95%, its default is 90%).
* StatDP (Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy",
  CCS 2018): ``select_event`` over the same pairs, then ``hypothesis_test`` at the claimed
  epsilon: a p-value of the hypothesis "the mechanism is epsilon-DP on the selected event";
  it rejects at p < 0.05. A small p-value is evidence of a violation, a large one is not
  evidence of privacy, and no bound on epsilon comes out of it.
* DP-Auditorium (Kong, Munoz Medina, Ribero, Syed, "DP-Auditorium: a large scale library for
  auditing differential privacy", IEEE S&P 2024): ``HockeyStickPropertyTester`` (a Keras
  classifier, default model and training) at the claimed (epsilon, delta): a lower bound on
  the hockey-stick divergence (the delta the mechanism needs at that epsilon), valid with
  probability >= 95% (failure probability split by Bonferroni over pairs and both orders);
  it rejects when the bound exceeds the claimed delta (0 for pure DP). Not an epsilon.

The published column quotes DP-Sniper's own results for its own mechanism parameters (see
``PUBLISHED``), not for these runs.

Peers missing from the environment are reported as "not installed" with the reason and left
out of the table. None is a project dependency (none is on PyPI; two need PyTorch or
TensorFlow); bench/peers.md says how they were installed for the recorded run.
Environment variables: DPAUDIT_PEERS_SAMPLES, DPAUDIT_PEERS_STATDP_SAMPLES,
DPAUDIT_PEERS_AUDITORIUM_SAMPLES (budgets), DPAUDIT_PEERS_ONLY (comma-separated peer names).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import math
import multiprocessing
import os
import platform
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dpaudit.audit import audit
from mechanisms.broken import (
    BrokenLaplaceTooLittleNoise,
    BrokenSparseVectorLeeClifton2014,
    BrokenSparseVectorStoddard2014,
)
from mechanisms.catalogue import LaplaceCount
from mechanisms.floating_point import BrokenNaiveFloatLaplace, SnappingLaplace

#: Confidence of every bound and test (StatDP: reject at p < 1 - CONFIDENCE).
CONFIDENCE = 0.95
SEED = 2024
#: Samples per dataset for dpaudit (25% select, 75% certify), StatDP (the same split:
#: event_iterations, detect_iterations) and DP-Sniper (n_train = n = n_check = S/4 per pair,
#: n_final = 3S/4 for the best pair).
SAMPLES = int(os.environ.get("DPAUDIT_PEERS_SAMPLES", "1000000"))
#: StatDP runs the mechanism once per Python call (one sample per call), so at SAMPLES its
#: sparse-vector runs would take most of the benchmark's time budget: it gets fewer samples,
#: split as for dpaudit (25% event selection, 75% hypothesis test), stated in the table.
STATDP_SAMPLES = int(os.environ.get("DPAUDIT_PEERS_STATDP_SAMPLES", "200000"))
#: DP-Auditorium trains a Keras model with its default batch size 100 on half the samples:
#: at SAMPLES it would take minutes per pair, so it gets fewer (stated in the table).
AUDITORIUM_SAMPLES = int(os.environ.get("DPAUDIT_PEERS_AUDITORIUM_SAMPLES", "200000"))

#: DP-Sniper's published lower bounds (eps_lcb, confidence 0.9, n_final = 2 * 10^8) and
#: times (DD-Search plus the final estimate, its logged time_dd_search +
#: time_final_estimate_eps) for its own versions of these mechanisms, all claiming epsilon 0.1: the
#: reference results shipped with its evaluation (eth-sri/dp-sniper,
#: eval_sp2021/reference-results/dd_search_reg_data.log for logistic regression,
#: floating_point_data.log and floating_fixed_data.log for the 64-bit-pattern MLP), from which
#: the paper's evaluation figures are drawn. Keys: our case labels.
PUBLISHED: dict[str, str] = {
    "LaplaceCount eps 0.1": "0.0968 (LaplaceMechanism, 21 s)",
    "BrokenSparseVectorLeeClifton2014 eps 0.1": (
        "0.1716 (SparseVectorTechnique4, 10 queries, 130 s)"
    ),
    "BrokenSparseVectorStoddard2014 eps 0.1": "1.7612 (SparseVectorTechnique5, 10 queries, 59 s)",
    "BrokenNaiveFloatLaplace eps 0.1": "0.2521 (floating_point, MLP on bits, 2124 s)",
    "SnappingLaplace eps 0.1": "0.0979 (floating_fixed, MLP on bits, 2900 s)",
}


def cases() -> list[tuple[str, Any]]:
    """(label, catalogue mechanism): the shared set every installed peer can express."""
    return [
        ("LaplaceCount eps 0.1", LaplaceCount(0.1)),
        ("LaplaceCount eps 1", LaplaceCount(1.0)),
        ("BrokenLaplaceTooLittleNoise eps 0.1", BrokenLaplaceTooLittleNoise(0.1)),
        ("BrokenLaplaceTooLittleNoise eps 1", BrokenLaplaceTooLittleNoise(1.0)),
        ("BrokenSparseVectorLeeClifton2014 eps 0.1", BrokenSparseVectorLeeClifton2014(0.1)),
        ("BrokenSparseVectorStoddard2014 eps 0.1", BrokenSparseVectorStoddard2014(0.1)),
        ("BrokenNaiveFloatLaplace eps 0.1", BrokenNaiveFloatLaplace(0.1)),
        ("SnappingLaplace eps 0.1", SnappingLaplace(0.1)),
    ]


def _is_float(m: Any) -> bool:
    return getattr(m, "arithmetic", "real") == "float"


def _ordered_pairs(m: Any) -> list[tuple[Any, Any]]:
    """Both orders of every catalogue pair (DP-Sniper's PatternGenerator also swaps)."""
    out = []
    for p in m.pairs:
        out += [(p.d0, p.d1), (p.d1, p.d0)]
    return out


def _bits(x: np.ndarray) -> np.ndarray:
    """The 64-bit pattern of each double, most significant bit first (DP-Sniper's features)."""
    x = np.ascontiguousarray(np.asarray(x, dtype=">f8").reshape(-1))
    return np.unpackbits(x.view(np.uint8)).reshape(-1, 64).astype(np.float32)


def _as_matrix(out: np.ndarray) -> np.ndarray:
    out = np.asarray(out, dtype=np.float64)
    return out.reshape(len(out), -1)


# --------------------------------------------------------------------------- dpaudit


def dpaudit_audit(m: Any, samples: int) -> tuple[Any, float]:
    """dpaudit's audit of a catalogue mechanism on its own pairs, and its wall time."""
    start = time.perf_counter()
    r = audit(
        m,
        pairs=m.pairs,
        epsilon=m.epsilon,
        delta=m.delta,
        samples=samples,
        confidence=CONFIDENCE,
        seed=SEED,
        progress=False,
    )
    return r, time.perf_counter() - start


def run_dpaudit(m: Any) -> dict[str, Any]:
    r, elapsed = dpaudit_audit(m, SAMPLES)
    return {
        "value": f"{r.epsilon_lower:.3f}",
        "flag": bool(r.violation),
        "samples": r.samples_drawn,
        "time": elapsed,
    }


# --------------------------------------------------------------------------- DP-Sniper


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Send file descriptor 1 to /dev/null: DP-Sniper's spawned workers log warnings there,
    and stdout is this benchmark's Markdown."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            with contextlib.redirect_stdout(io.StringIO()):
                yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


class _SniperMechanism:
    """A catalogue mechanism behind DP-Sniper's ``Mechanism.m(a, n_samples)`` interface.

    DP-Sniper passes back the inputs its pair generator yielded, so the catalogue datasets go
    through unchanged; the noise comes from a seeded Generator (DP-Sniper itself uses the
    global ``np.random``).
    """

    def __init__(self, mechanism: Any, seed: int) -> None:
        self.mechanism = mechanism
        self.rng = np.random.default_rng(seed)

    def m(self, a: Any, n_samples: int = 1) -> np.ndarray:
        out = np.asarray(self.mechanism.batch(a, n_samples, self.rng), dtype=np.float64)
        return out if out.ndim == 1 else out.reshape(n_samples, -1)


class _SniperPairs:
    """DP-Sniper's ``InputPairGenerator`` interface over the catalogue pairs (picklable: its
    worker processes are spawned and receive the search object)."""

    def __init__(self, mechanism: Any) -> None:
        self.mechanism = mechanism

    def get_input_pairs(self) -> Iterator[tuple[Any, Any]]:
        yield from _ordered_pairs(self.mechanism)


def _round_k(n: int) -> int:
    return max(1000, n // 1000 * 1000)  # DP-Sniper wants multiples of 1000 above 10^4


def run_dpsniper(m: Any) -> dict[str, Any]:
    from dpsniper.attack.dpsniper import DPSniper  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from dpsniper.classifiers.classifier_factory import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
        LogisticRegressionFactory,
        MultiLayerPerceptronFactory,
    )
    from dpsniper.classifiers.feature_transformer import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
        BitPatternFeatureTransformer,
        FlagsFeatureTransformer,
    )
    from dpsniper.classifiers.torch_optimizer_factory import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
        AdamOptimizerFactory,
        SGDOptimizerFactory,
    )
    from dpsniper.search.ddconfig import DDConfig  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from dpsniper.search.ddsearch import DDSearch  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from dpsniper.utils.initialization import initialize_dpsniper  # type: ignore[import-untyped, import-not-found, unused-ignore]

    quarter = _round_k(SAMPLES // 4)
    config = DDConfig(
        n_train=quarter,
        n=quarter,
        n_check=quarter,
        n_final=_round_k(3 * SAMPLES // 4),
        n_processes=1,
        confidence=CONFIDENCE,
    )
    mech = _SniperMechanism(m, SEED)
    dim = mech.m(m.pairs[0].d0, 2).reshape(2, -1).shape[1]
    if _is_float(m):
        # DP-Sniper's own floating-point experiment (exp_floating_point.py).
        factory: Any = MultiLayerPerceptronFactory(
            in_dimensions=64,
            hidden_sizes=(10, 5),
            optimizer_factory=AdamOptimizerFactory(learning_rate=0.1, step_size=500),
            feature_transform=BitPatternFeatureTransformer(),
            regularization_weight=0.0001,
            epochs=10,
            label=m.name,
        )
    else:
        # DP-Sniper's default experiment (exp_default.py, logistic regression); the
        # sparse-vector outputs mark "not answered" by -1, flagged as in its SVT runs.
        flags = FlagsFeatureTransformer([-1]) if dim > 1 else None
        factory = LogisticRegressionFactory(
            feature_transform=flags,
            in_dimensions=dim * 2 if flags else dim,
            optimizer_factory=SGDOptimizerFactory(learning_rate=0.3, momentum=0.3, step_size=500),
            regularization_weight=0.001,
            epochs=10,
            label=m.name,
        )
    start = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as out_dir,
        _quiet_stdout(),
        initialize_dpsniper(config, out_dir=out_dir, torch_threads=1),
    ):
        search = DDSearch(mech, DPSniper(mech, factory, config), _SniperPairs(m), config)
        witness = search.run()
        witness.compute_eps_high_precision(mech, config)
    elapsed = time.perf_counter() - start
    n_pairs = 2 * len(m.pairs)
    drawn = n_pairs * (2 * config.n_train + config.n + 2 * config.n_check) + 2 * config.n_final
    lower = float(witness.lower_bound)
    return {
        "value": f"{lower:.3f}",
        "flag": lower > m.epsilon,
        "samples": drawn,
        "time": elapsed,
    }


# --------------------------------------------------------------------------- StatDP


class _StatDPAlgorithm:
    """A catalogue mechanism as StatDP's ``algorithm(prng, queries)``: one output per call.

    StatDP's events are intervals of a scalar output or single values of a discrete one, so
    vector outputs of {1, 0, -1} (sparse vector) are encoded losslessly as one integer (base
    3); scalar outputs are passed unchanged.
    """

    __name__ = "catalogue mechanism"

    def __init__(self, mechanism: Any) -> None:
        self.mechanism = mechanism

    def __call__(self, prng: np.random.Generator, queries: Any) -> Any:
        out = np.asarray(self.mechanism.batch(queries, 1, prng)).reshape(-1)
        if out.size == 1:
            return np.float64(out[0])
        digits = (out.astype(np.int64) + 1) * 3 ** np.arange(out.size)
        return np.int64(digits.sum())


def run_statdp(m: Any) -> dict[str, Any]:
    from statdp.hypotest import hypothesis_test  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from statdp.selectors import select_event  # type: ignore[import-untyped, import-not-found, unused-ignore]

    algorithm = _StatDPAlgorithm(m)
    inputs: list[tuple[Any, Any, dict[str, Any]]] = [(d0, d1, {}) for d0, d1 in _ordered_pairs(m)]
    select_n = STATDP_SAMPLES // 4
    detect_n = STATDP_SAMPLES - select_n
    np.random.seed(SEED)  # StatDP's p-value draws from the global generator
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        d0, d1, kwargs, event = select_event(
            algorithm, inputs, m.epsilon, select_n, process_pool=pool, quiet=True
        )
        p = hypothesis_test(
            algorithm, d0, d1, kwargs, event, m.epsilon, detect_n, pool, report_p2=False
        )
    elapsed = time.perf_counter() - start
    return {
        "value": f"p = {float(p):.3g}",
        "flag": float(p) < 1 - CONFIDENCE,
        "samples": 2 * (len(inputs) * select_n + detect_n),
        "time": elapsed,
    }


# --------------------------------------------------------------------------- DP-Auditorium


def _import_hockey_stick() -> Any:
    """DP-Auditorium's hockey-stick tester without its package ``__init__``.

    ``dp_auditorium/__init__.py`` imports every dataset generator, and those need Google
    Vizier (not installed here); the testers do not. So the two packages on the path to the
    tester are registered with their search path and an empty body.
    """
    name = "dp_auditorium.testers.hockey_stick_tester"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec("dp_auditorium")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'dp_auditorium'")
    root = next(iter(spec.submodule_search_locations))
    for pkg, sub in (("dp_auditorium", ""), ("dp_auditorium.testers", "testers")):
        module = types.ModuleType(pkg)
        module.__path__ = [os.path.join(root, sub)]
        sys.modules.setdefault(pkg, module)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with contextlib.redirect_stderr(io.StringIO()):
        import dp_auditorium.testers.hockey_stick_tester as hst  # type: ignore[import-untyped, import-not-found, unused-ignore]
    return hst


def run_auditorium(m: Any) -> dict[str, Any]:
    hst = _import_hockey_stick()
    import tensorflow as tf  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from dp_auditorium.configs import privacy_property, property_tester_config  # type: ignore[import-untyped, import-not-found, unused-ignore]

    tf.keras.utils.disable_interactive_logging()  # no progress bars on stdout
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(SEED)
    config = property_tester_config.HockeyStickPropertyTesterConfig(
        training_config=hst.make_default_hs_training_config(),
        approximate_dp=privacy_property.ApproximateDp(epsilon=m.epsilon, delta=m.delta),
    )
    tester = hst.HockeyStickPropertyTester(config, hst.make_default_hs_base_model())
    rng = np.random.default_rng(SEED)
    pairs = _ordered_pairs(m)
    failure = (1 - CONFIDENCE) / len(pairs)
    features: Callable[[np.ndarray], np.ndarray] = _bits if _is_float(m) else _as_matrix
    best = -math.inf
    start = time.perf_counter()
    for d0, d1 in pairs:
        s0 = features(m.batch(d0, AUDITORIUM_SAMPLES, rng))
        s1 = features(m.batch(d1, AUDITORIUM_SAMPLES, rng))
        best = max(best, float(tester.estimate_lower_bound(s0, s1, failure)))
    elapsed = time.perf_counter() - start
    return {
        "value": f"delta >= {best:.2g}",
        "flag": bool(tester.reject_property(best)) and best > m.delta,
        "samples": 2 * len(pairs) * AUDITORIUM_SAMPLES,
        "time": elapsed,
    }


# --------------------------------------------------------------------------- driver

PEERS: dict[str, tuple[str, Callable[[Any], dict[str, Any]]]] = {
    "DP-Sniper": ("dpsniper", run_dpsniper),
    "StatDP": ("statdp", run_statdp),
    "DP-Auditorium": ("dp_auditorium", run_auditorium),
}


def _available() -> dict[str, str | None]:
    """Peer name -> None when importable, else the reason."""
    out: dict[str, str | None] = {}
    for name, (module, _) in PEERS.items():
        try:
            if module == "dp_auditorium":
                _import_hockey_stick()
            else:
                __import__(module)
            out[name] = None
        except Exception as exc:  # any import failure means "not installed"
            out[name] = f"{type(exc).__name__}: {exc}"
    return out


def _cell(r: dict[str, Any] | None, base: float) -> str:
    if r is None:
        return "n/a"
    if "error" in r:
        return f"error: {r['error']}"
    flag = "**flagged**" if r["flag"] else "passes"
    ratio = f"{r['time'] / base:.1f}x" if base > 0 else ""
    return f"{r['value']}, {flag}, {r['samples']:,} samples, {r['time']:.1f} s ({ratio})"


#: dpaudit alone at DP-Sniper's order of budget, on the rows with a published number.
LARGE_SAMPLES = int(os.environ.get("DPAUDIT_PEERS_LARGE_SAMPLES", "10000000"))


def large_budget() -> None:
    """dpaudit with LARGE_SAMPLES per dataset beside DP-Sniper's published bounds."""
    print(
        f"\n## dpaudit at {LARGE_SAMPLES:,} samples per dataset beside DP-Sniper's published"
        " bounds\n"
    )
    print(
        "DP-Sniper's published runs used 1.07 * 10^7 training and 2 * 10^8 final samples per"
        " input; the peers are not rerun at this budget (DP-Sniper's bit features alone are a"
        " Python loop per sample).\n"
    )
    print(
        "| mechanism | claimed eps | true eps | dpaudit: certified lower bound (95%) |"
        " samples | wall time | DP-Sniper published (its parameters) |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, m in cases():
        if label not in PUBLISHED:
            continue
        r, elapsed = dpaudit_audit(m, LARGE_SAMPLES)
        true = getattr(m, "true_epsilon", None)
        true_s = "n/a" if true is None else ("inf" if math.isinf(true) else f"{true:g}")
        flag = "**flagged**" if r.violation else "passes"
        print(
            f"| {label} | {m.epsilon:g} | {true_s} | {r.epsilon_lower:.3f}, {flag} |"
            f" {r.samples_drawn:,} | {elapsed:.1f} s | {PUBLISHED[label]} |"
        )
        sys.stdout.flush()


NOTES = """
## What each number is

- **dpaudit**: certified lower bound on epsilon at 95% confidence, rounded down (25% of the
  samples select the event, 75% certify it on fresh samples with Clopper-Pearson; with several
  pairs each is first screened on up to 200,000 samples per dataset). Flagged when it exceeds
  the claimed epsilon.
- **DP-Sniper**: its certified lower bound on epsilon (`eps_lcb`: Clopper-Pearson on
  `n_final` fresh samples for the best classifier-threshold attack found by DD-Search), here
  at 95% confidence (its default is 90%). Flagged when above the claim. A negative value
  means the attack's event was less likely under the first input than under the second on
  the final samples: no evidence. Its search uses `n_train`, `n` and `n_check` samples per
  ordered pair (here S/4 each), its final estimate `n_final` (3S/4).
- **StatDP**: a p-value, not a bound: the probability, if the mechanism were epsilon-DP on
  the event it selected, of counts at least as extreme as those observed (its hypergeometric
  test). Flagged (the claim rejected) at p < 0.05. A large p-value says nothing about privacy.
  Sparse-vector outputs are encoded losslessly as one integer so that its single-value events
  cover every output; scalar outputs are passed unchanged (its events are intervals).
- **DP-Auditorium**: a lower bound, at 95% confidence, on the hockey-stick divergence at the
  claimed epsilon, i.e. on the delta the mechanism would need at that epsilon (its
  `HockeyStickPropertyTester` with the default Keras model and training). Flagged when above
  the claimed delta (0 here). Negative values mean no evidence. It is not an epsilon. For the
  floating-point rows it gets the outputs' 64-bit patterns as features, as DP-Sniper does.
- **DP-Sniper published**: `eps_lcb` from the reference results shipped with DP-Sniper's
  evaluation (eth-sri/dp-sniper, `eval_sp2021/reference-results/`: `dd_search_reg_data.log`,
  logistic regression; `floating_point_data.log` and `floating_fixed_data.log`, a 64-bit-pattern
  MLP), the data behind the evaluation of Bichsel et al., IEEE S&P 2021. They are for
  DP-Sniper's own versions of the mechanisms (its Laplace, Lyu-Su-Li SVT Algorithms 4 and 5
  with c = 1, T = 1 on 10 queries of [-10, 10]; its pair search), at confidence 90% with
  n_train = n_check = 1.07 * 10^7 and n_final = 2 * 10^8 samples, with its multi-process
  timing on the authors' machine: a reference for the order of magnitude, not a same-machine
  comparison.

## Installation used for this run (none is a dpaudit dependency)

- **StatDP**: not on PyPI (`pip install statdp` finds no distribution); installed from its
  source, github.com/cmla-psu/statdp at commit d1f1e8f (2023-04-11), with
  `pip install <checkout>`, which brings numba 0.68.1 and llvmlite 0.50.0.
- **DP-Sniper**: not on PyPI; installed from github.com/eth-sri/dp-sniper at commit ee087b2
  (2021-08-27) with `pip install --no-deps <checkout>`, after
  `pip install torch mmh3 tensorboard` with the CPU build of PyTorch (2.13.0+cpu; its own
  requirement list otherwise pulls the CUDA build). Its other requirements (NumPy, pandas,
  matplotlib, scikit-learn) were already installed.
- **DP-Auditorium**: not on PyPI (`dp-auditorium` finds no distribution); installed from
  github.com/google/differential-privacy, `python/dp_auditorium` at commit b5b0286
  (2026-08-06), with `pip install --no-deps <checkout>/python/dp_auditorium`, plus
  `pip install tensorflow etils absl-py` (TensorFlow 2.21.0, which accepts NumPy 2.4). Its
  package `__init__` imports its dataset generators, which need Google Vizier and pipeline_dp
  (its requirements.txt pins NumPy 1.26, TensorFlow 2.15 and JAX 0.4.23, which would
  downgrade this environment); those were not installed, and the benchmark imports the tester
  module directly. So DP-Auditorium's own dataset search is not exercised here: only its
  hockey-stick tester, on the catalogue's pairs.

## Caveats

- Wall times include each tool's start-up on every row: DP-Sniper spawns a worker process per
  search, which imports PyTorch and, through `torch.utils.tensorboard`, TensorFlow (installed
  for DP-Auditorium): several seconds per row. DP-Auditorium compiles a Keras model per pair
  and order.
- StatDP draws its samples from an unseeded generator (`np.random.default_rng()` inside its
  `run_algorithm`): its p-values change from run to run. The other tools are seeded.
- The budgets differ by tool where a tool's cost per sample made the equal budget too slow
  for this 2-core machine (StatDP: one Python call per sample; DP-Auditorium: Keras training
  with batch size 100); the 'samples' in each cell are what the tool drew.
"""


def main() -> None:
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    if "--large-only" in sys.argv[1:]:
        large_budget()
        return
    available = _available()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    print("# Peer benchmark: dpaudit against DP-Sniper, StatDP and DP-Auditorium\n")
    print(
        f"Generated by `PYTHONPATH=$PWD python bench/peers.py` on {platform.machine()},"
        f" {os.cpu_count()} cores, Python {platform.python_version()}, NumPy"
        f" {np.__version__}; load average at start {load[0]:.2f} / {load[1]:.2f} /"
        f" {load[2]:.2f} (1 / 5 / 15 min; the machine is shared, so compare the time"
        " ratios, not the seconds). Every tool: one worker, confidence"
        f" {CONFIDENCE}, seed {SEED} where it takes one; {SAMPLES:,} samples per dataset"
        f" (StatDP {STATDP_SAMPLES:,}, DP-Auditorium {AUDITORIUM_SAMPLES:,}). 'samples'"
        " counts mechanism runs over both datasets and all pairs and phases.\n"
    )
    for name, reason in available.items():
        print(f"- {name}: {'installed' if reason is None else 'not installed (' + reason + ')'}")
    print()
    only = os.environ.get("DPAUDIT_PEERS_ONLY")
    names = [
        n
        for n, reason in available.items()
        if reason is None and (not only or n in only.split(","))
    ]
    print(
        "| mechanism | claimed eps | true eps | dpaudit: certified lower bound on eps (95%) |"
        + "".join(f" {n} |" for n in names)
        + " DP-Sniper published (its parameters) |"
    )
    print("|---|---|---|---|" + "---|" * len(names) + "---|")
    for label, m in cases():
        base = run_dpaudit(m)
        cells = []
        for n in names:
            try:
                r = PEERS[n][1](m)
            except Exception as exc:  # a peer's failure is a result
                r = {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
            cells.append(_cell(r, base["time"]))
        true = getattr(m, "true_epsilon", None)
        true_s = "n/a" if true is None else ("inf" if math.isinf(true) else f"{true:g}")
        flag = "**flagged**" if base["flag"] else "passes"
        row = (
            f"| {label} | {m.epsilon:g} | {true_s} | {base['value']}, {flag},"
            f" {base['samples']:,} samples, {base['time']:.1f} s |"
        )
        print(row + "".join(f" {c} |" for c in cells) + f" {PUBLISHED.get(label, '')} |")
        sys.stdout.flush()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    print(f"\nLoad average at the end: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.")
    large_budget()
    print(NOTES)


if __name__ == "__main__":
    main()
