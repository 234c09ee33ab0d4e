r"""Adapters that let :func:`dpcore.audit_epsilon` audit the mechanisms of installed DP libraries, black-box.

Each adapter is a small picklable callable ``mechanism(data, size, rng)``
(the signature :func:`dpcore.audit_epsilon` samples) that builds the
library's own mechanism, calibrated *by the library* to the claimed
:math:`(\varepsilon, \delta)` and sensitivity, and returns ``size``
independent releases of the real number ``data``:

* diffprivlib ``laplace``: ``diffprivlib.mechanisms.Laplace(epsilon, sensitivity).randomise``;
* diffprivlib ``gaussian-analytic``: ``GaussianAnalytic(epsilon, delta, sensitivity).randomise``;
* opendp ``laplace``: ``opendp.measurements.make_laplace`` on a vector of floats, L1 distance,
  ``scale = sensitivity / epsilon``;
* opendp ``gaussian``: ``make_gaussian`` (L2 distance; zCDP) converted by ``make_zCDP_to_approxDP``
  and ``make_fix_delta``, its scale found by ``opendp.binary_search_param`` for (epsilon, delta);
* python-dp ``laplace``: ``pydp.algorithms.numerical_mechanisms.LaplaceMechanism(epsilon,
  sensitivity).add_noise``;
* python-dp ``gaussian``: ``GaussianMechanism(epsilon, delta, sensitivity).add_noise``.

Aliases: ``make_laplace``/``make_gaussian`` (OpenDP), ``LaplaceMechanism``/
``GaussianMechanism`` (python-dp), ``Laplace``/``GaussianAnalytic``
(diffprivlib); ``pydp`` for ``python-dp``. The versions audited in this
repository are pinned in ``requirements.txt`` (diffprivlib 0.6.6, OpenDP
0.16.0, python-dp 1.1.5).

**Randomness.** These libraries draw from their own generators (the
operating system's, through ``secrets``, OpenSSL or their C++ core), which
cannot be seeded from outside: the ``rng`` the auditor passes is *not used*,
so an audit of a library mechanism is not reproducible from its seed (its
validity does not depend on that: the bound holds for independent outputs,
whatever generator made them). Each process builds its own library object
(the cache is keyed by process id), so a process pool does not share a
generator's state between workers; use a pool that spawns its workers
(``multiprocessing.get_context("spawn")``) when the library keeps user-space
generator state, so that forked children cannot inherit it.

The libraries are imported only when an adapter is first called; a missing
one is a ``ValueError`` naming the package to install.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import check_real

__all__ = ["LibraryMechanism", "LIBRARY_MECHANISMS", "library_mechanism"]

#: library -> mechanism -> whether its claim needs a delta.
LIBRARY_MECHANISMS: dict[str, dict[str, bool]] = {
    "diffprivlib": {"laplace": False, "gaussian-analytic": True},
    "opendp": {"laplace": False, "gaussian": True},
    "python-dp": {"laplace": False, "gaussian": True},
}
_LIBRARY_ALIASES = {"pydp": "python-dp", "google-dp": "python-dp"}
_MECHANISM_ALIASES = {
    "make_laplace": "laplace",
    "make_gaussian": "gaussian",
    "laplacemechanism": "laplace",
    "gaussianmechanism": "gaussian",
    "gaussiananalytic": "gaussian-analytic",
}
#: The import name and the distribution name (for ``pip install``) of each library.
_PACKAGES = {
    "diffprivlib": ("diffprivlib", "diffprivlib"),
    "opendp": ("opendp", "opendp"),
    "python-dp": ("pydp", "python-dp"),
}

_CACHE: dict[tuple[Any, ...], Callable[[float, int], NDArray[np.float64]]] = {}


@dataclass(frozen=True)
class LibraryMechanism:
    r"""``mechanism(data, size, rng)``: ``size`` releases of ``data`` by a DP library's own mechanism.

    Parameters
    ----------
    library : str
        ``"diffprivlib"``, ``"opendp"`` or ``"python-dp"`` (alias ``"pydp"``).
    mechanism : str
        A mechanism of that library (:data:`LIBRARY_MECHANISMS`; the module
        docstring lists the calls and the aliases).
    epsilon : float
        The claimed epsilon the library calibrates to, finite and > 0.
    delta : float
        The claimed delta, in (0, 1) for the Gaussian mechanisms; must be 0 (the
        default) for the Laplace mechanisms, which claim pure epsilon-DP.
    sensitivity : float
        The query's sensitivity (L1 for Laplace, L2 for Gaussian), finite and > 0 (default 1).

    Raises
    ------
    ValueError
        If the library or mechanism is unknown, a parameter is outside its
        range, a Gaussian mechanism has no delta or a Laplace one has a
        delta; when called, if the library is not installed (the message names
        the package), refuses the parameters, or ``data`` is not a real number.
    """

    library: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        lib = _LIBRARY_ALIASES.get(str(self.library).lower(), str(self.library).lower())
        if lib not in LIBRARY_MECHANISMS:
            raise ValueError(f"library must be one of {', '.join(LIBRARY_MECHANISMS)}; got {self.library!r}")
        mech = str(self.mechanism)
        mech = _MECHANISM_ALIASES.get(mech.lower(), mech.lower())
        if mech not in LIBRARY_MECHANISMS[lib]:
            raise ValueError(
                f"mechanism must be one of {', '.join(LIBRARY_MECHANISMS[lib])} for library {lib}; "
                f"got {self.mechanism!r}"
            )
        eps = check_real("epsilon", self.epsilon)
        if not eps > 0:
            raise ValueError(f"epsilon must be finite and > 0; got {self.epsilon!r}")
        sens = check_real("sensitivity", self.sensitivity)
        if not sens > 0:
            raise ValueError(f"sensitivity must be finite and > 0; got {self.sensitivity!r}")
        delta = check_real("delta", self.delta)
        if LIBRARY_MECHANISMS[lib][mech]:
            if not 0.0 < delta < 1.0:
                raise ValueError(f"delta must lie in (0, 1) for {lib}'s {mech} mechanism; got {self.delta!r}")
        elif delta != 0.0:
            raise ValueError(f"delta must be 0 for {lib}'s {mech} mechanism (pure epsilon-DP); got {self.delta!r}")
        object.__setattr__(self, "library", lib)
        object.__setattr__(self, "mechanism", mech)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "sensitivity", sens)

    def __call__(self, data: Any, size: int, rng: Any = None) -> NDArray[np.float64]:
        """``size`` releases of ``data`` (``rng`` is not used: the library draws its own randomness)."""
        if isinstance(data, bool) or not isinstance(data, (int, float, np.integer, np.floating)):
            raise ValueError(f"the library adapters release one real number; data must be a number, got {data!r}")
        x = float(data)
        if not math.isfinite(x):
            raise ValueError(f"data must be finite; got {data!r}")
        key = (os.getpid(), self.library, self.mechanism, self.epsilon, self.delta, self.sensitivity)
        release = _CACHE.get(key)
        if release is None:
            try:
                release = _BUILDERS[(self.library, self.mechanism)](self)
            except ValueError:
                raise
            except Exception as exc:  # noqa: BLE001 - the library refusing the claim is bad input, said in one line
                raise ValueError(
                    f"{self.library} refused {self.mechanism} at {self}: {type(exc).__name__}: {exc}"
                ) from None
            _CACHE[key] = release
        return release(x, int(size))

    @property
    def version(self) -> str:
        """The installed version of the library (``"not installed"`` if it is absent)."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(_PACKAGES[self.library][1])
        except PackageNotFoundError:
            return "not installed"

    def __str__(self) -> str:
        delta = f", delta={self.delta:g}" if self.delta else ""
        return (
            f"{self.library} {self.version} {self.mechanism}(epsilon={self.epsilon:g}{delta}, "
            f"sensitivity={self.sensitivity:g}; the library's own randomness)"
        )


