"""Experiments of the chapter *What differential privacy promises* (``02_dp_definition``).

Each function runs one experiment of the chapter and returns its evidence and
negative controls for :func:`dpbook.ledger.record`. The Monte Carlo tests are
those of :mod:`dpcore.montecarlo` (Clopper--Pearson for probabilities, median
of means for means and variances, DKW for distribution functions); each
function states its false-alarm budget, which the ledger adds up.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, stats

import dpcore
from dpbook.evidence import Close, Compare, Fact, Rejected, Test
from dpbook.experiments import Experiment
from dpbook.flawed import laplace_stray_factor_two
from dpcore.attacks import (
    MedicalTable,
    attack_trial_sampler,
    attribute_inference_sampler,
    differencing_attack,
    dp_test_success_bound,
    laplace_log_likelihood_ratio,
    laplace_optimal_test_success,
    optimal_test_success_numeric,
)
from dpcore.mechanisms import randomized_response
from dpcore.montecarlo import CheckResult, check_mean, check_probability, check_variance, probability_result
from dpcore.privacy_loss import laplace_max_interval_log_ratio
from dpcore.sensitivity import global_sensitivity, l1_sensitivity, l2_sensitivity, neighbouring_pairs

__all__ = [
    "Attack",
    "Cohort",
    "Sensitivities",
    "Tightness",
    "attack_game",
    "attribute_inference",
    "averaging",
    "correct",
    "differencing",
    "dp_sgd_clipping",
    "factor_two",
    "half_sensitivity",
    "histogram_pairs",
    "k_answers",
    "leak_mechanism",
    "majority_vote",
    "membership",
    "neighbour_quantifier",
    "one_noise_vector",
    "optimal_test_quadrature",
    "output_gap",
    "q4_q5",
    "rappor",
    "release_errors",
    "realistic_cohort",
    "sensitivity_table",
    "tightness",
]


def correct(v: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Event 'the attacker guessed right' for samplers that return 1.0 / 0.0."""
    return np.asarray(v == 1.0)


def _partial_sums(rows: ArrayLike, m: int = 5) -> NDArray[np.float64]:
    padded = np.concatenate([np.asarray(rows, dtype=float), np.zeros(m)])
    return np.cumsum(padded)[:m]


def q4_q5(rows: ArrayLike) -> NDArray[np.float64]:
    """The attacker's two queries ``(Q_4, Q_5)`` on a table given in row order."""
    return _partial_sums(rows)[3:5]


def differencing(d1: MedicalTable, d2: MedicalTable) -> Experiment:
    """Seed 004's differencing attack ``Q_5 - Q_4`` on its two tables, and on every table.

    Deterministic: the seed's numbers ``Q_5(D_1) = 3``, ``Q_4(D_1) = 2``;
    ``Q_5 - Q_4`` is Chandler's bit in both tables; ``Q_r - Q_{r-1}`` reads
    every row of both; and over all 32 five-row tables of bits,
    ``Q_5 - Q_4`` equals the fifth bit. Controls, the two slips a careless
    reader makes: the off-by-one difference ``Q_4 - Q_3`` reads the fifth bit
    of every table; ``Q_5`` alone determines the fifth bit (no two tables with
    the same ``Q_5`` differ in it).
    """
    reads_every_row = all(
        differencing_attack(t, nm) == t.diabetes[t.row_of(nm) - 1] for t in (d1, d2) for nm in t.names
    )
    on_d1, on_d2 = differencing_attack(d1, "Chandler"), differencing_attack(d2, "Chandler")
    every = [(_partial_sums(rows), rows[4]) for rows in itertools.product((0, 1), repeat=5)]
    by_q5: dict[float, set[int]] = {}
    for q, bit in every:
        by_q5.setdefault(float(q[4]), set()).add(bit)
    return Experiment(
        (
            Fact("Q5(D1) = 3 and Q4(D1) = 2 (the seed's numbers)", (d1.partial_sum(5), d1.partial_sum(4)) == (3, 2)),
            Fact("Q5 - Q4 = Chandler's bit: 1 in D1, 0 in D2", on_d1 == 1 and on_d2 == 0),
            Fact("the same difference reads every row of both tables", reads_every_row),
            Fact("Q5 - Q4 = row 5's bit in all 32 tables of bits", all(q[4] - q[3] == bit for q, bit in every)),
        ),
        (
            Fact("off by one: Q4 - Q3 = row 5's bit in all 32 tables", all(q[3] - q[2] == bit for q, bit in every)),
            Fact("Q5 alone determines row 5's bit", all(len(bits) == 1 for bits in by_q5.values())),
        ),
    )


@dataclass(frozen=True)
class LogRatios(Experiment):
    """Largest event log-ratios of a release on a one-row and a two-row pair."""

    one_row: float = math.nan
    two_rows: float = math.nan


def neighbour_quantifier(d1: MedicalTable, d2: MedicalTable, d3: MedicalTable, epsilon: float) -> LogRatios:
    """The Laplace release of ``Q_5`` (scale ``1/epsilon``) on neighbours and on a two-row pair.

    The largest log-ratio ``log P[A(D) in S] / P[A(D') in S]`` over every
    interval ``S`` of a 501-point grid on [-10, 15] (half-lines included),
    computed exactly (:func:`dpcore.laplace_max_interval_log_ratio`): it is
    ``epsilon`` for ``D_1, D_2`` (one row) and ``2 epsilon`` for ``D_1, D_3``
    (two rows). Control: seed 004's inverted quantifier, which requires
    ``<= epsilon`` on the two-row pair.
    """
    edges = np.concatenate([[-np.inf], np.linspace(-10.0, 15.0, 501), [np.inf]])
    scale = dpcore.laplace_scale(1.0, epsilon)

    def max_log_ratio(t1: MedicalTable, t2: MedicalTable) -> float:
        return float(laplace_max_interval_log_ratio(t1.partial_sum(5), t2.partial_sum(5), scale, edges).log_ratio_max)

    one, two = max_log_ratio(d1, d2), max_log_ratio(d1, d3)
    return LogRatios(
        (
            Close("one-row pair: max log-ratio = eps (required, holds)", one, epsilon, rtol=1e-12),
            Close("two-row pair: max log-ratio = 2 eps (group privacy)", two, 2 * epsilon, rtol=1e-12),
        ),
        (Compare("seed's reading: the eps-DP release meets eps on the two-row pair", two, "<=", epsilon),),
        one_row=one,
        two_rows=two,
    )


def leak_mechanism(delta: Fraction) -> Experiment:
    """The mechanism that publishes the data set with probability ``delta``, in exact arithmetic.

    Its output law on ``{bottom, D, D'}``: every one of the 8 events moves by
    at most ``delta`` (so it is ``(0, delta)``-DP), and the largest event
    log-ratio ``log P_D(S)/P_D'(S)`` over the 8 events is infinite (so no
    finite epsilon). Control, the careless "a small delta is a small epsilon":
    the mechanism is ``log(1 + delta)``-DP, i.e. the largest event log-ratio is
    at most ``log(1 + delta)``.
    """
    zero = Fraction(0)
    p_d = np.array([1 - delta, delta, zero], dtype=object)
    p_dp = np.array([1 - delta, zero, delta], dtype=object)
    events = [np.array(m, dtype=bool) for m in itertools.product([0, 1], repeat=3)]
    excess = max(abs(p_d[e].sum() - p_dp[e].sum()) for e in events)

    def log_ratio(e: NDArray[np.bool_]) -> float:
        a, c = Fraction(p_d[e].sum()), Fraction(p_dp[e].sum())
        if a == 0:
            return -math.inf
        return math.inf if c == 0 else math.log(a / c)

    worst = max(max(log_ratio(e) for e in events), max(-log_ratio(e) for e in events if p_dp[e].sum() > 0))
    return Experiment(
        (
            Fact("max event excess = delta exactly: (0, delta)-DP", excess == delta),
            Compare("largest event log-ratio: infinite, no finite eps", worst, "==", math.inf, kind="exact"),
        ),
        (
            Compare(
                "small delta, small eps: largest event log-ratio <= log(1 + delta)",
                worst,
                "<=",
                math.log1p(float(delta)),
                kind="exact",
            ),
        ),
    )


