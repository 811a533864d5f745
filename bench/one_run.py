"""Benchmark of one-run auditing: the three certifications side by side.

    python bench/one_run.py > bench/one_run.md
    /path/to/venv-with-opacus/bin/python bench/one_run.py > bench/one_run.md   (Opacus rows)
    python bench/one_run.py --parts idealized,peaks,noisy_gd,opacus,theory   (some sections)

Prints Markdown.  Every audit is ``dpaudit.audit.audit_one_run`` at confidence 0.95 and
delta 1e-5 with the default tests (``default_guesses``: two-sided guess totals of 1, 1/4,
1/16 .. 1/16384 of the canaries audited, at least 16, Bonferroni over them; ``steinke``
audits the first min(m, 10^4) canaries, ``default_subsets``), one training run per audit.
Methods: ``steinke`` (Steinke, Nasr, Jagielski 2023, Theorem 5.2 / Corollary 5.4), ``f-dp approx``
(Mahloujifar, Melis, Chaudhuri 2025's recursion on the curve f_{eps,delta} of the claim:
sound for any (eps, delta)-DP trainer), ``f-dp GDP`` (the same recursion on the mu-GDP curve:
sound for a trainer whose claim is mu-GDP), ``gaussian`` (the Gaussian-score bound: sound when
the scores are independent Gaussians with one variance given the mask).  Each cell is the
certified epsilon_lower as a fraction of the trainer's theoretical epsilon (the accountant's,
at delta 1e-5), the median over SEEDS runs; the method the default picks for that trainer is
marked with *.

Table 1 (and 1b: each counting bound on prefixes of one run of 10^6 canaries, as a
stand-alone audit of that many: why ``steinke`` stops at 10^4), the idealized trainer
(``mechanisms.one_run_training.IdealizedGaussianTrainer``: score = inclusion bit + N(0,
sigma^2), exactly (1/sigma)-GDP per canary) for sigma 0.5, 1, 2 and m = 10^3 .. 10^6.
Table 2, the project's noisy gradient descent
(``NoisyGDCanaryTrainer``: full batch, noise multiplier 10, 25 steps, mu-GDP with mu = 0.5,
accounted (1.993, 1e-5)) with white-box gradient canaries and black-box input canaries, noisy
SGD on Poisson(0.2) batches (noise multiplier 4, 50 steps, accounted (1.453, 1e-5) by the
privacy loss distribution), and the same trainers with noise 10x too small
(``BrokenNoisyGDTooLittleNoise``, a violation to catch).  Table 3, Opacus's DP-SGD (only when
``torch`` and ``opacus`` import; bench-only, never a project dependency): a linear model with
one input coordinate per white-box canary, trained by ``opacus.PrivacyEngine`` (per-sample
gradients, clipping at norm 1, Gaussian noise, Poisson sampling) on a linear loss (whose
per-record gradient is constant, so a canary in a batch pulls its coordinate by exactly one
clipped gradient), full batch (mu-GDP, Gaussian scores) and Poisson(0.2) batches; its claim
is dpaudit's accountant on the same plan, Opacus's own RDP epsilon beside it.  Table 4: the
theory curve of Steinke et al. (``one_run_theory(eps, m, r=m)``, the median bound an exactly
eps-DP mechanism certifies with every canary guessed, one test), the ceiling of their method.
Section 5 (``python bench/one_run.py --papers``, appended by hand): Steinke et al.'s bound and
the f-DP recursion on the same counts as the reference code of jax-privacy (bench-only), and
the {-1, +1} encoding of the f-DP authors' tutorial.  Not reproduced: the papers' own
idealized figures (their full texts could not be read from this machine, only their
openings); the f-DP recursion is also checked against exact enumeration
(tests/audit/test_one_run_methods.py).
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.audit import audit_one_run, one_run_theory
from mechanisms.broken_training import BrokenNoisyGDTooLittleNoise
from mechanisms.one_run_training import IdealizedGaussianTrainer, NoisyGDCanaryTrainer

DELTA, SEEDS = 1e-5, (2024, 2025, 2026)
SIGMAS = (0.5, 1.0, 2.0)
CANARIES = (1_000, 10_000, 100_000, 1_000_000)
#: (label, method, curve) of each column.
METHODS = (
    ("steinke", "steinke", "auto"),
    ("f-dp approx", "f-dp", "approx-dp"),
    ("f-dp GDP", "f-dp", "gaussian"),
    ("gaussian", "gaussian", "auto"),
)


def _applicable(train: Any, method: str, curve: str) -> bool:
    """Whether the method is sound for the trainer's declarations (else the cell is '-')."""
    if method == "gaussian":
        return getattr(train, "score_distribution", None) == "gaussian"
    if curve == "gaussian":
        return getattr(train, "claimed_tradeoff", None) == "gaussian"
    return True


