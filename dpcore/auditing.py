r"""Empirical privacy auditing: a lower confidence bound on epsilon from samples.

A mechanism :math:`M` is :math:`(\varepsilon, \delta)`-DP between neighbours
:math:`d, d'` only if, for **every** event :math:`E`,

.. math:: P(M(d) \in E) \le e^{\varepsilon} P(M(d') \in E) + \delta

(and the same with :math:`d, d'` swapped). So any event :math:`E` with
:math:`p = P(M(d)\in E)` and :math:`q = P(M(d')\in E)` certifies
:math:`\varepsilon \ge \ln((p - \delta)/q)`. The auditor turns this into a
statistical statement (Ding et al. 2018; Jagielski et al. 2020):

1. **Selection.** A first part of the samples from each side (by default 20 %)
   is counted on a grid of candidate thresholds, fixed from the first
   selection chunk: ``bins`` uniform bins spanning that chunk's range widened
   by half its width on each side, or unit bins centred on the integers when
   the outputs are integers. Every lower tail :math:`\{y < t\}` and upper
   tail :math:`\{y \ge t\}`, in both directions
   (:math:`d` over :math:`d'` and :math:`d'` over :math:`d`), is scored and
   the best event of each of the four (tail, direction) kinds is a
   candidate. The score is the Clopper--Pearson bound the selection counts
   give by themselves, which penalises far-tail events whose few hits would
   make a noisy ratio look large. Candidates whose score is positive are kept
   (or the single best one if none is), so typically :math:`m = 2` events
   (one per tail) go on to the estimation phase.
2. **Estimation.** On the remaining, disjoint samples each kept event
   :math:`E_i` gets an exact Clopper--Pearson lower bound :math:`p^{lo}_i` on
   its probability under the numerator side and an upper bound
   :math:`q^{hi}_i` under the denominator side, each at level
   :math:`a = \alpha / (2m)` where :math:`\alpha = 1 - ` ``confidence`` and
   :math:`m` is the number of kept events (Bonferroni).
3. **Bound.** ``epsilon_lower`` :math:`= \max(0, \max_i \ln((p^{lo}_i - \delta)/q^{hi}_i))`.

Why the bound is valid
----------------------
The kept events are functions of the selection samples only, which are
independent of the estimation samples, so conditionally on the selection the
events are fixed and the estimation counts are exactly binomial. The
Clopper--Pearson bounds satisfy :math:`P(p_i < p^{lo}_i) \le a` and
:math:`P(q_i > q^{hi}_i) \le a` for every true :math:`p_i, q_i` (Clopper &
Pearson 1934). By the union bound over the :math:`2m` one-sided bounds, with
probability at least :math:`1 - 2ma = 1 - \alpha` all of them hold at once; on
that event, for every kept :math:`E_i`,
:math:`\ln((p^{lo}_i-\delta)/q^{hi}_i) \le \ln((p_i-\delta)/q_i) \le \varepsilon`,
so the maximum is :math:`\le \varepsilon` too. Integrating over the selection
gives :math:`P(\text{epsilon\_lower} > \varepsilon) \le \alpha` for every
mechanism that is :math:`(\varepsilon,\delta)`-DP between ``d`` and ``d_prime``.
Nothing about the grid, the scores or the rounding of the bin boundaries
matters (the selection scores events through grid bins, the estimation counts
exactly :math:`\{y < t\}` or :math:`\{y \ge t\}`): all the proof needs is
that the estimated events are fixed before the estimation samples are drawn.

Scale
-----
Samples are generated and counted in chunks of ``chunk_size``; only integer
histograms over the grid are kept (selection), or the counts of the few
kept events (estimation: one comparison per event and sample), so memory is
flat in ``n_samples``. Chunk ``j`` of side ``s`` in phase ``p`` draws from
its own stream, the child
``SeedSequence(entropy, spawn_key=root_key + (p, s, j))`` -- exactly what
``root.spawn(2)[p].spawn(2)[s].spawn(...)[j]`` returns -- so streams are
independent and a chunk's samples do not depend on which process made them.
Integer histograms add exactly, so the result for a given seed is identical
whatever ``executor`` (serial, a process pool, or a Dask cluster through
``dask.distributed.Client.get_executor()``) and however many workers it has;
so the chunks of each phase are grouped into tasks sized for the executor's
workers (whole rounds of equal tasks, ``dpcore._engine.balanced_tasks``),
and at most a few tasks per worker are in flight. What stays serial is the
pilot chunk and the event selection, which ranks the thresholds by
interpolated Clopper--Pearson bounds and scores a few exactly
(``_select_events``).
``benchmarks/results/audit.md`` measures the rate on each executor.

Running on Dask
---------------
Pass ``client.get_executor()`` of a ``dask.distributed.Client`` as
``executor``; the result is the same as on any other executor. What the
speed depends on:

* **The workers' malloc settings.** Dask's nanny starts workers with
  ``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off glibc's adaptive
  mmap threshold: every 512 kB array of a 2^16-sample chunk is then mapped,
  faulted in page by page and unmapped again (about 400,000 page faults and
  as much system time as sampling time in a 2 x 5e7 audit on one worker, which
  ran at 63 M samples/s against 143 M/s on ``ProcessPoolExecutor(1)`` on the
  2-core build machine; 130 M/s with the settings below, and 2 such workers
  200 M/s against 225 M/s on 2 processes). Start the workers with both
  thresholds raised, so that freed chunk arrays are reused (an audit's worker
  holds a few MB, so the memory kept is small)::

      import dask
      from dask.distributed import Client, LocalCluster

      env = "distributed.nanny.pre-spawn-environ."
      tuned = {env + "MALLOC_TRIM_THRESHOLD_": 2**28, env + "MALLOC_MMAP_THRESHOLD_": 2**25}
      with dask.config.set(tuned):
          cluster = LocalCluster(n_workers=4, threads_per_worker=1)
      client = Client(cluster)
      result = audit_epsilon(mechanism, d, d_prime, 10**9, rng=1, executor=client.get_executor())

  For workers started from a shell (``dask worker``), export
  ``MALLOC_TRIM_THRESHOLD_=268435456`` and ``MALLOC_MMAP_THRESHOLD_=33554432``
  first: a variable already in the environment overrides Dask's config (and a
  nanny writes its variables into the environment of the process that hosts
  it, so set the config before the first cluster of a process is made).
* **Threads.** The tasks are sized for the cluster's threads
  (``dpcore._engine.worker_count``); the measurements used
  ``threads_per_worker=1``, one worker process per core.

Each Dask task costs milliseconds of CPU in the scheduler, the worker's event
loop and the client, so an audit on Dask is cut into fewer, larger tasks (up
to ``dpcore._engine.DISTRIBUTED_TASK_CHUNKS`` = 1024 chunks, against 64 on a
process pool; the progress bar advances by larger steps). Scheduler, nannies
and the client's event loop also take CPU of their own: on a machine with as
many workers as cores that time comes out of the workers'.

Limits of the auditor
---------------------
``n_samples <= max_samples`` (default 10^9 per side), ``bins <= max_bins``
(default 65,536), ``chunk_size <= 2**24`` and at most
``max(1024, max_samples // 1024)`` chunks per side are checked before any
sample is drawn; raise ``max_samples`` or ``max_bins`` explicitly to go
further. ``progress`` shows a ``tqdm`` bar on stderr (by default only when
stderr is a terminal).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _engine
from . import representation as _repr
from ._lazy import lazy_module
from ._limits import check_limit, check_limit_value
from ._validation import (
    RNGLike,
    as_generator,
    as_real_array,
    as_seed_sequence,
    check_alpha,
    check_positive_int,
    check_probability_open,
    check_real,
)
from .event_ratios import EventRatioBounds, sample_interval_ratio_bounds
from .montecarlo import clopper_pearson_bounds

special = lazy_module("scipy.special")

__all__ = [
    "AuditEvent",
    "AuditResult",
    "audit_epsilon",
    "audit_threshold_events",
    "ReleaseOutputs",
    "LeakOutputs",
]

Mechanism = Callable[[Any, int, np.random.Generator], NDArray[Any]]
_E = TypeVar("_E")

_SHIFT_63 = np.uint64(63)
_DEFAULT_CHUNK = 1 << 16

#: Default ``max_samples`` of :func:`audit_epsilon`: 10^9 samples per side (about 25 s on one core of the
#: book's build machine, 2 x 10^9 mechanism outputs; ``benchmarks/results/audit.md``).
MAX_SAMPLES = 10**9
#: Default ``max_bins``: the histograms (``bins + 2`` integers, up to ``8 bins`` for integer outputs) stay
#: within a few MB per worker and the selection's Clopper--Pearson bounds (two beta quantiles per distinct
#: tail count, up to ``4 (bins + 1)``) within about a second.
MAX_BINS = 1 << 16
#: Largest ``chunk_size``: a chunk's outputs are held as float64 (8 bytes each) by each worker, so 2^24
#: samples are 128 MB before the mechanism's own temporaries; larger chunks are no faster.
MAX_CHUNK_SIZE = 1 << 24
#: A chunk costs about 30 us of stream set-up (a ``SeedSequence`` and a ``PCG64``), the time of ~1,000
#: samples: at most ``max(CHUNK_COST, max_samples // CHUNK_COST)`` chunks per side.
CHUNK_COST = 1 << 10
#: Default ``max_samples`` of :func:`audit_threshold_events`, which holds its samples in memory.
MAX_THRESHOLD_SAMPLES = 10**7


# --------------------------------------------------------------------------- fast mechanisms


class LeakOutputs:
    r"""Picklable ``mechanism(data, size, rng)``: 0 with probability ``1 - leak``, ``data`` with probability ``leak``.

    The textbook :math:`(0, \delta)`-DP mechanism that publishes its input
    outright with probability :math:`\delta` = ``leak``: on inputs in
    :math:`\{0, 1\}` every event's probability changes by at most ``leak``
    between them, so it is :math:`(0, \text{leak})`-DP, and for no finite
    epsilon is it :math:`(\varepsilon, \delta)`-DP with :math:`\delta < \text{leak}`
    (the event "the output is 1" has probability 0 under input 0). An audit at
    ``delta = leak`` must therefore report 0.

    Raises
    ------
    ValueError
        If ``leak`` is not in (0, 1).
    """

    def __init__(self, leak: float) -> None:
        self.leak = check_probability_open("leak", leak)

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
        return np.where(rng.random(size) < self.leak, float(data), 0.0)

    def __repr__(self) -> str:
        return f"LeakOutputs(leak={self.leak!r})"


class ReleaseOutputs:
    """Adapt a release function ``release(value, **params, rng=rng)`` to ``mechanism(data, size, rng)``.

    ``release`` is called once per chunk on ``numpy.full(size, data)``; a
    vectorised release (such as :func:`dpcore.laplace_mechanism`) then adds
    independent noise per coordinate, i.e. returns ``size`` independent runs
    of the scalar mechanism. Picklable whenever ``release`` is a module-level
    function, so it can be sent to worker processes.

    Examples
    --------
    >>> from dpcore import laplace_mechanism
    >>> mech = ReleaseOutputs(laplace_mechanism, sensitivity=1.0, epsilon=1.0)
    """

    def __init__(self, release: Callable[..., Any], **params: Any) -> None:
        if not callable(release):
            raise ValueError(f"release must be callable; got {release!r}")
        self.release = release
        self.params = params

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]:
        return np.asarray(self.release(np.full(size, data), **self.params, rng=rng))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"ReleaseOutputs({getattr(self.release, '__name__', self.release)}, {args})"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AuditEvent:
    r"""One event kept by the selection phase, with its estimation-phase bound.

    The event is one of four kinds (``kind``); ``tail`` says whether it is
    the "below / not a member" side (``"lower"``) or the "at or above /
    member" side (``"upper"``):

    * threshold: :math:`\{y < t\}` or :math:`\{y \ge t\}`;
    * precision: :math:`y` is not, or is, a multiple of :math:`2^k`;
    * lattice: :math:`y` is off, or on, the lattice;
    * value: :math:`y` equals none, or one, of ``values``.

    (:mod:`dpcore.representation` defines the last three.) :attr:`event`
    says it in words, :meth:`describe` with its counts.

    Attributes
    ----------
    tail : {"lower", "upper"}
        ``"lower"`` is :math:`\{y < t\}`, ``"upper"`` is :math:`\{y \ge t\}`
        for a threshold event (exactly, in the estimation phase; the selection phase scored it through
        grid bins, whose rounded boundaries do not matter for validity); for the other kinds, the table above.
    threshold : float
        The threshold :math:`t` (a grid edge) of a threshold event; the exponent :math:`k` of a
        precision event; the spacing :math:`g` of a lattice event; the smallest listed value of a
        value event.
    numerator : {"d", "d_prime"}
        The side whose probability is bounded from below (:math:`p`); the
        other side's is bounded from above (:math:`q`).
    hits_numerator, hits_denominator : int
        Estimation-phase counts of the event on the two sides.
    p_lower, q_upper : float
        Clopper--Pearson bounds on :math:`p` (lower) and :math:`q` (upper).
    epsilon_lower : float
        :math:`\ln((p^{lo} - \delta)/q^{hi})`, or ``-inf`` if :math:`p^{lo} \le \delta`.
    kind : {"threshold", "precision", "lattice", "value"}
        The family of the event (default ``"threshold"``).
    values : tuple of float
        The lattice's ``(spacing, offset)`` of a lattice event, the listed values of a value
        event, ``()`` otherwise.
    """

    tail: Literal["lower", "upper"]
    threshold: float
    numerator: Literal["d", "d_prime"]
    hits_numerator: int
    hits_denominator: int
    p_lower: float
    q_upper: float
    epsilon_lower: float
    kind: Literal["threshold", "precision", "lattice", "value"] = "threshold"
    values: tuple[float, ...] = ()

    def __str__(self) -> str:
        """The event as the numerator side sees it, e.g. ``M(d') >= 1.032`` or ``M(d): outputs that are not ...``."""
        side = "M(d)" if self.numerator == "d" else "M(d')"
        if self.kind == "threshold":
            return f"{side} {'<' if self.tail == 'lower' else '>='} {self.threshold:.4g}"
        return f"{side}: {self.event}"

    @property
    def event(self) -> str:
        """The event in words, e.g. ``"outputs that are not multiples of 2^-53"`` or ``"outputs below 1.032"``."""
        member = self.tail == "upper"
        if self.kind == "precision":
            return _repr.precision_words(int(self.threshold), member)
        if self.kind == "lattice":
            lattice = _repr.Lattice(*self.values)
            return f"outputs {'on' if member else 'off'} {lattice.words()}"
        if self.kind == "value":
            return _repr.value_words(self.values, member)
        return f"outputs {'below' if self.tail == 'lower' else 'at or above'} {self.threshold:.6g}"

    def describe(self, n: int, d: Any = "d", d_prime: Any = "d'") -> str:
        """The event with its estimation counts, e.g. ``"outputs that are not multiples of 2^-53: 20,676 of
        80,000 on input 0, 0 of 80,000 on input 1"``.

        Parameters
        ----------
        n : int
            The estimation samples per side (:attr:`AuditResult.n_estimation`).
        d, d_prime
            How to name the two inputs: a string is used as it is, anything else as ``input <value>``.
        """
        names = [x if isinstance(x, str) else f"input {x!r}" for x in (d, d_prime)]
        num, den = (names[0], names[1]) if self.numerator == "d" else (names[1], names[0])
        return f"{self.event}: {self.hits_numerator:,} of {n:,} on {num}, {self.hits_denominator:,} of {n:,} on {den}"


@dataclass(frozen=True)
class AuditResult:
    r"""Outcome of :func:`audit_epsilon`.

    Attributes
    ----------
    epsilon_lower : float
        A lower confidence bound on the mechanism's epsilon between ``d`` and
        ``d_prime`` (at the given ``delta``): if the mechanism is
        :math:`(\varepsilon, \delta)`-DP, ``epsilon_lower <= epsilon`` with
        probability at least ``confidence``. Never negative.
    confidence, delta : float
        The confidence level and the delta the bound is for.
    n_samples : int
        Samples drawn per side (``n_selection + n_estimation``).
    n_selection, n_estimation : int
        Per-side sizes of the two disjoint parts.
    events : tuple of AuditEvent
        The events kept by the selection phase (1 to 4 threshold events; with
        ``events="representation"``, at most one per candidate kind); Bonferroni is over these.
    best : AuditEvent
        The event achieving ``epsilon_lower`` (or the best of them if all are <= 0);
        :meth:`explain` says it in words with its counts.
    grid : tuple
        ``(lo, hi, bins)``: the uniform grid of candidate thresholds.
    n_chunks : int
        Total number of chunks (each with its own random stream).
    method : str
        How the bound was obtained, in a sentence.
    event_kinds : tuple of str
        The event families that were candidates: ``("threshold",)``, or with
        ``events="representation"`` also ``"precision"`` and, when the pilot
        outputs call for them, ``"lattice"`` and ``"value"``.
    """

    epsilon_lower: float
    confidence: float
    delta: float
    n_samples: int
    n_selection: int
    n_estimation: int
    events: tuple[AuditEvent, ...]
    best: AuditEvent
    grid: tuple[float, float, int]
    n_chunks: int
    method: str = field(
        default="threshold events chosen on a disjoint selection split; "
        "Clopper-Pearson bounds with Bonferroni over kept events"
    )
    event_kinds: tuple[str, ...] = ("threshold",)

    def __str__(self) -> str:
        return (
            f"epsilon >= {self.epsilon_lower:.4f} with confidence {self.confidence:g} "
            f"(delta={self.delta:g}; {self.n_samples:,} samples per side, "
            f"{self.n_estimation:,} for estimation; best event: {self.best})"
        )

    def explain(self, d: Any = "d", d_prime: Any = "d'") -> str:
        """The best event in words, with its estimation counts and the bound it gives.

        For example ``"outputs that are not multiples of 2^-53: 20,676 of 80,000 on input 0, 0 of 80,000 on
        input 1 (estimation samples): epsilon >= 7.0795 with confidence 1 - 1e-06"``.

        Parameters
        ----------
        d, d_prime
            How to name the two inputs: a string is used as it is, anything else as ``input <value>``.
        """
        level = f"1 - {1 - self.confidence:.3g}" if self.confidence > 0.99 else f"{self.confidence:g}"
        delta = f", delta {self.delta:g}" if self.delta > 0 else ""
        return (
            f"{self.best.describe(self.n_estimation, d, d_prime)} (estimation samples): "
            f"epsilon >= {self.epsilon_lower:.4f} with confidence {level}{delta}"
        )


# --------------------------------------------------------------------------- counting


@dataclass(frozen=True)
class _Grid:
    lo: float
    inv_h: float
    bins: int

    @property
    def edges(self) -> NDArray[np.float64]:
        return self.lo + np.arange(self.bins + 1) / self.inv_h

    @property
    def size(self) -> int:
        return self.bins + 2

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        """Histogram over bins 0..bins+1 (0: below lo, bins+1: at or above the top edge).

        Bin codes are ``clip((x - lo) / h + 1, 0, bins + 1)`` truncated, computed
        in two passes and counted with ``np.bincount``, in blocks of
        :data:`_BLOCK` samples whose buffers stay in the core's cache (with a
        chunk-sized buffer allocated per chunk, a 2^16 chunk took 540 us to
        count on the build machine; in blocks, 160 us). Blocking changes no count.
        """
        out = np.zeros(self.bins + 2, dtype=np.int64)
        block = min(_BLOCK, x.size)
        buf = np.empty(block)
        codes = np.empty(block, dtype=np.intp)
        shift = self.lo * self.inv_h - 1.0
        for s in range(0, x.size, block):
            xs = x[s : s + block]
            b, c = buf[: xs.size], codes[: xs.size]
            np.multiply(xs, self.inv_h, out=b)  # (x - lo) / h + 1, in two passes
            np.subtract(b, shift, out=b)
            np.clip(b, 0.0, self.bins + 1, out=b)
            c[...] = b  # truncation towards zero, as astype
            out += np.bincount(c, minlength=self.bins + 2)
        return out


#: Samples per counting block: 16,384 doubles and codes (256 kB) stay in a core's L2 cache.
_BLOCK = 1 << 14


@dataclass(frozen=True)
class _Thresholds:
    """Counts of ``{x < t}`` for a few fixed thresholds (the estimation phase)."""

    values: tuple[float, ...]

    @property
    def size(self) -> int:
        return len(self.values)

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        mask = np.empty(x.size, dtype=bool)
        return np.array([np.count_nonzero(np.less(x, t, out=mask)) for t in self.values], dtype=np.int64)


def _draw(mechanism: Mechanism, data: Any, size: int, gen: np.random.Generator) -> NDArray[np.float64]:
    return _engine.draw(mechanism, size, gen, data, what="mechanism(data, size, rng)")


def _draw_named(mechanism: Mechanism, data: Any, size: int, gen: np.random.Generator, name: str) -> Any:
    """:func:`_draw`, with a refusal of the data by the mechanism naming the parameter that holds it."""
    try:
        return _draw(mechanism, data, size, gen)
    except ValueError as exc:
        raise ValueError(f"{name} = {data!r} was refused by the mechanism: {exc}") from exc


class _Counter(Protocol):
    """What a phase counts on each chunk: ``size`` integers per chunk, added up over the chunks."""

    @property
    def size(self) -> int: ...

    def counts(self, x: NDArray[np.float64]) -> NDArray[np.int64]: ...


def _count_chunk(
    mechanism: Mechanism, data: Any, counter: _Counter, j: int, gen: np.random.Generator, size: int
) -> NDArray[np.int64]:
    """Generate one chunk of a (phase, side) stream and count it."""
    return counter.counts(_draw(mechanism, data, size, gen))


def _counter_size(counter: _Counter) -> int:
    return counter.size


def _choose_grid(x: NDArray[np.float64], bins: int) -> _Grid:
    """A uniform grid chosen from pilot samples (selection data only)."""
    lo, hi = float(x.min()), float(x.max())
    integer_valued = bool(np.all(x == np.round(x))) and hi - lo < 1e15
    span = hi - lo
    if integer_valued:
        pad = max(2.0, math.ceil(0.5 * span))
        if span + 2 * pad + 1 <= 8 * bins:  # unit bins centred on the integers
            lo_edge = lo - pad - 0.5
            nb = int(span + 2 * pad + 1)
            return _Grid(lo_edge, 1.0, nb)
    if span == 0.0:
        span = max(1.0, abs(lo))
    lo_edge = lo - 0.5 * span
    width = 2.0 * span
    if not (math.isfinite(width) and math.isfinite(lo_edge + width)):  # NaN too (-inf + inf)
        raise ValueError(
            f"the mechanism's outputs on d and d_prime span [{lo!r}, {hi!r}]: the grid of thresholds "
            f"[lo - span/2, hi + span/2] would leave the doubles (supported: outputs within about +-4.4e307); "
            f"audit inputs d and d_prime whose outputs are smaller"
        )
    return _Grid(lo_edge, bins / width, bins)


def _cp_lower(k: ArrayLike, n: int, a: float) -> NDArray[np.float64]:
    """Clopper-Pearson lower bounds at level ``a`` (:func:`dpcore.montecarlo.clopper_pearson_bounds`)."""
    return clopper_pearson_bounds(k, n, a)[0]


def _cp_upper(k: ArrayLike, n: int, a: float) -> NDArray[np.float64]:
    """Clopper-Pearson upper bounds at level ``a`` (:func:`dpcore.montecarlo.clopper_pearson_bounds`)."""
    return clopper_pearson_bounds(k, n, a)[1]


def _log_ratio(p_lo: NDArray[np.float64], q_hi: NDArray[np.float64], delta: float) -> NDArray[np.float64]:
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-320)) - np.log(q_hi), -np.inf)


