r"""Evidence for the verification ledger: the numbers a verdict is computed from.

A chapter never tells the ledger *whether* a claim holds. It hands
:func:`dpbook.ledger.record` the evidence (a computed value and its bound, an
interval, a Monte Carlo :class:`~dpcore.montecarlo.CheckResult`, two sympy
expressions, a deterministic fact) and the ledger computes each verdict from
it with the rule the evidence object carries:

=====================  ==============================================  ============
evidence               holds iff                                        kind
=====================  ==============================================  ============
:class:`Equal`         sympy proves ``lhs == rhs`` under the symbols'   symbolic
                       assumptions, confirmed at random points
:class:`Compare`       ``value <op> bound`` (``<``, ``<=``, ``==``,     numeric (or as given)
                       ``>=``, ``>``)
:class:`Close`         ``|value - target| <= atol + rtol |target|``     numeric (or as given)
:class:`Within`        ``low <= value <= high``                         numeric (or as given)
:class:`Fact`          a real ``bool`` that is true                     exact (or as given)
:class:`Test`          the claimed value lies in the test's             Monte Carlo
                       confidence set (a ``CheckResult``)
=====================  ==============================================  ============

Every piece of evidence has a ``kind`` (``"symbolic"``, ``"exact"``,
``"numeric"`` for quadrature and closed forms evaluated in floating point,
``"monte-carlo"``), so that the ledger page says which kinds of evidence each
claim really has. A Monte Carlo piece also carries its false-alarm
probability ``alpha``; the ledger refuses a record whose Monte Carlo pieces
add up to more than the book's level (:data:`BOOK_ALPHA`, union bound).

NaN, an infinite bound where a number is due, a string or a result object
where a bool is due: each is refused, never read as "passed". A value of the
wrong type raises :class:`NotEvidence`, which is both a ``TypeError`` and a
``ValueError`` (bad input is a ``ValueError`` throughout the project); a
value of the right type but not usable (NaN) raises ``ValueError``.
"""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

__all__ = [
    "BOOK_ALPHA",
    "Rejected",
    "miss_probability",
    "Evidence",
    "Equal",
    "Compare",
    "Close",
    "Within",
    "Fact",
    "Test",
    "as_evidence",
    "NotEvidence",
]

BOOK_ALPHA = 1e-6
"""The book's false-alarm level: the largest probability that a record of a true claim fails."""

Kind = Literal["symbolic", "exact", "numeric", "monte-carlo"]
_KINDS = ("symbolic", "exact", "numeric", "monte-carlo")
_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, ">=": operator.ge, ">": operator.gt}


class NotEvidence(TypeError, ValueError):
    """A value that is not evidence (a bool, a string, a number where evidence is due): never read as a verdict.

    Both a ``TypeError`` (the type is wrong) and a ``ValueError`` (bad input,
    as everywhere in the project), so either ``except`` catches it.
    """


