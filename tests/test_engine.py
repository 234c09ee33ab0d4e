"""dpcore._engine: the one chunked sampling engine of the Monte Carlo checks and the auditor."""

from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore import _engine


def test_chunks_are_spawned_children_and_do_not_touch_the_root() -> None:
    root = np.random.SeedSequence(11)
    got = [g.random(m) for m, g in _engine.chunks(7, 3, root)]
    assert [len(x) for x in got] == [3, 3, 1] and _engine.chunk_sizes(7, 3) == [3, 3, 1]
    assert root.n_children_spawned == 0  # the root is not advanced: the same root gives the same chunks
    kids = np.random.SeedSequence(11).spawn(3)
    for x, kid in zip(got, kids, strict=True):
        np.testing.assert_array_equal(x, np.random.Generator(np.random.PCG64(kid)).random(len(x)))
    assert _engine.chunk_sizes(6, 3) == [3, 3] and _engine.chunk_sizes(2, 5) == [2]


def test_a_check_and_an_audit_draw_chunk_j_from_the_same_kind_of_stream() -> None:
    # the chunk of index j of a check seeded with s is child j of SeedSequence(s), whatever the chunk size
    seen: list[np.ndarray] = []

    def sampler(g: np.random.Generator, n: int) -> np.ndarray:
        seen.append(g.random(n))
        return seen[-1]

    dpcore.check_mean(sampler, 1000, 0.5, variance_bound=1 / 12, rng=3, chunk_size=400, alpha=0.1)
    kids = np.random.SeedSequence(3).spawn(len(seen))
    for x, kid in zip(seen, kids, strict=True):
        np.testing.assert_array_equal(x, np.random.Generator(np.random.PCG64(kid)).random(len(x)))


def test_draw_rejects_what_is_not_a_finite_real_vector_of_the_size() -> None:
    g = np.random.default_rng(0)
    ok = _engine.draw(lambda gen, n: gen.random(n), 4, g, what="sampler")
    assert ok.shape == (4,)
    with pytest.raises(ValueError, match="length 4"):
        _engine.draw(lambda gen, n: gen.random(n + 1), 4, g, what="sampler")
    with pytest.raises(ValueError, match="NaN or infinite"):
        _engine.draw(lambda gen, n: np.full(n, np.nan), 4, g, what="sampler")
    with pytest.raises(ValueError, match="real numbers"):
        _engine.draw(lambda data, n, gen: ["a"] * n, 4, g, 0.0, what="mechanism(data, size, rng)")
    # a mechanism is called as mechanism(data, size, rng)
    out = _engine.draw(lambda data, n, gen: np.full(n, data), 3, g, 2.5, what="mechanism(data, size, rng)")
    assert out.tolist() == [2.5, 2.5, 2.5]


def test_child_is_the_spawned_descendant_and_repeats() -> None:
    a, b = _engine.child(np.random.SeedSequence(5), 1, 0), np.random.SeedSequence(5).spawn(2)[1].spawn(1)[0]
    assert a.spawn_key == b.spawn_key == (1, 0) and a.entropy == b.entropy
    # a SeedSequence handed to a check is a root, not a counter: the same root gives the same result
    root = np.random.SeedSequence(8)
    kw = dict(cdf=lambda x: np.clip(x, 0, 1), mean=0.5, variance=1 / 12, variance_bound=1 / 12, kurtosis_bound=1.8)

    def law() -> list[dpcore.CheckResult]:
        uniform = lambda g, n: g.random(n)  # noqa: E731
        return dpcore.check_law(uniform, 5000, **kw, event=lambda u: u < 0.5, event_probability=0.5, rng=root)

    assert [r.estimate for r in law()] == [r.estimate for r in law()]