def _default(train: Any) -> str:
    if getattr(train, "score_distribution", None) == "gaussian":
        return "gaussian"
    return "f-dp GDP" if getattr(train, "claimed_tradeoff", None) == "gaussian" else "f-dp approx"


def _cells(train: Any, m: int, claimed: float, seeds: tuple[int, ...] = SEEDS) -> list[str]:
    cells = []
    default = _default(train)
    for label, method, curve in METHODS:
        if not _applicable(train, method, curve):
            cells.append("-")
            continue
        start = time.perf_counter()
        bounds = [
            audit_one_run(
                train, m, epsilon=claimed, delta=DELTA, seed=s, method=method, curve=curve
            ).epsilon_lower
            for s in seeds
        ]
        seconds = (time.perf_counter() - start) / len(seeds)
        star = "*" if label == default else ""
        cells.append(f"{statistics.median(bounds) / claimed:.3f}{star} ({seconds:.1f} s)")
    return cells


def _header(first: list[str]) -> None:
    cols = first + [label for label, _, _ in METHODS]
    print("| " + " | ".join(cols) + " |")
    print("|---" * len(cols) + "|")


def idealized() -> None:
    print("\n## 1. Idealized trainer: fraction of the theoretical epsilon certified\n")
    print(
        f"Median over {len(SEEDS)} runs (seeds {', '.join(map(str, SEEDS))}); in brackets "
        "the seconds per audit (training included). * = the default for this trainer.\n"
    )
    _header(["sigma", "m", "theoretical epsilon"])
    for sigma in SIGMAS:
        trainer = IdealizedGaussianTrainer(sigma)
        claimed = trainer.claimed_epsilon(DELTA)
        for m in CANARIES:
            row = [f"{sigma:g}", f"{m:,}", f"{claimed:.3f}", *_cells(trainer, m, claimed)]
            print("| " + " | ".join(row) + " |", flush=True)


def peaks() -> None:
    """Each counting bound on the first m' canaries of one run of 10^6, as a stand-alone
    audit of m' canaries (its default guess counts at their Bonferroni split): where each
    bound peaks (dpaudit.audit.one_run_subsets chose its default prefixes from this)."""
    from dpaudit.audit.one_run import default_guesses

    sizes = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
    print("\n## 1b. Where each counting bound peaks: prefixes of one run\n")
    print(
        "The idealized trainer, one run of 10^6 canaries per seed (seeds "
        f"{', '.join(map(str, SEEDS))}); each cell: the bound certified on the first m' "
        "canaries alone (their default guess counts, Bonferroni over them), as a fraction "
        "of the theoretical epsilon, median over the seeds.  The first m' canaries of a run "
        "have the law of a run of m', so a row is the bound against m.\n"
    )
    print("| sigma | method | " + " | ".join(f"m' = {n:,}" for n in sizes) + " |")
    print("|---" * (len(sizes) + 2) + "|")
    m = sizes[-1]
    for sigma in SIGMAS:
        trainer = IdealizedGaussianTrainer(sigma)
        claimed = trainer.claimed_epsilon(DELTA)
        runs = []
        for seed in SEEDS:
            mask_seq, train_seq = np.random.SeedSequence(seed).spawn(2)
            inc = np.random.default_rng(mask_seq).random(m) < 0.5
            runs.append((inc, trainer(inc.copy(), np.random.default_rng(train_seq))))
        labels = (("steinke", ""), ("f-dp approx", "approx-dp"), ("f-dp GDP", "gaussian"))
        for label, curve in labels:
            cells = []
            for size in sizes:
                tests = [(size, kp, km) for kp, km in default_guesses(size)]
                fractions = [_best(tests, inc, scores, curve) / claimed for inc, scores in runs]
                cells.append(f"{statistics.median(fractions):.3f}")
            print(f"| {sigma:g} | {label} | " + " | ".join(cells) + " |", flush=True)


