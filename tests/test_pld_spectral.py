"""dpcore.pld's composition in the frequency domain: the transforms, bounds and profile against references.

The many-fold composition keeps only the frequencies whose composed modulus is
at least 1e-30, computes their logarithms without cancellation and sums the
profile from them directly. References computed outside the code under test:
numpy's FFT (for the zoom transform and the modulus bounds, with atoms
anywhere: the far atom of the Laplace loss is summed with the core, the rest
bounded by its total variation), mpmath direct sums at 40 digits (the
logarithms of the transform), the exact law of a binomial mixture in 30-digit
mpmath (a profile after 200000 compositions), 80-bit long-double sums (the
DP-SGD spectrum at 10^5 steps, 1000 Laplace releases), the inverse-FFT profile
of the same spectrum, and the exact Laplace composition of
:mod:`dpcore.laplace_composition` (Bernstein polynomials, no grid, no FFT).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import pld, pld_spectral


def _pmf(rng: np.random.Generator, size: int, centre: int, spread: float, tail: float) -> np.ndarray:
    """A lattice law: a normal bump of mass 1 - tail around ``centre`` and ``tail`` spread uniformly."""
    i = np.arange(size)
    bump = np.exp(-0.5 * ((i - centre) / spread) ** 2)
    p = (1.0 - tail) * bump / bump.sum() + tail * rng.uniform(size=size) / size * 2.0
    return p / p.sum()


@pytest.mark.parametrize("size, n, m", [(1, 7, 4), (50, 50, 26), (300, 1000, 40), (4096, 50000, 700)])
def test_zoom_dft_is_the_first_outputs_of_the_fft(size, n, m):
    x = np.random.default_rng(size).uniform(size=size)
    got = pld_spectral._zoom_dft(x, n, m)
    want = np.fft.fft(x, n)[:m]
    assert np.max(np.abs(got - want)) <= 1e-13 * np.sum(x)


def test_zoom_dft_control_a_chirp_reduced_mod_n_is_wrong():
    x = np.random.default_rng(1).uniform(size=300)
    wrong = pld_spectral._chirp  # reduce m^2 mod n instead of 2n: half the chirps change sign

    def chirp_mod_n(m, n):
        return np.exp((-1j * math.pi / n) * ((m * m) % n))

    pld_spectral._chirp = chirp_mod_n
    try:
        got = pld_spectral._zoom_dft(x, 1001, 40)
    finally:
        pld_spectral._chirp = wrong
    assert np.max(np.abs(got - np.fft.fft(x, 1001)[:40])) > 1e-3


def _check_bounds(
    p: np.ndarray, n: int, count: int, rounding: float = 1e-14
) -> tuple[pld_spectral._PartTransform, np.ndarray, np.ndarray]:
    """Against numpy's exact moduli: the bound holds at every frequency, the candidates contain every frequency
    whose modulus reaches the floor, and the FFT-accurate modulus bounds them. (transform, moduli, candidates)"""
    t = pld_spectral._part_transform(p, n, count)
    exact = np.abs(np.fft.rfft(p, n))
    assert np.all(t.bound(n, np.arange(n // 2 + 1)) >= exact - 1e-14)
    floor = math.exp(math.log(1e-30) / count)
    candidates = t.candidates(n, floor)
    assert set(np.flatnonzero(exact >= floor + 1e-12)) <= set(candidates.tolist())
    rest = pld_spectral._rest_transform(t, n, candidates)
    assert np.all(pld_spectral._approximate_modulus(t, n, candidates, rest) >= exact[candidates] - rounding)
    return t, exact, candidates


@pytest.mark.parametrize("count", [1, 30, 1000, 100_000])
@pytest.mark.parametrize(
    "size, n, centre, spread, tail",
    [(400, 6000, 120, 6.0, 1e-3), (3000, 9000, 2900, 40.0, 0.2), (400, 60000, 120, 6.0, 1e-3)],  # last: n2 < n
)
def test_bounds_and_candidates_hold_every_frequency(count, size, n, centre, spread, tail):
    _check_bounds(_pmf(np.random.default_rng(count), size, centre, spread, tail), n, count)


def test_bound_control_without_the_slack_misses_frequencies():
    p = _pmf(np.random.default_rng(5), 400, 120, 6.0, 0.0)
    t = dataclasses.replace(pld_spectral._part_transform(p, 60000, 1000), slack=0.0)
    exact = np.abs(np.fft.rfft(p, 60000))
    assert np.any(t.bound(60000, np.arange(30001)) < exact - 1e-6)


def _laplace_like(size: int) -> np.ndarray:
    """The Laplace loss's shape on a lattice: atoms 1/2 and e^-1/2 at the two ends, an exponential between."""
    inner = np.exp(0.5 * np.linspace(-1.0, 1.0, size - 2))
    p = np.concatenate(([0.5 * math.exp(-1.0)], (0.5 - 0.5 * math.exp(-1.0)) * inner / inner.sum(), [0.5]))
    return p / p.sum()


