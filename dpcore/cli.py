r"""``python -m dpcore``: a differential-privacy calculator on the command line.

Three subcommands, built on the same tested functions as the book:

``calibrate``
    The noise a query needs: the Laplace scale :math:`b = \Delta_1/\varepsilon`
    (:func:`dpcore.laplace_scale`) and, given ``--delta``, the classic Gaussian
    :math:`\sigma = \Delta_2\sqrt{2\ln(1.25/\delta)}/\varepsilon` (valid only for
    :math:`\varepsilon < 1`; :func:`dpcore.classic_gaussian_sigma`) and the exact
    analytic Gaussian :math:`\sigma` of Balle & Wang (2018)
    (:func:`dpcore.analytic_gaussian_sigma`).
``account``
    The :math:`(\varepsilon, \delta)` guarantee after ``k`` releases of any
    mechanism of :mod:`dpcore.mechanisms` (``--mechanism NAME`` and one option
    per field of its class): the tightest certified upper bound on epsilon
    (``epsilon``, with ``method``) among the PLD accountant's bracket
    (:class:`dpcore.PldAccountant`), the RDP accountant's epsilon and best order
    (:class:`dpcore.RdpAccountant`, Mironov 2017), the exact answer where the
    mechanism knows one (:meth:`dpcore.mechanisms.Mechanism.self_composition`:
    ``k`` Gaussians are one Gaussian of sensitivity :math:`\sqrt{k}\Delta`) and
    basic composition :math:`k\varepsilon_0` for pure-DP mechanisms.
``audit``
    A lower confidence bound on a mechanism's epsilon from samples
    (:func:`dpcore.audit_epsilon`): a mechanism of :mod:`dpcore.mechanisms`
    calibrated to the claimed epsilon (its ``calibrate``), one of the seeds'
    flawed ones (from the book's package ``dpbook``), a DP library's own
    mechanism (``--library diffprivlib|opendp|python-dp --mechanism NAME``,
    :mod:`dpcore.library_adapters`; audited with representation-aware events,
    :mod:`dpcore.representation`), or your own ``module:function`` with the
    signature ``mechanism(data, size, rng)``.

Output is a plain table, or JSON with ``--json``. Bad input (a non-positive
epsilon, a delta outside (0, 1), a NaN, a callable that cannot be imported,
options whose result would overflow, ...) prints *one line* to stderr naming
the option and the rule, and exits with status 2: never a traceback, never a
warning. Every failure passes through one place, :func:`main`, which

* turns argparse's errors into that one line (with a pointer to ``--help``);
* catches the library's ``ValueError`` (its message names the parameter; a
  parameter that is an option is written as the option, and the options given
  are quoted otherwise);
* records every warning raised while computing: a floating-point warning
  (``RuntimeWarning``: overflow, invalid value, division by zero) means the
  numbers cannot be trusted, so the command fails with that warning as its one
  line instead of printing a number;
* reports any other exception of the library as an *internal error* (one line
  with the exception and where it was raised: please report it), also with
  status 2.

JSON output never contains ``NaN`` or ``Infinity`` (which are not JSON): an
infinite value (an epsilon that is unbounded, say) is written as the string
``"inf"`` or ``"-inf"``, and a NaN anywhere in a result is refused as an
internal error. ``audit`` exits with status 1 when it finds, at the stated
confidence, that the mechanism violates the epsilon claimed for it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import numbers
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, cast

__all__ = ["main", "build_parser", "UsageError", "MAX_COUNT", "MAX_SEED"]

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2

#: Largest ``--count`` (and ``--samples``) accepted: 2**53, above which a count is not exact as a float.
MAX_COUNT = 1 << 53
#: Largest ``--seed``: numpy's SeedSequence takes any non-negative int, but a seed longer than 128 bits adds nothing.
MAX_SEED = (1 << 128) - 1


class UsageError(ValueError):
    """Bad command-line input: reported with exit status 2."""


class InternalError(RuntimeError):
    """The library failed or gave a NaN at valid options: reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (exit status 2), pointing to ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _finite_float(text: str) -> float:
    """argparse type: a finite real number (``nan``, ``inf`` and ``1e400`` are refused)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be a finite number; got {text!r}")
    return x


def _bounded_int(maximum: int) -> Callable[[str], int]:
    """argparse type: an integer (digits only, optional sign) of absolute value at most ``maximum``."""

    def parse(text: str) -> int:
        t = text.strip()
        if not t.lstrip("+-").isdigit() or len(t) > 60:
            raise argparse.ArgumentTypeError(f"must be an integer of at most {len(str(maximum))} digits; got {text!r}")
        k = int(t)
        if abs(k) > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}; got {text!r}")
        return k

    parse.__name__ = "int"
    return parse


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)  # shortest string that round-trips: every digit is meaningful
        return str(value)
    return str(value)


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    cells = [[str(h) for h in header]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _positive(name: str, value: float) -> float:
    from ._validation import check_positive_finite

    return check_positive_finite(name, value)


def _probability(name: str, value: float) -> float:
    from ._validation import check_probability_open

    return check_probability_open(name, value)


def _count(name: str, value: int) -> int:
    from ._validation import check_positive_int

    return check_positive_int(name, value)


def _check_ratio(sensitivity: float, epsilon: float) -> None:
    """The noise scale sensitivity / epsilon must be a finite float > 0 (it overflows or underflows otherwise)."""
    ratio = sensitivity / epsilon
    if not (math.isfinite(ratio) and ratio > 0):
        what = "overflows to infinity" if ratio > 0 else "underflows to 0 (no noise)"
        raise UsageError(
            f"--sensitivity / --epsilon = {sensitivity!r} / {epsilon!r} {what}: the noise scale must be a finite "
            "number > 0"
        )


# --------------------------------------------------------------------------- calibrate
def cmd_calibrate(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    import dpcore

    if args.mechanism is not None:
        return _calibrate_composed(args)
    for option, value in (("--count", args.count), ("--sampling-rate", args.sampling_rate), ("--rtol", args.rtol)):
        if value is not None:
            raise UsageError(f"{option} needs --mechanism (gaussian, laplace or subsampled-gaussian)")
    sensitivity = _positive("--sensitivity", args.sensitivity)
    epsilon = _positive("--epsilon", args.epsilon)
    delta = None if args.delta is None else _probability("--delta", args.delta)
    _check_ratio(sensitivity, epsilon)

    result: dict[str, Any] = {"sensitivity": sensitivity, "epsilon": epsilon, "delta": delta}
    rows: list[list[Any]] = []
    b = dpcore.LaplaceMechanism.calibrate(epsilon, sensitivity).scale
    result["laplace_scale"] = b
    rows.append(["Laplace", "b (scale)", b, "epsilon-DP; sensitivity is the L1 sensitivity"])
    if delta is not None:
        try:
            classic = dpcore.classic_gaussian_sigma(sensitivity, epsilon, delta)
            note = "Dwork & Roth Thm A.1 (valid for epsilon < 1)"
        except ValueError as exc:  # the theorem does not apply (epsilon >= 1), or sigma is not a float: no number
            classic = None
            if epsilon >= 1.0:
                note = "not applicable: its theorem needs epsilon < 1 (Dwork & Roth Thm A.1)"
            else:
                note = "not applicable: " + _one_line(str(exc))
            result["classic_gaussian_sigma_refused"] = str(exc)
        result["classic_gaussian_sigma"] = classic
        rows.append(["Gaussian (classic)", "sigma", "n/a" if classic is None else classic, note])
        analytic = dpcore.GaussianMechanism.calibrate(epsilon, delta, sensitivity).sigma
        result["analytic_gaussian_sigma"] = analytic
        rows.append(["Gaussian (analytic)", "sigma", analytic, "exact, Balle & Wang 2018; L2 sensitivity"])
    head = f"Noise for sensitivity {_fmt(sensitivity)}, epsilon {_fmt(epsilon)}" + (
        f", delta {_fmt(delta)}" if delta is not None else " (pass --delta for the Gaussian mechanism)"
    )
    return result, head + "\n\n" + _table(rows, ["mechanism", "parameter", "value", "note"])


#: What ``calibrate --mechanism`` certifies (``certificate`` in its JSON).
POISSON_NOTE = (
    "the subsampled Gaussian's bound assumes Poisson subsampling (each record independently with probability q); "
    "it does not cover shuffled or fixed-size batches, as many training loops draw them (Chua et al. 2024)"
)


def _calibrate_composed(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``calibrate --mechanism NAME --count k``: the smallest certified noise (dpcore.calibrate_noise)."""
    import dpcore

    from .calibrate_composed import FAMILIES

    if args.mechanism not in FAMILIES:
        raise UsageError(f"--mechanism must be one of {', '.join(FAMILIES)}; got {args.mechanism!r}")
    sensitivity = _positive("--sensitivity", args.sensitivity)
    epsilon = _positive("--epsilon", args.epsilon)
    if args.delta is None:
        raise UsageError(f"calibrate --mechanism {args.mechanism} needs --delta")
    delta = _probability("--delta", args.delta)
    count = _count("--count", 1 if args.count is None else args.count)
    if args.mechanism == "subsampled-gaussian" and args.sampling_rate is None:
        raise UsageError("calibrate --mechanism subsampled-gaussian needs --sampling-rate (the Poisson rate q)")
    if args.mechanism != "subsampled-gaussian" and args.sampling_rate is not None:
        raise UsageError(f"--sampling-rate does not apply to --mechanism {args.mechanism}")
    params: dict[str, Any] = {"epsilon": epsilon, "delta": delta, "count": count, "sensitivity": sensitivity}
    if args.sampling_rate is not None:
        params["sampling_rate"] = args.sampling_rate
    if args.rtol is not None:
        params["rtol"] = args.rtol
    try:
        cal = dpcore.calibrate_noise(args.mechanism, **params)
    except ValueError as exc:
        raise _as_usage_error(exc, params) from None
    name = cal.parameter
    result: dict[str, Any] = {
        "mechanism": args.mechanism,
        "count": count,
        "sensitivity": sensitivity,
        "sampling_rate": args.sampling_rate,
        "target_epsilon": epsilon,
        "delta": delta,
        name: cal.noise,
        "epsilon": cal.epsilon,
        "epsilon_lower": cal.epsilon_lower,
        "method": cal.method,
        f"{name}_below": cal.noise_below,
        "epsilon_below_lower": cal.epsilon_below_lower,
        "rtol": cal.rtol,
        "certificate": CERTIFICATES.get(cal.method, cal.method),
    }
    rows: list[list[Any]] = [
        [name, cal.noise, f"the smallest found whose certified epsilon is <= {_fmt(epsilon)}"],
        ["certified epsilon", cal.epsilon, f"bracket [{_fmt(cal.epsilon_lower)}, {_fmt(cal.epsilon)}] ({cal.method})"],
        [
            f"{name} below",
            cal.noise_below,
            f">= {name} * (1 - {_fmt(cal.rtol)}); certified epsilon there >= {_fmt(cal.epsilon_below_lower)}",
        ],
    ]
    if args.mechanism == "subsampled-gaussian":
        result["assumption"] = POISSON_NOTE
        rows.append(["assumption", "", "Poisson subsampling (not shuffled or fixed-size batches; Chua et al. 2024)"])
    head = (
        f"Noise for {count} release(s) of {args.mechanism}"
        + (f" (sampling rate {_fmt(args.sampling_rate)})" if args.sampling_rate is not None else "")
        + f", sensitivity {_fmt(sensitivity)}: epsilon {_fmt(epsilon)} at delta {_fmt(delta)}"
    )
    return result, head + "\n\n" + _table(rows, ["quantity", "value", "note"])