def optimal_test_quadrature(success: Callable[[float, float], float]) -> tuple[Close, ...]:
    """A derived optimal-test success ``success(Delta, b)`` against quadrature and dpcore.

    For ``(Delta, b)`` in ``(1, 2), (1, 0.5), (3, 1.7)``: the formula against
    :func:`dpcore.optimal_test_success_numeric` on the two Laplace densities,
    and :func:`dpcore.laplace_optimal_test_success` against the same
    quadrature (relative tolerance 1e-10).
    """
    checks: list[Close] = []
    for dd, bb in ((1.0, 2.0), (1.0, 0.5), (3.0, 1.7)):
        quad = optimal_test_success_numeric(
            lambda t, bb=bb: math.exp(-abs(t) / bb) / (2 * bb),
            lambda t, dd=dd, bb=bb: math.exp(-abs(t - dd) / bb) / (2 * bb),
            [0.0, dd],
        )
        checks += [
            Close(f"formula vs quadrature (Delta={dd}, b={bb})", success(dd, bb), quad, rtol=1e-10),
            Close(
                f"dpcore.laplace_optimal_test_success vs quadrature (Delta={dd}, b={bb})",
                laplace_optimal_test_success([0.0], [dd], bb),
                quad,
                rtol=1e-10,
            ),
        ]
    return tuple(checks)


@dataclass(frozen=True)
class Attack(Experiment):
    """The attack game at several epsilons.

    ``rows`` holds, per epsilon, ``(eps, success rate, ci_low, ci_high,
    exact success, bound, exact-value test, bound test)``.
    """

    rows: tuple[tuple[Any, ...], ...] = ()


def attack_game(
    answers_1: ArrayLike,
    answers_2: ArrayLike,
    sensitivity: float,
    epsilons: Sequence[float],
    *,
    n: int,
    seed: int,
) -> Attack:
    """The likelihood-ratio attacker against the Laplace release of ``(Q_4, Q_5)``, and against half the noise.

    A fair coin picks one of the two tables, :func:`dpcore.laplace_mechanism`
    releases its answers at ``epsilon`` (calibrated to ``sensitivity``), the
    optimal test guesses (:func:`dpcore.attack_trial_sampler`); ``n`` games
    per epsilon, drawn from ``seed + i`` for the i-th epsilon. Evidence: the
    exact success :func:`dpcore.laplace_optimal_test_success` equals
    ``1 - e^(-eps/4)/2`` (the chapter's formula for ``Delta = 1``,
    ``b = 2/eps``, relative 1e-14) and lies below
    :func:`dpcore.dp_test_success_bound`; the count of correct guesses is
    tested two-sided by Clopper--Pearson against the exact success.

    Controls (a one-sided "success <= bound" test is no control: the
    half-noise mechanism passes it, 0.697 < 0.731 at eps = 1): the same game
    against :func:`dpbook.flawed.laplace_stray_factor_two` (scale
    ``sensitivity / (2 eps)``, only ``2 eps``-DP; ``n`` games from
    ``seed + 50 + i``), tested two-sided against the *honest* exact success,
    must be rejected; its miss probability is the exact binomial acceptance
    probability at its true success ``1 - e^(-eps/2)/2``. Each test at
    ``alpha = 1e-6 / (len(epsilons) + 1)``; the controls' miss probabilities
    are added to the budget by the ledger.
    """
    eps_list = [float(e) for e in epsilons]
    alpha = 1e-6 / (len(eps_list) + 1)
    rows = []
    controls = []
    for i, eps in enumerate(eps_list):

        def mech(v: NDArray[np.float64], g: np.random.Generator, eps: float = eps) -> NDArray[np.float64]:
            return dpcore.laplace_mechanism(v, sensitivity, eps, g)

        def half(v: NDArray[np.float64], g: np.random.Generator, eps: float = eps) -> NDArray[np.float64]:
            return laplace_stray_factor_two(v, sensitivity, eps, g)

        hits = int(attack_trial_sampler(answers_1, answers_2, mech)(dpcore.as_generator(seed + i), n).sum())
        exact = laplace_optimal_test_success(answers_1, answers_2, dpcore.laplace_scale(sensitivity, eps))
        bound = dp_test_success_bound(eps)
        r_exact = probability_result(hits, n, exact, alpha=alpha, name=f"success = exact (eps={eps})")
        half_hits = int(attack_trial_sampler(answers_1, answers_2, half)(dpcore.as_generator(seed + 50 + i), n).sum())
        r_half = probability_result(
            half_hits, n, exact, alpha=alpha, name=f"half-noise mechanism: success = honest exact (eps={eps})"
        )
        half_true = laplace_optimal_test_success(answers_1, answers_2, dpcore.laplace_scale(sensitivity, 2 * eps))
        controls.append(Test(r_half.name, result=r_half, true_value=half_true))
        rows.append((eps, hits / n, r_exact.ci_low, r_exact.ci_high, exact, bound, r_exact, r_half))
    evidence: list[Any] = [
        Close(f"exact success at eps={r[0]} = 1 - e^(-eps/4)/2", r[4], 1 - 0.5 * math.exp(-r[0] / 4), rtol=1e-14)
        for r in rows
    ]
    evidence += [Compare(f"exact success < bound (eps={r[0]})", r[4], "<", r[5]) for r in rows]
    evidence += [r[6] for r in rows]
    return Attack(tuple(evidence), tuple(controls), rows=tuple(rows))


@dataclass(frozen=True)
class Tightness(Experiment):
    """Attacks near the bound: the Laplace release of ``Q_5`` alone and randomized response."""

    exact_q5: float = math.nan
    rr_epsilons: tuple[float, ...] = ()
    rr_estimates: tuple[float, ...] = ()