def _best(tests: list[tuple[int, int, int]], inc: np.ndarray, scores: Any, curve: str) -> float:
    """The best bound over ``tests`` at their Bonferroni split (curve "": Steinke et al.;
    else the f-DP recursion on that curve, mu turned into epsilon at DELTA)."""
    from dpaudit.audit.one_run import _certify
    from dpaudit.audit.one_run_audit import _gdp_epsilon_down
    from dpaudit.audit.one_run_fdp import fdp_theta_lower
    from dpaudit.audit.one_run_subsets import correct_counts

    level, best = 0.05 / len(tests), 0.0
    counts = correct_counts(np.asarray(scores, dtype=float), inc, tests)
    for (size, kp, km), v in zip(tests, counts, strict=True):
        if not curve:
            theta = _certify(size, kp + km, v, DELTA, level)
        else:
            theta = fdp_theta_lower(size, kp + km, v, level, curve, DELTA)
            theta = _gdp_epsilon_down(theta, DELTA) if curve == "gaussian" else theta
        best = max(best, theta)
    return best


def noisy_gd() -> None:
    print("\n## 2. The project's noisy gradient descent and noisy SGD\n")
    print(
        "Fraction of the accounted epsilon, median over the same seeds; a broken trainer "
        "(noise / 10) above 1.000 is a caught violation.\n"
    )
    _header(["trainer", "m", "accounted epsilon"])
    configs = ((10.0, 25, 1.0), (4.0, 50, 0.2))
    for sigma, steps, rate in configs:
        for kind, sizes in (("gradient", (1_000, 10_000)), ("input", (1_000, 2_000))):
            if kind == "input" and rate < 1:
                continue
            for cls in (NoisyGDCanaryTrainer, BrokenNoisyGDTooLittleNoise):
                for m in sizes:
                    t = cls(
                        m=m, canaries=kind, noise_multiplier=sigma, steps=steps, sample_rate=rate
                    )
                    claimed = t.claimed_epsilon(DELTA)
                    label = t.name + ("" if rate == 1 else f", SGD p={rate:g}")
                    row = [label, f"{m:,}", f"{claimed:.3f}", *_cells(t, m, claimed)]
                    print("| " + " | ".join(row) + " |", flush=True)


def _opacus_trainer(m: int, sample_rate: float, noise: float, steps: int, claim_noise: float):
    """A white-box one-run trainer around Opacus's DP-SGD (module docstring); None when
    torch or opacus does not import.  ``claim_noise`` is the noise multiplier the claim
    states (``noise`` below it: a broken run)."""
    try:
        import torch
        from opacus import PrivacyEngine
    except ImportError:
        return None
    from dpaudit import events as ev
    from dpaudit.accountant import account

    d, n = 16, 200

    def train(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        torch.manual_seed(int(rng.integers(2**31)))
        data_rng = np.random.default_rng(0)
        x = data_rng.normal(size=(n, d))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        real = np.hstack([x, np.zeros((n, m))])
        canaries = np.zeros((int(included.sum()), d + m))
        canaries[np.arange(len(canaries)), d + np.flatnonzero(included)] = 1.0
        feats = torch.tensor(np.vstack([real, canaries]), dtype=torch.float32)
        labels = torch.tensor(
            np.concatenate([np.sign(x[:, 0]), np.ones(len(canaries))]), dtype=torch.float32
        )
        dataset = torch.utils.data.TensorDataset(feats, labels)
        batch = max(1, round(sample_rate * len(dataset)))
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch)
        model = torch.nn.Linear(d + m, 1, bias=False)
        torch.nn.init.zeros_(model.weight)
        optimizer = torch.optim.SGD(model.parameters(), lr=1.0 / (sample_rate * steps))
        engine = PrivacyEngine(accountant="rdp")
        model, optimizer, loader = engine.make_private(
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=noise,
            max_grad_norm=1.0,
            poisson_sampling=True,
        )
        done = 0
        while done < steps:
            for xb, yb in loader:
                if done == steps:
                    break
                optimizer.zero_grad()
                if len(xb):
                    loss = -(model(xb).squeeze(-1) * yb).sum()  # linear loss: |gradient| = |x|
                    loss.backward()
                optimizer.step()
                done += 1
        train.opacus_epsilon = engine.get_epsilon(DELTA)  # type: ignore[attr-defined]
        # the sum over a batch is divided by the expected batch size: undo it for the score
        return model._module.weight.detach().numpy()[0, d:] * batch

    step = ev.Gaussian(claim_noise, 1)
    plan = ev.SelfComposed(
        step if sample_rate == 1 else ev.PoissonSampled(step, sample_rate), steps
    )
    train.claimed = float(account(plan, DELTA).epsilon_upper)  # type: ignore[attr-defined]
    if sample_rate == 1:
        train.claimed_tradeoff = "gaussian"  # type: ignore[attr-defined]
        train.score_distribution = "gaussian"  # type: ignore[attr-defined]
    return train


