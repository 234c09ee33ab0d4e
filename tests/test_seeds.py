"""Seeds become streams in one place, and $DPCORE_SEED_OFFSET moves every int seed to another stream."""

from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore._validation import SEED_OFFSET_ENV, as_seed_sequence, seed_offset


def test_default_stream_is_numpys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEED_OFFSET_ENV, raising=False)
    assert seed_offset() == 0
    assert dpcore.as_generator(7).random() == np.random.default_rng(7).random()


def test_offset_gives_seedsequence_of_seed_and_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEED_OFFSET_ENV, "3")
    assert seed_offset() == 3
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence([7, 3]))).random(4)
    assert np.array_equal(dpcore.as_generator(7).random(4), expected)
    assert as_seed_sequence(7).entropy == [7, 3]
    # the Monte Carlo checks and the audit's root seed go through the same place: chunk j of a
    # check draws from child j of SeedSequence([7, 3]) (dpcore._engine)
    sampler = lambda g, n: g.random(n)  # noqa: E731
    a = dpcore.check_probability(sampler, lambda u: u < 0.5, 1000, 0.5, rng=7)
    assert a.details["hits"] == int((expected_stream(7, 3, 1000) < 0.5).sum())
    b = dpcore.check_probability(sampler, lambda u: u < 0.5, 1000, 0.5, rng=7, chunk_size=300)
    chunks, sizes = np.random.SeedSequence([7, 3]).spawn(4), [300, 300, 300, 100]
    draws = np.concatenate(
        [np.random.Generator(np.random.PCG64(c)).random(m) for c, m in zip(chunks, sizes, strict=True)]
    )
    assert b.details["hits"] == int((draws < 0.5).sum())


def expected_stream(seed: int, offset: int, n: int) -> np.ndarray:
    """The first chunk of a check seeded with ``seed`` under offset ``offset``: child 0 of the root stream."""
    child = np.random.SeedSequence([seed, offset]).spawn(1)[0]
    return np.random.Generator(np.random.PCG64(child)).random(n)


def test_generators_and_seedsequences_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEED_OFFSET_ENV, "5")
    g = np.random.default_rng(1)
    assert dpcore.as_generator(g) is g
    ss = np.random.SeedSequence(9)
    assert as_seed_sequence(ss) is ss


@pytest.mark.parametrize("bad", ["-1", "x", "1.5", "1e3"])
def test_malformed_offset_is_an_error(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv(SEED_OFFSET_ENV, bad)
    with pytest.raises(ValueError, match=SEED_OFFSET_ENV):
        dpcore.as_generator(1)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_seeds(bad: object) -> None:
    with pytest.raises(ValueError):
        dpcore.as_generator(bad)  # type: ignore[arg-type]


def test_a_generator_seeds_a_reproducible_root_stream() -> None:
    a, b = as_seed_sequence(np.random.default_rng(3)), as_seed_sequence(np.random.default_rng(3))
    assert a.entropy == b.entropy and len(a.entropy) == 4  # 256 bits drawn from the generator
    g = np.random.default_rng(3)
    first, second = as_seed_sequence(g), as_seed_sequence(g)
    assert first.entropy != second.entropy  # the generator advanced
