"""dpcore: the tested numerical core of the differential-privacy verification book.

Public names are importable from ``dpcore`` directly; submodules:

* :mod:`dpcore.laplace` -- Laplace scale and mechanism;
* :mod:`dpcore.montecarlo` -- Monte Carlo claims as hypothesis tests;
* :mod:`dpcore.symbolic` -- shared sympy symbols and densities;
* :mod:`dpcore.ledger` -- the registry of verified claims and seed errata.
"""

from . import ledger, montecarlo, symbolic
from ._validation import as_generator
from .laplace import laplace_mechanism, laplace_scale
from .montecarlo import (
    CheckResult,
    check_bounded_mean,
    check_cdf,
    check_mean,
    check_probability,
    check_variance,
    probability_result,
)

__version__ = "0.1.0"

__all__ = [
    "as_generator",
    "laplace_scale",
    "laplace_mechanism",
    "CheckResult",
    "check_probability",
    "probability_result",
    "check_bounded_mean",
    "check_mean",
    "check_variance",
    "check_cdf",
    "ledger",
    "montecarlo",
    "symbolic",
]