def tightness(answer_1: float, answer_2: float, eps_star: float, *, n: int, seed: int, rr_seed: int) -> Tightness:
    """How close the optimal attacks come to :func:`dpcore.dp_test_success_bound`.

    The likelihood-ratio attacker on the Laplace release of ``Q_5`` alone
    (sensitivity 1) at ``eps_star``, ``n`` games from ``seed``: its success
    equals :func:`dpcore.laplace_optimal_test_success` (two-sided) and is at
    least ``1/2 + 0.8 (bound - 1/2)`` (one-sided). Randomized response
    (:func:`dpcore.randomized_response`, ``n`` reports from ``rr_seed + j``)
    at ``0.5, eps_star, 4``: believing the report succeeds with exactly the
    bound (two-sided). Control: the Laplace attacker attains the bound
    (one-sided, ">="). Five tests and a control at ``1e-6 / 6`` each.
    """
    alpha = 1e-6 / 6

    def mech_q5(v: NDArray[np.float64], g: np.random.Generator) -> NDArray[np.float64]:
        return dpcore.laplace_mechanism(v, 1.0, eps_star, g)

    q5_1, q5_2 = [answer_1], [answer_2]
    hits = int(attack_trial_sampler(q5_1, q5_2, mech_q5)(dpcore.as_generator(seed), n).sum())
    exact = laplace_optimal_test_success(q5_1, q5_2, 1 / eps_star)
    floor_80 = 0.5 + 0.8 * (dp_test_success_bound(eps_star) - 0.5)
    checks = [
        probability_result(hits, n, exact, alpha=alpha, name="Q5 alone: success = exact"),
        probability_result(
            hits,
            n,
            floor_80,
            alternative="greater",
            alpha=alpha,
            name="Q5 alone: success >= 1/2 + 0.8 (bound - 1/2)",
        ),
    ]
    rr_eps = (0.5, eps_star, 4.0)
    for j, e_ in enumerate(rr_eps):

        def rr_sampler(g: np.random.Generator, size: int, e_: float = e_) -> NDArray[np.float64]:
            secret = (g.random(size) < 0.5).astype(int)  # Chandler's bit, 1/2 each
            return (randomized_response(secret, e_, g) == secret).astype(float)

        checks.append(
            check_probability(
                rr_sampler,
                correct,
                n,
                dp_test_success_bound(e_),
                alpha=alpha,
                rng=rr_seed + j,
                name=f"randomized response: success = bound (eps={e_:.3f})",
            )
        )
    wrong = probability_result(
        hits,
        n,
        dp_test_success_bound(eps_star),
        alternative="greater",
        alpha=alpha,
        name="wrong: Laplace attacker attains the bound",
    )
    return Tightness(
        tuple(checks),
        (Test(wrong.name, result=wrong, true_value=exact),),
        exact_q5=exact,
        rr_epsilons=rr_eps,
        rr_estimates=tuple(r.estimate for r in checks[2:]),
    )


@dataclass(frozen=True)
class HalfNoise(Experiment):
    """The half-sensitivity mechanism's games; ``rows`` = ``(eps, rate, caught, truth, true success)``."""

    rows: tuple[tuple[Any, ...], ...] = ()


def half_sensitivity(answer_1: float, answer_2: float, *, n: int, seed: int) -> HalfNoise:
    """The attack on ``Q_5`` released with noise calibrated to half its sensitivity.

    :func:`dpbook.flawed.laplace_stray_factor_two` at ``eps = 0.5, 1, 2``
    (``n`` games each, from ``seed + j``) is only ``2 eps``-DP: the one-sided
    Clopper--Pearson check "success <= e^eps/(1+e^eps)" must reject it (miss
    probability: exact binomial acceptance at the true success
    ``1 - e^(-eps)/2``), while the two-sided check against that true success
    passes. Controls, the plausible "a Laplace mechanism attains the bound of
    its true epsilon": the success equals ``e^(2 eps)/(1+e^(2 eps))``
    (two-sided, same games; miss probability from the true success). Every
    test at ``1e-6 / 4``.
    """
    alpha = 1e-6 / 4
    rows = []
    controls = []
    for j, e_ in enumerate((0.5, 1.0, 2.0)):

        def flawed_mech(v: NDArray[np.float64], g: np.random.Generator, e_: float = e_) -> NDArray[np.float64]:
            return laplace_stray_factor_two(v, 1.0, e_, g)

        gen = dpcore.as_generator(seed + j)
        hits = int(attack_trial_sampler([answer_1], [answer_2], flawed_mech)(gen, n).sum())
        true_h = 1 - 0.5 * math.exp(-e_)  # optimal test at scale 1/(2 eps)
        caught = probability_result(
            hits,
            n,
            dp_test_success_bound(e_),
            alternative="less",
            alpha=alpha,
            name=f"half-sensitivity noise: success <= bound (eps={e_})",
        )
        truth = probability_result(
            hits, n, true_h, alpha=alpha, name=f"half-sensitivity noise: success = 1 - exp(-eps)/2 (eps={e_})"
        )
        at_2eps = probability_result(
            hits,
            n,
            dp_test_success_bound(2 * e_),
            alpha=alpha,
            name=f"wrong: half-noise success = e^(2 eps)/(1+e^(2 eps)) (eps={e_})",
        )
        controls.append(Test(at_2eps.name, result=at_2eps, true_value=true_h))
        rows.append((e_, hits / n, caught, truth, true_h))
    return HalfNoise(
        (*[Rejected(r[2].name, result=r[2], true_value=r[4]) for r in rows], *[r[3] for r in rows]),
        tuple(controls),
        rows=tuple(rows),
    )


def membership(*, n: int, seed: int) -> Experiment:
    """Membership inference on a count (sensitivity 1) released at ``eps = 1``.

    The optimal test between the counts 1000 and 1001 (``n`` games from
    ``seed``) succeeds with at most ``e/(1+e)`` (one-sided Clopper--Pearson at
    5e-7). Control: the same test on the half-sensitivity release (``n``
    games from ``seed + 1``) must be rejected (5e-7).
    """

    def count_mech(v: NDArray[np.float64], g: np.random.Generator) -> NDArray[np.float64]:
        return dpcore.laplace_mechanism(v, 1.0, 1.0, g)

    def flawed_count(v: NDArray[np.float64], g: np.random.Generator) -> NDArray[np.float64]:
        return laplace_stray_factor_two(v, 1.0, 1.0, g)

    results = []
    for j, (mech, name) in enumerate(
        (
            (count_mech, "membership test on a count: success <= bound"),
            (flawed_count, "wrong: membership test, half-sensitivity noise: success <= bound"),
        )
    ):
        hits = int(attack_trial_sampler([1000.0], [1001.0], mech)(dpcore.as_generator(seed + j), n).sum())
        results.append(
            probability_result(hits, n, dp_test_success_bound(1.0), alternative="less", alpha=5e-7, name=name)
        )
    return Experiment(
        (results[0],),
        (Test(results[1].name, result=results[1], true_value=1 - 0.5 * math.exp(-1.0)),),
    )


@dataclass(frozen=True)
class Sensitivities(Experiment):
    """Brute-force sensitivities; ``table`` rows are ``(query, add/remove, replace, closed forms)``."""

    table: tuple[tuple[str, float, float, Any, Any], ...] = ()

    def __str__(self) -> str:
        head = f"{'query':26s} {'add/remove':>11s} {'closed':>8s} {'replace':>9s} {'closed':>8s}"
        rows = [
            f"{nm:26s} {ar:11.6f} {float(c_ar):8.4f} {rep:9.6f} {float(c_rep):8.4f}"
            for nm, ar, rep, c_ar, c_rep in self.table
        ]
        return "\n".join([head, *rows])


