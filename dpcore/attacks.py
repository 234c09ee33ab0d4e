r"""Attacks on statistical releases: differencing, and the optimal test between neighbours.

Seed 004's running example is a medical table of five people and the partial
sums :math:`Q_i(D) = \sum_{r \le i} x_r` of their diabetes bits. An attacker
who knows that Chandler is in row 5 learns his bit exactly from
:math:`Q_5 - Q_4` (the *differencing attack*). When the answers are released
through an :math:`\varepsilon`-DP mechanism, no test between the neighbouring
tables :math:`D_1` (Chandler 1) and :math:`D_2` (Chandler 0) -- in particular
not the best one, the likelihood-ratio test of Neyman & Pearson (1933) --
can succeed with probability above

.. math:: \frac{e^\varepsilon}{1 + e^\varepsilon}

when both tables are a priori equally likely (Wasserman & Zhou 2010;
Kairouz, Oh & Viswanath 2015). This module provides the table, the queries,
the attack, the optimal test and its exact and simulated success
probability, and randomized response, the mechanism that attains the bound.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module
from ._validation import (
    RNGLike,
    as_generator,
    check_finite_array,
    check_noise_scale,
    check_positive_finite,
    check_positive_int,
    check_probability_open,
)
from .laplace import laplace_noise
from .privacy_loss import laplace_privacy_loss

integrate = lazy_module("scipy.integrate")
special = lazy_module("scipy.special")

__all__ = [
    "MedicalTable",
    "SEED_004_TABLE",
    "seed_004_neighbours",
    "differencing_attack",
    "dp_test_success_bound",
    "laplace_log_likelihood_ratio",
    "likelihood_ratio_test",
    "laplace_optimal_test_success",
    "optimal_test_success_numeric",
    "attack_trial_sampler",
    "attribute_inference_sampler",
]

Mechanism = Callable[[NDArray[np.float64], np.random.Generator], NDArray[np.float64]]


@dataclass(frozen=True)
class MedicalTable:
    """A table of ``(name, has_diabetes)`` records, in row order (seed 004).

    Parameters
    ----------
    names : sequence of str
        Distinct, non-empty names, one per row.
    diabetes : sequence of int
        The sensitive bit of each row, 0 or 1.

    Raises
    ------
    ValueError
        If the lengths differ, the table is empty, a name is empty or repeated,
        or a bit is not 0 or 1.
    """

    names: tuple[str, ...]
    diabetes: tuple[int, ...]

    def __post_init__(self) -> None:
        for field, seq in (("names", self.names), ("diabetes", self.diabetes)):
            if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence | np.ndarray):
                raise ValueError(f"{field} must be a sequence (one entry per row); got {seq!r}")
        names = tuple(self.names)
        bits = tuple(self.diabetes)
        if len(names) == 0:
            raise ValueError("names must not be empty: a MedicalTable must have at least one row")
        if len(names) != len(bits):
            raise ValueError(f"names and diabetes must have the same length; got {len(names)} and {len(bits)}")
        if any(not isinstance(nm, str) or not nm for nm in names):
            raise ValueError("every name must be a non-empty string")
        if len(set(names)) != len(names):
            raise ValueError("names must be distinct (the attacker identifies a row by name)")
        clean: list[int] = []
        for nm, bit in zip(names, bits, strict=True):
            if isinstance(bit, (bool, np.bool_)) or not isinstance(bit, numbers.Real) or bit not in (0, 1):
                raise ValueError(f"diabetes of {nm!r} must be 0 or 1; got {bit!r}")
            clean.append(int(bit))
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "diabetes", tuple(clean))

    def __len__(self) -> int:
        return len(self.names)

    @property
    def values(self) -> NDArray[np.int64]:
        """The diabetes column as an integer array (row order)."""
        return np.array(self.diabetes, dtype=np.int64)

    def _row(self, param: str, name: object) -> int:
        """1-based row number of ``name``, the argument ``param`` of a public call (named in the error)."""
        if isinstance(name, str) and name in self.names:
            return self.names.index(name) + 1
        shown = repr(name) if len(repr(name)) <= 80 else f"{repr(name)[:77]}..."
        raise ValueError(f"{param} {shown} is not in the table; rows are {list(self.names)}")

    def row_of(self, name: str) -> int:
        """1-based row number of ``name``.

        Raises
        ------
        ValueError
            If ``name`` is not one of the table's names (a string).
        """
        return self._row("name", name)

    def with_value(self, name: str, value: int) -> MedicalTable:
        """The neighbouring table in which ``name``'s bit is replaced by ``value``.

        Raises
        ------
        ValueError
            If ``name`` is not one of the table's names, or ``value`` is not 0 or 1 (an int or a
            float; a bool or a string is refused).
        """
        row = self._row("name", name)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or value not in (0, 1):
            shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:77]}..."
            raise ValueError(f"value must be 0 or 1 (the new diabetes bit of {name!r}); got {shown}")
        bits = list(self.diabetes)
        bits[row - 1] = int(value)
        return MedicalTable(self.names, tuple(bits))

    def partial_sum(self, i: int) -> int:
        r"""Seed 004's query :math:`Q_i = \sum_{r=1}^{i} x_r` (``Q_0 = 0``).

        Raises
        ------
        ValueError
            Unless ``0 <= i <= len(self)``.
        """
        i = check_positive_int("i", i, minimum=0)
        if i > len(self):
            raise ValueError(f"i must be at most the number of rows {len(self)}; got {i}")
        return int(sum(self.diabetes[:i]))

    def partial_sums(self) -> NDArray[np.int64]:
        """All of :math:`Q_1, \\dots, Q_n` as an array."""
        return np.cumsum(self.values)

    def _repr_markdown_(self) -> str:  # pragma: no cover - display only
        rows = "\n".join(
            f"| {i} | {nm} | {b} |" for i, (nm, b) in enumerate(zip(self.names, self.diabetes, strict=True), 1)
        )
        return "| row | name | diabetes |\n|---|---|---|\n" + rows


SEED_004_TABLE = MedicalTable(("Ross", "Monica", "Joey", "Phoebe", "Chandler"), (1, 1, 0, 0, 1))
"""Seed 004's table :math:`D_1` (diabetes 1, 1, 0, 0, 1)."""


