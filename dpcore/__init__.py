"""dpcore: the tested numerical core of the differential-privacy verification book.

It imports numpy and scipy only; the book's own machinery (ledger, evidence,
symbolic helpers, flawed mechanisms, calibration experiments) is the separate
package ``dpbook``.

Every public name is importable from ``dpcore`` directly. Submodules:

* :mod:`dpcore.mechanisms` -- mechanisms as objects (sample, delta, epsilon, rdp, calibrate);
* :mod:`dpcore.laplace` -- Laplace scale and mechanism;
* :mod:`dpcore.sensitivity` -- brute-force global sensitivity over small universes;
* :mod:`dpcore.attacks` -- attacks on releases (differencing, likelihood-ratio tests);
* :mod:`dpcore.privacy_loss` -- the Laplace mechanism's privacy loss and exact event probabilities;
* :mod:`dpcore.event_ratios` -- confidence bounds on event ratios from samples;
* :mod:`dpcore.gaussian` -- (epsilon, delta) Gaussian mechanism, classic and analytic;
* :mod:`dpcore.rdp` -- Renyi DP: divergences, RDP curves, conversion, accountant;
* :mod:`dpcore.pld` -- privacy-loss distributions: the tight accountant with a certified bracket, built on
  :mod:`dpcore.pld_losses` (the loss laws), :mod:`dpcore.pld_grid` (their discretisations) and
  :mod:`dpcore.pld_spectral` (their composition);
* :mod:`dpcore.calibrate_composed` -- noise calibration for composed mechanisms, epsilon over a run;
* :mod:`dpcore.laplace_composition` -- exact composition of the Laplace mechanism (up to rounding);
* :mod:`dpcore.subsampled_gaussian` -- the Poisson-subsampled Gaussian's exact one-step profile;
* :mod:`dpcore.auditing` -- empirical privacy auditing by sampling;
* :mod:`dpcore.representation` -- audit events over how float outputs are represented (precision, lattice, values);
* :mod:`dpcore.library_adapters` -- the mechanisms of installed DP libraries as audit targets;
* :mod:`dpcore.discrete` -- floating-point-safe (exact integer) mechanisms;
* :mod:`dpcore.floating_point` -- the textbook float Laplace mechanism and Mironov's attack on it;
* :mod:`dpcore.montecarlo` -- Monte Carlo claims as hypothesis tests;
* :mod:`dpcore.independence` -- exact tests that draws (chunked, threaded) are independent;
"""

from . import (
    attacks,
    auditing,
    calibrate_composed,
    discrete,
    event_ratios,
    floating_point,
    gaussian,
    independence,
    laplace,
    laplace_composition,
    library_adapters,
    mechanisms,
    montecarlo,
    pld,
    pld_grid,
    pld_losses,
    pld_spectral,
    privacy_loss,
    rdp,
    representation,
    sensitivity,
    subsampled_gaussian,
)
from ._validation import as_generator, as_seed_sequence, seed_offset
from .attacks import *  # noqa: F403
from .auditing import *  # noqa: F403
from .calibrate_composed import *  # noqa: F403
from .discrete import *  # noqa: F403
from .event_ratios import *  # noqa: F403
from .floating_point import *  # noqa: F403
from .gaussian import *  # noqa: F403
from .laplace import *  # noqa: F403
from .laplace_composition import *  # noqa: F403
from .library_adapters import *  # noqa: F403
from .mechanisms import *  # noqa: F403
from .montecarlo import *  # noqa: F403
from .pld import *  # noqa: F403
from .pld_losses import *  # noqa: F403
from .privacy_loss import *  # noqa: F403
from .rdp import *  # noqa: F403
from .representation import *  # noqa: F403
from .sensitivity import *  # noqa: F403
from .subsampled_gaussian import *  # noqa: F403

__version__ = "0.1.0"

__all__ = [
    "as_generator",
    "as_seed_sequence",
    "seed_offset",
    *montecarlo.__all__,
    "montecarlo",
    "independence",
    "pld_losses",
    "pld_grid",
    "pld_spectral",
    *laplace.__all__,
    *mechanisms.__all__,
    *sensitivity.__all__,
    *attacks.__all__,
    *privacy_loss.__all__,
    *gaussian.__all__,
    *rdp.__all__,
    *pld.__all__,
    *calibrate_composed.__all__,
    *pld_losses.__all__,
    *laplace_composition.__all__,
    *subsampled_gaussian.__all__,
    *auditing.__all__,
    *representation.__all__,
    *library_adapters.__all__,
    *discrete.__all__,
    *event_ratios.__all__,
    *floating_point.__all__,
]