def sensitivity_table() -> Sensitivities:
    """Global sensitivities of the chapter's queries by brute force, against their closed forms.

    :func:`dpcore.global_sensitivity` under add/remove and replace for the
    count, sums of records in [0, 1] and [-1, 2], a 4-bin histogram (L1,
    L2), the partial sums ``Q_1..Q_5`` (jointly, in L1 and L2, the pair
    ``(Q_4, Q_5)`` and each alone, rows in order) and the bounded mean at
    ``n = 1..5``, each compared with its closed form to 1e-12. Controls: the
    count has sensitivity 1 under replacement; the mean at ``n = 2`` has
    ``1/(n + 1)`` under replacement.
    """

    def hist4(rows: ArrayLike) -> NDArray[np.int64]:
        return np.bincount(np.asarray(rows, dtype=int), minlength=4)

    unit: dict[str, Any] = dict(universe=np.linspace(0.0, 1.0, 5), max_size=4)  # records in [0, 1]
    wide: dict[str, Any] = dict(universe=np.linspace(-1.0, 2.0, 4), max_size=3)  # records in [-1, 2]
    bins: dict[str, Any] = dict(universe=np.arange(4), max_size=3)
    seq_ar: dict[str, Any] = dict(universe=[0, 1], ordered=True, min_size=4, max_size=6)  # rows in order
    seq_rep: dict[str, Any] = dict(universe=[0, 1], ordered=True, min_size=5, max_size=5)
    r2, r5 = math.sqrt(2), math.sqrt(5)
    # query, name, kwargs and closed form (add/remove, then replace), norm
    cases: list[tuple[Callable[..., Any], str, dict[str, Any], dict[str, Any], tuple[Any, Any], int]] = [
        (len, "count", unit, unit, (1, 0), 1),
        (np.sum, "sum, records in [0, 1]", unit, unit, (1, 1), 1),
        (np.sum, "sum, records in [-1, 2]", wide, wide, (2, 3), 1),
        (hist4, "histogram, 4 bins (L1)", bins, bins, (1, 2), 1),
        (hist4, "histogram, 4 bins (L2)", bins, bins, (1, r2), 2),
        (_partial_sums, "(Q_1..Q_5) (L1)", seq_ar, seq_rep, (5, 5), 1),
        (_partial_sums, "(Q_1..Q_5) (L2)", seq_ar, seq_rep, (r5, r5), 2),
        (q4_q5, "(Q_4, Q_5)", seq_ar, seq_rep, (2, 2), 1),
    ]
    for i in range(1, 6):
        cases.append((lambda r, i=i: _partial_sums(r)[i - 1], f"Q_{i}", seq_ar, seq_rep, (1, 1), 1))
    for n_ in range(1, 6):  # bounded mean of records in [0, 1]: depends on the size n
        sized_ar = {**unit, "min_size": n_, "max_size": n_ + 1}
        sized_rep = {**unit, "min_size": n_, "max_size": n_}
        cases.append((np.mean, f"mean, n = {n_}", sized_ar, sized_rep, (Fraction(1, n_ + 1), Fraction(1, n_)), 1))
    table, closed = [], []
    for query, name, kw_ar, kw_rep, (c_ar, c_rep), p in cases:
        kw_ar, kw_rep = dict(kw_ar), dict(kw_rep)
        uni_ar, uni_rep = kw_ar.pop("universe"), kw_rep.pop("universe")
        r_ar = global_sensitivity(query, uni_ar, relation="add_remove", norm=p, **kw_ar).value
        r_rep = global_sensitivity(query, uni_rep, relation="replace", norm=p, **kw_rep).value
        table.append((name, r_ar, r_rep, c_ar, c_rep))
        closed += [
            Close(f"{name}, add/remove = {c_ar}", r_ar, float(c_ar), atol=1e-12),
            Close(f"{name}, replace = {c_rep}", r_rep, float(c_rep), atol=1e-12),
        ]
    by_name = {row[0]: row[2] for row in table}
    return Sensitivities(
        tuple(closed),
        (
            Close("count under replace-one = 1", by_name["count"], 1.0, atol=1e-12),
            Close("mean, n = 2, replace = 1/(n + 1)", by_name["mean, n = 2"], 1 / 3, atol=1e-12),
        ),
        table=tuple(table),
    )


@dataclass(frozen=True)
class Ratios(Experiment):
    """Replace / add-remove sensitivity ratios of random vector queries."""

    ratios: tuple[float, ...] = ()


def factor_two(table: Sensitivities, *, queries: int, seed: int) -> Ratios:
    """Replace-one sensitivity is at most twice add/remove-one, checked on random queries.

    ``queries`` random lookup-sum queries (a 4 x 3 table of standard normals
    drawn from ``seed``; the query sums the rows a data set selects): the
    ratio of :func:`dpcore.l1_sensitivity` under replacement (sizes 1-2) to
    add/remove (sizes up to 3) is at most 2; every query of ``table`` obeys
    the inequality; the histogram attains 2. Control: a factor of 1.
    """
    gen = dpcore.as_generator(seed)
    ratios = []
    for _ in range(queries):
        lookup = gen.normal(size=(4, 3))

        def lookup_sum(rows: ArrayLike, lookup: NDArray[np.float64] = lookup) -> NDArray[np.float64]:
            return lookup[np.asarray(rows, dtype=int)].sum(axis=0)

        ar = l1_sensitivity(lookup_sum, np.arange(4), max_size=3)
        rep = l1_sensitivity(lookup_sum, np.arange(4), min_size=1, max_size=2, relation="replace")
        ratios.append(rep / ar)
    hist_ratio = next(rep / ar for name, ar, rep, *_ in table.table if name.startswith("histogram"))
    return Ratios(
        (
            Compare(f"largest ratio over {queries} random vector queries", max(ratios), "<=", 2 + 1e-12),
            Close("the histogram attains the factor 2", hist_ratio, 2.0, rtol=1e-12),
            *[
                Compare(f"{name}: replace <= 2 x add/remove", rep, "<=", 2 * ar + 1e-12)
                for name, ar, rep, *_ in table.table
            ],
        ),
        (Compare("replace-one never exceeds add/remove-one (factor 1)", hist_ratio, "<=", 1 + 1e-12),),
        ratios=tuple(ratios),
    )


@dataclass(frozen=True)
class PairCounts(Experiment):
    """Numbers of neighbouring pairs, as data sets and as histograms."""

    counts: tuple[int, int, int, int] = (0, 0, 0, 0)

    def __str__(self) -> str:
        ar, h1, rep, h2 = self.counts
        return (
            f"{ar} add/remove pairs; {h1} histogram pairs at distance 1\n"
            f"{rep} replace pairs; {h2} equal-total histogram pairs at distance 2"
        )


def histogram_pairs(types: int, max_size: int) -> PairCounts:
    """Seed 004's histogram neighbours are the add/remove neighbours.

    Every pair of data sets of ``types`` record types with at most
    ``max_size`` records (:func:`dpcore.neighbouring_pairs`), mapped to
    histograms, against every pair of histograms of total at most
    ``max_size``: add/remove pairs are exactly the pairs at L1 distance 1,
    replace pairs the equal-total pairs at distance 2; the seed's ``Delta f``
    of the histogram equals :func:`dpcore.l1_sensitivity`. Control: replace
    pairs are the pairs at distance 1.
    """

    def to_hist(rows: ArrayLike) -> tuple[int, ...]:
        return tuple(np.bincount(np.asarray(rows, dtype=int), minlength=types).tolist())

    def l1(h: tuple[int, ...], g: tuple[int, ...]) -> int:
        return sum(abs(i - j) for i, j in zip(h, g, strict=True))

    def pairs_of(relation: str) -> set[frozenset[tuple[int, ...]]]:
        pairs = neighbouring_pairs(np.arange(types), max_size=max_size, relation=relation)
        return {frozenset((to_hist(d), to_hist(dp))) for d, dp in pairs}

    hists = [h for h in itertools.product(range(max_size + 1), repeat=types) if sum(h) <= max_size]
    ar_pairs, rep_pairs = pairs_of("add_remove"), pairs_of("replace")
    at_1 = {frozenset((h, g)) for h in hists for g in hists if l1(h, g) == 1}
    at_2 = {frozenset((h, g)) for h in hists for g in hists if l1(h, g) == 2 and sum(h) == sum(g)}
    seed_delta = max(l1(*sorted(pair)) for pair in at_1)  # f = the histogram itself
    brute = l1_sensitivity(lambda r: np.bincount(r.astype(int), minlength=types), np.arange(types), max_size=max_size)
    return PairCounts(
        (
            Fact("add/remove pairs = histogram pairs at L1 distance 1", ar_pairs == at_1),
            Fact("replace pairs = equal-total histogram pairs at distance 2", rep_pairs == at_2),
            Fact("seed's Delta f of the histogram = brute-force sensitivity", bool(seed_delta == brute)),
        ),
        (Fact("replace pairs = histogram pairs at distance 1", rep_pairs == at_1),),
        counts=(len(ar_pairs), len(at_1), len(rep_pairs), len(at_2)),
    )


