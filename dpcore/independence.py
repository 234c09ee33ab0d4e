r"""Exact tests that a stream of draws is independent, and recorders for the chunked engines.

Every Monte Carlo check of the book assumes independent samples; the chunked
engine of :mod:`dpcore.montecarlo` and the chunk streams of
:func:`dpcore.audit_epsilon` (serial or through an executor) have to deliver
them. A stream reused across chunks, a sampler that orders its output by
value, or pairs drawn antithetically would leave every marginal law intact and
void every confidence level. The tests here look for such dependence with
**exact** null distributions, so their false-alarm probability is exactly
bounded, with no asymptotics.

Let :math:`X_1, \dots, X_n` be i.i.d. from a law symmetric about ``centre``.
Drop the draws equal to the centre. Conditionally on which draws were dropped,
the signs :math:`S_i = \mathrm{sign}(X_i - c)` of the rest are i.i.d. fair
coins, and the magnitudes are exchangeable. Hence:

* **Runs test.** The sign changes :math:`C_i = 1\{S_i \ne S_{i+1}\}` of
  :math:`m` fair coins are :math:`m - 1` i.i.d. fair coins (the map
  :math:`(S_1, \dots, S_m) \mapsto (S_1, C_1, \dots, C_{m-1})` is a bijection
  of :math:`\{\pm1\}^m`), so the number of changes is exactly
  :math:`\mathrm{Binomial}(m - 1, 1/2)`. Serial dependence of the signs moves it.
* **Lag concordance.** For disjoint pairs :math:`(X_i, X_{i+L})` (indices
  :math:`i` with :math:`\lfloor i/L \rfloor` even) whose members are both kept,
  :math:`1\{S_i = S_{i+L}\}` are i.i.d. fair coins. With ``lag`` the chunk size
  this catches a chunk that repeats the stream of the one before it (all
  concordant); with ``lag = 1``, antithetic pairs (all discordant).
* **Halves.** For :math:`h = \lfloor n/2 \rfloor` and the pairs
  :math:`(X_i, X_{i+h})` with :math:`|X_i - c| \ne |X_{i+h} - c|`,
  :math:`1\{|X_i - c| < |X_{i+h} - c|\}` are i.i.d. fair coins (exchangeability);
  output ordered by magnitude, as a rejection sampler that returns the values of
  its first round first would produce, moves the count.

Each count is tested against 1/2 with the two-sided exact Clopper--Pearson
test (:func:`dpcore.probability_result`), at ``alpha / 3`` each, so the three
together reject an independent stream with probability at most ``alpha``
(union bound).

A recorder (:class:`UniformRecorder`) is a sampler or mechanism that draws
uniform integers :math:`U \in \{0, \dots, 2^{53}-1\}`, returns them as floats in
[0, 1), and keeps every chunk it produced: the chunked engines can then be
tested on exactly the draws they made. For its values :math:`2U - 2^{53} + 1`
(odd integers, exact in float64, symmetric about 0, never 0) the tests above
apply; and any two of its :math:`N` draws coincide with probability at most
:math:`\binom{N}{2} 2^{-53}` (union bound over pairs), so a stream repeated
anywhere, across chunks, phases or workers, shows up as repeated values
(:func:`repeated_values`).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_finite_array, check_positive_int, check_probability_open, check_real
from .montecarlo import CheckResult, probability_result

__all__ = [
    "UniformRecorder",
    "independence_tests",
    "repeated_values",
    "repeat_probability",
]

_BITS = 53


def _kept(x: NDArray[np.float64], centre: float) -> NDArray[np.float64]:
    return np.asarray(x[x != centre], dtype=np.float64)


def independence_tests(
    x: ArrayLike, *, lag: int = 1, alpha: float = 1e-6, centre: float = 0.0, name: str = "stream"
) -> tuple[CheckResult, CheckResult, CheckResult]:
    r"""Runs, lag-concordance and halves tests of a sample from a law symmetric about ``centre``.

    See the module docstring for the three statistics and their exact
    :math:`\mathrm{Binomial}(\cdot, 1/2)` null laws. Each test runs at
    ``alpha / 3``; an i.i.d. sample from a law symmetric about ``centre`` fails
    at least one with probability at most ``alpha``.

    Parameters
    ----------
    x : array_like
        The draws in the order they were produced (1-D, finite).
    lag : int
        Lag of the concordance test (>= 1), e.g. the chunk size.
    alpha : float
        Overall false-alarm probability, in (0, 1).
    centre : float
        Centre of symmetry of the law; draws equal to it are dropped.

    Returns
    -------
    (runs, concordance, halves) : tuple of CheckResult

    Raises
    ------
    ValueError
        If ``x`` is not a 1-D array of finite numbers, ``lag`` < 1, ``alpha`` is
        outside (0, 1), or fewer than 2 draws (runs), one pair at lag ``lag``
        (concordance) or one untied pair of halves remain.
    """
    arr = check_finite_array("x", x)
    if arr.ndim != 1:
        raise ValueError("x must be a 1-D array of finite numbers")
    lag = check_positive_int("lag", lag)
    alpha = check_probability_open("alpha", alpha)
    a = alpha / 3
    centre = check_real("centre", centre)
    if not isinstance(name, str):
        raise ValueError(f"name must be a string; got {name!r}")
    with np.errstate(over="ignore"):
        if arr.size and not np.isfinite(np.max(np.abs(arr - centre))):
            raise ValueError("x - centre overflows the double range; centre the draws first")

    signs = np.sign(_kept(arr, centre) - centre)
    if signs.size < 2:
        raise ValueError(f"x must hold at least 2 draws different from centre={centre}")
    changes = int(np.count_nonzero(signs[1:] != signs[:-1]))
    runs = probability_result(changes, signs.size - 1, 0.5, alpha=a, name=f"{name}: sign changes")

    idx = np.arange(arr.size - lag)
    idx = idx[(idx // lag) % 2 == 0]
    first, second = arr[idx] - centre, arr[idx + lag] - centre
    both = (first != 0) & (second != 0)
    if not both.any():
        raise ValueError(f"no pair of draws at lag {lag} different from centre={centre}")
    same = int(np.count_nonzero(np.sign(first[both]) == np.sign(second[both])))
    conc = probability_result(same, int(both.sum()), 0.5, alpha=a, name=f"{name}: sign concordance at lag {lag}")

    h = arr.size // 2
    m1, m2 = np.abs(arr[:h] - centre), np.abs(arr[h : 2 * h] - centre)
    untied = m1 != m2
    if not untied.any():
        raise ValueError("no untied pair of magnitudes between the two halves")
    smaller = int(np.count_nonzero(m1[untied] < m2[untied]))
    halves = probability_result(smaller, int(untied.sum()), 0.5, alpha=a, name=f"{name}: first-half magnitude smaller")
    return runs, conc, halves


def repeated_values(chunks: list[NDArray[np.int64]] | NDArray[np.int64]) -> int:
    """Number of draws whose value already occurred earlier (0 for distinct values)."""
    flat = np.concatenate([np.ravel(c) for c in chunks]) if isinstance(chunks, list) else np.ravel(chunks)
    return int(flat.size - np.unique(flat).size)


def repeat_probability(total: int, bits: int = _BITS) -> float:
    r"""Bound on the chance that ``total`` independent uniform ``bits``-bit integers repeat a value.

    :math:`\binom{N}{2} 2^{-\text{bits}}` (union bound over the pairs).

    Raises
    ------
    ValueError
        If ``total`` or ``bits`` is not a positive integer.
    """
    total = check_positive_int("total", total)
    bits = check_positive_int("bits", bits)
    return min(1.0, total * (total - 1) / 2 * 2.0 ** (-bits))


class UniformRecorder:
    r"""A uniform sampler that keeps every chunk it drew, for testing the chunked engines.

    As a sampler of :mod:`dpcore.montecarlo` (``recorder(gen, size)``) it
    returns :math:`U / 2^{53}` with :math:`U` uniform on
    :math:`\{0, \dots, 2^{53}-1\}`; as a mechanism of
    :func:`dpcore.audit_epsilon` (``recorder.mechanism(data, size, gen)``) it
    returns ``data`` plus that uniform noise. Every call appends its
    :math:`U`'s to :attr:`chunks` (thread-safe, so it also records through a
    ``ThreadPoolExecutor``).

    Attributes
    ----------
    chunks : list of numpy.ndarray
        The integer draws, one array per call, in the order the calls finished.
    """

    def __init__(self) -> None:
        self.chunks: list[NDArray[np.int64]] = []
        self._lock = threading.Lock()

    def _draw(self, gen: np.random.Generator, size: int) -> NDArray[np.int64]:
        u = gen.integers(0, 2**_BITS, size=size, dtype=np.int64)
        with self._lock:
            self.chunks.append(u.copy())
        return u

    def __call__(self, gen: np.random.Generator, size: int) -> NDArray[np.float64]:
        return self._draw(gen, size) / 2.0**_BITS

    def mechanism(self, data: Any, size: int, gen: np.random.Generator) -> NDArray[np.float64]:
        """``data + U / 2**53``: a mechanism for :func:`dpcore.audit_epsilon`."""
        return check_real("data", data) + self._draw(gen, size) / 2.0**_BITS

    @property
    def total(self) -> int:
        """Number of draws recorded."""
        return int(sum(c.size for c in self.chunks))

    def symmetric(self) -> NDArray[np.float64]:
        r"""The draws in recorded order as :math:`2U - 2^{53} + 1`: odd, exact, symmetric about 0."""
        if not self.chunks:
            raise ValueError("nothing recorded yet")
        u = np.concatenate(self.chunks)
        return np.asarray(2 * u - (2**_BITS - 1), dtype=np.float64)

    def __repr__(self) -> str:
        return f"UniformRecorder({len(self.chunks)} chunks, {self.total} draws)"
