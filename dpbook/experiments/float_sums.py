r"""Chapter 08: the floating-point sum attacks of Casacuberta et al. (2022) on the libraries' bounded sums.

A bounded sum clamps each record to ``[lower, upper]`` and adds the records up.
Its *declared* sensitivity is that of the sum over the reals: ``upper - lower``
when one record is changed (dataset size known), ``max(|lower|, |upper|)`` when
one is added. The library computes a *float* sum, which rounds at every
addition; how much the rounded sum of two neighbouring datasets can differ is
another number, and it can be much larger.

Everything here is deterministic arithmetic: the datasets come from a fixed
rule (no random stream), the neighbour search tries every single-record change
(or insertion) of each, and the differences are measured exactly with
:class:`fractions.Fraction`. The noiseless sums are read from the libraries
themselves: OpenDP's transformations are noiseless; diffprivlib's and
python-dp's sums are asked for at ``epsilon = 1e30``, where the noise is far below
the last bit of the result. The search itself replicates each library's order of
summation on many candidates at once (``np.sum`` row by row; the halving pairwise
sum; the sequential sum); the witness it keeps is re-summed by the library, and
the two must agree exactly.

:func:`distinguish_sum` then shows the gap through diffprivlib's own noise, at
its claimed ``epsilon = 1``, with the book's event-ratio test.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

import dpcore
from dpcore.event_ratios import event_detection_miss, event_ratio_bounds
from dpcore.montecarlo import clopper_pearson_bounds

from ..evidence import Compare, Fact
from . import Experiment

__all__ = [
    "LOWER",
    "UPPER",
    "N_RECORDS",
    "NOISELESS_EPSILON",
    "weyl_dataset",
    "exact_sum",
    "numpy_rows",
    "halving_rows",
    "sequential_rows",
    "Neighbours",
    "search_neighbours",
    "equal_sum_neighbours",
    "SumAttack",
    "library_sums",
    "attack",
    "sum_attacks",
    "sum_attack_table",
    "SumCheck",
    "check_sum_attacks",
    "Distinguished",
    "distinguish_sum",
]

LOWER = 2.0**48
"""Lower bound of the records: 281,474,976,710,656."""
UPPER = 2.0**48 + 1.0
"""Upper bound: a width of 1 far from zero (the doubles in between are multiples of 2^-4)."""
N_RECORDS = 2048
"""Records per dataset."""
NOISELESS_EPSILON = 1e30
"""The epsilon at which diffprivlib's and python-dp's noise is far below the last bit of the sums here."""
_PHI = (math.sqrt(5.0) - 1.0) / 2.0
_DENSITIES = tuple(j / 16 for j in range(1, 16))


def weyl_dataset(n: int, lower: float, upper: float, density: float) -> NDArray[np.float64]:
    r"""``n`` records, record ``i`` at ``upper`` if :math:`\{i\varphi\} < \text{density}`, else at ``lower``.

    :math:`\varphi = (\sqrt5 - 1)/2` spreads the upper records evenly but not periodically (Weyl's
    sequence); no random stream is involved, so the datasets are the same in every run.
    """
    i = np.arange(n)
    return np.where((i * _PHI) % 1.0 < density, upper, lower)


def exact_sum(values: Sequence[float] | NDArray[np.float64]) -> Fraction:
    """The exact sum of the doubles ``values``, as a fraction (every double is a dyadic rational)."""
    return sum((Fraction(float(v)) for v in values), Fraction(0))


def numpy_rows(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.sum`` of each row, one 1-d call per row (numpy's blocked pairwise sum, as diffprivlib calls it)."""
    return np.array([np.sum(row) for row in x])