def library_mechanism(
    library: str, mechanism: str, epsilon: float, delta: float = 0.0, sensitivity: float = 1.0
) -> LibraryMechanism:
    """The adapter :class:`LibraryMechanism` for ``library``'s ``mechanism`` calibrated to the claim.

    Parameters
    ----------
    library : str
        ``"diffprivlib"``, ``"opendp"`` or ``"python-dp"``.
    mechanism : str
        One of :data:`LIBRARY_MECHANISMS` ``[library]`` (or an alias).
    epsilon : float
        The claimed epsilon, finite and > 0.
    delta : float
        The claimed delta: in (0, 1) for the Gaussian mechanisms, 0 for the Laplace ones.
    sensitivity : float
        Finite and > 0 (default 1).

    Raises
    ------
    ValueError
        As :class:`LibraryMechanism`.
    """
    return LibraryMechanism(library, mechanism, epsilon, delta, sensitivity)


def _import(library: str, module: str) -> Any:
    """``module`` of ``library``, or a ValueError naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        dist = _PACKAGES[library][1]
        raise ValueError(
            f"library {library} is not installed ({exc}); install the pinned version from requirements.txt "
            f"(pip install {dist})"
        ) from None


def _scalar_loop(noisy: Callable[[float], Any]) -> Callable[[float, int], NDArray[np.float64]]:
    """A release of one value at a time, called ``size`` times."""

    def release(x: float, size: int) -> NDArray[np.float64]:
        return np.fromiter((noisy(x) for _ in range(size)), dtype=np.float64, count=size)

    return release


def _diffprivlib_laplace(m: LibraryMechanism) -> Callable[[float, int], NDArray[np.float64]]:
    mechs = _import("diffprivlib", "diffprivlib.mechanisms")
    return _scalar_loop(mechs.Laplace(epsilon=m.epsilon, delta=0.0, sensitivity=m.sensitivity).randomise)


def _diffprivlib_gaussian(m: LibraryMechanism) -> Callable[[float, int], NDArray[np.float64]]:
    mechs = _import("diffprivlib", "diffprivlib.mechanisms")
    return _scalar_loop(mechs.GaussianAnalytic(epsilon=m.epsilon, delta=m.delta, sensitivity=m.sensitivity).randomise)


def _opendp(measurement: Any) -> Callable[[float, int], NDArray[np.float64]]:
    def release(x: float, size: int) -> NDArray[np.float64]:
        return np.asarray(measurement([x] * size), dtype=np.float64)

    return release


def _opendp_laplace(m: LibraryMechanism) -> Callable[[float, int], NDArray[np.float64]]:
    dp = _import("opendp", "opendp.prelude")
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    meas = dp.m.make_laplace(*space, scale=m.sensitivity / m.epsilon)
    if meas.map(m.sensitivity) > m.epsilon * (1 + 1e-9):
        raise ValueError(f"opendp's make_laplace does not certify epsilon {m.epsilon} at scale sensitivity/epsilon")
    return _opendp(meas)


def _opendp_gaussian(m: LibraryMechanism) -> Callable[[float, int], NDArray[np.float64]]:
    dp = _import("opendp", "opendp.prelude")
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)

    def make(scale: float) -> Any:
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=scale)), m.delta)

    scale = dp.binary_search_param(make, d_in=m.sensitivity, d_out=(m.epsilon, m.delta))
    return _opendp(make(scale))


def _pydp_laplace(m: LibraryMechanism) -> Callable[[float, int], NDArray[np.float64]]:
    mechs = _import("python-dp", "pydp.algorithms.numerical_mechanisms")
    return _scalar_loop(mechs.LaplaceMechanism(epsilon=m.epsilon, sensitivity=m.sensitivity).add_noise)


def _pydp_gaussian(m: LibraryMechanism) -> Callable[[float, int], NDArray[np.float64]]:
    mechs = _import("python-dp", "pydp.algorithms.numerical_mechanisms")
    return _scalar_loop(mechs.GaussianMechanism(epsilon=m.epsilon, delta=m.delta, sensitivity=m.sensitivity).add_noise)


_BUILDERS: dict[tuple[str, str], Callable[[LibraryMechanism], Callable[[float, int], NDArray[np.float64]]]] = {
    ("diffprivlib", "laplace"): _diffprivlib_laplace,
    ("diffprivlib", "gaussian-analytic"): _diffprivlib_gaussian,
    ("opendp", "laplace"): _opendp_laplace,
    ("opendp", "gaussian"): _opendp_gaussian,
    ("python-dp", "laplace"): _pydp_laplace,
    ("python-dp", "gaussian"): _pydp_gaussian,
}
