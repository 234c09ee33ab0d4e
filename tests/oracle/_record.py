"""Judging one example of the oracle suite, and recording it for ``python3 tasks.py oracle``.

An :class:`Example` compares what the library reported with the independent reference
(``references.py``), one comparison at a time:

* :meth:`Example.close` -- an exact value (a profile, a divergence): ``|lib - truth| <= slack * |truth|``;
* :meth:`Example.upper` -- a certified upper bound: ``lib >= truth - slack * |truth|``;
* :meth:`Example.lower` -- a certified lower end: ``lib <= truth + slack * |truth|``;
* :meth:`Example.at_most` -- e.g. the true delta at a reported epsilon: ``value <= bound * (1 + slack)``;
* :meth:`Example.width` -- a bracket's width against its documented limit.

``|truth|`` is floored at the smallest normal double, 2.2e-308, so a subnormal answer is judged on an
absolute scale (a double cannot carry relative accuracy there). The default slack is 1e-9 relative.

The library is called through :meth:`Example.call`: a ValueError is allowed (the input is outside
the certified domain) and counted, provided its message names one of the function's parameters;
a ValueError that names none, any other exception, NaN where a number is due, all are violations.

Every example appends one JSON line to the file named by ``DPCORE_ORACLE_LOG`` (when set):
``{"family", "domain", "error", "violations", "value_error"}``; ``error`` is the worst relative error
of its comparisons in the direction that matters (0 when every bound is on its safe side).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import mpmath as mp
from mpmath import mpf

T = TypeVar("T")

#: Relative slack of every comparison unless the function documents another.
SLACK = 1e-9
_FLOOR = mpf(2.2250738585072014e-308)


class Refused(Exception):
    """The library raised a ValueError naming a parameter: the example is outside the certified domain."""


def _num(x: Any) -> mpf:
    return x if isinstance(x, mpf) else mpf(float(x))


class Example:
    """One example of one family: the comparisons made and the violations found."""

    def __init__(self, family: str, domain: str, inputs: str) -> None:
        self.family, self.domain, self.inputs = family, domain, inputs
        self.error = 0.0
        self.violations: list[str] = []
        self.value_error: str | None = None

    def _fail(self, what: str) -> None:
        self.violations.append(f"{self.family}: {self.inputs}: {what}")

    def _rel(self, diff: mpf, truth: mpf) -> float:
        with mp.workdps(30):
            return float(diff / max(abs(truth), _FLOOR))

    def _finite(self, name: str, value: Any) -> bool:
        try:
            ok = math.isfinite(float(value)) if not isinstance(value, mpf) else mp.isfinite(value)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            self._fail(f"{name} = {value!r} is not a finite number (truth is finite)")
            self.error = math.inf
        return ok

    def close(self, name: str, value: Any, truth: mpf, slack: float = SLACK) -> None:
        """An exact value: within ``slack`` relative of the truth."""
        if not self._finite(name, value):
            return
        err = abs(self._rel(_num(value) - truth, truth))
        self.error = max(self.error, err)
        if err > slack:
            self._fail(f"{name} = {float(value)!r}, truth {mp.nstr(truth, 17)} (relative error {err:.3g} > {slack:g})")

    def upper(self, name: str, value: Any, truth: mpf, slack: float = SLACK) -> None:
        """A certified upper bound: never below the truth by more than ``slack`` relative."""
        if value == math.inf or (isinstance(value, float) and math.isinf(value) and value > 0):
            return  # a vacuous upper bound is still an upper bound
        if not self._finite(name, value):
            return
        short = self._rel(truth - _num(value), truth)
        self.error = max(self.error, short, 0.0)
        if short > slack:
            self._fail(
                f"upper bound {name} = {float(value)!r} is below the truth {mp.nstr(truth, 17)} "
                f"(by {short:.3g} relative > {slack:g})"
            )

    def lower(self, name: str, value: Any, truth: mpf, slack: float = SLACK) -> None:
        """A certified lower end: never above the truth by more than ``slack`` relative."""
        if not self._finite(name, value):
            return
        excess = self._rel(_num(value) - truth, truth)
        self.error = max(self.error, excess, 0.0)
        if excess > slack:
            self._fail(
                f"lower end {name} = {float(value)!r} is above the truth {mp.nstr(truth, 17)} "
                f"(by {excess:.3g} relative > {slack:g})"
            )

    def at_most(self, what: str, value: mpf, bound: float, slack: float = SLACK) -> None:
        """``value`` (a true quantity at a reported point) is at most ``bound`` (the target), relatively."""
        excess = self._rel(value - _num(bound), _num(bound))
        self.error = max(self.error, excess, 0.0)
        if excess > slack:
            self._fail(f"{what} = {mp.nstr(value, 17)} exceeds the target {bound!r} (by {excess:.3g} relative)")

    def at_least(self, what: str, value: mpf, bound: float, slack: float = SLACK) -> None:
        """``value`` (a true quantity at a reported point) is at least ``bound``, relatively."""
        short = self._rel(_num(bound) - value, _num(bound))
        self.error = max(self.error, short, 0.0)
        if short > slack:
            self._fail(f"{what} = {mp.nstr(value, 17)} is below {bound!r} (by {short:.3g} relative)")

    def inverse(
        self,
        name: str,
        got: Any,
        profile: Callable[[Any], mpf],
        target: float,
        slack: float = SLACK,
        backward: float = 0.0,
    ) -> None:
        """``got`` is the smallest point where the nonincreasing ``profile`` is at most ``target``.

        Two evaluations of the true profile instead of a root: at ``got`` it is at most the target
        (relative ``slack``), and at ``got * (1 - slack)`` it is above the target (``got`` is the
        smallest to within ``slack`` relative); 0 passes the second test. Where a function documents a
        *backward* accuracy instead (its answer is the exact inverse for a target within relative
        ``backward`` below the asked one: the Gaussian solvers, whose profile is flat as delta nears 1,
        so that no forward accuracy in the answer can be had), the second test is passed too when the
        true profile at ``got`` is at least ``target * (1 - backward)``.
        """
        if not self._finite(name, got):
            return
        at_got = profile(got)
        self.at_most(f"true profile at the reported {name}", at_got, target, slack)
        if backward > 0.0 and at_got >= _num(target) * (1 - _num(backward)):
            return
        if float(got) > 0.0:
            below = float(got) * (1.0 - slack)
            value = profile(below)
            # a subnormal target is itself only known to its spacing (4.9e-324): within it, not a violation
            if value <= _num(target) - (_num(5e-324) if abs(target) < 2.3e-308 else 0):
                self.error = max(self.error, slack)
                self._fail(
                    f"{name} = {float(got)!r} is not the smallest: the true profile at {below!r} is already "
                    f"{mp.nstr(value, 17)} <= the target {target!r}"
                )

    def width(self, name: str, lo: float, hi: float, allowed: float) -> None:
        """A bracket's width is at most its documented limit (and its ends are ordered)."""
        if not (lo <= hi):
            self._fail(f"{name} bracket ({lo!r}, {hi!r}) is not ordered")
        elif hi - lo > allowed * (1 + 1e-12):
            self._fail(f"{name} bracket ({lo!r}, {hi!r}) is wider ({hi - lo:.3g}) than documented ({allowed:.3g})")

    def fail(self, what: str) -> None:
        """Any other violation."""
        self._fail(what)

    def call(self, params: tuple[str, ...], thunk: Callable[[], T]) -> T:
        """Call the library; a ValueError naming one of ``params`` becomes :class:`Refused`."""
        try:
            return thunk()
        except ValueError as exc:
            msg = str(exc)
            if any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(p)}(?![A-Za-z0-9_])", msg) for p in params):
                self.value_error = msg[:200]
                raise Refused(msg) from None
            self._fail(f"ValueError that names no parameter of {params}: {msg[:200]!r}")
            raise Refused(msg) from None

    def record(self) -> None:
        path = os.environ.get("DPCORE_ORACLE_LOG")
        if not path:
            return
        line = {
            "family": self.family,
            "domain": self.domain,
            "error": self.error if math.isfinite(self.error) else "inf",
            "violations": self.violations[:3],
            "n_violations": len(self.violations),
            "value_error": self.value_error,
        }
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")


@contextmanager
def example(family: str, domain: str, inputs: str, sink: list[str]) -> Iterator[Example]:
    """Judge one example: its violations go to ``sink``, the example to the log; nothing is raised.

    A :class:`Refused` call ends the example (counted as a ValueError); any other exception from the
    library or the comparison is a violation (its type and message recorded).
    """
    ex = Example(family, domain, inputs)
    try:
        yield ex
    except Refused:
        pass
    except Exception as exc:  # noqa: BLE001 -- any other exception type is a finding, not a crash of the suite
        ex.fail(f"{type(exc).__name__}: {str(exc)[:300]}")
    ex.record()
    sink.extend(ex.violations)
