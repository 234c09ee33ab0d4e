"""The one sampling engine of dpcore: draws in chunks, each chunk from its own child stream.

Every Monte Carlo check (:mod:`dpcore.montecarlo`) and every audit
(:mod:`dpcore.auditing`) draws its ``n`` samples as chunks of at most
``chunk_size``; chunk ``j`` of a computation whose root stream is the
``SeedSequence`` ``root`` draws from :func:`chunk_rng` ``(root, j)``, the child
``SeedSequence(root.entropy, spawn_key=root.spawn_key + (j,))`` -- exactly
``root.spawn(j + 1)[j]``, without changing ``root``. So

* memory is flat in ``n`` (one chunk at a time per worker);
* the chunks are independent streams (``SeedSequence`` spawning), and a
  chunk's samples depend only on the root and ``j``, not on which process,
  thread or Dask worker drew them, so a parallel run reproduces the serial one;
* roots come from :func:`dpcore._validation.as_seed_sequence`, the one place
  seeds become streams (``$DPCORE_SEED_OFFSET`` moves them all).

:func:`draw` is the one check of what a sampler or mechanism returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["child", "chunk_sizes", "chunk_rng", "chunks", "draw"]


def chunk_sizes(n: int, chunk_size: int) -> list[int]:
    """``n`` split into chunks of ``chunk_size`` (the last one shorter)."""
    full, rest = divmod(n, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def child(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The descendant of ``root`` at ``key``: ``child(root, i, j)`` is ``root.spawn(..)[i].spawn(..)[j]``.

    Built from the spawn key, so ``root`` is not advanced: the same root always
    gives the same children (``SeedSequence.spawn`` would count them off).
    """
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *key), pool_size=root.pool_size)


def chunk_rng(root: np.random.SeedSequence, j: int) -> np.random.Generator:
    """The generator of chunk ``j``: that of :func:`child` ``(root, j)``."""
    return np.random.Generator(np.random.PCG64(child(root, j)))


def chunks(n: int, chunk_size: int, root: np.random.SeedSequence) -> Iterator[tuple[int, np.random.Generator]]:
    """``(size, generator)`` of each chunk of ``n`` draws, in order."""
    for j, m in enumerate(chunk_sizes(n, chunk_size)):
        yield m, chunk_rng(root, j)


def draw(source: Callable[..., Any], size: int, gen: np.random.Generator, *args: Any, what: str) -> NDArray[np.float64]:
    """``source(*args, size, gen)`` or ``source(gen, size)`` checked: a 1-D array of ``size`` finite reals.

    ``what`` names the source in the error (``"sampler"`` is called as
    ``sampler(gen, size)``, anything else as ``source(*args, size, gen)``, the
    auditor's ``mechanism(data, size, rng)``).

    Raises
    ------
    ValueError
        If the output is not real, not of shape ``(size,)``, or not finite.
    """
    out = source(gen, size) if what == "sampler" else source(*args, size, gen)
    try:
        arr = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must return real numbers") from None
    if arr.shape != (size,):
        raise ValueError(f"{what} must return a 1-D array of length {size}; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} returned NaN or infinite values")
    return arr
