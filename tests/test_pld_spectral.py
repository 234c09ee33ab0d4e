"""dpcore.pld's composition in the frequency domain: the transforms, bounds and profile against references.

The many-fold composition keeps only the frequencies whose composed modulus is
at least 1e-30, computes their logarithms without cancellation and sums the
profile from them directly. References computed outside the code under test:
numpy's FFT (for the zoom transform and the modulus bounds), mpmath direct
sums at 40 digits (the logarithms of the transform), the exact law of a
binomial mixture in 30-digit mpmath (a profile after 200000 compositions),
80-bit long-double sums (the DP-SGD spectrum at 10^5 steps), and the
inverse-FFT profile of the same spectrum.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath as mp
import numpy as np
import pytest

from dpcore import pld


def _pmf(rng: np.random.Generator, size: int, centre: int, spread: float, tail: float) -> np.ndarray:
    """A lattice law: a normal bump of mass 1 - tail around ``centre`` and ``tail`` spread uniformly."""
    i = np.arange(size)
    bump = np.exp(-0.5 * ((i - centre) / spread) ** 2)
    p = (1.0 - tail) * bump / bump.sum() + tail * rng.uniform(size=size) / size * 2.0
    return p / p.sum()


@pytest.mark.parametrize("size, n, m", [(1, 7, 4), (50, 50, 26), (300, 1000, 40), (4096, 50000, 700)])
def test_zoom_dft_is_the_first_outputs_of_the_fft(size, n, m):
    x = np.random.default_rng(size).uniform(size=size)
    got = pld._zoom_dft(x, n, m)
    want = np.fft.fft(x, n)[:m]
    assert np.max(np.abs(got - want)) <= 1e-13 * np.sum(x)


def test_zoom_dft_control_a_chirp_reduced_mod_n_is_wrong():
    x = np.random.default_rng(1).uniform(size=300)
    wrong = pld._chirp  # reduce m^2 mod n instead of 2n: half the chirps change sign

    def chirp_mod_n(m, n):
        return np.exp((-1j * math.pi / n) * ((m * m) % n))

    pld._chirp = chirp_mod_n
    try:
        got = pld._zoom_dft(x, 1001, 40)
    finally:
        pld._chirp = wrong
    assert np.max(np.abs(got - np.fft.fft(x, 1001)[:40])) > 1e-3


@pytest.mark.parametrize("count", [1, 30, 1000, 100_000])
@pytest.mark.parametrize(
    "size, n, centre, spread, tail",
    [(400, 6000, 120, 6.0, 1e-3), (3000, 9000, 2900, 40.0, 0.2), (400, 60000, 120, 6.0, 1e-3)],  # last: n2 < n
)
def test_bounds_and_candidates_hold_every_frequency(count, size, n, centre, spread, tail):
    p = _pmf(np.random.default_rng(count), size, centre, spread, tail)
    t = pld._part_transform(p, n, count)
    exact = np.abs(np.fft.rfft(p, n))
    j = np.arange(n // 2 + 1)
    assert np.all(t.bound(n, j) >= exact - 1e-14)
    floor = math.exp(math.log(1e-30) / count)
    candidates = t.candidates(n, floor)
    assert set(np.flatnonzero(exact >= floor + 1e-12)) <= set(candidates.tolist())
    rest = pld._rest_transform(t, n, candidates)
    assert np.all(pld._approximate_modulus(t, n, candidates, rest) >= exact[candidates] - 1e-14)


def test_bound_control_without_the_slack_misses_frequencies():
    p = _pmf(np.random.default_rng(5), 400, 120, 6.0, 0.0)
    t = dataclasses.replace(pld._part_transform(p, 60000, 1000), slack=0.0)
    exact = np.abs(np.fft.rfft(p, 60000))
    assert np.any(t.bound(60000, np.arange(30001)) < exact - 1e-6)


def _mp_log_transform(p: np.ndarray, n: int, j: int) -> tuple[mp.mpf, mp.mpf]:
    """(log |z_j|, arg z_j) at 40 digits by a direct sum."""
    with mp.workdps(40):
        z = mp.fsum(mp.mpf(float(v)) * mp.expjpi(-2 * mp.mpf(j * i % n) / n) for i, v in enumerate(p) if v)
        return mp.log(abs(z)), mp.arg(z)


def test_log_spectrum_is_accurate_to_far_below_the_fft():
    """log z_j to about 1e-17 (the rotation by the centre carried exactly), where the FFT's is 1e-16 or more."""
    n, count = 20000, 10**5
    p = _pmf(np.random.default_rng(7), 2000, 1500, 25.0, 1e-4)
    t = pld._part_transform(p, n, count)
    j = np.arange(0, 24)
    ours = pld._part_log_spectrum(t, n, j, pld._rest_transform(t, n, j))
    fft_log = np.log(np.fft.rfft(p, n)[j])
    worst_ours = worst_fft = 0.0
    for jj, mine, naive in zip(j, ours, fft_log, strict=True):
        log_mod, arg = _mp_log_transform(p, n, int(jj))
        with mp.workdps(40):
            period = pld._DIVISIONS * n  # z = y e^{-i turn}, the centre in 1/_DIVISIONS of a cell
            turn = 2 * mp.pi * ((int(jj) * t.centre) % period) / period
            want_arg = float(mp.fmod(arg + turn + 3 * mp.pi, 2 * mp.pi) - mp.pi)
            worst_ours = max(worst_ours, abs(float(mine.real - log_mod)), abs(mine.imag - want_arg))
            worst_fft = max(worst_fft, abs(float(naive.real - log_mod)))
    assert worst_ours <= 2e-17  # measured 8.7e-18: 1e-16 times the core's spread in radians
    assert worst_fft >= 1e-16  # the control: the FFT's logarithms, 20 times worse (measured 2e-16)