def opacus() -> None:
    print("\n## 3. Opacus DP-SGD (white-box canaries)\n")
    probe = _opacus_trainer(10, 1.0, 10.0, 25, 10.0)
    if probe is None:
        print("torch or opacus does not import here: no Opacus rows.")
        return
    import opacus as op
    import torch

    print(
        f"torch {torch.__version__}, opacus {op.__version__}. Fraction of dpaudit's "
        "accounted epsilon; Opacus's own RDP epsilon in the third column.\n"
    )
    _header(["run", "m", "accounted epsilon (Opacus RDP)"])
    runs: tuple[tuple[str, float, float, int, float], ...] = (
        ("full batch, noise 10, 25 steps", 1.0, 10.0, 25, 10.0),
        ("Poisson 0.2, noise 4, 50 steps", 0.2, 4.0, 50, 4.0),
        ("BROKEN full batch: noise 1 run, 10 claimed", 1.0, 1.0, 25, 10.0),
    )
    for label, rate, noise, steps, claim in runs:
        for m in (1_000, 10_000):
            train = _opacus_trainer(m, rate, noise, steps, claim)
            claimed = train.claimed  # type: ignore[union-attr]
            cells = _cells(train, m, claimed, seeds=SEEDS[:1])
            rdp = getattr(train, "opacus_epsilon", float("nan"))
            row = [label, f"{m:,}", f"{claimed:.3f} ({rdp:.3f})", *cells]
            print("| " + " | ".join(row) + " |", flush=True)


def theory() -> None:
    print("\n## 4. Steinke et al.'s theory curve: median bound of an exactly eps-DP mechanism\n")
    epsilons = (1.0, 2.0, 4.0, 8.0)
    head = " | ".join(f"eps={e:g}, delta=0 | eps={e:g}, delta=1e-5" for e in epsilons)
    print(f"| m | {head} |")
    print("|---" * (2 * len(epsilons) + 1) + "|")
    for m in (10, 100, 1000, 10_000, 100_000):
        cells = [f"{one_run_theory(e, m, m, delta=d):.4f}" for e in epsilons for d in (0.0, DELTA)]
        print(f"| {m} | {' | '.join(cells)} |", flush=True)


PARTS = {"idealized": idealized, "peaks": peaks, "noisy_gd": noisy_gd, "opacus": opacus}
PARTS["theory"] = theory


def main(
    parts: tuple[Callable[[], None], ...] = (idealized, peaks, noisy_gd, opacus, theory),
) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# One-run auditing benchmark\n")
    print(
        f"Generated by `python bench/one_run.py` on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}; load average at start {load:.1f}.\n"
    )
    print(" ".join(line.strip() for line in (__doc__ or "").splitlines()[5:]))
    for part in parts:
        part()


if __name__ == "__main__":
    if sys.argv[1:] == ["--papers"]:  # section 5: the papers' methods beside reference code
        import one_run_papers  # bench/ is on sys.path when this file is run as a script

        one_run_papers.main(section="5")
    elif sys.argv[1:2] == ["--parts"]:  # e.g. --parts idealized,peaks: those sections only
        main(tuple(PARTS[name] for name in sys.argv[2].split(",")))
    else:
        main()