# --------------------------------------------------------------------------- mechanisms
def _registry() -> dict[str, Any]:
    """The mechanism classes by command-line name: :func:`dpcore.mechanism_classes` is the registry."""
    from .mechanisms import mechanism_classes

    return mechanism_classes()


def _option(field: str) -> str:
    return "--" + field.replace("_", "-")


def _parameter_fields() -> dict[str, list[str]]:
    """Each dataclass field of a registered mechanism, with the mechanisms that have it."""
    import dataclasses

    out: dict[str, list[str]] = {}
    for name, cls in _registry().items():
        for f in dataclasses.fields(cls):
            out.setdefault(f.name, []).append(name)
    return out


def _build_mechanism(cls: Any, args: argparse.Namespace, command: str) -> Any:
    """Construct ``cls`` from the options named after its dataclass fields; errors name the option."""
    import dataclasses

    mine = {f.name for f in dataclasses.fields(cls)}
    for field in _parameter_fields():
        if field not in mine and getattr(args, field, None) is not None:
            raise UsageError(f"{_option(field)} does not apply to --mechanism {cls.name}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = getattr(args, f.name, None)
        if value is None:
            if f.default is dataclasses.MISSING:
                raise UsageError(f"{command} --mechanism {cls.name} needs {_option(f.name)}")
            continue
        kwargs[f.name] = _positive(_option(f.name), value)
    try:
        return cls(**kwargs)
    except ValueError as exc:
        raise _as_usage_error(exc, kwargs) from None


def _as_usage_error(exc: ValueError, parameters: Any) -> UsageError:
    """The library's error with the parameter it names (one of ``parameters``) written as its option."""
    msg = str(exc)
    name = msg.split(" ", 1)[0]
    return UsageError(_option(name) + msg[len(name) :] if name in parameters else msg)


def _parameters(mech: Any) -> dict[str, Any]:
    import dataclasses

    return {f.name: _plain(getattr(mech, f.name)) for f in dataclasses.fields(mech)}


def _plain(value: Any) -> Any:
    from fractions import Fraction

    return float(value) if isinstance(value, Fraction) else value


# --------------------------------------------------------------------------- account
#: What each ``method`` of ``account`` certifies, printed beside the answer (``certificate`` in the JSON).
CERTIFICATES = {
    "exact": "the mechanism's exact privacy profile (closed form or exact sums) inverted, rounded up until the "
    "computed delta is at most the target (tested against 40-50 digit mpmath across its documented domain)",
    "exact-gaussian": "the Gaussian profile in closed form (Balle & Wang 2018) at the composed sensitivity "
    "sqrt(k) Delta, rounded up as for exact",
    "exact-laplace": "the exact composition of the Laplace privacy loss (dpcore.laplace_composition): the "
    "bracket is the rounding only",
    "pld": "the PLD accountant's upper end: connect-the-dots, a pessimistic discretisation whose composed profile "
    "lies above the true one (Doroshenko et al. 2022), truncated tails counted, plus 1e-13 on delta for "
    "floating-point rounding (measured, not proved)",
    "pld-mean-matched": "the PLD accountant's mean-matched bracket: discretisation errors bounded by "
    "Hoeffding's inequality, truncated tails counted, plus 1e-13 on delta for floating-point rounding",
    "rdp": "the composed Renyi-DP curve at its best order, converted by Canonne, Kamath & Steinke (2020): an "
    "upper bound wherever the RDP curve is one (closed forms; the subsampled Gaussian's integer orders are exact "
    "sums, its fractional orders numerical integrals)",
    "basic-composition": "count times the mechanism's pure epsilon (basic composition, delta = 0)",
}


def cmd_account(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    import dpcore

    count = _count("--count", args.count)
    delta = _probability("--delta", args.delta)
    registry = _registry()
    if args.mechanism not in registry:
        raise UsageError(f"--mechanism must be one of {', '.join(registry)}; got {args.mechanism!r}")
    mech = _build_mechanism(registry[args.mechanism], args, "account")
    result: dict[str, Any] = {"mechanism": args.mechanism, "count": count, "delta": delta, **_parameters(mech)}
    acct = dpcore.RdpAccountant().compose(mech, count)
    eps_rdp, order = acct.epsilon_and_order(delta)
    result.update(rdp_epsilon=eps_rdp, rdp_order=order)
    rows: list[list[Any]] = [["RDP accountant", eps_rdp, f"best order alpha = {_fmt(order)}, at delta {_fmt(delta)}"]]
    exact_mech = mech.self_composition(count)
    if exact_mech is not None:
        exact = exact_mech.epsilon(delta)
        if exact > eps_rdp * (1 + 1e-9):  # RDP is an upper bound: one of the two numbers is wrong
            raise InternalError(
                f"the exact epsilon {exact!r} exceeds the RDP upper bound {eps_rdp!r}: one of them is wrong"
            )
        result.update(exact_epsilon=exact, rdp_overhead=(eps_rdp / exact - 1.0) if exact > 0 else None)
        rows.append(["exact composition", exact, f"{count} releases = {exact_mech!r}"])
        if exact > 0:
            rows.append(["RDP overhead", f"{100 * (eps_rdp / exact - 1):.3f} %", "how much RDP overstates epsilon"])
    pure = mech.pure_epsilon
    if pure is not None:
        basic = count * pure
        result["basic_composition_epsilon"] = basic
        rows.append(["basic composition", basic, "count * pure epsilon, pure epsilon-DP (delta = 0)"])
    candidates: list[tuple[float, str, float | None]] = [(eps_rdp, "rdp", None)]
    if exact_mech is not None:
        candidates.append((result["exact_epsilon"], "exact", result["exact_epsilon"]))
    if pure is not None:
        candidates.append((result["basic_composition_epsilon"], "basic-composition", None))
    if callable(getattr(mech, "privacy_losses", None)) and delta >= dpcore.pld.MIN_DELTA:
        try:
            bracket = dpcore.PldAccountant().compose(mech, count).epsilon_bracket_details(delta)
        except ValueError as exc:  # beyond the PLD grid's limits (a loss too wide, say): the other methods stand
            result["pld_refused"] = _one_line(str(exc))
            rows.append(["PLD accountant", "n/a", "not applicable: " + _one_line(str(exc))])
        else:
            result.update(
                pld_epsilon=bracket.upper,
                pld_epsilon_lower=bracket.lower,
                pld_method=bracket.method,
                pld_hoeffding_t=bracket.hoeffding_t,
            )
            candidates.append((bracket.upper, bracket.method, bracket.lower))  # pld, or exact-laplace (no grid)
            rows.append(
                [
                    "PLD accountant",
                    bracket.upper,
                    f"certified bracket [{_fmt(bracket.lower)}, {_fmt(bracket.upper)}] ({bracket.method})",
                ]
            )
    if args.checkpoints is not None:
        _checkpoint_rows(args.checkpoints, count, delta, mech, result, rows)
    best, method, lower = min(candidates, key=lambda c: c[0])
    lowers = [c[2] for c in candidates if c[2] is not None]
    certificate = CERTIFICATES[method]
    if method == "pld" and result.get("pld_hoeffding_t"):
        certificate = CERTIFICATES["pld-mean-matched"]
    result.update(epsilon=best, method=method, certificate=certificate, epsilon_lower=max(lowers) if lowers else None)
    rows.append(
        ["tightest certified", best, f"by {method}" + ("" if not lowers else f"; epsilon >= {_fmt(max(lowers))}")]
    )
    rows.append(["certificate", "", certificate])
    head = f"Privacy after {count} release(s) of {mech!r}, delta {_fmt(delta)}"
    return result, head + "\n\n" + _table(rows, ["method", "epsilon", "note"])


def _parse_checkpoints(text: str, count: int) -> list[int]:
    """``--checkpoints 1,10,100``: step counts in [1, --count], comma-separated (the count itself is added)."""
    steps = []
    for part in text.split(","):
        t = part.strip()
        if not t.isdigit() or len(t) > 19 or not 1 <= int(t) <= count:
            raise UsageError(
                f"--checkpoints must be step counts in [1, --count = {count}], comma-separated; got {text!r}"
            )
        steps.append(int(t))
    return sorted(set(steps) | {count})


def _checkpoint_rows(
    text: str, count: int, delta: float, mech: Any, result: dict[str, Any], rows: list[list[Any]]
) -> None:
    """Epsilon at each checkpoint of the run (:func:`dpcore.epsilon_over_run`), into the result and the table."""
    import dpcore

    steps = _parse_checkpoints(text, count)
    if delta < dpcore.pld.MIN_DELTA:
        raise UsageError(f"--checkpoints needs --delta >= {dpcore.pld.MIN_DELTA:g} (the PLD accountant's floor)")
    run = dpcore.epsilon_over_run(mech, steps, delta)
    result["checkpoints"] = [
        {"step": int(k), "epsilon": float(u), "epsilon_lower": float(lo), "method": m}
        for k, u, lo, m in zip(run.steps, run.epsilon, run.epsilon_lower, run.method, strict=True)
    ]
    for k, u, lo, m in zip(run.steps, run.epsilon, run.epsilon_lower, run.method, strict=True):
        rows.append(
            [f"after {int(k)} step(s)", float(u), f"certified bracket [{_fmt(float(lo))}, {_fmt(float(u))}] ({m})"]
        )


# --------------------------------------------------------------------------- audit
FLAWED_MECHANISMS = {
    "laplace-stray-factor-two": "seed 000's stray factor 2: scale sensitivity/(2 epsilon), really 2 epsilon-DP",
    "gaussian-variance-as-std": "seed 002's numpy.random.normal(0, sigma**2): std sigma^2 instead of sigma",
}


def _builtin_mechanisms() -> dict[str, str]:
    """Every ``audit --mechanism`` name: the registry, calibrated to the claim, and the seeds' flawed ones."""
    names = {
        name: f"{cls.summary}, calibrated to the claimed epsilon"
        for name, cls in _registry().items()
        if hasattr(cls, "calibrate")  # a class without a calibrator cannot be set to a claimed epsilon
    }
    return {**names, **FLAWED_MECHANISMS}


def _library_mechanisms() -> dict[str, dict[str, bool]]:
    """``--library`` names and their mechanisms (:data:`dpcore.library_adapters.LIBRARY_MECHANISMS`)."""
    from dpcore.library_adapters import LIBRARY_MECHANISMS

    return LIBRARY_MECHANISMS


def _flawed() -> Any:
    """The seeds' flawed mechanisms live with the book (``dpbook.flawed``); imported only when asked for."""
    return importlib.import_module("dpbook.flawed")


_DATA_RULE = "a JSON number such as 0 or 1.5, or a list of numbers (no true/false, null, strings or NaN)"


def _parse_data(name: str, text: str) -> Any:
    """``text`` as data: a finite JSON number or a (nested) non-empty list of them; booleans are refused.

    Integers must fit in 64 bits and floats be finite (``1e400``, ``NaN`` and
    ``Infinity`` are refused): ``true`` would silently be the number 1.
    """

    def refuse(detail: str) -> NoReturn:
        raise UsageError(f"{name} must be {_DATA_RULE}; got {text!r} ({detail})")

    def check(value: Any) -> None:
        if isinstance(value, bool) or value is None or isinstance(value, (str, dict)):
            refuse(f"contains {json.dumps(value)}")
        if isinstance(value, list):
            if not value:
                refuse("an empty list")
            for v in value:
                check(v)
        elif isinstance(value, int):
            if not -(1 << 63) <= value < (1 << 63):
                refuse("an integer beyond 64 bits")
        elif not math.isfinite(value):
            refuse("a number that is not finite")

    try:
        data = json.loads(text, parse_constant=lambda c: float(c))
    except (json.JSONDecodeError, ValueError):  # ValueError: an integer of more than 4300 digits
        refuse("not JSON")
    check(data)
    return data


def _load_callable(spec: str) -> Callable[..., Any]:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--callable must look like module:function (e.g. mymechs:noisy_count); got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's input problem
        raise UsageError(f"cannot import module {module_name!r} for --callable: {type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r} (from --callable {spec!r})") from None
    if not callable(obj):
        raise UsageError(f"--callable {spec!r} is not callable")
    return cast(Callable[..., Any], obj)


def _calibrated(name: str, epsilon: float, args: argparse.Namespace) -> tuple[Any, Any]:
    """A built-in audit target calibrated to ``epsilon`` (and ``--delta``), and its sensitivity."""
    import inspect

    import dpcore

    sensitivity = _positive("--sensitivity", 1.0 if args.sensitivity is None else args.sensitivity)
    _check_ratio(sensitivity, epsilon)
    if name in FLAWED_MECHANISMS:
        if name == "gaussian-variance-as-std":
            if args.delta is None:
                raise UsageError(f"audit --mechanism {name} needs --delta")
            sigma = dpcore.analytic_gaussian_sigma(sensitivity, epsilon, args.delta)
            return dpcore.ReleaseOutputs(_flawed().gaussian_variance_as_std, sigma=sigma), sensitivity
        stray = _flawed().laplace_stray_factor_two
        return dpcore.ReleaseOutputs(stray, sensitivity=sensitivity, epsilon=epsilon), sensitivity
    cls = _registry()[name]
    wanted = inspect.signature(cls.calibrate).parameters  # what the class's calibrator takes
    if "delta" in wanted and args.delta is None:
        raise UsageError(f"audit --mechanism {name} needs --delta")
    if "sensitivity" not in wanted and args.sensitivity is not None:
        raise UsageError(f"--sensitivity does not apply to --mechanism {name}")
    given = {"epsilon": epsilon, "delta": args.delta, "sensitivity": sensitivity}
    kwargs = {k: v for k, v in given.items() if k in wanted and v is not None}
    try:
        mech = cls.calibrate(**kwargs)
    except ValueError as exc:
        raise _as_usage_error(exc, given) from None
    return mech, getattr(mech, "sensitivity", 1)


#: Samples per chunk for a library's mechanism (a few microseconds a sample in Python loops): the progress
#: bar moves every fraction of a second, and a chunk's stream set-up (~30 us) stays negligible.
LIBRARY_CHUNK = 1 << 13


def _library_target(args: argparse.Namespace) -> tuple[Any, Any, Any, float, float]:
    """``(mechanism, d, d_prime, claimed epsilon, delta)`` for ``--library``: the library's own mechanism."""
    from dpcore.library_adapters import LIBRARY_MECHANISMS, LibraryMechanism

    library = args.library
    names = LIBRARY_MECHANISMS[library]
    if args.mechanism is None:
        raise UsageError(f"--library {library} needs --mechanism, one of {', '.join(names)}")
    if args.mechanism not in names:
        raise UsageError(f"--mechanism {args.mechanism} is not one of {library}'s: {', '.join(names)}")
    if args.epsilon is None:
        raise UsageError(f"audit --library {library} needs --epsilon (the epsilon the library calibrates to)")
    claimed = _positive("--epsilon", args.epsilon)
    delta = 0.0
    if names[args.mechanism]:
        if args.delta is None:
            raise UsageError(f"audit --library {library} --mechanism {args.mechanism} needs --delta")
        delta = _probability("--delta", args.delta)
    elif args.delta is not None:
        raise UsageError(f"--delta does not apply to {library}'s {args.mechanism} (pure epsilon-DP)")
    sensitivity = _positive("--sensitivity", 1.0 if args.sensitivity is None else args.sensitivity)
    _check_ratio(sensitivity, claimed)
    try:
        mechanism = LibraryMechanism(library, args.mechanism, claimed, delta, sensitivity)
    except ValueError as exc:
        raise _as_usage_error(exc, {"epsilon": claimed, "delta": delta, "sensitivity": sensitivity}) from None
    d = 0.0 if args.d is None else _parse_data("--d", args.d)
    d_prime = sensitivity if args.d_prime is None else _parse_data("--d-prime", args.d_prime)
    for option, value in (("--d", d), ("--d-prime", d_prime)):
        if isinstance(value, list):
            raise UsageError(
                f"{option} must be one number for --library (its mechanisms release one value); got {value}"
            )
    return mechanism, d, d_prime, claimed, delta


def cmd_audit(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    import dpcore

    n = _count("--samples", args.samples)
    if n < 2:
        raise UsageError("--samples must be at least 2")
    limit = dpcore.auditing.MAX_SAMPLES if args.max_samples is None else args.max_samples
    if n > limit:
        raise UsageError(
            f"--samples {n} is above the limit of {limit} per side (about 25 s per 10^9 samples on one core); "
            f"pass --max-samples {n} to go past it"
        )
    confidence = _probability("--confidence", args.confidence)
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {args.seed}")
    delta = 0.0
    claimed: float | None = None
    chunk_size = dpcore.auditing._DEFAULT_CHUNK
    if args.library:
        if args.callable:
            raise UsageError("give either --library (with --mechanism) or --callable, not both")
        mechanism, d, d_prime, claimed, delta = _library_target(args)
        label = str(mechanism)
        chunk_size = LIBRARY_CHUNK
    elif args.callable:
        if args.mechanism:
            raise UsageError("give either --mechanism or --callable, not both")
        mechanism = _load_callable(args.callable)
        d = _parse_data("--d", args.d if args.d is not None else "0")
        d_prime = _parse_data("--d-prime", args.d_prime if args.d_prime is not None else "1")
        if args.epsilon is not None:
            claimed = _positive("--epsilon", args.epsilon)
        if args.delta is not None:
            delta = _probability("--delta", args.delta)
        label = args.callable
    else:
        name = args.mechanism or "laplace"
        if name not in _builtin_mechanisms():
            raise UsageError(f"--mechanism {name} is a library's mechanism: give --library too (see --help)")
        if args.epsilon is None:
            raise UsageError(f"audit --mechanism {name} needs --epsilon (the epsilon it is calibrated to)")
        claimed = _positive("--epsilon", args.epsilon)
        if args.delta is not None:
            delta = _probability("--delta", args.delta)
        mechanism, sensitivity = _calibrated(name, claimed, args)
        d_prime = sensitivity if args.d_prime is None else _parse_data("--d-prime", args.d_prime)
        d = (0.0 if isinstance(sensitivity, float) else 0) if args.d is None else _parse_data("--d", args.d)
        label = f"{name} ({_builtin_mechanisms()[name]})"

    events = args.events or ("representation" if args.library else "threshold")
    try:
        res = dpcore.audit_epsilon(
            mechanism,
            d,
            d_prime,
            n,
            confidence=confidence,
            rng=args.seed,
            delta=delta,
            max_samples=limit,
            events=events,
            chunk_size=chunk_size,
        )
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - a user's mechanism that raises is bad input, not our crash
        if not (args.callable or args.library):  # a built-in that raises is dpcore's failure (main reports it)
            raise
        raise UsageError(f"the mechanism failed while being audited: {type(exc).__name__}: {exc}") from None

    violation = claimed is not None and res.epsilon_lower > claimed
    result: dict[str, Any] = {
        "mechanism": args.callable or (args.mechanism or "laplace"),
        "library": args.library,
        "events": events,
        "d": d,
        "d_prime": d_prime,
        "samples_per_side": n,
        "confidence": confidence,
        "delta": delta,
        "seed": args.seed,
        "claimed_epsilon": claimed,
        "epsilon_lower": res.epsilon_lower,
        "violation": violation,
        "best_event": {
            "tail": res.best.tail,
            "threshold": res.best.threshold,
            "numerator": res.best.numerator,
            "kind": res.best.kind,
            "event": res.best.event,
            "hits_numerator": res.best.hits_numerator,
            "hits_denominator": res.best.hits_denominator,
            "estimation_samples": res.n_estimation,
        },
        "explanation": res.explain(d, d_prime),
    }
    if claimed is None:
        verdict = "no epsilon claimed (pass --epsilon to test a claim)"
    elif violation:
        verdict = f"VIOLATION: the mechanism is not {_fmt(claimed)}-DP (confidence {_fmt(confidence)})"
    else:
        verdict = f"consistent with the claimed epsilon {_fmt(claimed)} (an audit can refute, never prove, a claim)"
    result["verdict"] = verdict
    rows: list[list[Any]] = [
        ["mechanism", label],
        ["calibrated as", repr(mechanism)],
        ["neighbours", f"d = {json.dumps(d)}, d' = {json.dumps(d_prime)}"],
        ["samples per side", f"{n:,}"],
        ["seed", "fresh entropy" if args.seed is None else args.seed],
        ["delta", delta],
        ["claimed epsilon", "—" if claimed is None else claimed],
        ["epsilon lower bound", res.epsilon_lower],
        ["confidence", confidence],
        ["events", f"{events} ({', '.join(res.event_kinds)})"],
        ["best event", res.explain(d, d_prime)],
        ["verdict", verdict],
    ]
    if args.library:
        rows.insert(5, ["randomness", "the library's own generator (--seed does not reproduce its draws)"])
    return result, _table(rows, ["audit", "value"])


# --------------------------------------------------------------------------- parser
_EPILOG_MAIN = """examples:
  python -m dpcore calibrate --sensitivity 1 --epsilon 0.5 --delta 1e-5
  python -m dpcore account --mechanism gaussian --sigma 2 --count 100 --delta 1e-5
  python -m dpcore account --mechanism laplace --scale 10 --count 50 --delta 1e-6
  python -m dpcore audit --mechanism laplace --epsilon 1 --samples 1000000 --seed 0
  python -m dpcore audit --callable mymodule:my_mechanism --d 0 --d-prime 1 --epsilon 1
  python -m dpcore calibrate --sensitivity 1 --epsilon 1 --delta 1e-6 --json

Bad input exits with status 2 and a one-line message; `audit` exits with 1
when it finds a violation of the claimed epsilon."""

_EPILOG_CALIBRATE = """examples:
  python -m dpcore calibrate --sensitivity 1 --epsilon 1
  python -m dpcore calibrate --sensitivity 1 --epsilon 0.5 --delta 1e-5
  python -m dpcore calibrate --sensitivity 2 --epsilon 3 --delta 1e-9 --json

  python -m dpcore calibrate --mechanism gaussian --count 100 --epsilon 1 --delta 1e-5
  python -m dpcore calibrate --mechanism laplace --count 10 --epsilon 1 --delta 1e-6
  python -m dpcore calibrate --mechanism subsampled-gaussian --sampling-rate 0.004267 \\
      --count 14062 --epsilon 3 --delta 1e-5 --json

The classic Gaussian formula is proven only for epsilon < 1 and is shown as
n/a above that; the analytic sigma is exact for every epsilon.

With --mechanism, the noise (sigma or scale) for --count composed releases is
the smallest whose certified epsilon (the PLD accountant's upper end; closed
forms for Gaussian releases and small Laplace compositions) is at most
--epsilon, within --rtol: at sigma * (1 - rtol) the certified lower end
exceeds --epsilon. The subsampled Gaussian's bound assumes Poisson
subsampling (each record independently with probability q); it does not
cover shuffled or fixed-size batches, as most training loops draw them
(Chua et al. 2024)."""

_EPILOG_ACCOUNT = """examples:
  python -m dpcore account --mechanism gaussian --sigma 1 --count 10 --delta 1e-5
  python -m dpcore account --mechanism gaussian --sigma 5 --count 1000 --delta 1e-5 --json
  python -m dpcore account --mechanism laplace --scale 10 --count 50 --delta 1e-6
  python -m dpcore account --mechanism discrete-laplace --scale 2 --sensitivity 1 --count 20 --delta 1e-6
  python -m dpcore account --mechanism randomized-response --epsilon0 1 --count 30 --delta 1e-6
  python -m dpcore account --mechanism subsampled-gaussian --sigma 1.1 --sampling-rate 0.004267 \\
      --count 14062 --delta 1e-5
  python -m dpcore account --mechanism subsampled-gaussian --sigma 1.1 --sampling-rate 0.004267 \\
      --count 14062 --delta 1e-5 --checkpoints 235,2344,7031

epsilon is the tightest certified upper bound found (method: exact, pld,
exact-laplace, exact-gaussian, rdp or basic-composition; certificate: what that
method's bound rests on); the PLD accountant also
gives a certified lower end (Laplace releases of one scale it composes exactly,
with no grid, up to about 150 of them at epsilon0 = 1: exact-laplace).
The options after --mechanism are the fields of its class in dpcore.mechanisms
(python -c "import dpcore; help(dpcore.LaplaceMechanism)").
--checkpoints 1,10,100 adds the certified epsilon after each of those steps.
The subsampled Gaussian's bound assumes Poisson subsampling, not shuffled or
fixed-size batches (Chua et al. 2024)."""

_EPILOG_AUDIT = """

examples:
  python -m dpcore audit --mechanism laplace --epsilon 1 --samples 1000000 --seed 0
  python -m dpcore audit --mechanism laplace-stray-factor-two --epsilon 1 --seed 0
  python -m dpcore audit --mechanism gaussian --epsilon 1 --delta 1e-5 --seed 1
  python -m dpcore audit --callable mymodule:mech --d 0 --d-prime 1 --epsilon 1
  python -m dpcore audit --library diffprivlib --mechanism laplace --epsilon 1 --samples 100000
  python -m dpcore audit --library opendp --mechanism gaussian --epsilon 1 --delta 1e-5
  python -m dpcore audit --library python-dp --mechanism laplace --epsilon 1 --confidence 0.999999

A --callable is imported from the current directory or the installed packages
and called as mech(data, size, rng): it must return a 1-D array of `size`
independent real outputs on input `data` (parsed from --d / --d-prime as JSON),
using the numpy Generator `rng` for its randomness.

--library audits a DP library's own mechanism, calibrated by the library to
--epsilon (--delta for the Gaussians) and --sensitivity, on inputs --d (default
0) and --d-prime (default the sensitivity): diffprivlib laplace and
gaussian-analytic, opendp laplace (make_laplace) and gaussian (make_gaussian,
zCDP converted to (epsilon, delta)), python-dp laplace (LaplaceMechanism) and
gaussian (GaussianMechanism); the pinned versions are in requirements.txt.
These libraries draw from their own random generators: --seed does not seed
them, so a library audit is not reproducible (its confidence holds anyway).
Library audits use --events representation by default: besides thresholds on
the value, events on how the floats are represented (an output that is not a
multiple of 2^k, off a lattice, or one of few exact values), which is how
precision attacks (Mironov 2012; Haney et al. 2022) refute float samplers.
An audit longer than a second shows a progress bar when stderr is a terminal."""


#: The range of each ``account`` option (a mechanism field), appended to its help: the constructor's domain.
_FIELD_RANGES = {
    "scale": ": laplace finite > 0; discrete-laplace a positive rational, numerator and denominator < 2**24",
    "sensitivity": ": finite > 0 (default 1); an integer, 1 to 10**7 (discrete-laplace) or 10**6 (discrete-gaussian)",
    "sigma": ": finite > 0; subsampled-gaussian needs sigma / sensitivity in [1e-100, 1e100]",
    "sigma2": ": a positive rational, numerator and denominator < 2**24",
    "epsilon0": ": finite > 0",
    "sampling_rate": ": in (0, 1]",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m dpcore`` (exposed for documentation and tests)."""
    parser = _Parser(
        prog="python -m dpcore",
        description="A differential-privacy calculator: calibrate noise, account for composition, "
        "audit a mechanism. Every number comes from the tested dpcore library.",
        epilog=_EPILOG_MAIN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="{calibrate,account,audit}", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--json",
            action="store_true",
            help='print one JSON object instead of a table (an infinite value is the string "inf")',
        )

    p = sub.add_parser(
        "calibrate",
        help="noise scale for a sensitivity and (epsilon[, delta])",
        description="Laplace scale, and classic and analytic Gaussian sigma.",
        epilog=_EPILOG_CALIBRATE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--sensitivity",
        type=_finite_float,
        default=1.0,
        help="global sensitivity (L1 for Laplace, L2 for Gaussian), > 0 (default 1)",
    )
    p.add_argument(
        "--epsilon",
        type=_finite_float,
        required=True,
        help="privacy parameter epsilon, finite and > 0 (the classic Gaussian row needs < 1); "
        "every scale or sigma must come out a normal double (2.2e-308 to 1.8e308)",
    )
    p.add_argument(
        "--delta",
        type=_finite_float,
        help="privacy parameter delta in (0, 1) (subnormal too), for the Gaussian rows; with --mechanism, "
        "required and >= 1e-10",
    )
    p.add_argument(
        "--mechanism",
        help="calibrate k composed releases instead: gaussian (sigma), laplace (scale) or subsampled-gaussian "
        "(sigma of one Poisson-subsampled DP-SGD step); the smallest noise whose certified epsilon is at most "
        "--epsilon (dpcore.calibrate_noise)",
    )
    p.add_argument(
        "--count", type=_bounded_int(MAX_COUNT), help="with --mechanism: number k of releases (steps), default 1"
    )
    p.add_argument(
        "--sampling-rate",
        dest="sampling_rate",
        type=_finite_float,
        help="with --mechanism subsampled-gaussian: the Poisson sampling rate q in (0, 1]. The bound assumes "
        "Poisson subsampling (each record independently with probability q), not shuffled or fixed-size "
        "batches (Chua et al. 2024)",
    )
    p.add_argument(
        "--rtol",
        type=_finite_float,
        help="with --mechanism: relative tolerance on the noise, in [1e-6, 0.1] (default 1e-3): noise * (1 - rtol) "
        "certainly exceeds --epsilon",
    )
    common(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser(
        "account",
        help="epsilon after k releases of a mechanism: the tightest certified bound (exact, PLD or RDP)",
        description="Compose k releases of a mechanism of dpcore.mechanisms with the PLD accountant "
        "(a certified bracket) and the RDP accountant; the exact epsilon (Gaussian) or basic composition "
        "(pure DP) is shown beside them, and the smallest certified upper bound is reported as epsilon.",
        epilog=_EPILOG_ACCOUNT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    registry = _registry()
    p.add_argument("--mechanism", choices=list(registry), required=True, help="the mechanism of each release")
    for field, owners in _parameter_fields().items():
        p.add_argument(
            _option(field),
            type=_finite_float,
            help=f"{field} of --mechanism {' / '.join(owners)}{_FIELD_RANGES.get(field, '')}",
        )
    p.add_argument("--count", type=_bounded_int(MAX_COUNT), required=True, help="number k of releases, 1 to 2**53")
    p.add_argument(
        "--delta",
        type=_finite_float,
        required=True,
        help="target delta in (0, 1); the PLD row needs delta >= 1e-10 (its FFT rounding floor), "
        "the exact and RDP rows take any delta down to 5e-324",
    )
    p.add_argument(
        "--checkpoints",
        help="epsilon over the run: certified epsilon after each of these step counts, comma-separated, each in "
        "[1, --count] (e.g. 1,10,100; --count is added), from one discretisation (dpcore.epsilon_over_run)",
    )
    common(p)
    p.set_defaults(func=cmd_account)

    p = sub.add_parser(
        "audit",
        help="lower confidence bound on a mechanism's epsilon, by sampling",
        description="Audit a built-in mechanism or your own module:function.",
        epilog=_EPILOG_AUDIT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    who = p.add_mutually_exclusive_group()
    builtins = _builtin_mechanisms()
    p.epilog = "built-in mechanisms:\n" + "\n".join(f"  {k:26s}{v}" for k, v in builtins.items()) + _EPILOG_AUDIT
    library_names = [m for names in _library_mechanisms().values() for m in names if m not in builtins]
    who.add_argument(
        "--mechanism",
        choices=list(builtins) + sorted(set(library_names)),
        help="a built-in mechanism (default laplace), or with --library one of that library's",
    )
    who.add_argument("--callable", metavar="MODULE:FUNCTION", help="your mechanism(data, size, rng)")
    p.add_argument(
        "--library",
        choices=list(_library_mechanisms()),
        help="audit this DP library's own mechanism (--mechanism laplace, gaussian-analytic for diffprivlib, "
        "gaussian for opendp and python-dp), calibrated by the library; its randomness is the library's own "
        "and is not seeded by --seed",
    )
    p.add_argument(
        "--events",
        choices=["threshold", "representation"],
        help="candidate events: threshold (tails of the value; default for built-ins and --callable) or "
        "representation (also: not a multiple of 2^k, off a lattice, exact values; default for --library)",
    )
    p.add_argument(
        "--epsilon",
        type=_finite_float,
        help="the epsilon the mechanism claims, finite and > 0 (built-ins are calibrated to it)",
    )
    p.add_argument("--delta", type=_finite_float, help="the delta of an (epsilon, delta) claim, in (0, 1)")
    p.add_argument(
        "--sensitivity", type=_finite_float, help="sensitivity of the built-in query, finite and > 0 (default 1)"
    )
    p.add_argument("--d", help="input on one side, as JSON: a number or a list of numbers (default 0)")
    p.add_argument(
        "--d-prime",
        dest="d_prime",
        help="input on the other side, as JSON (default: the sensitivity for a built-in, 1 for --callable)",
    )
    p.add_argument(
        "--samples",
        type=_bounded_int(MAX_COUNT),
        default=1_000_000,
        help="samples per side, 2 to --max-samples (default 1000000)",
    )
    p.add_argument(
        "--max-samples",
        dest="max_samples",
        type=_bounded_int(MAX_COUNT),
        help="raise the limit on --samples, 1 to 2**53 (default 10^9 per side, about half a minute per 10^9 "
        "on one core)",
    )
    p.add_argument(
        "--confidence", type=_finite_float, default=0.95, help="confidence of the bound, in (0, 1) (default 0.95)"
    )
    p.add_argument(
        "--seed", type=_bounded_int(MAX_SEED), help="seed, an int in [0, 2**128 - 1], for a reproducible audit"
    )
    common(p)
    p.set_defaults(func=cmd_audit)
    return parser


def _where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of ``exc`` (for an internal error's one line)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    last = frames[-1]
    return f"{os.path.basename(last.filename)}:{last.lineno}"


def _json_ready(value: Any, path: str = "result") -> Any:
    """``value`` with every infinite float written as ``"inf"``/``"-inf"``; a NaN is an internal error."""
    if isinstance(value, dict):
        return {k: _json_ready(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, numbers.Integral):  # a numpy integer: a JSON integer, as a Python int is
        return int(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        raise InternalError(f"the computation gave NaN for {path.removeprefix('result.')}")
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _given(argv: Sequence[str]) -> str:
    """The options as given (without ``--json``), to name them when the library's message cannot."""
    return " ".join(a for a in argv if a != "--json")


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``args.func(args)`` with every warning recorded: a floating-point warning fails the command."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, text = args.func(args)
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            where = f"{os.path.basename(w.filename)}:{w.lineno}"
            raise InternalError(
                f"the computation raised {w.category.__name__}: {w.message} (at {where}), so its result is not reported"
            )
    json_ready = _json_ready(result)  # refuses a NaN in the table output too
    return json_ready, text


#: What the math module's functions raise (as ValueError) outside their domain: a library failure, never a rule.
_BARE_MATH_ERRORS = ("math domain error", "math range error")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the calculator; returns the exit status (0 ok, 1 audit violation, 2 bad input or a failure).

    The one place where failures become one line on stderr (see the module docstring).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)  # _Parser.error exits with 2 and one line on malformed input
    prefix = f"{parser.prog} {args.command}: error:"
    try:
        result, text = _run(args)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        return 130
    except (UsageError, ValueError, KeyError) as exc:
        if str(exc) in _BARE_MATH_ERRORS:  # the math module's ValueError: not a validation, a library failure
            print(
                f"{prefix} at {_given(argv)}: {exc} (at {_where(exc)}; internal error: please report it)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        msg = _one_line(exc.args[0] if exc.args else str(exc))
        if not msg.startswith("--") and not isinstance(exc, UsageError):  # the library names its own parameter
            msg = f"at {_given(argv)}: {msg}"
        print(f"{prefix} {msg}", file=sys.stderr)
        return EXIT_USAGE
    except InternalError as exc:
        print(f"{prefix} at {_given(argv)}: {_one_line(str(exc))} (internal error: please report it)", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - a library failure at these options: one line, never a traceback
        print(
            f"{prefix} at {_given(argv)}: {type(exc).__name__}: {_one_line(str(exc))} (at {_where(exc)}; "
            "internal error: please report it)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(text)
    if args.command == "audit" and result.get("violation"):
        return EXIT_VIOLATION
    return EXIT_OK