def seed_004_neighbours() -> tuple[MedicalTable, MedicalTable]:
    """Seed 004's neighbouring tables ``(D1, D2)``: Chandler's bit is 1 in ``D1`` and 0 in ``D2``.

    Takes no input and raises nothing; ``D2`` differs from ``D1`` in Chandler's row only
    (neighbours under the replace-one relation).
    """
    return SEED_004_TABLE, SEED_004_TABLE.with_value("Chandler", 0)


def differencing_attack(table: MedicalTable, target: str) -> int:
    r"""Recover ``target``'s bit from two innocuous partial sums: :math:`Q_r - Q_{r-1}`.

    ``r`` is the target's row, which the attacker is assumed to know (seed 004).

    Raises
    ------
    ValueError
        If ``table`` is not a :class:`MedicalTable` or ``target`` is not in it.
    """
    if not isinstance(table, MedicalTable):
        raise ValueError(f"table must be a MedicalTable; got {type(table).__name__}")
    r = table._row("target", target)
    return table.partial_sum(r) - table.partial_sum(r - 1)


def dp_test_success_bound(epsilon: float) -> float:
    r"""Largest success probability of any test between two neighbours under :math:`\varepsilon`-DP.

    .. math:: P(\text{success}) \le \frac{e^\varepsilon}{1+e^\varepsilon} = \operatorname{expit}(\varepsilon)

    for equally likely hypotheses (Wasserman & Zhou 2010; Kairouz et al. 2015).
    Computed with :func:`scipy.special.expit`, which does not overflow.

    Raises
    ------
    ValueError
        If ``epsilon`` is not finite and > 0.
    """
    return float(special.expit(check_positive_finite("epsilon", epsilon)))