def _composed(p: np.ndarray, count: int, h: float) -> pld._Composed:
    return pld._compose([(pld._Discrete(p, -p.size // 3, 0.0, 0.0), count)], 1e-20, h)


def test_spectral_profile_is_the_inverse_fft_profile():
    p = _pmf(np.random.default_rng(3), 60, 20, 3.0, 1e-3)
    c = _composed(p, 4000, 0.01)
    assert pld._SPECTRAL_RATIO * c.kept.size <= c.n  # the spectral path is the one under test
    spectral = pld._spectral_profile(c, 0.01)
    spectrum = np.zeros(c.n // 2 + 1, dtype=complex)
    spectrum[c.kept] = c.values * np.exp(-2j * math.pi * c.turns / (pld._DIVISIONS * c.n))
    circ = np.fft.irfft(spectrum, c.n)
    pmf = np.roll(circ, -(c.a % c.n))[: c.size]
    values = 0.01 * (c.first + np.arange(c.size)) + c.shift
    for eps in np.linspace(values[0] - 1.0, values[-1] + 0.5, 97):
        above = values > eps
        want = float(np.sum(pmf[above] * -np.expm1(eps - values[above])))
        assert abs(spectral(eps) - max(want, 0.0)) <= 1e-14


def test_spectral_profile_matches_an_exact_binomial_mixture():
    """A law of two neighbouring cells and a rare far atom, composed 200000 times, against its exact law.

    One release: cell 0 w.p. (1 - a)(1 - r), cell 1 w.p. (1 - a) r, cell 200 w.p. a, all exact in binary.
    The sum of k has m far atoms with probability Binomial(k, a) and Binomial(k - m, r) unit steps: sums of
    positive terms in 30-digit mpmath (the binomial pmf by its ratio recurrence from an exact anchor), no
    FFT. scipy's binomial pmf is not accurate enough here (8e-14 relative at 1000 steps from the mode).
    """
    r, a, far, k, h = 0.25, 2.0**-20, 200, 200_000, 0.01  # masses exact in binary, summing to exactly 1
    p = np.zeros(far + 1)
    p[0], p[1], p[far] = (1 - a) * (1 - r), (1 - a) * r, a
    c = pld._compose([(pld._Discrete(p, 0, 0.0, 0.0), k)], 1e-20, h)
    assert pld._SPECTRAL_RATIO * c.kept.size <= c.n  # the spectral path is the one under test
    spectral = pld._spectral_profile(c, h)
    lo, hi = int(k * r - 4000), int(k * r + 4000)
    epsilons = (496.0, 502.0, 506.0, 525.0)
    with mp.workdps(30):
        want = [mp.mpf(0)] * len(epsilons)
        for m in range(13):  # P(more far atoms) < 1e-20
            weight = mp.binomial(k, m) * mp.mpf(a) ** m * mp.mpf(1 - a) ** (k - m)
            pmf = mp.binomial(k - m, lo) * mp.mpf(r) ** lo * mp.mpf(1 - r) ** (k - m - lo)
            for j in range(lo, hi):
                value = h * (j + far * m)
                for e, eps in enumerate(epsilons):
                    if value > eps:
                        want[e] += weight * pmf * -mp.expm1(mp.mpf(eps) - mp.mpf(value))
                pmf *= mp.mpf(k - m - j) / (j + 1) * mp.mpf(r) / (1 - r)
    for eps, w in zip(epsilons, want, strict=True):
        assert abs(spectral(eps) - float(w)) <= 1e-14  # a tenth of the accountant's allowance, _FLOAT_SLACK


def test_spectral_inverse_is_the_bisection_root():
    p = _pmf(np.random.default_rng(11), 200, 60, 8.0, 1e-3)
    profile = pld._spectral_profile(_composed(p, 20000, 2e-3), 2e-3)
    for target in (1e-2, 1e-5, 1e-9):
        root = profile.inverse(target, -1e4, 1e4)
        assert profile(root) <= target < profile(root - 1e-9 * max(1.0, abs(root)))
        bisected = pld._inverse(lambda e: profile(e), target, -1e4, 1e4)
        assert abs(root - bisected) <= 2e-13 * max(1.0, abs(root))
    assert profile.inverse(profile(-5.0), -5.0, 1e4) == -5.0  # the target met at the lower end: the lower end


def test_dpsgd_at_1e5_steps_against_a_long_double_spectrum():
    """The DP-SGD anchor at 10^5 steps: delta at the answer within 1e-14 of an 80-bit reference spectrum.

    Control: the product of FFTs raised to the 10^5th power (the path taken where many frequencies are
    kept) is off by more than the accountant's floating-point allowance (1e-13) here.
    """
    if np.finfo(np.longdouble).eps > 1e-18:
        pytest.skip("no 80-bit long double on this platform")
    from dpbook.experiments import composition as cx

    r = cx.spectral_precision(1.1, 256 / 60000, 100_000, 1.24e-4, 1e-5)
    assert r.error <= 1e-14
    assert r.naive_error > 1e-13
    assert r.kept * pld._SPECTRAL_RATIO <= r.n  # the spectral path is the one under test


@pytest.mark.parametrize("s, q", [(1.1, 256 / 60000), (0.6, 0.05), (2.0, 1.0), (0.01, 0.5)])
def test_joint_laws_equal_the_four_functions(s, q):
    """``PrivacyLoss.laws`` (x(l) once) gives bit for bit what the four distribution functions give."""
    for loss in pld.subsampled_gaussian_privacy_losses(s, q):
        e = np.concatenate([np.linspace(-50.0, 50.0, 20001), [loss.lower, loss.upper, -np.inf, np.inf, 0.0]])
        with np.errstate(all="ignore"):
            joint = loss.laws(e)
            alone = (loss.cdf(e), loss.sf(e), loss.q_cdf(e), loss.q_sf(e))
        for a, b in zip(joint, alone, strict=True):
            assert np.array_equal(a, b)


def test_mulmod_is_exact():
    rng = np.random.default_rng(2)
    m = (1 << 34) + 12345
    x = rng.integers(0, m, size=1000)
    for k in (0, 1, 3, 10**5, 2**40 + 7, 10**18):
        assert pld._mulmod(k, x, m).tolist() == [(k * int(v)) % m for v in x]