def _real(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """``value`` as a float; refuse bools, strings, complex, NaN (and infinity unless allowed)."""
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (str, bytes)):
        raise NotEvidence(f"evidence {name} must be a real number; got {value!r}")
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise NotEvidence(f"evidence {name} must be a real number; got complex {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise NotEvidence(f"evidence {name} must be a real number; got {value!r}") from None
    if math.isnan(x):
        raise ValueError(f"evidence {name} is NaN: a NaN is never evidence")
    if math.isinf(x) and not allow_inf:
        raise ValueError(f"evidence {name} is infinite ({x})")
    return x


def _check_kind(kind: str) -> None:
    if kind not in _KINDS:
        raise ValueError(f"evidence kind must be one of {_KINDS}; got {kind!r}")


def _check_alpha(kind: str, alpha: float | None) -> float | None:
    if kind == "monte-carlo":
        if alpha is None:
            raise ValueError("Monte Carlo evidence must state its false-alarm probability alpha")
        a = _real("alpha", alpha)
        if not 0 < a <= 1:  # 1: no guarantee at all (the ledger then fails the claim)
            raise ValueError(f"alpha must lie in (0, 1]; got {a}")
        return a
    if alpha is not None:
        raise ValueError(f"only Monte Carlo evidence has a false-alarm probability; {kind!r} has none")
    return None


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


@dataclass(frozen=True)
class Evidence:
    """Base class: ``holds`` is the verdict, computed once from the fields."""

    what: str
    kind: str = field(default="numeric", kw_only=True)
    alpha: float | None = field(default=None, kw_only=True)
    symbol: ClassVar[str] = "?"

    def __post_init__(self) -> None:
        if not isinstance(self.what, str) or not self.what.strip():
            raise ValueError("evidence needs a non-empty description 'what'")
        _check_kind(self.kind)
        object.__setattr__(self, "alpha", _check_alpha(self.kind, self.alpha))

    @property
    def holds(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def control_risk(self) -> float:
        """Probability that this evidence holds by chance when used as a negative control.

        0 for deterministic evidence. For other Monte Carlo evidence used as a
        control, ``alpha`` is read as that probability (the caller computes it);
        :class:`Test` and :class:`Rejected` compute it themselves. A control that
        holds by chance fails a true claim, so the ledger adds this to the budget.
        """
        return float(self.alpha) if self.alpha is not None else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record: description, kind, rule, numbers and verdict."""
        out: dict[str, Any] = {
            "what": self.what,
            "kind": self.kind,
            "type": type(self).__name__,
            "holds": self.holds,
            "detail": self.describe(),
        }
        if self.alpha is not None:
            out["alpha"] = self.alpha
        return out


@dataclass(frozen=True)
class Compare(Evidence):
    """``value <op> bound``, e.g. ``Compare("audit lower bound <= eps", lb, "<=", eps)``."""

    value: Any = None
    op: str = "<="
    bound: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.op not in _OPS:
            raise ValueError(f"op must be one of {sorted(_OPS)}; got {self.op!r}")
        object.__setattr__(self, "value", _real("value", self.value, allow_inf=True))
        object.__setattr__(self, "bound", _real("bound", self.bound, allow_inf=True))

    @property
    def holds(self) -> bool:
        return bool(_OPS[self.op](self.value, self.bound))

    def describe(self) -> str:
        return f"{_fmt(self.value)} {self.op} {_fmt(self.bound)}"


@dataclass(frozen=True)
class Close(Evidence):
    """``|value - target| <= atol + rtol * |target|`` (both tolerances >= 0, not both 0)."""

    value: Any = None
    target: Any = None
    rtol: float = 0.0
    atol: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "value", _real("value", self.value))
        object.__setattr__(self, "target", _real("target", self.target))
        rtol, atol = _real("rtol", self.rtol), _real("atol", self.atol)
        if rtol < 0 or atol < 0:
            raise ValueError("rtol and atol must be >= 0")
        object.__setattr__(self, "rtol", rtol)
        object.__setattr__(self, "atol", atol)

    @property
    def tolerance(self) -> float:
        return self.atol + self.rtol * abs(self.target)

    @property
    def holds(self) -> bool:
        return bool(abs(self.value - self.target) <= self.tolerance)

    def describe(self) -> str:
        return (
            f"{_fmt(self.value)} vs {_fmt(self.target)}: |difference| = "
            f"{abs(self.value - self.target):.3g} <= tolerance {self.tolerance:.3g}"
        )


@dataclass(frozen=True)
class Within(Evidence):
    """``low <= value <= high``."""

    value: Any = None
    low: Any = None
    high: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "value", _real("value", self.value))
        object.__setattr__(self, "low", _real("low", self.low, allow_inf=True))
        object.__setattr__(self, "high", _real("high", self.high, allow_inf=True))
        if self.low > self.high:
            raise ValueError(f"empty interval [{self.low}, {self.high}]")

    @property
    def holds(self) -> bool:
        return bool(self.low <= self.value <= self.high)

    def describe(self) -> str:
        return f"{_fmt(self.value)} in [{_fmt(self.low)}, {_fmt(self.high)}]"


@dataclass(frozen=True)
class Fact(Evidence):
    """A deterministic fact computed by the chapter (set equality, an exact integer identity).

    ``value`` must be a real ``bool`` (Python or numpy): a string such as
    ``'False'``, a number or a result object is refused, never read as true.
    """

    value: Any = None
    kind: str = field(default="exact", kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.value, (bool, np.bool_)):
            raise NotEvidence(
                f"Fact needs a real bool; got {type(self.value).__name__} {self.value!r} "
                "(use Compare, Close, Within or Test to let the ledger compute the verdict from numbers)"
            )
        object.__setattr__(self, "value", bool(self.value))

    @property
    def holds(self) -> bool:
        return self.value

    def describe(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True)
class Equal(Evidence):
    """Sympy proves ``lhs == rhs`` under the symbols' assumptions (see :func:`dpbook.symbolic.is_equal`)."""

    lhs: Any = None
    rhs: Any = None
    kind: str = field(default="symbolic", kw_only=True)
    _holds: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        from . import symbolic  # sympy only where symbolic evidence is used

        object.__setattr__(self, "_holds", bool(symbolic.is_equal(self.lhs, self.rhs)))

    @property
    def holds(self) -> bool:
        return self._holds

    def describe(self) -> str:
        rel = "==" if self._holds else "is not shown equal to"
        return f"{self.lhs} {rel} {self.rhs}"

    def to_json(self) -> dict[str, Any]:
        """As :meth:`Evidence.to_json`, with ``latex``: the two sides typeset (``=``, or ``\\neq`` where not shown
        equal), for the ledger and errata pages."""
        import sympy as sp

        out = super().to_json()
        rel = "=" if self._holds else r"\neq"
        try:
            out["latex"] = f"{sp.latex(sp.sympify(self.lhs))} {rel} {sp.latex(sp.sympify(self.rhs))}"
        except (sp.SympifyError, TypeError, ValueError):  # not a sympy expression: the text form only
            pass
        return out


@dataclass(frozen=True)
class Test(Evidence):
    """A Monte Carlo hypothesis test: holds iff the claimed value lies in its confidence set.

    The ledger recomputes the verdict from ``ci_low <= claimed <= ci_high`` and
    refuses a result whose own ``passed`` disagrees with it (a fault in the test).
    """

    result: Any = None
    true_value: Any = field(default=None, kw_only=True)
    miss: Any = field(default=None, kw_only=True)
    kind: str = field(default="monte-carlo", kw_only=True)
    __test__: ClassVar[bool] = False  # not a pytest test class

    def __post_init__(self) -> None:
        from dpcore.montecarlo import CheckResult

        if not isinstance(self.result, CheckResult):
            raise NotEvidence(f"Test needs a dpcore CheckResult; got {type(self.result).__name__}")
        object.__setattr__(self, "alpha", self.result.alpha)
        super().__post_init__()

    @property
    def holds(self) -> bool:
        r = self.result
        lo, hi, c = (
            _real("ci_low", r.ci_low, allow_inf=True),
            _real("ci_high", r.ci_high, allow_inf=True),
            _real("claimed", r.claimed),
        )
        verdict = lo <= c <= hi
        if not isinstance(r.passed, (bool, np.bool_)):  # bool('False') is True: only a real bool is a verdict
            raise NotEvidence(f"CheckResult {r.name!r} has passed={r.passed!r}, not a bool: it has no defined verdict")
        if verdict != bool(r.passed):
            raise ValueError(f"CheckResult {r.name!r} says passed={r.passed} but its numbers say {verdict}")
        return verdict

    def describe(self) -> str:
        return str(self.result)

    def control_risk(self) -> float:
        """As a control (a wrong claim that must be rejected): its miss probability.

        Needs ``true_value`` (the true value of the tested quantity, see
        :func:`miss_probability`) or ``miss`` (a bound the caller computed, e.g.
        :func:`dpcore.event_ratios.event_detection_miss`); without either no
        bound is known and the risk is 1, which fails the claim.
        """
        if self.miss is not None:
            return _real("miss", self.miss)
        return 1.0 if self.true_value is None else miss_probability(self.result, self.true_value)


def miss_probability(result: Any, true_value: float) -> float:
    """Upper bound on the probability that ``result``'s test passes its (wrong) claim.

    ``true_value`` is the true value of the tested quantity (for a CDF check,
    the true sup distance between the sampled and the claimed CDF over the grid).

    * Clopper--Pearson tests: the exact binomial acceptance probability of the
      claim (:func:`dpcore.montecarlo.probability_acceptance`).
    * Tests with a fixed radius ``r`` (median of means, DKW, the Hoeffding
      radius of bounded means): when ``|true_value - claimed| >= 2 r``, passing
      needs the estimate to miss the truth by ``>= r``, which has probability
      at most the test's ``alpha``; otherwise no bound is claimed (1.0).
    """
    from dpcore.montecarlo import CheckResult, probability_acceptance

    if not isinstance(result, CheckResult):
        raise NotEvidence(f"miss_probability needs a dpcore CheckResult; got {type(result).__name__}")
    t = _real("true_value", true_value)
    if "alternative" in result.details:
        return probability_acceptance(
            result.n, t, result.claimed, alternative=result.details["alternative"], alpha=result.alpha
        )
    d = result.details
    r = d.get("radius", d.get("dkw_radius", d.get("radius_hoeffding")))
    if r is None:
        raise ValueError(f"no fixed radius known for the test {result.method!r}")
    return result.alpha if abs(t - result.claimed) >= 2 * float(r) else 1.0


@dataclass(frozen=True)
class Rejected(Evidence):
    """A Monte Carlo test that rejects a wrong claim: a negative control that is itself a test.

    Holds iff the test rejected. Its false-alarm probability is the chance that
    the test would have *passed* the wrong claim, bounded by
    :func:`miss_probability` from ``true_value``; the ledger counts it in the
    claim's error budget like any other Monte Carlo evidence.
    """

    result: Any = None
    true_value: Any = None
    miss: Any = field(default=None, kw_only=True)
    kind: str = field(default="monte-carlo", kw_only=True)

    def __post_init__(self) -> None:
        m = _real("miss", self.miss) if self.miss is not None else miss_probability(self.result, self.true_value)
        # an exactly impossible miss is recorded as 1e-300 (alpha must be > 0)
        object.__setattr__(self, "alpha", min(max(m, 1e-300), 1.0))
        super().__post_init__()

    @property
    def holds(self) -> bool:
        return not Test(self.what, result=self.result).holds

    def describe(self) -> str:
        return f"rejected (miss probability <= {self.alpha:.3g}): {self.result}"

    def control_risk(self) -> float:
        """As a control (a true claim that must not be rejected): the test's own alpha."""
        return float(self.result.alpha)


def as_evidence(item: Any, where: str = "evidence") -> Evidence:
    """``item`` if it is evidence, a :class:`Test` if it is a ``CheckResult``; refuse anything else.

    A ``CheckResult`` is accepted only with a defined verdict: a real bool
    ``passed`` that agrees with its numbers (checked here, so a bad result is
    refused before anything is recorded).

    Raises
    ------
    NotEvidence
        (a ``TypeError`` and a ``ValueError``) naming ``where`` if ``item`` is a
        bool, a string, a number, ``None`` or any other non-evidence, or a
        ``CheckResult`` whose ``passed`` is not a bool.
    ValueError
        If a ``CheckResult`` has NaN numbers or a ``passed`` its numbers contradict.
    """
    from dpcore.montecarlo import CheckResult

    if isinstance(item, Evidence):
        return item
    if isinstance(item, CheckResult):
        test = Test(item.name, result=item)
        _ = test.holds  # the verdict must be defined: a bool agreeing with the numbers, no NaN
        return test
    raise NotEvidence(
        f"{where} must be evidence (Equal, Compare, Close, Within, Fact, Test or a CheckResult), "
        f"not {type(item).__name__} {item!r}: the ledger computes the verdict itself"
    )