@pytest.mark.parametrize("size, n, count", [(6000, 1 << 21, 1000), (5000, 3_000_000, 300), (9000, 1 << 20, 5000)])
def test_spikes_and_the_variation_bound_hold_every_frequency(size, n, count):
    """A core capped at _CORE_CELLS, the far atom a spike, the rest bounded by its variation (no FFT of it).

    Controls: the bound without the spikes' mass, and the variation bound with the small-angle
    :math:`V/\\theta` in place of :math:`V/(2\\sin(\\theta/2))`, fall below the exact moduli.
    """
    t, exact, candidates = _check_bounds(_laplace_like(size), n, count)
    assert t.core_size == pld_spectral._CORE_CELLS and 0 in t.spikes and t.rest_hat is None  # the path under test
    assert candidates.size < n // 1000  # few: no transform of the window's length is needed
    j = np.arange(n // 2 + 1)
    rest_exact = np.abs(np.fft.rfft(pld_spectral._rest(t), n))
    assert np.all(t.rest_bound(n, j) >= rest_exact - 1e-15)  # the FFT's own rounding
    assert np.any(dataclasses.replace(t, spike_mass=0.0).bound(n, j) < exact - 1e-3)
    small_angle = t.variation / (2.0 * math.pi * j[1:] / n)
    assert np.any(small_angle < rest_exact[1:] - 1e-9)


def _mp_log_transform(p: np.ndarray, n: int, j: int) -> tuple[mp.mpf, mp.mpf]:
    """(log |z_j|, arg z_j) at 40 digits by a direct sum."""
    with mp.workdps(40):
        z = mp.fsum(mp.mpf(float(v)) * mp.expjpi(-2 * mp.mpf(j * i % n) / n) for i, v in enumerate(p) if v)
        return mp.log(abs(z)), mp.arg(z)


def test_log_spectrum_is_accurate_to_far_below_the_fft():
    """log z_j to about 1e-17 (the rotation by the centre carried exactly), where the FFT's is 1e-16 or more."""
    n, count = 20000, 10**5
    p = _pmf(np.random.default_rng(7), 2000, 1500, 25.0, 1e-4)
    t = pld_spectral._part_transform(p, n, count)
    j = np.arange(0, 24)
    ours = pld_spectral._part_log_spectrum(t, n, j, pld_spectral._rest_transform(t, n, j))
    fft_log = np.log(np.fft.rfft(p, n)[j])
    worst_ours = worst_fft = 0.0
    for jj, mine, naive in zip(j, ours, fft_log, strict=True):
        log_mod, arg = _mp_log_transform(p, n, int(jj))
        with mp.workdps(40):
            period = pld_spectral._DIVISIONS * n  # z = y e^{-i turn}, the centre in 1/_DIVISIONS of a cell
            turn = 2 * mp.pi * ((int(jj) * t.centre) % period) / period
            want_arg = float(mp.fmod(arg + turn + 3 * mp.pi, 2 * mp.pi) - mp.pi)
            worst_ours = max(worst_ours, abs(float(mine.real - log_mod)), abs(mine.imag - want_arg))
            worst_fft = max(worst_fft, abs(float(naive.real - log_mod)))
    assert worst_ours <= 2e-17  # measured 8.7e-18: 1e-16 times the core's spread in radians
    assert worst_fft >= 1e-16  # the control: the FFT's logarithms, 20 times worse (measured 2e-16)


def test_log_spectrum_with_a_spike_and_a_heavy_rest_is_accurate():
    """The far atom summed directly with the core's run, and the heavy rest too: log z_j against 40 digits.

    Control: the rest by its zoom transform, whose error is about 1e-16 times the rest's mass (here 0.17),
    not its 2-norm as an FFT's, is several times worse (measured 1.6e-16 against 3.5e-17).
    """
    n, count = 1 << 21, 1000
    p = _laplace_like(6000)
    t = pld_spectral._part_transform(p, n, count)
    assert t.spikes.size and t.rest_mass > pld_spectral._REST_BOUND and t.rest_hat is None  # the path under test
    j = np.arange(0, 40, 3)
    whole = pld_spectral._part_log_spectrum(t, n, j, None)
    zoom = pld_spectral._part_log_spectrum(t, n, j, pld_spectral._rest_transform(t, n, j))
    worst = worst_zoom = 0.0
    for jj, mine, other in zip(j, whole, zoom, strict=True):
        log_mod, arg = _mp_log_transform(p, n, int(jj))
        with mp.workdps(40):
            period = pld_spectral._DIVISIONS * n
            turn = 2 * mp.pi * ((int(jj) * t.centre) % period) / period
            want_arg = float(mp.fmod(arg + turn + 3 * mp.pi, 2 * mp.pi) - mp.pi)
            worst = max(worst, abs(float(mine.real - log_mod)), abs(mine.imag - want_arg))
            worst_zoom = max(worst_zoom, abs(float(other.real - log_mod)), abs(other.imag - want_arg))
    assert worst <= 8e-17
    assert worst_zoom > 8e-17


@pytest.mark.parametrize("steps", [300, 1000])
def test_laplace_compositions_against_a_long_double_spectrum(steps, monkeypatch):
    """Laplace releases: delta at the answer within 1e-14 of an 80-bit reference spectrum, the heavy rest
    summed directly (measured 2.9e-16 and 5.3e-16) or, beyond the direct sums' budget, from the window's FFT
    (2.2e-15 and 2.1e-15); the chapter's experiment, ``cx.spectral_precision``, at 2 x 3 settings.

    Control: the heavy rest by its zoom transform (measured 1.7e-14 and 1.3e-14).
    """
    if np.finfo(np.longdouble).eps > 1e-18:
        pytest.skip("no 80-bit long double on this platform")
    from dpbook.experiments import composition as cx

    def error(**settings: float) -> float:
        with monkeypatch.context() as m:
            for name, value in settings.items():
                m.setattr(pld_spectral, name, value)
            r = cx.spectral_precision(dpcore.LaplaceMechanism(1.0), steps, 2e-4, 1e-5)
        assert pld_spectral._SPECTRAL_RATIO * r.kept <= r.n  # the spectral path
        return r.error

    assert error() <= 1e-14
    assert error(_WHOLE_WORK=0) <= 1e-14  # the rest from the window's FFT
    assert error(_REST_BOUND=math.inf) > 1e-14  # the control: from its zoom transform


def test_laplace_grid_brackets_the_exact_composition():
    """1000 Laplace releases on the grid (spikes, variation bound, spectral profile) against the exact law."""
    lo, hi = dpcore.laplace_composition_epsilon(1e-5, 1.0, 1000)
    acc = dpcore.PldAccountant(closed_form=False, relative_width=1e-7).compose(dpcore.LaplaceMechanism(1.0), 1000)
    upper = acc.epsilon(1e-5)
    assert hi <= upper <= hi + 5e-7  # measured 2.6e-7 above
    lower, upper2 = acc.epsilon_bracket(1e-5)
    assert lower <= lo and hi <= upper2


def _composed(p: np.ndarray, count: int, h: float) -> pld_spectral._Composed:
    return pld_spectral._compose([(pld_spectral._Discrete(p, -p.size // 3, 0.0, 0.0), count)], 1e-20, h)


def test_spectral_profile_is_the_inverse_fft_profile():
    p = _pmf(np.random.default_rng(3), 60, 20, 3.0, 1e-3)
    c = _composed(p, 4000, 0.01)
    assert pld_spectral._SPECTRAL_RATIO * c.kept.size <= c.n  # the spectral path is the one under test
    spectral = pld_spectral._spectral_profile(c, 0.01)
    spectrum = np.zeros(c.n // 2 + 1, dtype=complex)
    spectrum[c.kept] = c.values * np.exp(-2j * math.pi * c.turns / (pld_spectral._DIVISIONS * c.n))
    circ = np.fft.irfft(spectrum, c.n)
    pmf = np.roll(circ, -(c.a % c.n))[: c.size]
    values = 0.01 * (c.first + np.arange(c.size)) + c.shift
    for eps in np.linspace(values[0] - 1.0, values[-1] + 0.5, 97):
        above = values > eps
        want = float(np.sum(pmf[above] * -np.expm1(eps - values[above])))
        assert abs(spectral(eps) - max(want, 0.0)) <= 1e-14


def _binomial_mixture_delta(eps: Sequence[float], k: int, h: float, r: float, a: float, far: int) -> list[float]:
    """delta at each of ``eps`` of ``k`` copies of the law {0: (1-a)(1-r), 1: (1-a) r, far: a} on ``h Z``,
    exactly (30-digit mpmath; the binomial terms beyond 9 standard deviations and 13 far atoms, below 1e-18,
    left out)."""
    sd = math.sqrt(k * r * (1 - r))
    lo, hi = max(int(k * r - 9 * sd), 0), int(k * r + 9 * sd)
    with mp.workdps(30):
        total = [mp.mpf(0)] * len(eps)
        for m in range(13):
            weight = mp.binomial(k, m) * mp.mpf(a) ** m * mp.mpf(1 - a) ** (k - m)
            pmf = mp.binomial(k - m, lo) * mp.mpf(r) ** lo * mp.mpf(1 - r) ** (k - m - lo)
            for j in range(lo, hi):
                value = h * (j + far * m)
                for e, x in enumerate(eps):
                    if value > x:
                        total[e] += weight * pmf * -mp.expm1(mp.mpf(x) - mp.mpf(value))
                pmf *= mp.mpf(k - m - j) / (j + 1) * mp.mpf(r) / (1 - r)
        return [float(t) for t in total]


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
    c = pld_spectral._compose([(pld_spectral._Discrete(p, 0, 0.0, 0.0), k)], 1e-20, h)
    assert pld_spectral._SPECTRAL_RATIO * c.kept.size <= c.n  # the spectral path is the one under test
    spectral = pld_spectral._spectral_profile(c, h)
    epsilons = (496.0, 502.0, 506.0, 525.0)
    want = _binomial_mixture_delta(epsilons, k, h, r, a, far)
    for eps, w in zip(epsilons, want, strict=True):
        assert abs(spectral(eps) - float(w)) <= 1e-14  # a tenth of the accountant's allowance, _FLOAT_SLACK


def test_spectral_inverse_is_the_bisection_root():
    p = _pmf(np.random.default_rng(11), 200, 60, 8.0, 1e-3)
    profile = pld_spectral._spectral_profile(_composed(p, 20000, 2e-3), 2e-3)
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

    sgd = dpcore.SubsampledGaussianMechanism(sigma=1.1, sampling_rate=256 / 60000)
    r = cx.spectral_precision(sgd, 100_000, 1.24e-4, 1e-5)
    assert r.error <= 1e-14
    assert r.naive_error > 1e-13
    assert r.kept * pld_spectral._SPECTRAL_RATIO <= r.n  # the spectral path is the one under test


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
        assert pld_spectral._mulmod(k, x, m).tolist() == [(k * int(v)) % m for v in x]
    ks = rng.integers(0, 2**62, size=x.size)  # one count a value (epsilon over a run's pairs)
    assert pld_spectral._mulmod(ks, x, m).tolist() == [(int(k) * int(v)) % m for k, v in zip(ks, x, strict=True)]


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(3000, 9000),
    count=st.sampled_from([50, 300, 1000, 5000, 20000]),
    spikes=st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(1e-3, 0.3)), min_size=0, max_size=4),
    tail=st.floats(0.0, 0.4),
    seed=st.integers(0, 2**32 - 1),
)
def test_bounds_and_candidates_hold_with_spikes_anywhere(size, count, spikes, tail, seed):
    """Random lattice laws, a bump at one end, a spread-out tail and atoms anywhere: the bounds hold at every
    frequency and the candidates contain every frequency whose modulus reaches the floor."""
    rng = np.random.default_rng(seed)
    i = np.arange(size)
    p = np.exp(-0.5 * ((i - 0.9 * size) / (0.02 * size)) ** 2)
    p = p / p.sum() + tail * np.exp(rng.uniform(-1.0, 1.0) * i / size) / size
    for where, mass in spikes:
        p[min(int(where * size), size - 1)] += mass
    p /= p.sum()
    _check_bounds(p, int(rng.choice([4 * size, 16 * size, 200 * size])), count, rounding=1e-13)


def test_run_windows_are_the_windows_count_by_count():
    """Epsilon over a run takes the Chernoff windows of all its counts in one array operation
    (``_run_windows``): the same windows, to the cell, as :func:`_window` count by count."""
    rng = np.random.default_rng(5)
    for _ in range(6):
        p = _pmf(rng, int(rng.integers(20, 3000)), 10, float(rng.uniform(1.0, 8.0)), 1e-4)
        d = pld_spectral._Discrete(p, 0, 0.0, 0.0)
        h, tau = 10 ** rng.uniform(-5, -2), 10 ** rng.uniform(-14, -6)
        counts = sorted({int(k) for k in rng.integers(1, 20000, 40)})
        table = pld_spectral._MgfTable(p, h)
        one_by_one = {k: pld_spectral._window([(d, k)], tau, h, [table]) for k in counts}
        assert pld_spectral._run_windows(d, counts, tau, h, pld_spectral._MgfTable(p, h)) == one_by_one


def _batched(d: pld_spectral._Discrete, counts: list[int], h: float) -> pld_spectral._RunProfile:
    """A law composed at many counts through epsilon over a run's path (one plan, one law), every count in
    one batch (checked)."""
    run = pld_spectral._RunPlan([d], counts, 1e-20, h).run(0)
    chunks = list(run.chunks())
    assert not run.single and len(chunks) == 1 and chunks[0][1] == counts  # all counts batched together
    return chunks[0][0]


@pytest.fixture(scope="module")
def run_law() -> tuple[np.ndarray, list[int], float, pld_spectral._RunProfile]:
    p = _pmf(np.random.default_rng(3), 60, 20, 3.0, 1e-3)
    counts, h = [3000, 5000, 8000, 12000, 20000], 0.01
    return p, counts, h, _batched(pld_spectral._Discrete(p, -p.size // 3, 0.0, 0.0), counts, h)


def test_run_profile_matches_an_exact_binomial_mixture() -> None:
    """Epsilon over a run evaluates all its counts' profiles together (``_RunProfile``): delta at each count
    of a law of two neighbouring cells and a rare far atom against its exact law (30-digit mpmath), within
    1e-14 (a tenth of the accountant's floating-point allowance)."""
    r, a, far, h = 0.25, 2.0**-20, 200, 0.01  # masses exact in binary, summing to exactly 1
    p = np.zeros(far + 1)
    p[0], p[1], p[far] = (1 - a) * (1 - r), (1 - a) * r, a
    counts = [120_000, 200_000]
    batch = _batched(pld_spectral._Discrete(p, 0, 0.0, 0.0), counts, h)
    for row, k in enumerate(counts):
        centre, sd = h * k * r, h * math.sqrt(k * r * (1 - r))
        eps = np.array([centre - 2 * sd, centre, centre + 3 * sd, centre + 8 * sd])
        got = batch.at(np.full(eps.size, row), eps)[0]
        want = np.array(_binomial_mixture_delta(eps.tolist(), k, h, r, a, far))
        assert np.max(np.abs(got - want)) <= 1e-14, (k, got, want)
        assert want[-1] < 1e-5 < want[0]  # the body and the tail


def test_run_profile_control_the_mass_without_its_end_term_is_wrong() -> None:
    """Control for the check above: the mass summed without its window-end term (``omega^M``, a careless
    reading of the geometric sum as running to infinity) is far from the exact delta."""
    r, a, far, h, k = 0.25, 2.0**-20, 200, 0.01, 200_000
    p = np.zeros(far + 1)
    p[0], p[1], p[far] = (1 - a) * (1 - r), (1 - a) * r, a
    batch = _batched(pld_spectral._Discrete(p, 0, 0.0, 0.0), [k], h)
    eps = h * k * r
    batch.cd_end[:] = 0.0  # the careless mass (this batch is the test's own)
    got = batch.at(np.zeros(1, dtype=np.intp), np.array([eps]))[0][0]
    assert abs(got - _binomial_mixture_delta([eps], k, h, r, a, far)[0]) > 1e-6


@pytest.mark.parametrize("target", [1e-2, 1e-5, 1e-9])
def test_run_inverse_is_the_single_search_root(run_law, target: float) -> None:
    """All counts searched together find each count's root: the cell the one-count search finds (the same
    profile, :class:`_SpectralProfile`), delta within the target there and above it just below, whatever the
    guesses (none, good, bad, outside the range)."""
    p, counts, h, batch = run_law
    rows = np.arange(len(counts))
    targets = np.full(rows.size, target)
    singles = [pld_spectral._SpectralProfile(batch.composed(r), h) for r in rows]
    alone = np.array([s.inverse(target, -1e4, 1e4) for s in singles])
    rng = np.random.default_rng(7)
    for guesses, near in [
        (None, False),
        (alone, True),
        (alone + rng.uniform(-0.03, 0.03, rows.size), True),
        (alone + rng.uniform(-3.0, 3.0, rows.size), False),
        (np.array([np.nan, -1e5, 1e5, np.inf, -np.inf]), True),
    ]:
        roots = batch.inverse(rows, targets, -1e4, 1e4, guesses, near=near)
        below = roots - 1e-9 * np.maximum(1.0, np.abs(roots))
        assert np.all(batch.at(rows, roots)[0] <= targets)
        assert np.all(batch.at(rows, below)[0] > targets)
        for single, root, one in zip(singles, roots.tolist(), alone.tolist(), strict=True):
            assert single.first_above(root - 1e-12) == single.first_above(one - 1e-12)  # the same cell
            assert single(root) <= target + 1e-16  # and the same delta there, to rounding
            assert single(root - 1e-9 * max(1.0, abs(root))) > target - 1e-16


def test_run_inverse_ends_of_the_range(run_law) -> None:
    """The target met at the lower end gives the lower end; a root above ``hi`` is left (NaN) to the widening
    search of :func:`dpcore.pld._inverse`."""
    _, counts, h, batch = run_law
    rows = np.arange(len(counts))
    at_lo = batch.at(rows, np.full(rows.size, -5.0))[0]
    assert np.array_equal(batch.inverse(rows, at_lo, -5.0, 1e4), np.full(rows.size, -5.0))
    roots = batch.inverse(rows, np.full(rows.size, 1e-9), -1e4, 1e4)
    above = batch.inverse(rows, np.full(rows.size, 1e-9), -1e4, float(np.min(roots)) - 0.5)
    assert np.all(np.isnan(above))


def test_single_search_from_a_guess_is_the_bisection_root() -> None:
    """The one-count search started from a guess (probed, then 2, 4, 8 cells away) ends in the bisection's cell."""
    p = _pmf(np.random.default_rng(11), 200, 60, 8.0, 1e-3)
    profile = pld_spectral._spectral_profile(_composed(p, 20000, 2e-3), 2e-3)
    rng = np.random.default_rng(12)
    for target in (1e-2, 1e-5, 1e-9):
        root = profile.inverse(target, -1e4, 1e4)
        for guess in root + np.concatenate(([0.0], rng.uniform(-0.05, 0.05, 6), rng.uniform(-5, 5, 3))):
            assert profile.inverse(target, -1e4, 1e4, float(guess)) == pytest.approx(root, rel=1e-12, abs=1e-14)


def _split_sine(period: int, r: np.ndarray, centred: bool = True) -> np.ndarray:
    """sin(pi r / period) from the tables of ``_half_angles`` by the angle addition, as the log-spectrum takes
    it; ``centred=False``: the split a careless author would write, ``s = r mod 2^b`` in ``[0, 2^b)``."""
    bits, sin_high, cos_high, sin_low, cos_low = pld_spectral._half_angles(period)
    half, top = 1 << (bits - 1), sin_high.size // 2
    if centred:
        q = (r + half) >> bits
        s = r - (q << bits)
        return sin_high[q + top] * cos_low[s + half] + cos_high[q + top] * sin_low[s + half]
    q = r >> bits
    s = r - (q << bits)  # in [0, 2^b): an angle up to a whole step, added to a step's angle of the other sign
    step = (math.pi / period) * s
    return sin_high[q + top] * np.cos(step) + cos_high[q + top] * np.sin(step)


@pytest.mark.parametrize("n", [10800, 52488, 234375, 1 << 26])
def test_half_angle_tables_are_as_accurate_as_a_sine(n: int) -> None:
    """The log-spectrum's sines of pi r / period by two table look-ups and the angle addition: within 4 ulps of
    the 40-digit value at every kind of angle (tiny, at the split's seams, near +-pi/2), as np.sin is within 1.

    Control: splitting ``r`` as ``q 2^b + s`` with ``s`` in ``[0, 2^b)`` (not centred) adds a step's angle to
    one of the other sign for small negative ``r``, and loses far more than 4 ulps there."""
    period = pld_spectral._DIVISIONS * n
    bits = pld_spectral._half_angles(period)[0]
    rng = np.random.default_rng(n)
    seams = (np.arange(-5, 6, dtype=np.int64) << bits)[:, None] + np.array([-(1 << (bits - 1)) - 1, -1, 0, 1])
    r = np.concatenate(
        (
            np.arange(-40, 41, dtype=np.int64),
            seams.ravel(),
            rng.integers(-period // 2 + 1, period // 2 + 1, 400),
            period // 2 - np.arange(20, dtype=np.int64),
            -period // 2 + 1 + np.arange(20, dtype=np.int64),
        )
    )
    with mp.workdps(40):
        want = np.array([float(mp.sin(mp.pi * int(x) / period)) for x in r])
    ulps = np.spacing(np.abs(want)) + (want == 0) * 5e-324
    assert np.max(np.abs(_split_sine(period, r) - want) / ulps) <= 4.0
    assert np.max(np.abs(np.sin((math.pi / period) * r) - want) / ulps) <= 1.0
    # sin(phi) = 2 sin(phi/2) cos(phi/2): within 4 ulps at small angles, within 4.5e-16 where it is near 0 at
    # phi near pi (there the log-spectrum's terms are bounded by their real parts, 2 p sin^2(phi/2), near 2 p)
    bits_, sin_high, cos_high, sin_low, cos_low = pld_spectral._half_angles(period)
    half, top = 1 << (bits_ - 1), sin_high.size // 2
    q = (r + half) >> bits_
    s = r - (q << bits_)
    cosine = cos_high[q + top] * cos_low[s + half] - sin_high[q + top] * sin_low[s + half]
    with mp.workdps(40):
        full = np.array([float(mp.sin(2 * mp.pi * int(x) / period)) for x in r])
    err = np.abs(2.0 * _split_sine(period, r) * cosine - full)
    assert np.max(err[:81] / (np.spacing(np.abs(full[:81])) + (full[:81] == 0) * 5e-324)) <= 4.0
    assert np.max(err) <= 4.5e-16
    small = np.arange(-40, 0, dtype=np.int64)
    with mp.workdps(40):
        exact = np.array([float(mp.sin(mp.pi * int(x) / period)) for x in small])
    assert np.max(np.abs(_split_sine(period, small, centred=False) - exact) / np.spacing(np.abs(exact))) > 1e3
