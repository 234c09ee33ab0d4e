"""Every public callable returning an epsilon, delta, sigma, scale, bracket or probability states its domain.

Issue 28, item 1: each such callable's numpy-style docstring has a Parameters
entry for every parameter of its signature (where its supported range is
stated) and a Raises section naming ``ValueError`` (the limits). The families
are listed here explicitly: a new function of these kinds must be added to
:data:`FAMILIES` deliberately. A constructor is checked against the class
docstring (numpydoc's convention for dataclasses); parameters whose name
starts with ``_`` are private fields, not part of the documented signature.
The checker is shown to reject incomplete docstrings (negative controls).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

import dpcore

MECHANISMS = (
    "LaplaceMechanism",
    "GaussianMechanism",
    "DiscreteLaplaceMechanism",
    "DiscreteGaussianMechanism",
    "RandomizedResponse",
    "SubsampledGaussianMechanism",
)

#: family -> dotted names under ``dpcore`` (``Class`` means its constructor, ``Class.method`` a method).
FAMILIES: dict[str, tuple[str, ...]] = {
    "mechanisms": tuple(
        f"{cls}{suffix}"
        for cls in MECHANISMS
        for suffix in ("", ".calibrate", ".delta", ".epsilon", ".rdp")
        if not (cls in ("DiscreteGaussianMechanism", "SubsampledGaussianMechanism") and suffix == ".calibrate")
    ),
    "pld": (
        "PldAccountant",
        "PldAccountant.compose",
        "PldAccountant.epsilon",
        "PldAccountant.epsilon_bracket",
        "PldAccountant.epsilon_bracket_details",
        "PldAccountant.delta_bracket",
    ),
    "rdp": (
        "RdpAccountant",
        "RdpAccountant.compose",
        "RdpAccountant.compose_gaussian",
        "RdpAccountant.compose_laplace",
        "RdpAccountant.compose_rdp",
        "RdpAccountant.epsilon",
        "RdpAccountant.epsilon_and_order",
        "renyi_divergence",
        "gaussian_rdp",
        "laplace_rdp",
        "subsampled_gaussian_rdp",
        "rdp_to_dp",
        "classical_rdp_to_dp",
    ),
    "laplace_composition": ("laplace_composition_delta", "laplace_composition_epsilon"),
    "calibrate_composed": ("calibrate_noise", "epsilon_over_run"),
    "subsampled_gaussian": ("subsampled_gaussian_delta", "subsampled_gaussian_epsilon"),
    "gaussian": (
        "gaussian_delta",
        "gaussian_log_delta",
        "gaussian_epsilon",
        "classic_gaussian_sigma",
        "analytic_gaussian_sigma",
        "analytic_gaussian_sigma_many",
        "exact_gaussian_composition_epsilon",
    ),
    "laplace": ("laplace_scale",),
    "discrete": ("discrete_laplace_pmf", "discrete_gaussian_pmf"),
    "privacy_loss": (
        "laplace_privacy_loss",
        "laplace_interval_probability",
        "laplace_interval_log_probability",
        "laplace_box_log_probability",
        "laplace_max_interval_log_ratio",
        "laplace_kl_divergence",
    ),
    "event_ratios": (
        "event_ratio_bounds",
        "sample_interval_ratio_bounds",
        "event_detection_miss",
        "EventRatioBounds.epsilon_lower_at",
    ),
    "auditing": ("audit_epsilon", "audit_threshold_events"),
    "montecarlo": (
        "check_probability",
        "probability_result",
        "clopper_pearson_bounds",
        "probability_acceptance",
        "check_bounded_mean",
        "check_mean",
        "check_variance",
        "check_cdf",
        "check_law",
        "median_of_means_radius",
    ),
}

_SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}$", re.MULTILINE)


def _sections(doc: str) -> dict[str, str]:
    """The numpy-style sections of a (cleaned) docstring, by title."""
    heads = list(_SECTION.finditer(doc))
    ends = [h.start() for h in heads[1:]] + [len(doc)] if heads else []
    return {h["title"]: doc[h.end() : end] for h, end in zip(heads, ends, strict=True)}


def documented_parameters(doc: str) -> dict[str, str]:
    """Parameter name -> its description, from the Parameters section (``a, b : float`` documents both)."""
    body = _sections(doc).get("Parameters", "")
    out: dict[str, str] = {}
    names: list[str] = []
    for line in body.splitlines():
        if line and not line[0].isspace():  # an entry: "name : type", "name", "a, b : type"
            names = [n.strip().lstrip("*") for n in line.split(" : ")[0].split(",")]
            for n in names:
                out[n] = ""
        elif line.strip():
            for n in names:
                out[n] += line.strip() + " "
    return out


def problems(func: Callable[..., Any], doc: str | None = None) -> list[str]:
    """What the docstring of ``func`` (or ``doc``) lacks: a Parameters entry, a description, a Raises ValueError."""
    text = inspect.cleandoc(doc if doc is not None else func.__doc__ or "")
    params = [
        p.name
        for p in inspect.signature(func).parameters.values()
        if p.name not in ("self", "cls") and not p.name.startswith("_")
    ]
    found = documented_parameters(text)
    out = [f"no Parameters entry for {p!r}" for p in params if p not in found]
    out += [f"empty description of {p!r}" for p in params if p in found and not found[p].strip()]
    raises = _sections(text).get("Raises")
    if raises is None or "ValueError" not in raises:
        out.append("no Raises section naming ValueError")
    return out


def _resolve(dotted: str) -> tuple[Callable[..., Any], str | None]:
    """The callable named ``dotted`` under dpcore and the docstring that documents it."""
    head, _, method = dotted.partition(".")
    obj = getattr(dpcore, head)
    if not method:
        return obj, obj.__doc__  # a class: its constructor, documented in the class docstring
    func = inspect.getattr_static(obj, method)
    func = func.__func__ if isinstance(func, classmethod | staticmethod) else func
    return func, func.__doc__


ALL = [name for names in FAMILIES.values() for name in names]


def test_families_are_public() -> None:
    for name in ALL:
        assert name.partition(".")[0] in dpcore.__all__, name


@pytest.mark.parametrize("name", ALL)
def test_domain_is_documented(name: str) -> None:
    func, doc = _resolve(name)
    assert problems(func, doc) == [], name


def test_checker_rejects_incomplete_docstrings() -> None:
    def no_raises(epsilon: float, delta: float) -> float:
        """A function that documents its parameters but not its errors.

        Parameters
        ----------
        epsilon : float
            Finite and >= 0.
        delta : float
            In (0, 1).
        """
        return epsilon + delta

    def missing_parameter(epsilon: float, delta: float) -> float:
        """A function that forgets one parameter.

        Parameters
        ----------
        epsilon : float
            Finite and >= 0.

        Raises
        ------
        ValueError
            If ``epsilon`` is negative.
        """
        return epsilon + delta

    def undescribed(epsilon: float) -> float:
        """A parameter named with no range.

        Parameters
        ----------
        epsilon : float

        Raises
        ------
        ValueError
            Never.
        """
        return epsilon

    def complete(epsilon: float, delta: float = 0.0) -> float:
        """A complete one.

        Parameters
        ----------
        epsilon, delta : float
            Finite and >= 0.

        Raises
        ------
        ValueError
            If either is negative.
        """
        return epsilon + delta

    assert problems(no_raises) == ["no Raises section naming ValueError"]
    assert problems(missing_parameter) == ["no Parameters entry for 'delta'"]
    assert problems(undescribed) == ["empty description of 'epsilon'"]
    assert problems(complete) == []
    assert problems(lambda x: x) == ["no Parameters entry for 'x'", "no Raises section naming ValueError"]


def test_every_account_option_states_its_range() -> None:
    from dpcore import cli

    missing = set(cli._parameter_fields()) - set(cli._FIELD_RANGES)
    assert not missing, f"account options without a stated range in dpcore.cli._FIELD_RANGES: {sorted(missing)}"
