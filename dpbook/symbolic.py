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

import math

import numpy as np
import sympy as sp

from dpcore._validation import as_generator

__all__ = [
    "x",
    "y",
    "z",
    "t",
    "s",
    "mu",
    "b",
    "sigma",
    "epsilon",
    "delta",
    "Delta",
    "alpha",
    "u",
    "v",
    "k",
    "d",
    "n",
    "laplace_density",
    "laplace_cdf_claimed",
    "gaussian_density",
    "laplace_expectation",
    "laplace_cdf_by_integration",
    "is_equal",
    "numerically_equal",
    "assert_equal",
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


def laplace_expectation(g: sp.Expr, var: sp.Symbol = x, loc: sp.Expr = mu, scale: sp.Expr = b) -> sp.Expr:
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


def _proved_zero(diff: sp.Expr) -> bool:
    """Sympy simplifies ``diff`` to 0 using only the symbols' declared assumptions (never ``force``)."""
    diff = sp.piecewise_fold(diff)
    if sp.simplify(diff) == 0:
        return True
    # expand_log / powsimp without force apply only the rules the assumptions allow
    if sp.simplify(sp.expand(sp.powsimp(sp.expand_log(diff)))) == 0:
        return True
    if diff.has(sp.erfc, sp.erf) and sp.simplify(diff.rewrite(sp.erf)) == 0:
        return True
    return bool(diff.equals(0))


def _sample_point(sym: sp.Symbol, gen: np.random.Generator, domain: tuple[float, float] | None) -> sp.Expr:
    """A random value from the symbol's whole domain (negatives included for real symbols)."""
    if domain is not None:
        lo, hi = domain
        return sp.Float(gen.uniform(lo, hi), 110)
    if sym.is_integer:
        lo = 1 if sym.is_positive else (0 if sym.is_nonnegative else -20)
        return sp.Integer(int(gen.integers(lo, 21)))
    mag = 10 ** gen.uniform(-2, 2)  # log-uniform magnitude in [0.01, 100]
    if sym.is_positive or sym.is_nonnegative:
        return sp.Float(mag, 110)
    if sym.is_negative or sym.is_nonpositive:
        return sp.Float(-mag, 110)
    return sp.Float(mag if gen.random() < 0.5 else -mag, 110)


def _agree(a: sp.Expr, c: sp.Expr, rtol: float) -> bool:
    """|a - c| <= rtol max(1, |a|, |c|), in floating point, or in sympy when a double overflows."""
    try:
        ac, cc = complex(a), complex(c)
        if all(math.isfinite(t) for t in (ac.real, ac.imag, cc.real, cc.imag)):
            return abs(ac - cc) <= rtol * max(1.0, abs(ac), abs(cc))
    except (OverflowError, TypeError, ValueError):
        pass
    gap, scale = sp.N(sp.Abs(a - c), 30), sp.N(sp.Max(1, sp.Abs(a), sp.Abs(c)), 30)
    try:
        return not bool(gap > rtol * scale)
    except (TypeError, ValueError):  # a difference without one significant digit: it is 0
        return True


def numerically_equal(
    lhs: sp.Expr,
    rhs: sp.Expr,
    *,
    points: int = 12,
    domain: dict[sp.Symbol, tuple[float, float]] | None = None,
    rtol: float = 1e-12,
    seed: int = 20260101,
) -> bool:
    """``lhs`` and ``rhs`` agree (to ``rtol``) at random points of the symbols' domains.

    Each free symbol is drawn from its whole declared domain (a real symbol
    takes negative values too; a positive one, values from 0.01 to 100;
    ``domain`` narrows a symbol to ``(lo, hi)``), and both sides are evaluated
    with 100 significant digits. Points where either side is undefined or
    infinite are skipped (a complex value is compared, not skipped);
    ``False`` if no point could be evaluated or any point disagrees.
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    syms = sorted(lhs.free_symbols | rhs.free_symbols, key=str)
    gen = as_generator(seed)
    evaluated = 0
    for _ in range(points):
        subs = {sym: _sample_point(sym, gen, (domain or {}).get(sym)) for sym in syms}
        # 100 digits: e^100 times a difference of two erf values near 1 keeps 50 of them
        try:
            a, c = sp.N(lhs.subs(subs), 100), sp.N(rhs.subs(subs), 100)
        except (ValueError, TypeError, ZeroDivisionError):  # e.g. Max of a NaN: not evaluable here
            continue
        if not (a.is_number and c.is_number and a.is_finite and c.is_finite):
            continue  # outside where both sides are defined (a pole, an undefined Piecewise branch)
        evaluated += 1
        # complex values are compared too (a real side against a complex side is a
        # disagreement), in sympy's arbitrary exponent range: exp(1e4) must not overflow
        if not _agree(a, c, rtol):
            return False
    return evaluated > 0


def is_equal(lhs: sp.Expr, rhs: sp.Expr, *, domain: dict[sp.Symbol, tuple[float, float]] | None = None) -> bool:
    """True iff sympy proves ``lhs == rhs`` under the symbols' assumptions, confirmed numerically.

    Two conditions, both required:

    1. sympy simplifies ``lhs - rhs`` to 0 (``simplify``, ``Piecewise``
       folding, ``expand_log``/``powsimp`` *without* ``force``, ``erfc`` as
       ``1 - erf``, :meth:`sympy.Expr.equals`), so that only identities the
       declared assumptions allow are used: ``log(x**2) = 2 log(x)`` is not
       proved for a real ``x``, only for a positive one;
    2. both sides agree at random points of the symbols' whole domains
       (:func:`numerically_equal`), which guards against a simplification
       bug.

    ``False`` means "not shown equal", which a chapter's record turns into a
    failed claim.
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    try:
        proved = _proved_zero(lhs - rhs)
    except (ValueError, TypeError, ZeroDivisionError):  # sympy could not even form the difference
        proved = False
    if not proved:
        return False
    if not (lhs.free_symbols | rhs.free_symbols):
        return True
    return numerically_equal(lhs, rhs, domain=domain)


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
