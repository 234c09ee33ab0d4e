r"""High-precision reference values, computed with mpmath and independently of dpcore.

The one place for the formulas that tests, benchmarks and chapters compare
dpcore against. Each is the textbook formula evaluated at ``dps`` significant
digits (50 by default), with a root found by bracketing where a formula
must be inverted; none calls dpcore, so a fault in dpcore cannot hide in its
own reference.

* :func:`gaussian_delta`, :func:`gaussian_log_delta`: the privacy profile of
  the Gaussian mechanism, :math:`\delta(\varepsilon) = \Phi(\tfrac{1}{2s} -
  \varepsilon s) - e^\varepsilon\Phi(-\tfrac{1}{2s} - \varepsilon s)` with
  :math:`s = \sigma/\Delta` (Balle & Wang 2018, Theorem 8);
  :func:`gaussian_delta_chi`, the same in the chi form of Bao et al. (2021);
* :func:`gaussian_epsilon`: its inverse, 0 where :math:`\delta(0) \le \delta`;
* :func:`analytic_sigma`: the smallest :math:`\sigma` with
  :math:`\delta_\sigma(\varepsilon) \le \delta`, a root of the chi equation;
* :func:`laplace_rdp`: Mironov (2017), Proposition 6;
* :func:`renyi_by_quadrature`: :math:`D_\alpha(P\|Q)` by tanh-sinh quadrature.

Values are returned as ``mpmath.mpf``; convert with ``float`` where a double
is wanted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mpmath as mp

__all__ = [
    "DPS",
    "gaussian_delta",
    "gaussian_log_delta",
    "gaussian_delta_chi",
    "gaussian_epsilon",
    "analytic_sigma",
    "laplace_rdp",
    "renyi_by_quadrature",
]

#: significant digits of every reference value unless a call asks otherwise
DPS = 50


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    r"""Theorem 8 of Balle & Wang (2018) directly: :math:`\Phi(a) - e^\varepsilon\Phi(b)`."""
    with mp.workdps(dps):
        s, e = mp.mpf(sigma) / mp.mpf(sensitivity), mp.mpf(epsilon)
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def gaussian_log_delta(sigma: float, epsilon: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    """``log`` of :func:`gaussian_delta` (for profiles that underflow a double)."""
    with mp.workdps(dps):
        return mp.log(gaussian_delta(sigma, epsilon, sensitivity, dps))


def gaussian_delta_chi(sigma: float, epsilon: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    r"""The profile in the chi form of Bao et al. (2021).

    :math:`(\operatorname{erfc}\chi - e^\varepsilon\operatorname{erfc}\sqrt{\chi^2+\varepsilon})/2`
    with :math:`\chi = (\varepsilon s - 1/(2s))/\sqrt2`; equal to
    :func:`gaussian_delta` by :math:`\Phi(x) = \operatorname{erfc}(-x/\sqrt2)/2`.
    """
    with mp.workdps(dps):
        s, e = mp.mpf(sigma) / mp.mpf(sensitivity), mp.mpf(epsilon)
        c = (e * s - 1 / (2 * s)) / mp.sqrt(2)
        return (mp.erfc(c) - mp.exp(e) * mp.erfc(mp.sqrt(c * c + e))) / 2


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    """The epsilon >= 0 with ``gaussian_delta(sigma, epsilon) = delta``; 0 if ``gaussian_delta(sigma, 0) <= delta``.

    The root is bracketed by doubling and found by bisection in log space to
    a relative width of ``10**-(dps - 10)``: slow, but correct without a
    starting guess.
    """
    with mp.workdps(dps):
        d = mp.mpf(delta)
        if gaussian_delta(sigma, 0, sensitivity, dps) <= d:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mp.mpf(1)
        while gaussian_delta(sigma, hi, sensitivity, dps) > d:
            lo, hi = hi, 2 * hi
        tol = mp.mpf(10) ** -(dps - 10)
        while hi - lo > tol * hi:
            mid = (lo + hi) / 2
            if gaussian_delta(sigma, mid, sensitivity, dps) > d:
                lo = mid
            else:
                hi = mid
        return hi


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, dps: int = DPS) -> mp.mpf:
    r"""The smallest sigma with :math:`\delta_\sigma(\varepsilon) \le \delta`: the root of the chi equation.

    :math:`\log(\operatorname{erfc}\chi - e^\varepsilon\operatorname{erfc}\sqrt{\chi^2+\varepsilon}) = \log 2\delta`,
    then :math:`\sigma = \Delta/(\sqrt2(\sqrt{\chi^2+\varepsilon} - \chi))`. The
    bracket's upper end :math:`\sqrt{-\log 2\delta}` is valid because
    :math:`\operatorname{erfc} x \le e^{-x^2}` for :math:`x \ge 0`.
    """
    with mp.workdps(dps):
        e, target = mp.mpf(epsilon), mp.log(2 * mp.mpf(delta))

        def f(c: mp.mpf) -> mp.mpf:
            return mp.log(mp.erfc(c) - mp.exp(e) * mp.erfc(mp.sqrt(c * c + e))) - target

        hi = mp.sqrt(max(mp.mpf(0), -target))
        if f(hi) > 0:
            raise ArithmeticError(f"no bracket for epsilon={epsilon}, delta={delta}")
        w = mp.mpf(1)
        while f(hi - w) < 0:
            w *= 2
        chi = mp.findroot(f, (hi - w, hi), solver="illinois", tol=mp.mpf(10) ** (-2 * dps + 10))
        return mp.mpf(sensitivity) / (mp.sqrt(2) * (mp.sqrt(chi * chi + e) - chi))


def laplace_rdp(alpha: float, b: float, sensitivity: float = 1.0, dps: int = 60) -> mp.mpf:
    r"""RDP of the Laplace mechanism, Mironov (2017), Proposition 6, with :math:`r = \Delta/b`.

    .. math:: \frac{1}{\alpha-1}\log\Big(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)r}
       + \frac{\alpha-1}{2\alpha-1}e^{-\alpha r}\Big)
    """
    with mp.workdps(dps):
        a, r = mp.mpf(alpha), mp.mpf(sensitivity) / mp.mpf(b)
        inner = a / (2 * a - 1) * mp.exp((a - 1) * r) + (a - 1) / (2 * a - 1) * mp.exp(-a * r)
        return mp.log(inner) / (a - 1)


def renyi_by_quadrature(
    logp: Callable[[mp.mpf], mp.mpf],
    logq: Callable[[mp.mpf], mp.mpf],
    alpha: float,
    breakpoints: Sequence[float] = (),
    dps: int = 40,
) -> mp.mpf:
    r"""Rényi divergence by tanh-sinh quadrature over the real line.

    :math:`D_\alpha(P\|Q) = \frac{1}{\alpha-1}\log\int p^\alpha q^{1-\alpha}`;
    ``logp`` and ``logq`` are log-densities written with mpmath functions;
    ``breakpoints`` are the points where either has a kink (the quadrature
    splits there).
    """
    with mp.workdps(dps):
        a = mp.mpf(alpha)
        val = mp.quad(
            lambda x: mp.exp(a * logp(x) + (1 - a) * logq(x)),
            [-mp.inf, *[mp.mpf(p) for p in breakpoints], mp.inf],
        )
        return mp.log(val) / (a - 1)