def output_gap(*, n: int, seed: int) -> Experiment:
    """Sensitivity is computed without noise; the noisy output's gap is ``Delta / eps``.

    The count's :func:`dpcore.l1_sensitivity` (records in {0, 1}, up to 6) is
    1; the mean absolute gap between the Laplace release of a count of 50 and
    the truth is ``Delta / eps`` at ``eps = 1, 0.1`` (median of means, the
    gap is exponential with variance ``(Delta/eps)^2``; ``n`` releases from
    ``seed + j``). Control: the gap equals ``Delta f`` at ``eps = 0.1``
    (from ``seed + 2``). Two tests and a control at ``1e-6 / 3`` each.
    """
    delta_count = l1_sensitivity(len, [0, 1], max_size=6)  # computed without any noise
    alpha = 1e-6 / 3

    def gap_at(e_: float) -> Callable[[np.random.Generator, int], NDArray[np.float64]]:
        def gap(g: np.random.Generator, size: int) -> NDArray[np.float64]:
            return np.abs(dpcore.laplace_mechanism(np.full(size, 50.0), delta_count, e_, g) - 50.0)

        return gap

    checks = []
    for j, e_ in enumerate((1.0, 0.1)):
        scale = dpcore.laplace_scale(delta_count, e_)
        checks.append(
            check_mean(
                gap_at(e_),
                n,
                scale,
                variance_bound=scale**2,
                alpha=alpha,
                rng=seed + j,
                name=f"E|noisy - true| = Delta/eps (eps={e_})",
            )
        )
    wrong = check_mean(
        gap_at(0.1),
        n,
        delta_count,
        variance_bound=100.0,
        alpha=alpha,
        rng=seed + 2,
        name="wrong: E|noisy - true| = Delta f (eps=0.1)",
    )
    return Experiment(
        (Close("Delta f of the count, computed without noise", delta_count, 1.0, atol=0, kind="exact"), *checks),
        (Test(wrong.name, result=wrong, true_value=dpcore.laplace_scale(delta_count, 0.1)),),
    )


def averaging(
    variance_of_average: Callable[[float, float, int], float],
    variance_of_one: Callable[[float, float, int], float],
    *,
    truth: float,
    sensitivity: float,
    epsilon: float,
    n: int,
    seed: int,
) -> Experiment:
    """The average of ``k`` Laplace answers: unbiased, variance ``2 b^2 / k``; one answer at ``k eps``.

    ``variance_of_average(Delta, eps, k)`` and ``variance_of_one(Delta, eps,
    k)`` are the chapter's derived formulas. For ``k = 1, 10, 100``: the
    formula against ``2 b^2 / k`` with ``b`` from :func:`dpcore.laplace_scale`;
    the mean of ``k`` answers of :func:`dpcore.laplace_mechanism` equals the
    truth (median of means, ``n`` averages from ``seed + j``) and its
    variance is the formula (median of means of squares; the average of
    Laplace variables has kurtosis at most 6, from ``seed + 10 + j``); at
    ``k = 10`` one answer at ``k eps`` has variance ``variance_of_one`` (from
    ``seed + 20``). Control: the average of 10 is as accurate as one answer
    at ``10 eps`` (from ``seed + 21``). Seven tests and a control at
    ``1e-6 / 8`` each.
    """
    b_each = dpcore.laplace_scale(sensitivity, epsilon)
    alpha = 1e-6 / 8
    checks: list[Any] = []
    formulas: list[Close] = []
    for j, kk in enumerate((1, 10, 100)):

        def averaged(g: np.random.Generator, size: int, kk: int = kk) -> NDArray[np.float64]:
            return dpcore.laplace_mechanism(np.full((size, kk), truth), sensitivity, epsilon, g).mean(axis=1)

        v_claim = variance_of_average(sensitivity, epsilon, kk)
        formulas.append(
            Close(f"2 Delta^2/(k eps^2) vs dpcore.laplace_scale (k={kk})", v_claim, 2 * b_each**2 / kk, rtol=1e-14)
        )
        mean_ok = check_mean(
            averaged,
            n,
            truth,
            variance_bound=v_claim,
            alpha=alpha,
            rng=seed + j,
            name=f"mean of {kk} answers = truth",
        )
        var_ok = check_variance(
            averaged,
            n,
            v_claim,
            kurtosis_bound=6,
            alpha=alpha,
            rng=seed + 10 + j,
            name=f"Var of mean of {kk} answers = 2b^2/k",
        )
        checks += [mean_ok, var_ok]
        if kk == 10:
            v_avg10, v_single = v_claim, variance_of_one(sensitivity, epsilon, kk)

            def single(g: np.random.Generator, size: int, kk: int = kk) -> NDArray[np.float64]:
                return dpcore.laplace_mechanism(np.full(size, truth), sensitivity, kk * epsilon, g)

            checks.append(
                check_variance(
                    single,
                    n,
                    v_single,
                    kurtosis_bound=6,
                    alpha=alpha,
                    rng=seed + 20,
                    name="Var of one answer at k*eps = 2 Delta^2/(k eps)^2",
                )
            )
            wrong = check_variance(
                averaged,
                n,
                v_single,
                kurtosis_bound=6,
                alpha=alpha,
                rng=seed + 21,
                name="wrong: Var of the average of 10 = Var of one answer at 10 eps",
            )
    return Experiment((*formulas, *checks), (Test(wrong.name, result=wrong, true_value=v_avg10),))


@dataclass(frozen=True)
class Composition(Experiment):
    """``k`` fresh-noise answers: the exact loss, and the attack against the single-answer bound."""

    loss: float = math.nan
    shown: CheckResult | None = None
    vote_success: float = math.nan


