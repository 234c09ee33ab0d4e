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

:func:`fold_chunks` runs a per-chunk computation over the chunks and folds the
results in chunk order, here or on an ``Executor`` (a process pool, threads, or
a Dask cluster through ``dask.distributed.Client.get_executor()``), in tasks of
:data:`TASK_CHUNKS` chunks: the result is the same wherever it ran.
:func:`draw` is the one check of what a sampler or mechanism returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["TASK_CHUNKS", "child", "chunk_sizes", "chunk_rng", "chunks", "draw", "fold_chunks", "fold_streams"]

R = TypeVar("R")

#: Chunks per executor task: few enough tasks to keep the overhead small, enough to spread the work.
TASK_CHUNKS = 64


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


def _fold_group(
    fn: Callable[[int, np.random.Generator, int], R],
    combine: Callable[[R, R], R],
    root: np.random.SeedSequence,
    first: int,
    sizes: Sequence[int],
) -> R:
    """``fn`` on chunks ``first, first + 1, ...`` (sizes ``sizes``), folded in order: one executor task."""
    acc: R | None = None
    for offset, size in enumerate(sizes):
        part = fn(first + offset, chunk_rng(root, first + offset), size)
        acc = part if acc is None else combine(acc, part)
    assert acc is not None
    return acc


def fold_chunks(
    fn: Callable[[int, np.random.Generator, int], R],
    combine: Callable[[R, R], R],
    sizes: Sequence[int],
    root: np.random.SeedSequence,
    *,
    executor: Executor | None = None,
    start: int = 0,
) -> R:
    """``fn(j, gen_j, size_j)`` for the chunks ``j = start, ..., len(sizes) - 1``, folded by ``combine`` in order.

    Chunk ``j`` draws from :func:`chunk_rng` ``(root, j)``. The chunks are
    grouped in tasks of :data:`TASK_CHUNKS`; each task folds its chunks, and
    the tasks' results are folded in order, so the result does not depend on
    ``executor`` (``None``: this process; otherwise anything with
    ``submit``, e.g. a ``ProcessPoolExecutor`` -- then ``fn`` and ``combine``
    must be picklable -- or a Dask client's executor, which pickles closures
    too). A task returns one folded value (counts, sums), so what travels and
    what is held stays small whatever the number of chunks.

    Raises
    ------
    ValueError
        If there is no chunk to run (``start >= len(sizes)``).
    """
    return fold_streams([(fn, root)], combine, sizes, executor=executor, start=start)[0]


def fold_streams(
    streams: Sequence[tuple[Callable[[int, np.random.Generator, int], R], np.random.SeedSequence]],
    combine: Callable[[R, R], R],
    sizes: Sequence[int],
    *,
    executor: Executor | None = None,
    start: int = 0,
) -> list[R]:
    """:func:`fold_chunks` for several ``(fn, root)`` streams of the same chunk sizes, all submitted at once.

    An audit draws two streams (one per neighbouring input); submitting both
    before waiting keeps every worker busy.
    """
    groups = [(first, list(sizes[first : first + TASK_CHUNKS])) for first in range(start, len(sizes), TASK_CHUNKS)]
    if not groups:
        raise ValueError(f"no chunk to run: start {start} with {len(sizes)} chunks")
    if executor is None:
        parts = [[_fold_group(fn, combine, root, first, part) for first, part in groups] for fn, root in streams]
    else:
        futures = [
            [executor.submit(_fold_group, fn, combine, root, first, part) for first, part in groups]
            for fn, root in streams
        ]
        parts = [[future.result() for future in row] for row in futures]
    out = []
    for row in parts:
        acc = row[0]
        for part in row[1:]:
            acc = combine(acc, part)
        out.append(acc)
    return out


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
