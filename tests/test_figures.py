"""dpbook.figures: every figure draws from small inputs, with the curves and labels it promises."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dpbook import figures  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _lines(fig):
    return [line for ax in fig.axes for line in ax.get_lines()]


def test_chapter_01_02_figures() -> None:
    fig = figures.laplace_vs_normal(2.376)
    assert len(fig.axes) == 2 and len(_lines(fig)) == 5  # two densities, two tails, the crossing line
    rows = [(0.5, 0.55, 0.5, 0.6), (1.0, 0.6, 0.55, 0.65)]
    fig = figures.attack_success(lambda e: np.exp(e) / (1 + np.exp(e)), [0.5, 1.0], rows, [(1.0, 0.7)], [0.5], [0.62])
    assert any("bound" in line.get_label() for line in _lines(fig))
    fig = figures.budget_split_error(1.0, 4, rng=0)
    assert len(_lines(fig)) == 4
    fig = figures.histogram_release(["a", "b"], [3, 4], [2.5, 4.2], 10.0, 7, [0.1, 1.0], [10.0, 1.0], [20.0, 2.0])
    assert len(fig.axes) == 2 and [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["a", "b"]


def test_chapter_03_to_06_figures() -> None:
    fig = figures.laplace_density_ratio(0.0, 1.0, 1.0, 1.0)
    ratio = fig.axes[0].get_lines()[0].get_ydata()
    assert ratio.max() == pytest.approx(np.e) and ratio.min() == pytest.approx(1 / np.e)  # the ratio stays in e^{+-1}
    gen = np.random.default_rng(0)
    fig = figures.privacy_loss_histograms(gen.uniform(-1, 1, 100), gen.uniform(-2, 2, 100), 1.0)
    assert len(fig.axes) == 2
    assert len(_lines(figures.gaussian_profiles((1.0, 2.0)))) == 2
    assert len(_lines(figures.classic_over_analytic((1e-5,), lambda e, d: np.sqrt(2 * np.log(1.25 / d)) / e))) == 2
    assert len(_lines(figures.rdp_curves((1.0,)))) == 2
    k = np.array([1, 10, 100])
    fig = figures.composition_bounds(k, {"basic": 3 * k, "rdp": 2 * k}, k.astype(float), "title")
    assert len(_lines(fig)) == 6 and fig.axes[1].get_lines()[-1].get_ydata().tolist() == [1.0, 1.0, 1.0]
    fig = figures.audit_convergence([10, 100], {"ok": (np.array([[0.5, 0.8], [0.4, 0.9]]), 1.0)}, claimed=1.0)
    labels = [line.get_label() for line in _lines(fig)]
    assert labels.count("_nolegend_") == 1 and any("claimed" in s for s in labels)


def test_chapter_07_figures() -> None:
    steps = np.array([100, 1000, 10000])
    curves = {"pld": np.array([0.2, 0.6, 2.0]), "naive": np.array([16.0, 160.0, 2700.0])}
    fig = figures.dp_sgd_epsilons(steps, curves, "title")
    assert [line.get_label() for line in _lines(fig)] == ["pld", "naive"]
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
    k = np.array([1, 4, 16])
    fig = figures.averaging_cost(k, np.array([0.5, 2.0, 7.7]), np.sqrt(8 / k), 0.5)
    assert len(fig.axes) == 2 and len(_lines(fig)) == 4
    assert fig.axes[0].get_lines()[1].get_ydata().tolist() == [0.5, 2.0, 8.0]  # basic composition k * eps0


def test_chapter_08_figure() -> None:
    rows = {
        "calibrator": [(1.0, 1e-5, 3.5, 2e-5, 3.7), (1.0, 1e-100, 1.5, 1e-20, 4.0)],
        "exact": [(1.0, 1e-5, 3.7, 1e-5, 3.7), (1.0, 1e-100, 4.0, 1e-100, 4.0)],
    }
    fig = figures.calibrator_true_delta(rows)
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
    points = fig.axes[1].get_lines()[0].get_ydata().tolist()  # under-noise 1 - sigma/exact, in percent
    assert points == pytest.approx([100 * (1 - 3.5 / 3.7), 100 * (1 - 1.5 / 4.0)])