_KINDS: tuple[tuple[str, str], ...] = (("lower", "d"), ("lower", "d_prime"), ("upper", "d"), ("upper", "d_prime"))


def _tails(h: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Counts of the lower tails (bins 0..j) and upper tails (bins j+1..), for j = 0..bins."""
    c = np.cumsum(h)
    lower = c[:-1]
    upper = c[-1] - lower
    return lower, upper


def audit_epsilon(
    mechanism: Mechanism,
    d: Any,
    d_prime: Any,
    n_samples: int,
    *,
    confidence: float = 0.95,
    rng: RNGLike = None,
    executor: Executor | None = None,
    delta: float = 0.0,
    selection_fraction: float = 0.2,
    bins: int = 4096,
    chunk_size: int = _DEFAULT_CHUNK,
    max_samples: int = MAX_SAMPLES,
    max_bins: int = MAX_BINS,
    progress: bool | None = None,
    events: str = "threshold",
) -> AuditResult:
    r"""Lower confidence bound on a mechanism's epsilon between two neighbours, by sampling.

    See the module docstring for the method and the proof of validity: if the
    mechanism is :math:`(\varepsilon, \delta)`-DP between ``d`` and ``d_prime``
    then ``P(result.epsilon_lower > epsilon) <= 1 - confidence``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, size, rng)`` returns a 1-D array of ``size``
        independent real outputs of the mechanism run on ``data``, drawing its
        randomness from the ``numpy.random.Generator`` ``rng``. To send it to
        other processes it must be picklable (a module-level function,
        :class:`dpcore.LaplaceMechanism`, :class:`ReleaseOutputs`, ...). To audit a
        vector-valued or non-numeric mechanism, post-process it to a real
        statistic first (post-processing cannot increase epsilon, so the bound
        remains a bound for the original mechanism).
    d, d_prime
        The two neighbouring inputs, passed to ``mechanism`` as they are.
    n_samples : int
        Samples per side (>= 2), split into ``selection_fraction`` for choosing
        events and the rest for estimating them.
    confidence : float
        Confidence level of the bound, in (0, 1).
    rng : None, int, SeedSequence or Generator
        Root of the random streams; an int reproduces the result exactly,
        whatever the executor.
    executor : concurrent.futures.Executor, optional
        Where to generate and count the chunks (``None``: in this process).
        A ``ProcessPoolExecutor`` uses several cores; a Dask cluster is used
        through ``dask.distributed.Client.get_executor()``, best with the
        worker settings of "Running on Dask" in this module's documentation
        (with Dask's defaults a worker sampled at less than half the rate of
        a pool process; ``benchmarks/results/audit.md`` has the Dask rows).
    delta : float
        The delta of the :math:`(\varepsilon,\delta)` claim audited, in [0, 1);
        0 audits pure epsilon-DP.
    selection_fraction : float
        Fraction of each side's samples used for selection, in (0, 1).
    bins : int
        Number of candidate thresholds on the uniform grid (>= 2).
    chunk_size : int
        Samples per chunk, from 1 to :data:`MAX_CHUNK_SIZE` = 2^24; memory is
        ``O(chunk_size + bins)`` per worker. Part of the definition of the
        random streams: a different ``chunk_size`` gives different (equally
        valid) samples. At most ``max(1024, max_samples // 1024)`` chunks per
        side (a chunk's stream set-up costs about as much as 1,000 samples).
    max_samples : int
        Refuse ``n_samples`` above this (default :data:`MAX_SAMPLES` = 10^9
        per side, about 25 s on one core of the book's build machine; the time
        is linear in ``n_samples``). Raise it explicitly to audit more.
    max_bins : int
        Refuse ``bins`` above this (default :data:`MAX_BINS` = 65,536):
        memory per worker and the selection's work grow linearly in ``bins``.
    progress : bool or None
        Show a progress bar (``tqdm``, on stderr), advanced as each task of
        chunks finishes. ``None`` (default): only when stderr is a terminal,
        and only once the audit has run for a second. Never changes the result.
    events : {"threshold", "representation"}
        The candidate events. ``"threshold"`` (default): the tails
        :math:`\{y < t\}`, :math:`\{y \ge t\}` of the grid, which see how the
        *value* is distributed, as for a mechanism over the reals.
        ``"representation"``: also events over how the float outputs are
        represented (:mod:`dpcore.representation`): "not a multiple of
        :math:`2^k`" for every :math:`k` (the output's last bits, Mironov 2012;
        Haney et al. 2022), membership of a lattice fitted to one side's pilot
        outputs, and sets of exact values when the outputs take at most 64
        distinct values. These catch floating-point implementations whose
        set of possible outputs depends on the input (diffprivlib 0.6.6's
        Laplace: about 20 % of the outputs on input 0 are not multiples of
        :math:`2^{-53}`, none on input 1), which thresholds cannot. The
        bound's validity is unchanged (the events are still fixed by the
        selection samples alone, and Bonferroni is over the events kept);
        the selection scores up to 8 + 4 lattices + 2 kinds instead of 4, and
        counting costs a valuation per sample (about twice the counting time
        of thresholds alone). Not the default: for a mechanism computed in
        floats, even a correct textbook one, it audits the implementation
        rather than the mathematical mechanism, and results for a given seed
        differ from a threshold audit's.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        If ``n_samples < 2``, ``confidence`` or ``selection_fraction`` is not in
        (0, 1), ``delta`` is not in [0, 1), ``bins`` or ``chunk_size`` is not a
        positive integer, ``rng`` is of a wrong type, or the mechanism returns
        an array of the wrong shape, non-numbers, NaN or infinity; if
        ``n_samples > max_samples``, ``bins > max_bins``, ``chunk_size > 2**24``
        or the chunks per side exceed ``max(1024, max_samples // 1024)`` (all checked
        before any sample is drawn); or if the pilot outputs on ``d`` and
        ``d_prime`` are so far apart or so large (beyond about +-4.4e307:
        ``d = 1e308`` with a Laplace mechanism, say) that the grid of
        thresholds, half their span beyond each end, leaves the doubles; or if
        ``events`` is not ``"threshold"`` or ``"representation"``.
    """
    n_samples = check_positive_int("n_samples", n_samples, minimum=2)
    confidence = check_probability_open("confidence", confidence)
    selection_fraction = check_probability_open("selection_fraction", selection_fraction)
    bins = check_positive_int("bins", bins, minimum=2)
    chunk_size = check_positive_int("chunk_size", chunk_size)
    max_samples = check_limit_value("max_samples", max_samples)
    max_bins = check_limit_value("max_bins", max_bins)
    check_limit("n_samples", n_samples, "max_samples", max_samples, "the audit's time is linear in n_samples")
    check_limit("bins", bins, "max_bins", max_bins, "memory and selection time are linear in bins")
    if chunk_size > MAX_CHUNK_SIZE:
        raise ValueError(
            f"chunk_size = {chunk_size:,} exceeds {MAX_CHUNK_SIZE:,} (2**24): each worker would hold "
            f"{8 * chunk_size / 2**20:,.0f} MB of outputs per chunk, and larger chunks are no faster"
        )
    n_chunks = -(-n_samples // chunk_size) + 1
    max_chunks = max(CHUNK_COST, max_samples // CHUNK_COST)
    if n_chunks > max_chunks:
        raise ValueError(
            f"chunk_size = {chunk_size} makes about {n_chunks:,} chunks per side for n_samples = {n_samples:,} "
            f"(> max(1024, max_samples // {CHUNK_COST}) = {max_chunks:,}; each chunk's stream set-up costs "
            f"about as much as {CHUNK_COST} samples): use a larger chunk_size or raise max_samples"
        )
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True, False or None; got {progress!r}")
    progress = None if progress is None else bool(progress)  # numpy.bool_ too
    if not isinstance(events, str) or events not in EVENT_MODES:
        raise ValueError(f"events must be 'threshold' or 'representation'; got {events!r}")
    delta_f = check_real("delta", delta)
    if not (0.0 <= delta_f < 1.0):
        raise ValueError(f"delta must lie in [0, 1); got {delta}")
    if not callable(mechanism):
        raise ValueError(f"mechanism must be callable as mechanism(data, size, rng); got {mechanism!r}")
    alpha = 1.0 - confidence
    n_sel = min(n_samples - 1, max(1, int(n_samples * selection_fraction)))
    n_est = n_samples - n_sel
    sel_sizes = _engine.chunk_sizes(n_sel, chunk_size)
    est_sizes = _engine.chunk_sizes(n_est, chunk_size)
    with _progress_bar(progress, 2 * n_samples) as advance:
        streams = _Streams(mechanism, (d, d_prime), as_seed_sequence(rng), executor, advance)

        # Selection phase (phase 0). Pilot: chunk 0 of each side fixes the grid; it is counted too.
        pilot = [
            _draw_named(mechanism, streams.datas[side], sel_sizes[0], streams.chunk(0, side, 0), ("d", "d_prime")[side])
            for side in (0, 1)
        ]
        plan = _Plan.from_pilot(pilot, bins, events)
        pilot_counts = [plan.selection_counter.counts(p) for p in pilot]
        del pilot
        advance(2 * sel_sizes[0])
        sel = streams.run(0, sel_sizes, skip_first=True, counter=plan.selection_counter)
        sel = [sel[s] + pilot_counts[s] for s in (0, 1)]
        kept = plan.select(sel, n_sel, alpha, delta_f)
        a = alpha / (2 * len(kept))

        # Estimation phase (phase 1): only the kept events are counted (thresholds as {y < t}).
        counter, where = plan.estimation_counter(kept)
        est = streams.run(1, est_sizes, skip_first=False, counter=counter)
    bounded = [
        plan.bound(ev, [int(est[0][i]), int(est[1][i])], n_est, a, delta_f) for ev, i in zip(kept, where, strict=True)
    ]
    best = max(bounded, key=lambda e: e.epsilon_lower)
    return AuditResult(
        epsilon_lower=max(0.0, best.epsilon_lower),
        confidence=confidence,
        delta=delta_f,
        n_samples=n_samples,
        n_selection=n_sel,
        n_estimation=n_est,
        events=tuple(bounded),
        best=best,
        grid=(float(plan.edges[0]), float(plan.edges[-1]), plan.grid.bins),
        n_chunks=2 * (len(sel_sizes) + len(est_sizes)),
        method=plan.method,
        event_kinds=plan.kinds,
    )


@contextmanager
def _progress_bar(progress: bool | None, total: int) -> Iterator[Callable[[int], None]]:
    """``advance(samples)`` of a tqdm bar on stderr (a no-op when off); see ``progress`` in :func:`audit_epsilon`."""
    show = _stderr_is_terminal() if progress is None else progress
    if not show:
        yield _no_progress
        return
    from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs pinned (types-tqdm is not a dependency)

    # auto mode waits a second before drawing, so that short audits print nothing
    bar = tqdm(total=total, unit="sample", unit_scale=True, file=sys.stderr, delay=1.0 if progress is None else 0.0)
    try:
        yield bar.update
    finally:
        bar.close()


def _no_progress(samples: int) -> None:
    """The ``advance`` of a disabled progress bar."""


def _stderr_is_terminal() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


@dataclass(frozen=True)
class _Streams:
    """The audit's four streams, ``root.spawn(2)[phase].spawn(2)[side]``, counted chunk-wise on ``executor``."""

    mechanism: Mechanism
    datas: tuple[Any, Any]
    root: np.random.SeedSequence
    executor: Executor | None
    advance: Callable[[int], None]

    def stream(self, phase: int, side: int) -> np.random.SeedSequence:
        return _engine.child(self.root, phase, side)

    def chunk(self, phase: int, side: int, j: int) -> np.random.Generator:
        return _engine.chunk_rng(self.stream(phase, side), j)

    def run(self, phase: int, sizes: Sequence[int], skip_first: bool, counter: _Counter) -> list[NDArray[np.int64]]:
        """Counts of ``counter`` over every chunk of ``phase`` on both sides (chunk 0 skipped if ``skip_first``).

        Integer counts add exactly, so the chunks are grouped in tasks sized
        for the executor's workers (``dpcore._engine.balanced_tasks``; up to
        ``dpcore._engine.max_task_chunks`` chunks a task, more on Dask)
        without changing the result.
        """
        start = 1 if skip_first else 0
        if start >= len(sizes):
            return [np.zeros(_counter_size(counter), dtype=np.int64) for _ in (0, 1)]
        streams = [
            (partial(_count_chunk, self.mechanism, self.datas[side], counter), self.stream(phase, side))
            for side in (0, 1)
        ]
        if self.executor is None:  # one chunk a task: no cost in this process, and the progress bar moves
            tasks = len(sizes) - start
        else:
            tasks = _engine.balanced_tasks(
                len(sizes) - start, 2, _engine.worker_count(self.executor), _engine.max_task_chunks(self.executor)
            )
        totals = _engine.fold_streams(
            streams, np.add, sizes, executor=self.executor, start=start, tasks=tasks, on_task=self.advance
        )
        return [np.asarray(t, dtype=np.int64) for t in totals]


