"""Shared sympy symbols, densities and checking helpers for the chapters.

Chapters import their symbols from here instead of redefining them, so that
every derivation in the book works with the same assumptions:

* ``x, y, z, t`` -- points, outputs, integration variables (real);
* ``s`` -- a distance from the centre (positive);
* ``mu`` -- a location (real); ``u, v`` -- query answers f(D), f(D') (real);
* ``b`` -- a Laplace scale; ``sigma`` -- a Gaussian standard deviation (positive);
* ``epsilon``, ``delta`` -- privacy parameters (positive);
* ``Delta`` -- a sensitivity (positive);
* ``alpha`` -- a Renyi order (positive; chapters add alpha > 1 where needed);
* ``k, d, n`` -- counts, dimensions, sizes (positive integers).

The helpers never type a result in: :func:`assert_equal` simplifies the
difference of two expressions and fails unless it is zero, so a wrong claimed
form makes it raise.
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "x", "y", "z", "t", "s", "mu", "b", "sigma", "epsilon", "delta", "Delta",
    "alpha", "u", "v", "k", "d", "n",
    "laplace_density", "laplace_cdf_claimed", "gaussian_density",
    "laplace_expectation", "laplace_cdf_by_integration", "is_equal", "assert_equal",
]

x, y, z, t = sp.symbols("x y z t", real=True)
s = sp.Symbol("s", positive=True)  # a distance from the centre
mu = sp.Symbol("mu", real=True)
u, v = sp.symbols("u v", real=True)
b = sp.Symbol("b", positive=True)
sigma = sp.Symbol("sigma", positive=True)
epsilon = sp.Symbol("epsilon", positive=True)
delta = sp.Symbol("delta", positive=True)
Delta = sp.Symbol("Delta", positive=True)
alpha = sp.Symbol("alpha", positive=True)
k, d, n = sp.symbols("k d n", positive=True, integer=True)


def laplace_density(var: sp.Expr = x, loc: sp.Expr = mu, scale: sp.Expr = b) -> sp.Expr:
    r"""The Laplace density :math:`\frac{1}{2b} e^{-|x-\mu|/b}` as a sympy expression."""
    return sp.exp(-sp.Abs(var - loc) / scale) / (2 * scale)


def laplace_cdf_claimed(var: sp.Expr = x, loc: sp.Expr = mu, scale: sp.Expr = b) -> sp.Piecewise:
    r"""The Laplace CDF exactly as seed 000 states it (its opening formula).

    .. math:: F(x) = \tfrac12 e^{-(\mu-x)/b} \ (x<\mu), \quad 1-\tfrac12 e^{-(x-\mu)/b} \ (x\ge\mu)
    """
    return sp.Piecewise(
        (sp.exp(-(loc - var) / scale) / 2, var < loc),
        (1 - sp.exp(-(var - loc) / scale) / 2, True),
    )


def gaussian_density(var: sp.Expr = x, loc: sp.Expr = mu, scale: sp.Expr = sigma) -> sp.Expr:
    r"""The normal density :math:`\frac{1}{\sqrt{2\pi}\sigma} e^{-(x-\mu)^2/(2\sigma^2)}`."""
    return sp.exp(-((var - loc) ** 2) / (2 * scale**2)) / (sp.sqrt(2 * sp.pi) * scale)


def laplace_expectation(
    g: sp.Expr, var: sp.Symbol = x, loc: sp.Expr = mu, scale: sp.Expr = b
) -> sp.Expr:
    r"""Compute :math:`E[g(X)]` for :math:`X \sim \mathrm{Lap}(\mu, b)` by real integration.

    The integral is split at :math:`\mu`, where :math:`|x-\mu|` changes form,
    and each half is integrated by sympy (no result is typed in):

    .. math::

        \int_{-\infty}^{\mu} g(x) \tfrac{1}{2b} e^{(x-\mu)/b}\,dx
        + \int_{\mu}^{\infty} g(x) \tfrac{1}{2b} e^{-(x-\mu)/b}\,dx
    """
    left = sp.integrate(g * sp.exp((var - loc) / scale) / (2 * scale), (var, -sp.oo, loc))
    right = sp.integrate(g * sp.exp(-(var - loc) / scale) / (2 * scale), (var, loc, sp.oo))
    return sp.simplify(left + right)


def laplace_cdf_by_integration(loc: sp.Expr = mu, scale: sp.Expr = b) -> tuple[sp.Expr, sp.Expr]:
    r"""Derive the Laplace CDF by integrating the density, one region at a time.

    Returns ``(F_left, F_right)`` as functions of a positive distance ``s``:
    the module symbol ``s``: ``F_left`` is :math:`F(\mu - s) = \int_{-\infty}^{\mu-s} f(t)\,dt` and
    ``F_right`` is :math:`F(\mu + s) = \int_{-\infty}^{\mu} f + \int_{\mu}^{\mu+s} f`.
    The substitution :math:`t = \mu \mp r` with ``r`` positive lets sympy
    resolve :math:`|t-\mu| = r` from the symbol's assumptions, so no branch
    of the absolute value is chosen by hand.
    """
    r = sp.Symbol("r", positive=True)
    dist = s
    dens_left = laplace_density(loc - r, loc, scale)  # t = mu - r, dt = -dr
    dens_right = laplace_density(loc + r, loc, scale)  # t = mu + r, dt = dr
    f_left = sp.integrate(dens_left, (r, dist, sp.oo))
    half = sp.integrate(dens_left, (r, 0, sp.oo))
    f_right = half + sp.integrate(dens_right, (r, 0, dist))
    return sp.simplify(f_left), sp.simplify(f_right)


def is_equal(lhs: sp.Expr, rhs: sp.Expr) -> bool:
    """True iff sympy proves ``lhs - rhs`` simplifies to zero.

    Tries :func:`sympy.simplify` first, then ``Piecewise`` folding, rewriting
    ``erfc`` as ``1 - erf``, and
    :meth:`sympy.Expr.equals`. ``False`` means "not proved equal", which a
    chapter turns into a failed assertion.
    """
    diff = sp.simplify(sp.piecewise_fold(lhs - rhs))
    if diff == 0:
        return True
    diff = sp.simplify(sp.expand(sp.powsimp(sp.expand_log(diff, force=True), force=True)))
    if diff == 0:
        return True
    if diff.has(sp.erfc, sp.erf) and sp.simplify(diff.rewrite(sp.erf)) == 0:
        return True
    result = sp.piecewise_fold(lhs - rhs).equals(0)
    return bool(result)


def assert_equal(lhs: sp.Expr, rhs: sp.Expr, what: str = "expressions") -> None:
    """Raise :class:`AssertionError` unless sympy proves ``lhs == rhs``.

    Parameters
    ----------
    lhs, rhs : sympy.Expr
        The computed expression and the claimed form.
    what : str
        Description used in the error message.
    """
    if not is_equal(lhs, rhs):
        raise AssertionError(f"{what}: sympy could not show {lhs} == {rhs}")