def halving_rows(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row summed by halving: ``sum(a[:m]) + sum(a[m:])`` with ``m = len // 2`` (OpenDP's ``Pairwise``)."""
    m = x.shape[1]
    if m == 1:
        return x[:, 0].copy()
    h = m // 2
    return halving_rows(x[:, :h]) + halving_rows(x[:, h:])


def sequential_rows(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row summed left to right, one rounding per record (``np.add.accumulate`` is sequential)."""
    return np.add.accumulate(x, axis=1)[:, -1]


@dataclass(frozen=True)
class Neighbours:
    """Two neighbouring datasets: ``d_prime`` is ``d`` with record ``position`` changed or one record inserted."""

    d: NDArray[np.float64]
    d_prime: NDArray[np.float64]
    relation: str
    position: int
    density: float


def search_neighbours(
    sum_rows: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    relation: str,
    *,
    lower: float = LOWER,
    upper: float = UPPER,
    n: int = N_RECORDS,
    densities: Sequence[float] = _DENSITIES,
) -> Neighbours:
    r"""The neighbours, among the candidates, whose sums under ``sum_rows`` differ the most.

    Candidates: for each density, :func:`weyl_dataset` ``d``, and every ``d'`` that changes one record of
    ``d`` to the other bound (``relation="change"``) or inserts one record ``upper`` at any position
    (``relation="add"``). ``sum_rows`` sums each row of a matrix in the library's order. Ties go to the
    first candidate found, so the result is the same in every run.
    """
    if relation not in ("change", "add"):
        raise ValueError(f"relation must be 'change' or 'add'; got {relation!r}")
    best: tuple[float, Neighbours] | None = None
    for density in densities:
        d = weyl_dataset(n, lower, upper, density)
        if relation == "change":
            rows = np.tile(d, (n, 1))
            rows[np.arange(n), np.arange(n)] = np.where(d == upper, lower, upper)
        else:
            rows = np.array([np.insert(d, j, upper) for j in range(n + 1)])
        gap = np.abs(sum_rows(rows) - sum_rows(d[None, :])[0])
        j = int(np.argmax(gap))
        if best is None or gap[j] > best[0]:
            best = (float(gap[j]), Neighbours(d, rows[j].copy(), relation, j, float(density)))
    assert best is not None
    return best[1]


def equal_sum_neighbours(
    sum_rows: Callable[[NDArray[np.float64]], NDArray[np.float64]] = numpy_rows,
    *,
    lower: float = LOWER,
    upper: float = UPPER,
    n: int = N_RECORDS,
    density: float = _DENSITIES[0],
) -> Neighbours:
    """The first one-record change of :func:`weyl_dataset` that leaves the float sum unchanged (the exact sum moves)."""
    d = weyl_dataset(n, lower, upper, density)
    rows = np.tile(d, (n, 1))
    rows[np.arange(n), np.arange(n)] = np.where(d == upper, lower, upper)
    same = np.flatnonzero(sum_rows(rows) == sum_rows(d[None, :])[0])
    if not same.size:
        raise ValueError("no one-record change leaves the float sum unchanged")
    j = int(same[0])
    return Neighbours(d, rows[j].copy(), "change", j, float(density))


@dataclass(frozen=True)
class SumAttack:
    """One library sum on one pair of neighbours: what it declared, what its float sums did, exactly."""

    library: str
    function: str
    summation: str
    neighbours: Neighbours
    declared: float
    out_d: float
    out_d_prime: float
    replicated: tuple[float, float]
    scale: int = 1  # the mean divides by the number of records

    @property
    def exact_difference(self) -> Fraction:
        """``|exact(D) - exact(D')|`` (divided by ``scale``): what the real-number sum (or mean) changes by."""
        nb = self.neighbours
        return abs(exact_sum(nb.d) - exact_sum(nb.d_prime)) / self.scale

    @property
    def realised(self) -> Fraction:
        """``|out(D) - out(D')|``, the library's float outputs compared exactly."""
        return abs(Fraction(self.out_d) - Fraction(self.out_d_prime))

    @property
    def ratio(self) -> float:
        """Realised float difference over the declared sensitivity."""
        return float(self.realised / Fraction(self.declared))

    @property
    def violated(self) -> bool:
        return self.realised > Fraction(self.declared)


def library_sums(n: int = N_RECORDS, lower: float = LOWER, upper: float = UPPER) -> dict[str, dict[str, Any]]:
    """The library functions tried: their noiseless sum, declared sensitivity, neighbour relation and order.

    diffprivlib 0.6.6 ``tools.sum``/``tools.mean`` (``np.sum`` of the clipped records; sensitivity
    ``upper - lower``, and that over ``n`` for the mean, for one record changed); OpenDP 0.16 ``make_sum``
    on a sized bounded float domain (the checked sum, ``Pairwise``) and the same checked sum with
    ``Sequential`` summation (sensitivity: the transformation's own ``map(2)``, a changed record being
    two edits); python-dp 1.1.5 ``BoundedSum`` (a C++ loop over the records; sensitivity
    ``max(|lower|, |upper|)`` per added record, Google's documented bound).
    """
    import opendp.prelude as dp
    from diffprivlib import tools
    from diffprivlib.accountant import BudgetAccountant
    from pydp.algorithms.laplacian import BoundedSum

    dp.enable_features("contrib")
    bounds = (lower, upper)

    def dpl(fn: Callable[..., float]) -> Callable[[NDArray[np.float64]], float]:
        return lambda x: float(fn(x, epsilon=NOISELESS_EPSILON, bounds=bounds, accountant=BudgetAccountant()))

    dom = dp.vector_domain(dp.atom_domain(bounds=bounds), size=n)
    pairwise = dp.t.make_sum(dom, dp.symmetric_distance())
    sequential = dp.t.make_sized_bounded_float_checked_sum(n, bounds, S="Sequential<f64>")

    def pydp(x: NDArray[np.float64]) -> float:
        return float(BoundedSum(epsilon=NOISELESS_EPSILON, lower_bound=lower, upper_bound=upper, dtype="float")
                     .quick_result(x.tolist()))  # fmt: skip

    return {
        "diffprivlib tools.sum": dict(
            run=dpl(tools.sum), declared=upper - lower, relation="change", rows=numpy_rows,
            summation="np.sum (numpy's blocked pairwise)", scale=1,
        ),
        "diffprivlib tools.mean": dict(
            run=dpl(tools.mean), declared=(upper - lower) / n, relation="change", rows=numpy_rows,
            summation="np.mean (np.sum, then / n)", scale=n,
        ),
        "OpenDP make_sum": dict(
            run=lambda x: float(pairwise(x.tolist())), declared=float(pairwise.map(2)), relation="change",
            rows=halving_rows, summation="Pairwise (halving), chosen by make_sum", scale=1,
        ),
        "OpenDP checked sum, Sequential": dict(
            run=lambda x: float(sequential(x.tolist())), declared=float(sequential.map(2)), relation="change",
            rows=sequential_rows, summation="Sequential", scale=1,
        ),
        "python-dp BoundedSum": dict(
            run=pydp, declared=max(abs(lower), abs(upper)), relation="add", rows=sequential_rows,
            summation="sequential (the C++ loop)", scale=1,
        ),
    }  # fmt: skip


def attack(name: str, spec: dict[str, Any]) -> SumAttack:
    """Search the neighbours for ``spec`` (an entry of :func:`library_sums`) and sum them with the library."""
    nb = search_neighbours(spec["rows"], spec["relation"])
    scale = spec["scale"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = (spec["run"](nb.d), spec["run"](nb.d_prime))
    rep = spec["rows"](nb.d[None, :]), spec["rows"](nb.d_prime[None, :])
    replicated = (float(rep[0][0]) / scale, float(rep[1][0]) / scale)
    library, function = name.split(" ", 1)
    return SumAttack(library, function, spec["summation"], nb, spec["declared"], *out, replicated, scale)


def sum_attacks(names: Sequence[str] | None = None) -> list[SumAttack]:
    """:func:`attack` on each library sum of :func:`library_sums` (or those named)."""
    specs = library_sums()
    return [attack(k, v) for k, v in specs.items() if names is None or k in names]


def _num(x: Fraction | float) -> str:
    v = float(x)
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.4e}"


def sum_attack_table(attacks: Sequence[SumAttack]) -> str:
    """Markdown: library, function, summation, neighbours, declared sensitivity, differences, ratio, verdict."""
    rows = [
        "| library | function | summation | neighbours | declared sensitivity | exact difference "
        "| float difference | ratio | verdict |",
        "|---|---|---|---|---:|---:|---:|---:|---|",
    ]
    for a in attacks:
        nb = a.neighbours
        how = f"record {nb.position} changed" if nb.relation == "change" else f"record inserted at {nb.position}"
        verdict = "**violated**" if a.violated else "respected"
        excess = a.ratio - 1
        ratio = f"{a.ratio:.6g}" if abs(excess) > 1e-6 else f"1 {'+' if excess >= 0 else '-'} {abs(excess):.2g}"
        rows.append(
            f"| {a.library} | {a.function} | {a.summation} | {how} (density {nb.density:g}) | "
            f"{_num(a.declared)} | {_num(a.exact_difference)} | {_num(a.realised)} | {ratio} | {verdict} |"
        )
    return "\n".join(rows)


@dataclass(frozen=True)
class SumCheck(Experiment):
    """:func:`check_sum_attacks`' verdicts, with the attacks behind them."""

    attacks: tuple[SumAttack, ...] = ()


def _legitimate(a: SumAttack) -> list[Any]:
    """The neighbours are legitimate: every record within bounds, and the exact sums differ by at most Delta."""
    nb = a.neighbours
    inside = bool(np.all((nb.d >= LOWER) & (nb.d <= UPPER)) and np.all((nb.d_prime >= LOWER) & (nb.d_prime <= UPPER)))
    name = f"{a.library} {a.function}"
    return [
        Fact(f"{name}: every record of D and D' lies in [2^48, 2^48 + 1]", inside),
        Compare(f"{name}: exact |sum(D) - sum(D')| vs declared", float(a.exact_difference), "<=", a.declared,
                kind="exact"),
        Fact(f"{name}: the library's outputs equal the replicated summation on D and D'",
             (a.out_d, a.out_d_prime) == a.replicated),
    ]  # fmt: skip


def check_sum_attacks(
    attacks: Sequence[SumAttack], *, violated: Sequence[str], respected: Sequence[str], least_ratio: float = 100.0
) -> SumCheck:
    r"""Evidence: the float sums of ``violated`` exceed their declared sensitivity, those of ``respected`` do not.

    For every attack the neighbours are legitimate (:func:`_legitimate`: bounds, exact difference
    :math:`\le \Delta`, library output = replicated sum). For each name in ``violated`` the realised float
    difference exceeds the declared :math:`\Delta` (exactly, in rationals); for the diffprivlib ones by a
    factor of at least ``least_ratio``. For each name in ``respected`` it is at most :math:`\Delta`.
    Controls, each the careless reading the same numbers reject: "the float sum of each ``violated``
    function respects its declared bound"; for a ``respected`` function that declares more than the
    real-number sum's sensitivity, "it would be safe with the real-number sensitivity" (its float
    difference at most :math:`U - L`); for one that declares exactly that, "it sums exactly" (its float
    difference equal to the exact one).
    """
    by_name = {f"{a.library} {a.function}": a for a in attacks}
    evidence: list[Any] = []
    controls: list[Any] = []
    for a in attacks:
        evidence += _legitimate(a)
    for name in violated:
        a = by_name[name]
        r = float(a.realised)
        evidence.append(Compare(f"{name}: float |out(D) - out(D')| > declared", r, ">", a.declared, kind="exact"))
        if a.library == "diffprivlib":
            evidence.append(Compare(f"{name}: ratio to declared", a.ratio, ">=", least_ratio, kind="exact"))
        controls.append(Compare(f"wrong: {name}'s float sum respects its declared bound", r, "<=", a.declared,
                                kind="exact"))  # fmt: skip
    for name in respected:
        a = by_name[name]
        r = float(a.realised)
        evidence.append(Compare(f"{name}: float |out(D) - out(D')| <= declared", r, "<=", a.declared, kind="exact"))
        ideal = (UPPER - LOWER) if a.neighbours.relation == "change" else max(abs(LOWER), abs(UPPER))
        if a.declared > ideal:
            controls.append(Compare(f"wrong: {name} would be safe with the real-number sensitivity {ideal:g}", r,
                                    "<=", ideal, kind="exact"))  # fmt: skip
        else:
            controls.append(Compare(f"wrong: {name} sums exactly (float difference = exact difference)", r, "==",
                                    float(a.exact_difference), kind="exact"))  # fmt: skip
    return SumCheck(evidence=tuple(evidence), controls=tuple(controls), attacks=tuple(attacks))


# --------------------------------------------------------------------------- through the noise


@dataclass(frozen=True)
class Distinguished(Experiment):
    """:func:`distinguish_sum`'s numbers: counts, certified bounds, the miss probability."""

    event: str = ""
    hits: tuple[int, int] = (0, 0)
    n: int = 0
    epsilon_lower: float = 0.0
    control_epsilon_lower: float = 0.0
    miss: float = 1.0
    rates: dict[str, float] = field(default_factory=dict)


def _outputs(run: Callable[[int], float], n: int) -> NDArray[np.float64]:
    return np.array([run(i) for i in range(n)])


def distinguish_sum(
    a: SumAttack,
    control: Neighbours,
    n: int,
    *,
    batch: int,
    seed: int = 0,
    claimed: float = 1.0,
    alpha: float = 2.5e-7,
    level: float = 1e-8,
) -> Distinguished:
    r"""diffprivlib's ``tools.sum`` at its claimed ``epsilon = 1`` on the neighbours of ``a``: refuted by one event.

    The event is fixed before any output is seen, from the datasets alone: "the output is on the side of
    the midpoint of the two float sums where :math:`\mathrm{out}(D)` lies". ``n`` outputs on each dataset
    are counted and :func:`dpcore.event_ratios.event_ratio_bounds` (Clopper--Pearson, union bound,
    level ``alpha``) gives a certified lower bound on epsilon. Evidence: it exceeds ``claimed``; its false
    alarm (the chance it does not, given the mechanism's true event rates) is bounded by
    :func:`dpcore.event_ratios.event_detection_miss` at the rates' Clopper--Pearson bounds from an
    independent ``batch`` of outputs per dataset (level ``level`` each), plus ``2 level``. Control: the
    wrong claim that the same test refutes diffprivlib on *any* neighbours, on the pair ``control``
    whose float sums are equal (so the two output laws are equal, and the test certifies above
    ``claimed`` with probability at most ``alpha``). diffprivlib is seeded through
    ``random_state`` from :func:`dpcore.as_generator` (``seed``), so the seed sweep moves its stream.
    """
    from diffprivlib import tools
    from diffprivlib.accountant import BudgetAccountant

    gen = dpcore.as_generator(seed)
    acc = BudgetAccountant()
    bounds = (LOWER, UPPER)

    def release(data: NDArray[np.float64]) -> Callable[[int], float]:
        state = np.random.RandomState(int(gen.integers(2**31)))
        return lambda _i: float(tools.sum(data, epsilon=1.0, bounds=bounds, random_state=state, accountant=acc))

    mid = (Fraction(a.out_d) + Fraction(a.out_d_prime)) / 2
    up = a.out_d > a.out_d_prime

    def inside(y: NDArray[np.float64]) -> int:
        return int(sum((Fraction(float(v)) > mid) == up for v in y))

    def lower_bound(d: NDArray[np.float64], dp_: NDArray[np.float64]) -> tuple[float, tuple[int, int]]:
        k = inside(_outputs(release(d), n)), inside(_outputs(release(dp_), n))
        return event_ratio_bounds([k[0]], n, [k[1]], n, alpha=alpha).epsilon_lower, k

    nb = a.neighbours
    eps_lo, hits = lower_bound(nb.d, nb.d_prime)
    ctl_lo, _ = lower_bound(control.d, control.d_prime)
    p_lo = float(clopper_pearson_bounds(inside(_outputs(release(nb.d), batch)), batch, level)[0])
    q_hi = float(clopper_pearson_bounds(inside(_outputs(release(nb.d_prime), batch)), batch, level)[1])
    if p_lo > math.exp(claimed) * q_hi:
        miss = event_detection_miss(p_lo, q_hi, n, n, claimed, events=1, alpha=alpha) + 2 * level
    else:
        miss = 1.0
    side = ">" if up else "<"
    event = f"output {side} {float(mid):.17g} (midpoint of the two float sums)"
    ev = Compare(f"diffprivlib tools.sum at claimed eps {claimed:g}: certified lower bound on eps", eps_lo, ">",
                 claimed, kind="monte-carlo", alpha=min(1.0, miss))  # fmt: skip
    ctl = Compare("wrong: the same test refutes it on neighbours with equal float sums", ctl_lo, ">", claimed,
                  kind="monte-carlo", alpha=alpha)  # fmt: skip
    return Distinguished(
        evidence=(ev,), controls=(ctl,), event=event, hits=hits, n=n, epsilon_lower=eps_lo,
        control_epsilon_lower=ctl_lo, miss=miss, rates={"p_lo": p_lo, "q_hi": q_hi},
    )  # fmt: skip