class _Bounds:
    """Clopper--Pearson bounds of one side's selection counts, computed on demand, each count at most once.

    ``lower(k)`` and ``upper(k)`` are the elements of
    :func:`dpcore.montecarlo.clopper_pearson_bounds` ``(k, n, a)``, the same beta
    quantiles (``scipy.special.betaincinv`` on the same float arguments,
    elementwise), but each only when asked for: a side's counts need their
    lower bounds as a numerator and their upper bounds as a denominator, rarely both.
    """

    def __init__(self, n: int, a: float) -> None:
        self.n, self.a = n, a
        self.known: tuple[dict[int, float], dict[int, float]] = ({}, {})

    def _get(self, which: int, counts: NDArray[np.int64]) -> NDArray[np.float64]:
        table = self.known[which]
        new = [k for k in np.unique(counts).tolist() if k not in table]
        if new:
            k = np.array(new, dtype=float)
            n = self.n
            if which == 0:  # lower bound: 0 at k = 0
                inside = k > 0
                val = np.zeros(k.shape)
                val[inside] = special.betaincinv(k[inside], n - k[inside] + 1, self.a)
            else:  # upper bound: 1 at k = n
                inside = k < n
                val = np.ones(k.shape)
                val[inside] = special.betaincinv(k[inside] + 1, n - k[inside], 1 - self.a)
            table.update(zip(new, (float(v) for v in val), strict=True))
        return np.array([table[k] for k in counts.tolist()], dtype=float)

    def lower(self, counts: NDArray[np.int64]) -> NDArray[np.float64]:
        return self._get(0, counts)

    def upper(self, counts: NDArray[np.int64]) -> NDArray[np.float64]:
        return self._get(1, counts)

    @cached_property
    def _anchors(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(log anchor, log lower bound there, log upper bound at anchor - 1) for :meth:`screen`, computed once."""
        grid = np.unique(np.rint(np.geomspace(1.0, self.n, _ANCHORS)).astype(np.int64))  # 1 .. n
        return np.log(grid), np.log(self.lower(grid)), np.log(self.upper(grid - 1))  # upper: counts 0 .. n - 1

    def screen(self, which: int, counts: NDArray[np.int64]) -> NDArray[np.float64]:
        """Approximate ``lower`` (``which`` 0) or ``upper`` (1) bounds, to rank events: interpolated.

        The exact bounds at :data:`_ANCHORS` counts spaced geometrically from 1 to ``n`` (every count up
        to a few dozen is an anchor), interpolated linearly in (log count, log bound): the lower bound in
        ``k``, 0 at ``k = 0``; the upper bound in ``k + 1``, 1 at ``k = n``. Smooth in log count, so the
        interpolation is within about 1e-4 of the logarithm of the exact bound (measured in the tests).
        The anchors' bounds are computed once per instance (:attr:`_anchors`).
        """
        log_grid, log_lower, log_upper = self._anchors
        k = np.asarray(counts, dtype=np.int64)
        if which == 0:
            out = np.zeros(k.shape)
            inside = k > 0
            out[inside] = np.exp(np.interp(np.log(k[inside]), log_grid, log_lower))
        else:
            out = np.ones(k.shape)
            inside = k < self.n
            out[inside] = np.exp(np.interp(np.log(k[inside] + 1.0), log_grid, log_upper))
        return out


#: Exact counts of :meth:`_Bounds.screen`'s interpolation, and the thresholds per kind whose exact
#: Clopper--Pearson score :func:`_select_events` computes after ranking them all by the screen.
_ANCHORS, _SCREEN = 128, 8


def _select_events(sel: list[NDArray[np.int64]], n_sel: int, alpha: float, delta: float) -> list[tuple[str, str, int]]:
    """The events to estimate: ``(tail, numerator, grid index)``, chosen on the selection counts only.

    Every tail event in both directions is scored by the Clopper--Pearson
    bound its selection counts give on their own, at the Bonferroni level for
    the m = 4 kinds (scoring with counts scaled up to the estimation size would
    favour far-tail events whose few hits are noise); the kinds whose best
    event already certifies epsilon > 0 are kept (at least the single best
    one): fewer events, a milder correction, fewer comparisons per sample.

    The selection is the serial part of a parallel audit, which no worker
    can share, and beta quantiles at 10^7 selection samples cost ~5 us each:
    scoring all 4 x 2 x 4,097 thresholds took 0.19 s, and a branch and bound
    that found the exact maximum still needed ~2,700 of them on a Laplace
    audit (its scores form a plateau), 22 ms, enough to cap a 16-worker audit
    near 70 % efficiency in the model of ``benchmarks/results/audit.md``. So
    every threshold is ranked by interpolated bounds (:meth:`_Bounds.screen`,
    128 exact quantiles a bound), and the :data:`_SCREEN` best of each kind
    get their exact score; the best of those is the kind's candidate (the
    smallest index among equal scores). If the screen's scores are within
    ``e`` of the exact ones, the candidate's exact score is within ``2 e`` of
    the exact maximum (``tests/test_auditing.py`` measures both). Validity
    does not depend on how the events are chosen, only on their being
    functions of the selection samples.
    """
    a = alpha / (2 * len(_KINDS))
    bounds = _Bounds(n_sel, a)  # both sides have n_sel samples: one table of bounds
    return _keep(_threshold_candidates(sel, bounds, delta))


def _threshold_candidates(
    sel: list[NDArray[np.int64]], bounds: _Bounds, delta: float
) -> list[tuple[float, tuple[str, str, int]]]:
    """The best threshold event of each of the 4 kinds and its selection score (see :func:`_select_events`)."""
    tails = [_tails(h) for h in sel]  # [side][tail] -> counts per threshold index
    candidates: list[tuple[float, tuple[str, str, int]]] = []
    for tail, numerator in _KINDS:
        ti = 0 if tail == "lower" else 1
        s = 0 if numerator == "d" else 1
        k, k_den = tails[s][ti], tails[1 - s][ti]
        screen = _log_ratio(bounds.screen(0, k), bounds.screen(1, k_den), delta)
        top = np.sort(np.argsort(-screen, kind="stable")[:_SCREEN])
        exact = _log_ratio(bounds.lower(k[top]), bounds.upper(k_den[top]), delta)
        i = int(np.argmax(exact))  # the first of equal scores: the smallest index
        candidates.append((float(exact[i]), (tail, numerator, int(top[i]))))
    return candidates


def _keep(candidates: Sequence[tuple[float, _E]]) -> list[_E]:
    """The candidates whose selection score is positive, or the single best one if none is."""
    return [ev for sc, ev in candidates if sc > 0] or [max(candidates, key=lambda c: c[0])[1]]


def _select_events_full(
    sel: list[NDArray[np.int64]], n_sel: int, alpha: float, delta: float
) -> list[tuple[str, str, int]]:
    """Every threshold scored by its exact Clopper--Pearson bounds: the reference :func:`_select_events` is
    compared with (tests and ``benchmarks/bench_audit.py``)."""
    a = alpha / (2 * len(_KINDS))
    sel_tails = [_tails(h) for h in sel]
    candidates: list[tuple[float, tuple[str, str, int]]] = []
    for tail, numerator in _KINDS:
        ti = 0 if tail == "lower" else 1
        s = 0 if numerator == "d" else 1
        score = _log_ratio(_cp_lower(sel_tails[s][ti], n_sel, a), _cp_upper(sel_tails[1 - s][ti], n_sel, a), delta)
        j = int(np.argmax(score))
        candidates.append((float(score[j]), (tail, numerator, j)))
    return _keep(candidates)


# --------------------------------------------------------------------------- the events of an audit

EventsMode = Literal["threshold", "representation"]
#: The ``events`` accepted by :func:`audit_epsilon`.
EVENT_MODES: tuple[str, ...] = ("threshold", "representation")


@dataclass(frozen=True)
class _Spec:
    """A kept event before estimation: its kind, tail, numerator side and what fixes it.

    ``key`` is the grid index (threshold), the exponent k (precision), the
    :class:`dpcore.representation.Lattice` (lattice) or the tuple of listed values (value).
    """

    kind: str
    tail: str
    numerator: str
    key: Any


@dataclass(frozen=True)
class _Plan:
    """The candidate events of one audit, fixed from the pilot chunks (selection data only).

    Threshold mode counts the grid alone and selects with :func:`_select_events`,
    exactly as before representation events existed. Representation mode counts,
    in the same pass, the grid, the valuation histogram
    (:class:`dpcore.representation.ValuationHistogram`), membership of the
    lattices fitted to each side's pilot and, for few distinct pilot values, the
    value histogram; :meth:`select` scores every kind on the selection counts.
    """

    grid: _Grid
    representation: bool
    lattices: tuple[_repr.Lattice, ...] = ()
    values: tuple[float, ...] | None = None

    @classmethod
    def from_pilot(cls, pilot: Sequence[NDArray[np.float64]], bins: int, events: str) -> _Plan:
        grid = _choose_grid(np.concatenate(pilot), bins)
        if events == "threshold":
            return cls(grid, False)
        lattices: list[_repr.Lattice] = []
        for p in pilot:
            lat = _repr.fit_lattice(p)
            if lat is not None and not any(_same_lattice(lat, other) for other in lattices):
                lattices.append(lat)
        return cls(grid, True, tuple(lattices), _repr.value_table(pilot))

    @cached_property
    def edges(self) -> NDArray[np.float64]:
        return self.grid.edges

    @property
    def kinds(self) -> tuple[str, ...]:
        if not self.representation:
            return ("threshold",)
        return ("threshold", "precision") + ("lattice",) * bool(self.lattices) + ("value",) * (self.values is not None)

    @property
    def method(self) -> str:
        if not self.representation:
            return AuditResult.method
        return (
            f"{', '.join(self.kinds)} events chosen on a disjoint selection split; "
            "Clopper-Pearson bounds with Bonferroni over kept events"
        )

    @property
    def n_kinds(self) -> int:
        """Candidate kinds scored in selection: 4 threshold, 4 precision, 4 per lattice, 2 value."""
        return 8 + 4 * len(self.lattices) + 2 * (self.values is not None)

    @cached_property
    def selection_counter(self) -> _Counter:
        if not self.representation:
            return self.grid
        parts: list[Any] = [self.grid, _repr.ValuationHistogram()]
        if self.lattices:
            parts.append(_repr.LatticeCounts(self.lattices))
        if self.values is not None:
            parts.append(_repr.ValueHistogram(self.values))
        return _repr.Concatenated(tuple(parts))

    def select(self, sel: list[NDArray[np.int64]], n_sel: int, alpha: float, delta: float) -> list[_Spec]:
        """The events to estimate, chosen on the selection counts only (see the module docstring)."""
        if not self.representation:
            return [_Spec("threshold", t, m, j) for t, m, j in _select_events(sel, n_sel, alpha, delta)]
        counter = self.selection_counter
        assert isinstance(counter, _repr.Concatenated)
        cuts = counter.offsets()[1:]
        parts = [np.split(h, cuts) for h in sel]  # [side][part]
        bounds = _Bounds(n_sel, alpha / (2 * self.n_kinds))
        cands: list[tuple[float, _Spec]] = [
            (sc, _Spec("threshold", t, m, j))
            for sc, (t, m, j) in _threshold_candidates([p[0] for p in parts], bounds, delta)
        ]
        cands += _precision_candidates([p[1] for p in parts], n_sel, bounds, delta)
        if self.lattices:
            cands += _lattice_candidates(self.lattices, [p[2] for p in parts], n_sel, bounds, delta)
        if self.values is not None:
            cands += _value_candidates(self.values, [p[-1] for p in parts], bounds, delta)
        return _keep(cands)

    def estimation_counter(self, kept: Sequence[_Spec]) -> tuple[_Counter, list[int]]:
        """What the estimation phase counts for ``kept``, and where each event's base count is.

        The base count of an event is that of :math:`\\{y < t\\}` (threshold), "a multiple of
        :math:`2^k`" (precision), "on the lattice" (lattice) or "one of the values" (value).
        """
        edges = self.edges
        keys: dict[str, list[Any]] = {"threshold": [], "precision": [], "lattice": [], "value": []}
        for ev in kept:
            key = float(edges[ev.key]) if ev.kind == "threshold" else ev.key
            if key not in keys[ev.kind]:
                keys[ev.kind].append(key)
        factories: dict[str, Callable[[tuple[Any, ...]], Any]] = {
            "threshold": _Thresholds,
            "precision": _repr.MultipleCounts,
            "lattice": _repr.LatticeCounts,
            "value": _repr.ValueSetCounts,
        }
        parts: list[Any] = []
        start: dict[str, int] = {}
        at = 0
        for kind, found in keys.items():
            if found:
                if kind in ("threshold", "precision"):
                    found.sort()
                start[kind] = at
                parts.append(factories[kind](tuple(found)))
                at += len(found)
        where = []
        for ev in kept:
            key = float(edges[ev.key]) if ev.kind == "threshold" else ev.key
            where.append(start[ev.kind] + keys[ev.kind].index(key))
        counter: _Counter = parts[0] if len(parts) == 1 else _repr.Concatenated(tuple(parts))
        return counter, where

    def bound(self, ev: _Spec, base: list[int], n_est: int, a: float, delta: float) -> AuditEvent:
        """The estimation-phase Clopper--Pearson bounds (each at level ``a``) of one kept event."""
        num_side = 0 if ev.numerator == "d" else 1
        counts = (base[num_side], base[1 - num_side])
        direct = "lower" if ev.kind == "threshold" else "upper"  # the tail whose count is the base count
        h_p, h_q = counts if ev.tail == direct else (n_est - counts[0], n_est - counts[1])
        p_lo = float(_cp_lower(np.array([h_p]), n_est, a)[0])
        q_hi = float(_cp_upper(np.array([h_q]), n_est, a)[0])
        eps = float(_log_ratio(np.array([p_lo]), np.array([q_hi]), delta)[0])
        values: tuple[float, ...] = ()
        if ev.kind == "threshold":
            threshold = float(self.edges[ev.key])
        elif ev.kind == "precision":
            threshold = float(ev.key)
        elif ev.kind == "lattice":
            threshold, values = ev.key.spacing, (ev.key.spacing, ev.key.offset)
        else:
            values = tuple(ev.key)
            threshold = min(values)
        return AuditEvent(ev.tail, threshold, ev.numerator, h_p, h_q, p_lo, q_hi, eps, ev.kind, values)  # type: ignore[arg-type]


def _same_lattice(a: _repr.Lattice, b: _repr.Lattice) -> bool:
    """Whether two fitted lattices are the same set (spacings within 1e-9, offsets congruent)."""
    if abs(a.spacing - b.spacing) > 1e-9 * max(a.spacing, b.spacing):
        return False
    return bool(a.contains(np.array([b.offset]))[0])


def _precision_candidates(
    hist: list[NDArray[np.int64]], n_sel: int, bounds: _Bounds, delta: float
) -> list[tuple[float, _Spec]]:
    """The best exponent k of each (tail, numerator) kind of precision event, scored exactly.

    ``hist[s]`` is side ``s``'s valuation histogram; its cumulative sums give
    :math:`\\#\\{\\nu < k\\}` for every k from -1073 to 1024. Counts repeat a lot
    (most exponents are never a valuation), so every k gets its exact
    Clopper--Pearson score at the cost of the distinct counts only. Among
    equal scores the largest k is taken: the coarsest power of two, which
    names the other side's grid (a side snapped to :math:`2^{-20}\\mathbb{Z}`
    gives "not a multiple of :math:`2^{-20}`" rather than of :math:`2^{-40}`).
    """
    below = [np.cumsum(h)[:-1] for h in hist]  # index j: #{nu <= j + VALUATION_MIN} = #{nu < j + VALUATION_MIN + 1}
    out: list[tuple[float, _Spec]] = []
    for tail, numerator in _KINDS:
        s = 0 if numerator == "d" else 1
        cnt = below if tail == "lower" else [n_sel - b for b in below]
        score = _log_ratio(bounds.lower(cnt[s]), bounds.upper(cnt[1 - s]), delta)
        j = score.size - 1 - int(np.argmax(score[::-1]))  # the last of equal scores: the largest k
        out.append((float(score[j]), _Spec("precision", tail, numerator, j + _repr.VALUATION_MIN + 1)))
    return out


def _lattice_candidates(
    lattices: Sequence[_repr.Lattice], on: list[NDArray[np.int64]], n_sel: int, bounds: _Bounds, delta: float
) -> list[tuple[float, _Spec]]:
    """On and off each lattice, with either side as numerator: 4 events per lattice, scored exactly."""
    out: list[tuple[float, _Spec]] = []
    for i, lattice in enumerate(lattices):
        for tail, numerator in _KINDS:
            s = 0 if numerator == "d" else 1
            cnt = [int(on[side][i]) if tail == "upper" else n_sel - int(on[side][i]) for side in (0, 1)]
            score = _log_ratio(bounds.lower(np.array([cnt[s]])), bounds.upper(np.array([cnt[1 - s]])), delta)
            out.append((float(score[0]), _Spec("lattice", tail, numerator, lattice)))
    return out


def _value_candidates(
    values: tuple[float, ...], hist: list[NDArray[np.int64]], bounds: _Bounds, delta: float
) -> list[tuple[float, _Spec]]:
    """For each numerator side, the best set of values grown in decreasing order of the selection's ratio.

    ``hist[s]`` counts each pilot value and, last, any other value. The values
    are ordered by :math:`(k_s + 1/2)/(k_{s'} + 1/2)`; every proper prefix is
    scored exactly (the Neyman--Pearson sets of a discrete output) and the
    best one (the shortest among equal scores) is the candidate. A set that
    contains "any other value" is kept as its complement, "none of ...".
    """
    out: list[tuple[float, _Spec]] = []
    other = len(values)
    for numerator in ("d", "d_prime"):
        s = 0 if numerator == "d" else 1
        ratio = (hist[s] + 0.5) / (hist[1 - s] + 0.5)
        order = np.argsort(-ratio, kind="stable")
        k_num = np.cumsum(hist[s][order])[:-1]
        k_den = np.cumsum(hist[1 - s][order])[:-1]
        score = _log_ratio(bounds.lower(k_num), bounds.upper(k_den), delta)
        i = int(np.argmax(score))
        members = set(order[: i + 1].tolist())
        if other in members:
            listed, tail = tuple(values[v] for v in range(other) if v not in members), "lower"
        else:
            listed, tail = tuple(values[v] for v in sorted(members)), "upper"
        out.append((float(score[i]), _Spec("value", tail, numerator, listed)))
    return out


def audit_threshold_events(
    mechanism: Mechanism,
    d: Any,
    d_prime: Any,
    n_samples: int,
    thresholds: ArrayLike,
    *,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    max_samples: int = MAX_THRESHOLD_SAMPLES,
) -> EventRatioBounds:
    r"""Event-ratio bounds for threshold events fixed in advance: no selection, a computable power.

    Draws ``n_samples`` outputs of the (scalar-output) ``mechanism`` on ``d``
    and on ``d_prime`` and bounds the ratios of the :math:`2m` events
    :math:`\{y \le t_k\}` and :math:`\{y > t_k\}` with
    :func:`dpcore.event_ratios.event_ratio_bounds` (Clopper--Pearson, union
    bound, overall false-alarm probability ``alpha``). Unlike
    :func:`audit_epsilon`, which chooses its events on half of the samples
    (more power, no formula for it), the events here are fixed, so the chance
    that ``.check(epsilon, delta=...)`` misses a violation on any one of them is
    bounded exactly by :func:`dpcore.event_ratios.event_detection_miss`.

    The ``n_samples`` outputs of each side are held in memory at once (and
    sorted): 16 bytes per sample and side. ``max_samples`` (default
    :data:`MAX_THRESHOLD_SAMPLES` = 10^7, 320 MB at most) refuses more before
    anything is drawn; raise it explicitly, or use :func:`audit_epsilon`, whose
    memory is flat in the sample count.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, size, rng)`` returning ``size`` finite real outputs (as :func:`audit_epsilon`).
    d, d_prime
        The two neighbouring inputs, passed to ``mechanism`` as they are (it may refuse them).
    n_samples : int
        Samples per side, an integer in [1, ``max_samples``].
    thresholds : array_like
        The :math:`m` thresholds :math:`t_k`: non-empty, finite.
    alpha : float
        Overall false-alarm probability of the bounds, in [1e-300, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The random stream (:func:`dpcore.as_generator`); an int seed must be >= 0.
    max_samples : int
        The largest ``n_samples`` accepted, an integer >= 1 (default :data:`MAX_THRESHOLD_SAMPLES` = 10^7).

    Raises
    ------
    ValueError
        If ``n_samples`` < 1 or above ``max_samples``, ``thresholds`` is empty
        or not finite, ``alpha`` is not in [1e-300, 1), the mechanism refuses ``d`` or ``d_prime``
        (the message names which), or the mechanism returns a
        wrong shape, NaN or infinity.
    """
    n = check_positive_int("n_samples", n_samples)
    max_samples = check_limit_value("max_samples", max_samples)
    check_limit("n_samples", n, "max_samples", max_samples, "both sides' outputs are held in memory, 16 bytes each")
    alpha = check_alpha("alpha", alpha)
    t = as_real_array("thresholds", thresholds).ravel()
    if t.size == 0 or not np.all(np.isfinite(t)):
        raise ValueError("thresholds must be a non-empty array of finite numbers")
    gen = as_generator(rng)
    x = _draw_named(mechanism, d, n, gen, "d")
    y = _draw_named(mechanism, d_prime, n, gen, "d_prime")
    lower = np.r_[np.full(t.size, -np.inf), t]
    upper = np.r_[t, np.full(t.size, np.inf)]
    return sample_interval_ratio_bounds(x, y, lower, upper, alpha=alpha)