def _answers_pair(answers_0: ArrayLike, answers_1: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a0 = np.atleast_1d(check_finite_array("answers_0", answers_0)).astype(float)
    a1 = np.atleast_1d(check_finite_array("answers_1", answers_1)).astype(float)
    if a0.ndim != 1 or a0.shape != a1.shape:
        raise ValueError(f"answers_0 and answers_1 must be 1-D of equal length; got {a0.shape} and {a1.shape}")
    return a0, a1


def laplace_log_likelihood_ratio(
    z: ArrayLike, answers_0: ArrayLike, answers_1: ArrayLike, scale: float
) -> NDArray[np.float64]:
    r"""Log-likelihood ratio of a Laplace release under two hypotheses.

    With independent :math:`\mathrm{Lap}(0, b)` noise on each coordinate,

    .. math:: \log\frac{p_0(z)}{p_1(z)} = \frac{1}{b}\sum_{j} \big(|z_j - a_{1,j}| - |z_j - a_{0,j}|\big),

    which is the privacy loss of :func:`dpcore.privacy_loss.laplace_privacy_loss`.

    Parameters
    ----------
    z : array_like
        Released answers, shape ``(k,)`` or ``(n, k)`` (one release per row).
    answers_0, answers_1 : array_like
        The true answers :math:`f(D_0)`, :math:`f(D_1)`, shape ``(k,)``.
    scale : float
        The noise scale :math:`b > 0`.

    Raises
    ------
    ValueError
        On non-finite input, mismatched shapes or a non-positive scale.
    """
    b = check_positive_finite("scale", scale)
    a0, a1 = _answers_pair(answers_0, answers_1)
    zz = check_finite_array("z", z)
    if zz.shape[-1:] != a0.shape:
        raise ValueError(f"z must have last axis of length {a0.size}; got shape {zz.shape}")
    # the same quantity as the privacy loss of the Laplace mechanism
    return np.asarray(laplace_privacy_loss(zz, a0, a1, b), dtype=float)


def likelihood_ratio_test(
    z: ArrayLike, answers_0: ArrayLike, answers_1: ArrayLike, scale: float, rng: RNGLike = None
) -> NDArray[np.bool_]:
    r"""The optimal (Neyman--Pearson / Bayes) test between two equally likely Laplace releases.

    Returns ``True`` (decide :math:`D_0`) where the log-likelihood ratio is
    positive, ``False`` where it is negative, and a fair coin on ties. With
    equal priors this maximises the probability of a correct decision
    (Neyman & Pearson 1933): no other test does better.

    Raises
    ------
    ValueError
        As :func:`laplace_log_likelihood_ratio`.
    """
    llr = np.atleast_1d(laplace_log_likelihood_ratio(z, answers_0, answers_1, scale))
    out = llr > 0
    ties = llr == 0
    if np.any(ties):
        out[ties] = as_generator(rng).random(int(ties.sum())) < 0.5
    return out


def laplace_optimal_test_success(answers_0: ArrayLike, answers_1: ArrayLike, scale: float) -> float:
    r"""Exact success probability of the optimal test between two Laplace releases differing in one coordinate.

    With equal priors the best test succeeds with probability
    :math:`\tfrac12 + \tfrac12\,\mathrm{TV}(P_0, P_1)`; coordinates on which the
    two answers agree have the same law under both hypotheses and do not
    change the total variation, and for one coordinate shifted by
    :math:`\Delta`, :math:`\mathrm{TV}(\mathrm{Lap}(0,b), \mathrm{Lap}(\Delta,b)) = 1 - e^{-|\Delta|/(2b)}`, so

    .. math:: P(\text{success}) = 1 - \tfrac12 e^{-|\Delta|/(2b)} .

    Raises
    ------
    ValueError
        On invalid input, or if the answers differ in more than one
        coordinate (there is no closed form then; use Monte Carlo with
        :func:`attack_trial_sampler`).
    """
    b = check_positive_finite("scale", scale)
    a0, a1 = _answers_pair(answers_0, answers_1)
    differ = np.flatnonzero(a0 != a1)
    if differ.size > 1:
        raise ValueError(
            f"the answers differ in {differ.size} coordinates; the closed form covers at most one "
            f"(use attack_trial_sampler with a Monte Carlo check)"
        )
    with np.errstate(over="ignore"):  # a shift beyond the double range: TV = 1, success 1
        shift = float(np.abs(a0 - a1).sum())
    with np.errstate(over="ignore"):  # shift / (2b) beyond the double range: e^-inf = 0, success 1
        return float(np.clip(0.5 - 0.5 * np.expm1(-(shift / b) / 2.0), 0.5, 1.0))


#: How far from 1 the quadrature of each density may be before optimal_test_success_numeric refuses it.
DENSITY_MASS_TOLERANCE = 1e-6


def optimal_test_success_numeric(
    pdf_0: Callable[[float], float],
    pdf_1: Callable[[float], float],
    breakpoints: Sequence[float] = (),
) -> float:
    r"""Success probability of the optimal test between two densities on the real line, by quadrature.

    .. math:: P(\text{success}) = \tfrac12 \int_{-\infty}^{\infty} \max\{p_0(z), p_1(z)\}\,dz

    (the Bayes risk of equally likely hypotheses; Neyman & Pearson 1933),
    integrated by :func:`scipy.integrate.quad`, split at ``breakpoints``
    (where a density has a kink, e.g. the Laplace locations).

    The answer is only as good as the quadrature's view of the densities: an
    adaptive rule on a half-line far from the mass (``breakpoints=(50,)`` for
    :math:`N(0,1)`) sees a zero integrand and returns ~0. So each density is
    integrated over the same pieces first, and must have mass 1 within
    :data:`DENSITY_MASS_TOLERANCE` (1e-6): this refuses densities that are not
    normalised (zero, doubled) and breakpoints that make the quadrature miss
    the mass (put them where the mass is). The result is then in [1/2, 1].

    Raises
    ------
    ValueError
        If a density is not callable, returns a negative, NaN or infinite
        value or raises an ``OverflowError`` or ``ZeroDivisionError`` where
        the quadrature evaluates it (a breakpoint at 1e308, say), does not
        integrate to 1 within 1e-6 with these breakpoints,
        if ``breakpoints`` are not finite real numbers, or if the quadrature
        does not converge (error estimate above 1e-9).
    """
    for name, pdf in (("pdf_0", pdf_0), ("pdf_1", pdf_1)):
        if not callable(pdf):
            raise ValueError(f"{name} must be a callable density; got {pdf!r}")
    pts = np.atleast_1d(check_finite_array("breakpoints", breakpoints)).ravel()
    edges = [-np.inf, *sorted(float(p) for p in pts), np.inf]

    def density(name: str, pdf: Callable[[float], float]) -> Callable[[float], float]:
        def f(z: float) -> float:
            with np.errstate(all="ignore"):
                try:
                    val = pdf(z)
                except (OverflowError, ZeroDivisionError) as exc:  # the user's density, at a far breakpoint
                    raise ValueError(
                        f"{name}({z!r}) raised {type(exc).__name__} ({exc}): the quadrature evaluates the "
                        f"densities near every one of the breakpoints {pts.tolist()}; place them where the mass "
                        f"is, at points where the densities can be evaluated"
                    ) from None
            try:
                v = float(val)
            except (TypeError, ValueError):
                raise ValueError(f"{name}({z!r}) must be a real number; got {val!r}") from None
            if not (v >= 0.0 and math.isfinite(v)):
                raise ValueError(f"{name}({z!r}) = {v!r}: a density must be finite and >= 0")
            return v

        return f

    f0, f1 = density("pdf_0", pdf_0), density("pdf_1", pdf_1)

    def integral(f: Callable[[float], float]) -> tuple[float, float]:
        total, err = 0.0, 0.0
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            if lo == hi:
                continue
            val, e = integrate.quad(f, lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200)
            total += val
            err += e
        return total, err

    for name, f in (("pdf_0", f0), ("pdf_1", f1)):
        mass, _ = integral(f)
        if not abs(mass - 1.0) <= DENSITY_MASS_TOLERANCE:
            raise ValueError(
                f"{name} integrates to {mass!r} with breakpoints {pts.tolist()}, not 1 within "
                f"{DENSITY_MASS_TOLERANCE:g}: the density is not normalised, or the breakpoints make the "
                f"quadrature miss its mass (place breakpoints where the mass is)"
            )
    total, err = integral(lambda z: max(f0(z), f1(z)))
    if not np.isfinite(total) or err > 1e-9:
        raise ValueError(f"quadrature did not converge (value {total}, error estimate {err})")
    return min(max(0.5 * total, 0.5), 1.0)


def attack_trial_sampler(
    answers_0: ArrayLike,
    answers_1: ArrayLike,
    mechanism: Mechanism,
    *,
    test_scale: float = 1.0,
) -> Callable[[np.random.Generator, int], NDArray[np.float64]]:
    r"""A sampler of attack outcomes, for :func:`dpcore.montecarlo.check_probability`.

    Each trial draws the secret hypothesis :math:`H \in \{0, 1\}` with
    probability 1/2 each, releases ``mechanism(answers_H, rng)``, applies
    :func:`likelihood_ratio_test` (Laplace likelihoods with scale
    ``test_scale``; for Laplace noise of equal scale on every coordinate the
    decision does not depend on the scale) and returns 1.0 if the test guessed
    :math:`H` correctly, else 0.0.

    Parameters
    ----------
    answers_0, answers_1 : array_like
        True answers :math:`f(D_0)`, :math:`f(D_1)`, shape ``(k,)``.
    mechanism : callable
        ``mechanism(values, rng)`` releases a batch: ``values`` has shape
        ``(size, k)``; it returns the noisy array of the same shape.
    test_scale : float
        The noise scale the attacker's likelihoods assume.

    Raises
    ------
    ValueError
        On invalid answers or scale, a ``test_scale`` so small that the log-likelihood
        ratio bound :math:`\|a_0 - a_1\|_1 /` ``test_scale`` overflows the doubles (the
        likelihoods could not be compared), or a mechanism that is not callable (at
        construction), or if the mechanism returns an array of the wrong
        shape (when sampling).
    """
    a0, a1 = _answers_pair(answers_0, answers_1)
    b = check_positive_finite("test_scale", test_scale)
    with np.errstate(over="ignore"):
        bound = float(np.sum(np.abs(a0 - a1)) / b)
    if not math.isfinite(bound):  # refused here, not by the sampler at the first draw
        raise ValueError(
            f"|answers_0 - answers_1|_1 / test_scale overflows the double range (test_scale={b!r}): the "
            "likelihood ratio test could not compare the releases; use a larger test_scale or closer answers"
        )
    if not callable(mechanism):
        raise ValueError(f"mechanism must be callable as mechanism(values, rng); got {mechanism!r}")

    def sampler(rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        secret = rng.random(size) < 0.5  # True: hypothesis 0
        truth = np.where(secret[:, None], a0, a1)
        released = np.asarray(mechanism(truth, rng), dtype=float)
        if released.shape != truth.shape:
            raise ValueError(f"mechanism must return shape {truth.shape}; got {released.shape}")
        guess = likelihood_ratio_test(released, a0, a1, b, rng)
        return np.asarray(guess == secret, dtype=np.float64)

    return sampler


def attribute_inference_sampler(
    others_with: int,
    others_without: int,
    epsilon: float,
    target_probability: float,
) -> Callable[[np.random.Generator, int], NDArray[np.float64]]:
    r"""Attribute inference from a DP histogram: the population-level attack.

    A table holds the target and ``others_with + others_without`` other
    people who share the target's public trait; ``others_with`` of them have
    the sensitive attribute. The target has it with probability
    ``target_probability``. The two counts (with, without) are released with
    the Laplace mechanism at ``epsilon`` (histogram, L1 sensitivity 2 under
    replacement, so scale :math:`2/\varepsilon`). The attacker, who knows
    the target is in the table, guesses "has the attribute" iff the noisy
    "with" count exceeds the noisy "without" count.

    The sampler returns 1.0 for a correct guess. With ``target_probability``
    1/2 this is a test between the two neighbouring tables and succeeds with
    probability at most :math:`e^\varepsilon/(1+e^\varepsilon)`; with
    ``target_probability`` equal to the population rate it succeeds about as
    often as the rate -- DP does not prevent inference from the population.

    Raises
    ------
    ValueError
        If the counts are negative, both zero, ``epsilon`` is not finite and
        > 0, or ``target_probability`` is outside (0, 1).
    """
    w = check_positive_int("others_with", others_with, minimum=0)
    wo = check_positive_int("others_without", others_without, minimum=0)
    if w + wo == 0:
        raise ValueError("there must be at least one other person in the table")
    eps = check_positive_finite("epsilon", epsilon)
    q = check_probability_open("target_probability", target_probability)
    scale = check_noise_scale("the Laplace scale 2/epsilon", 2.0 / eps)

    def sampler(rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        target = rng.random(size) < q
        noisy_with = w + target + laplace_noise(rng, size, scale)
        noisy_without = wo + (~target) + laplace_noise(rng, size, scale)
        guess = noisy_with > noisy_without
        return np.asarray(guess == target, dtype=np.float64)

    return sampler