def _vote_success(k: int, epsilon: float) -> float:
    """Exact success of the majority vote over ``k`` answers of ``Q_5`` (shift 1, scale ``1/eps``), ties by coin."""
    r_right = 1 - 0.5 * math.exp(-0.5 * epsilon)  # one answer on the right side of the midpoint
    vote = stats.binom(k, r_right)
    tie = 0.5 * vote.pmf(k // 2) if k % 2 == 0 else 0.0
    return float(vote.sf(k // 2) + tie)


def k_answers(k: int, epsilon: float, *, n: int, seed: int) -> Composition:
    """``k`` answers of ``Q_5`` with fresh Laplace noise at ``epsilon`` each (``D_1``: 3, ``D_2``: 2).

    The largest event log-ratio over every box of a 45-point grid per
    coordinate (:func:`dpcore.laplace_max_interval_log_ratio`) and the
    log-likelihood ratio far out (:func:`dpcore.laplace_log_likelihood_ratio`)
    are ``k epsilon`` (relative 1e-12). The likelihood-ratio attacker (``n``
    games from ``seed``) is tested twice by one-sided Clopper--Pearson:
    "success <= e^(k eps)/(1+e^(k eps))" must pass (level 5e-7), and the
    single-answer bound "success <= e^eps/(1+e^eps)" must be *rejected*
    (level 5e-7). The rejection's miss probability is the exact binomial
    acceptance probability at the majority vote's exact success (a binomial
    sum): the likelihood-ratio test is optimal, so its success is at least
    the vote's, and acceptance only falls as the true success rises. Control:
    the loss of ``k`` answers is at most ``epsilon`` (no composition).
    """
    box_edges = np.concatenate([[-np.inf], np.linspace(-3.0, 8.0, 45), [np.inf]])
    a1, a2 = np.full(k, 3.0), np.full(k, 2.0)
    loss = float(laplace_max_interval_log_ratio(a1, a2, 1 / epsilon, box_edges).log_ratio_max)
    far = float(laplace_log_likelihood_ratio(np.full(k, 20.0), a1, a2, 1 / epsilon))

    def answers(v: NDArray[np.float64], g: np.random.Generator) -> NDArray[np.float64]:
        return dpcore.laplace_mechanism(v, 1.0, epsilon, g)  # scale 1/eps on every answer

    hits = int(attack_trial_sampler(a1, a2, answers)(dpcore.as_generator(seed), n).sum())
    total, single = (
        probability_result(hits, n, dp_test_success_bound(e), alternative="less", alpha=5e-7, name=name)
        for e, name in (
            (k * epsilon, f"{k} answers at eps={epsilon}: success <= e^(k eps)/(1+e^(k eps))"),
            (epsilon, f"{k} answers at eps={epsilon}: success <= e^eps/(1+e^eps) (one answer's bound)"),
        )
    )
    vote = _vote_success(k, epsilon)
    return Composition(
        (
            Close("max event log-ratio of k answers = k eps", loss, k * epsilon, rtol=1e-12),
            Close("log-likelihood ratio far out = k eps", far, k * epsilon, rtol=1e-12),
            total,
            Rejected(single.name, result=single, true_value=vote),
        ),
        (Compare("k fresh-noise answers keep the loss of one (eps)", loss, "<=", epsilon),),
        loss=loss,
        shown=single,
        vote_success=vote,
    )


@dataclass(frozen=True)
class Cohort:
    """A deterministic cohort of patients: age band and diabetes flag of each."""

    band: NDArray[np.int64]
    diabetic: NDArray[np.bool_]
    band_edges: NDArray[np.int64]

    @property
    def count(self) -> int:
        """Number of patients with diabetes."""
        return int(self.diabetic.sum())

    @property
    def histogram(self) -> NDArray[np.int64]:
        """Patients per age band."""
        return np.bincount(self.band, minlength=self.band_edges.size)

    @property
    def labels(self) -> list[str]:
        """The age bands' labels."""
        edges = self.band_edges
        return [f"{lo}-{hi - 1}" for lo, hi in zip(edges[:-1], edges[1:], strict=True)] + [f"{edges[-1]}+"]

    @property
    def records(self) -> NDArray[np.int64]:
        """The universe of records: every (age band, diabetes flag)."""
        return np.array([(bnd, dia) for bnd in range(self.band_edges.size) for dia in (0, 1)])


def realistic_cohort(n: int = 5000) -> Cohort:
    """``n`` patients, without a seed: a cohort no number of the chapter depends on chance for.

    Ages are the quantiles of Gamma(9, scale 6) clipped to [18, 95], the
    diabetes flags come from a golden-ratio sequence; the probability of
    diabetes rises with age, ``1 / (1 + e^(-(age - 75)/10))``; the bands
    start at 18, 30, 40, 50, 60, 70, 80.
    """
    golden = (np.sqrt(5) - 1) / 2
    u_age = (np.arange(n) + 0.5) / n  # quantile levels: a deterministic cohort
    age = np.clip(stats.gamma(9.0, scale=6.0).ppf(u_age), 18, 95).astype(int)
    u_dia = (np.arange(1, n + 1) * golden) % 1.0  # an equidistributed sequence, no seed
    diabetic = u_dia < 1 / (1 + np.exp(-(age - 75) / 10))
    band_edges = np.array([18, 30, 40, 50, 60, 70, 80])
    band = np.searchsorted(band_edges, age, side="right") - 1
    return Cohort(band, diabetic, band_edges)


@dataclass(frozen=True)
class Release(Experiment):
    """Errors of the count and histogram releases; the measured means per epsilon."""

    count_errors: tuple[float, ...] = ()
    histogram_errors: tuple[float, ...] = ()


def release_errors(
    cohort: Cohort, count_sens: float, hist_sens: float, epsilons: Sequence[float], *, n: int, seed: int
) -> Release:
    """Expected absolute errors of the Laplace releases of the cohort's count and histogram.

    At each epsilon (the j-th from ``seed + j`` and ``seed + 10 + j``): the
    count's mean absolute error is ``b = Delta/eps`` (median of means,
    variance ``b^2``: ``|Lap(0, b)|`` is exponential), the histogram's mean
    L1 error is ``bands * b`` (variance ``bands * b^2``). Control: the
    count's error equals the standard deviation ``sqrt(2) b`` at the last
    epsilon (from ``seed + 20``). ``2 len(epsilons)`` tests and a control at
    ``1e-6 / (2 len(epsilons) + 1)`` each.
    """
    alpha = 1e-6 / (2 * len(epsilons) + 1)
    true_count, true_hist = float(cohort.count), cohort.histogram
    bands = true_hist.size

    def count_err_at(e_: float) -> Callable[[np.random.Generator, int], NDArray[np.float64]]:
        def count_err(g: np.random.Generator, size: int) -> NDArray[np.float64]:
            return np.abs(dpcore.laplace_mechanism(np.full(size, true_count), count_sens, e_, g) - true_count)

        return count_err

    def hist_err_at(e_: float) -> Callable[[np.random.Generator, int], NDArray[np.float64]]:
        def hist_err(g: np.random.Generator, size: int) -> NDArray[np.float64]:
            rows = np.tile(true_hist.astype(float), (size, 1))
            return np.abs(dpcore.laplace_mechanism(rows, hist_sens, e_, g) - true_hist).sum(axis=1)

        return hist_err

    checks = []
    for j, e_ in enumerate(epsilons):
        b_r = dpcore.laplace_scale(count_sens, e_)
        checks.append(
            check_mean(
                count_err_at(e_),
                n,
                b_r,
                variance_bound=b_r**2,
                alpha=alpha,
                rng=seed + j,
                name=f"count: E|error| = b (eps={e_})",
            )
        )
        checks.append(
            check_mean(
                hist_err_at(e_),
                n,
                bands * b_r,
                variance_bound=bands * b_r**2,
                alpha=alpha,
                rng=seed + 10 + j,
                name=f"histogram: E L1 error = {bands} b (eps={e_})",
            )
        )
    wrong = check_mean(
        count_err_at(epsilons[-1]),
        n,
        math.sqrt(2) * b_r,
        variance_bound=2 * b_r**2,
        alpha=alpha,
        rng=seed + 20,
        name="wrong: E|error| = sqrt(2) b (the standard deviation)",
    )
    return Release(
        (
            Close("count sensitivity (brute force)", count_sens, 1.0, atol=0, kind="exact"),
            Close("histogram sensitivity (brute force)", hist_sens, 1.0, atol=0, kind="exact"),
            *checks,
        ),
        (Test(wrong.name, result=wrong, true_value=b_r),),
        count_errors=tuple(r.estimate for r in checks[0::2]),
        histogram_errors=tuple(r.estimate for r in checks[1::2]),
    )


def attribute_inference(epsilon: float, *, n: int, seed: int) -> Experiment:
    """Seed 003's attribute-inference claim: DP does not stop inference from the population.

    Bob among 1000 people of whom 900 have the attribute, the (with, without)
    histogram released at ``epsilon`` (:func:`dpcore.attribute_inference_sampler`,
    sensitivity 2 under replacement by brute force, so ``b = 4`` at 0.5):
    guessing from the population succeeds with 0.9 (``seed``), guessing Bob's
    record when it is a fair coin with 1/2 (``seed + 2``), both two-sided
    Clopper--Pearson; the histogram's sensitivity under replacement is 2 by
    brute force. Control: the seed's claim that the population guess
    succeeds with at most ``e^eps/(1+e^eps)`` (one-sided, ``seed + 1``; miss
    probability: exact binomial acceptance at the true 0.9). Two tests and a
    control at ``1e-6 / 3``.
    """
    alpha = 1e-6 / 3
    pop_sampler = attribute_inference_sampler(900, 100, epsilon, 0.9)
    bob_sampler = attribute_inference_sampler(900, 100, epsilon, 0.5)
    pop = check_probability(
        pop_sampler,
        correct,
        n,
        0.9,
        alpha=alpha,
        rng=seed,
        name="population inference: success = 0.9 (the population rate)",
    )
    pop_bound = check_probability(
        pop_sampler,
        correct,
        n,
        dp_test_success_bound(epsilon),
        alternative="less",
        alpha=alpha,
        rng=seed + 1,
        name="seed: population inference success <= e^eps/(1+e^eps)",
    )
    ind = check_probability(
        bob_sampler, correct, n, 0.5, alpha=alpha, rng=seed + 2, name="Bob's record (prior 1/2): success = 1/2"
    )
    # the (with, without) histogram under replacement of Bob's record
    sens = l1_sensitivity(
        lambda r: np.bincount(r.astype(int), minlength=2), [0, 1], min_size=1, max_size=3, relation="replace"
    )
    return Experiment(
        (
            pop,
            ind,
            Close("histogram sensitivity under replacement = 2", sens, 2.0, atol=0, kind="exact"),
        ),
        (Test(pop_bound.name, result=pop_bound, true_value=0.9),),
    )


@dataclass(frozen=True)
class Rappor(Experiment):
    """RAPPOR's privacy computed from its flip probabilities: brute force and the paper's closed forms."""

    eps_permanent: float = math.nan
    eps_one_report: float = math.nan
    mass_on_bits: Fraction = Fraction(0)


def rappor(
    *,
    bits: int = 8,
    hashes: int = 2,
    f: Fraction = Fraction(1, 2),
    p: Fraction = Fraction(1, 2),
    q: Fraction = Fraction(3, 4),
) -> Rappor:
    """RAPPOR's published mechanism (Erlingsson, Pihur & Korolova 2014), in exact rational arithmetic.

    A value is hashed into a Bloom filter ``B`` of ``bits`` bits with
    ``hashes`` ones. The *permanent* randomised response sets each bit to 1
    with probability ``f/2``, to 0 with ``f/2``, and keeps it otherwise
    (``B'``); the *instantaneous* one reports ``S_i = 1`` with probability
    ``q`` if ``B'_i = 1`` and ``p`` if ``B'_i = 0``. So a single report has
    ``P(S_i = 1) = q* = f(p+q)/2 + (1-f) q`` where ``B_i = 1`` and
    ``p* = f(p+q)/2 + (1-f) p`` where ``B_i = 0``.

    Two values with disjoint filters (they differ in ``2 hashes`` bits, the
    worst case) are compared by brute force over all ``2^bits`` outputs of
    the exact laws of ``B'`` and of ``S``: the largest log-ratio must equal
    the paper's ``eps_inf = 2h log((1 - f/2)/(f/2))`` and
    ``eps_1 = h log(q* (1 - p*) / (p* (1 - q*)))`` (relative 1e-12), and the
    report law puts probability exactly 1 on ``{0, 1}^bits``: RAPPOR's
    reports are bits and its epsilon comes from the flip probabilities.

    Control, seed 003's statement that RAPPOR is an application of Laplace
    noise: reports ``bit + Laplace noise`` have a density, so they put
    probability 0 on the finite set ``{0, 1}^bits``; RAPPOR's exact law
    would have to put 0 there. No randomness.
    """
    h = hashes
    b1 = np.zeros(bits, dtype=int)
    b1[:h] = 1
    b2 = np.zeros(bits, dtype=int)
    b2[h : 2 * h] = 1
    half_f = f / 2
    q_star, p_star = half_f * (p + q) + (1 - f) * q, half_f * (p + q) + (1 - f) * p

    def law(prob_one: Callable[[int], Fraction], filt: NDArray[np.int64]) -> dict[tuple[int, ...], Fraction]:
        out = {}
        for s_ in itertools.product((0, 1), repeat=bits):
            pr = Fraction(1)
            for bit, si in zip(filt, s_, strict=True):
                one = prob_one(int(bit))
                pr *= one if si else 1 - one
            out[s_] = pr
        return out

    def max_log_ratio(l1: dict[tuple[int, ...], Fraction], l2: dict[tuple[int, ...], Fraction]) -> float:
        return max(math.log(l1[o] / l2[o]) for o in l1)

    def permanent(bit: int) -> Fraction:
        return 1 - half_f if bit else half_f

    def one_report(bit: int) -> Fraction:
        return q_star if bit else p_star

    eps_perm = max_log_ratio(law(permanent, b1), law(permanent, b2))
    report_1 = law(one_report, b1)
    eps_one = max_log_ratio(report_1, law(one_report, b2))
    mass = sum(report_1.values(), Fraction(0))
    paper_inf = 2 * h * math.log((1 - half_f) / half_f)
    paper_one = h * math.log(q_star * (1 - p_star) / (p_star * (1 - q_star)))
    return Rappor(
        (
            Close("permanent RR: brute-force max log-ratio = 2h log((1 - f/2)/(f/2))", eps_perm, paper_inf, rtol=1e-12),
            Close("one report: brute-force max log-ratio = h log(q*(1-p*)/(p*(1-q*)))", eps_one, paper_one, rtol=1e-12),
            Fact("the report law puts probability exactly 1 on {0, 1}^k (bits)", mass == 1),
        ),
        (
            Compare(
                "seed: RAPPOR adds Laplace noise, so P(report in {0, 1}^k) = 0",
                float(mass),
                "==",
                0.0,
                kind="exact",
            ),
        ),
        eps_permanent=eps_perm,
        eps_one_report=eps_one,
        mass_on_bits=mass,
    )


def _box_edges_4() -> NDArray[np.float64]:
    return np.r_[-np.inf, np.linspace(-8.0, 9.0, 341), np.inf]


@dataclass(frozen=True)
class Clipping(Experiment):
    """Sensitivities of a clipped gradient sum and the two mechanisms calibrated to it."""

    l1: float = math.nan
    l2: float = math.nan
    laplace_log_ratio: float = math.nan
    sigma: float = math.nan

    def __str__(self) -> str:
        return (
            f"L1 sensitivity {self.l1}, L2 sensitivity {self.l2}; Laplace at the clip norm: "
            f"max log box ratio {self.laplace_log_ratio:.6f}; Gaussian sigma {self.sigma:.4f}"
        )


def dp_sgd_clipping(clip: float, dim: int, epsilon: float, delta: float) -> Clipping:
    r"""DP-SGD clips in L2: the Gaussian mechanism fits, Laplace at the clip norm does not.

    Per-example gradients of norm ``clip`` in ``dim`` dimensions (the basis
    vectors, their negatives and the ``2^dim`` sign vectors of norm 1): the
    sum's L2 sensitivity is ``clip`` and its L1 sensitivity ``sqrt(dim) clip``
    (:func:`dpcore.l2_sensitivity`, :func:`dpcore.l1_sensitivity`, brute
    force); Gaussian noise from :func:`dpcore.analytic_gaussian_sigma`
    delivers ``delta``, computed here by quadrature of
    :math:`\int \max(0, p_C - e^\varepsilon p_0)` (``scipy.integrate.quad``,
    relative 1e-6), not by dpcore's own formula. Control: Laplace noise calibrated to the clip norm
    keeps every box's log ratio (a 341-point grid per coordinate) within
    ``epsilon``.
    """
    signs = np.array(list(itertools.product((-0.5, 0.5), repeat=dim)))  # norm-1 gradients
    clipped = np.r_[np.eye(dim), -np.eye(dim), signs] * clip  # per-example clipped gradients

    def grad_sum(rows: ArrayLike) -> NDArray[np.float64]:
        return np.asarray(rows, dtype=float).reshape(-1, dim).sum(axis=0)

    l1_clip = l1_sensitivity(grad_sum, clipped, max_size=2)
    l2_clip = l2_sensitivity(grad_sum, clipped, max_size=2)
    worst = np.full(dim, 0.5 * clip)  # the gradient that attains the L1 sensitivity
    lap = laplace_max_interval_log_ratio(np.zeros(dim), worst, dpcore.laplace_scale(clip, epsilon), _box_edges_4())
    sigma = dpcore.analytic_gaussian_sigma(l2_clip, epsilon, delta)
    # delivered delta by quadrature, independent of dpcore's formula: the hockey-stick divergence
    # of N(C, sigma^2) from N(0, sigma^2), integrated from where the densities' ratio exceeds e^eps
    start = l2_clip / 2 + epsilon * sigma**2 / l2_clip
    n0, n1 = stats.norm(0.0, sigma), stats.norm(l2_clip, sigma)
    quad_delta = integrate.quad(lambda z: n1.pdf(z) - math.exp(epsilon) * n0.pdf(z), start, np.inf, epsabs=1e-14)[0]
    return Clipping(
        (
            Close("L2 sensitivity of the clipped sum = C (brute force)", l2_clip, clip, atol=1e-12),
            Close("L1 sensitivity = sqrt(d) C", l1_clip, math.sqrt(dim) * clip, atol=1e-12),
            Close(
                "Gaussian noise calibrated to C: delta by quadrature = target",
                quad_delta,
                delta,
                rtol=1e-6,
            ),
        ),
        (
            Compare(
                "Laplace noise calibrated to the clip norm: max log box ratio <= eps",
                lap.log_ratio_max,
                "<=",
                epsilon + 1e-12,
            ),
        ),
        l1=l1_clip,
        l2=l2_clip,
        laplace_log_ratio=float(lap.log_ratio_max),
        sigma=sigma,
    )


@dataclass(frozen=True)
class Vote(Experiment):
    """The majority vote over ``k`` answers and its exact success."""

    exact: float = math.nan


def majority_vote(answer_1: float, answer_2: float, k: int, epsilon: float, *, n: int, seed: int) -> Vote:
    """The attacker who asks ``Q_5`` ``k`` times with fresh noise and takes a majority vote.

    Each answer is on the right side of the midpoint with probability
    ``r = 1 - e^(-eps/2)/2`` (sensitivity 1), so the vote (ties by a coin)
    succeeds with the binomial sum ``P[B > k/2] + P[B = k/2]/2`` (the second
    term for even ``k`` only),
    ``B ~ Bin(k, r)``. Monte Carlo (``n`` games each from ``seed``,
    ``seed + 1``): the success equals the binomial sum (two-sided) and is at
    most ``e^(k eps)/(1+e^(k eps))`` (one-sided). Control: the seed's claim
    that fresh noise keeps it at most ``e^eps/(1+e^eps)`` (``seed + 2``).
    Two tests and a control at ``1e-6 / 3``.
    """
    r_right = 1 - 0.5 * math.exp(-0.5 * epsilon)  # one answer on the right side
    vote = stats.binom(k, r_right)
    tie = 0.5 * vote.pmf(k // 2) if k % 2 == 0 else 0.0  # ties (k even) by a coin
    exact = float(vote.sf(k // 2) + tie)

    def trials(g: np.random.Generator, size: int) -> NDArray[np.float64]:
        secret = g.integers(0, 2, size=size)
        truth = np.where(secret == 1, answer_1, answer_2)
        answers = dpcore.laplace_mechanism(np.repeat(truth[:, None], k, axis=1), 1.0, epsilon, g)
        above = (answers > (answer_1 + answer_2) / 2).sum(axis=1)
        guess = np.where(above * 2 == k, g.integers(0, 2, size=size), (above * 2 > k).astype(int))
        return (guess == secret).astype(float)

    alpha = 1e-6 / 3
    claims = (
        (exact, "two-sided", f"majority of {k} answers: success = binomial sum"),
        (dp_test_success_bound(k * epsilon), "less", "success <= e^(k eps)/(1+e^(k eps))"),
        (dp_test_success_bound(epsilon), "less", "seed: fresh noise keeps success <= e^eps/(1+e^eps)"),
    )
    results = [
        check_probability(trials, correct, n, p, alternative=alt, alpha=alpha, rng=seed + j, name=name)
        for j, (p, alt, name) in enumerate(claims)
    ]
    return Vote(
        tuple(results[:2]),
        (Test(results[2].name, result=results[2], true_value=exact),),
        exact=exact,
    )


@dataclass(frozen=True)
class OneNoise(Experiment):
    """One noise sample added to every bin: the frequencies of the event ``M_1 - M_0 = -1``."""

    frequencies: tuple[float, float] = (math.nan, math.nan)


def one_noise_vector(epsilon: float, *, n: int, seed: int) -> OneNoise:
    """A vector query needs one noise sample per coordinate.

    Histograms ``(3, 2)`` and ``(3, 3)`` (one record added to bin 1):
    independent Laplace noise per bin keeps every box's log ratio within
    ``epsilon`` (exact, :func:`dpcore.laplace_max_interval_log_ratio`).
    Control: with one sample added to both bins (the seed's reading; ``n``
    releases of each from ``seed``), the event ``M_1 - M_0 = -1`` has
    probability 1 under ``D`` and 0 under ``D'``: ``P_D(S) <= e^eps P_D'(S)``
    fails.
    """
    hist_d, hist_dp = np.array([3.0, 2.0]), np.array([3.0, 3.0])
    gen = dpcore.as_generator(seed)

    def one_noise(h: NDArray[np.float64]) -> NDArray[np.float64]:
        return h + gen.laplace(0.0, 1 / epsilon, n)[:, None]

    diff_d = np.diff(one_noise(hist_d), axis=1).ravel()
    diff_dp = np.diff(one_noise(hist_dp), axis=1).ravel()
    target = hist_d[1] - hist_d[0]
    frac_d = float((np.abs(diff_d - target) < 1e-6).mean())
    frac_dp = float((np.abs(diff_dp - target) < 1e-6).mean())
    per_coord = laplace_max_interval_log_ratio(hist_d, hist_dp, 1 / epsilon, _box_edges_4()[:120])
    return OneNoise(
        (
            Compare(
                "independent noise per bin: max log box ratio <= eps",
                per_coord.log_ratio_max,
                "<=",
                epsilon + 1e-12,
            ),
        ),
        (
            Compare(
                "one sample for all bins: P_D(S) <= e^eps P_D'(S), S = {M_1 - M_0 = -1}",
                frac_d,
                "<=",
                math.exp(epsilon) * frac_dp,
                kind="exact",
            ),
        ),
        frequencies=(frac_d, frac_dp),
    )
