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
:data:`TASK_CHUNKS` chunks: the result is the same wherever it ran. A caller
whose fold is exact (integer counts: the auditor) may size the tasks for the
executor's workers instead (:func:`balanced_tasks`; larger tasks on a Dask
cluster, :func:`max_task_chunks`). The chunk sizes are a
lazy sequence and at most a few tasks per worker are in flight, so the
driver's memory does not grow with the number of chunks.
:func:`draw` is the one check of what a sampler or mechanism returns.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from typing import Any, TypeVar, overload

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DISTRIBUTED_TASK_CHUNKS",
    "TASK_CHUNKS",
    "ChunkSizes",
    "balanced_tasks",
    "child",
    "chunk_sizes",
    "chunk_rng",
    "chunks",
    "draw",
    "fold_chunks",
    "fold_streams",
    "max_task_chunks",
    "worker_count",
]

R = TypeVar("R")

#: Chunks per executor task: few enough tasks to keep the overhead small, enough to spread the work.
TASK_CHUNKS = 64
#: Most chunks per task of an exactly associative fold on a Dask cluster (:func:`max_task_chunks`). A Dask
#: task cost about 11 ms of CPU in the scheduler, the worker's event loop and the client together on the
#: 2-core build machine (0.3-0.4 s beside 0.75 s of sampling in a 2 x 5e7 audit of 26 tasks; a process
#: pool's task, under 1 ms), which 2 workers on 2 cores pay out of their own time: 1024 chunks of 2^16
#: (about 0.5 s of work) make that about 2 %.
DISTRIBUTED_TASK_CHUNKS = 1024


def chunk_sizes(n: int, chunk_size: int) -> ChunkSizes:
    """``n`` split into chunks of ``chunk_size`` (the last one shorter), as a lazy sequence.

    Nothing of length ``n / chunk_size`` is built: the sizes are computed on
    access, so the bookkeeping of any number of chunks takes constant memory.
    """
    return ChunkSizes(n, chunk_size)


class ChunkSizes(Sequence[int]):
    """The sizes of the chunks of ``n`` draws in chunks of ``chunk_size``: ``[chunk_size, ..., rest]``, computed lazily.

    Compares equal to the list of the sizes.
    """

    __slots__ = ("chunk_size", "n")

    def __init__(self, n: int, chunk_size: int) -> None:
        if n < 0 or chunk_size < 1:
            raise ValueError(f"chunk_sizes needs n >= 0 and chunk_size >= 1; got {n}, {chunk_size}")
        self.n = int(n)
        self.chunk_size = int(chunk_size)

    def __len__(self) -> int:
        return -(-self.n // self.chunk_size)

    def _size(self, j: int) -> int:
        return min(self.chunk_size, self.n - j * self.chunk_size)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        count = len(self)
        if isinstance(index, slice):
            return [self._size(j) for j in range(*index.indices(count))]
        j = index + count if index < 0 else index
        if not 0 <= j < count:
            raise IndexError(f"chunk index {index} out of range for {count} chunks")
        return self._size(j)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkSizes):
            return (len(self), self[:1], self[-1:]) == (len(other), other[:1], other[-1:])
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.n, self.chunk_size))

    def __repr__(self) -> str:
        return f"ChunkSizes(n={self.n}, chunk_size={self.chunk_size})"


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


def worker_count(executor: Executor | None) -> int:
    """How many tasks ``executor`` runs at once: 1 for ``None``; a pool's ``max_workers``; a Dask client's threads.

    Anything else is assumed to have ``os.cpu_count()`` workers (only the
    task sizes depend on it, never a result).
    """
    if executor is None:
        return 1
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    client = getattr(executor, "_client", None)  # dask.distributed's ClientExecutor
    if client is not None:
        try:
            return max(1, sum(int(v) for v in client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a client that cannot say: fall back to the local core count
            pass
    return os.cpu_count() or 1


def max_task_chunks(executor: Executor | None) -> int:
    """Most chunks per task :func:`balanced_tasks` should give ``executor``.

    :data:`DISTRIBUTED_TASK_CHUNKS` for a Dask client's executor (anything
    with a ``_client``, as ``dask.distributed.Client.get_executor()`` returns),
    whose tasks cost milliseconds of CPU each; :data:`TASK_CHUNKS` otherwise.
    Only the task sizes depend on it, never a result.
    """
    if executor is not None and getattr(executor, "_client", None) is not None:
        return DISTRIBUTED_TASK_CHUNKS
    return TASK_CHUNKS


def balanced_tasks(n_chunks: int, n_streams: int, workers: int, task_chunks: int = TASK_CHUNKS) -> int:
    """Tasks per stream for ``n_chunks`` chunks on each of ``n_streams`` streams, for ``workers`` workers.

    At least ``ceil(n_chunks / task_chunks)`` (no task above ``task_chunks``
    chunks; default :data:`TASK_CHUNKS`, see :func:`max_task_chunks`), rounded
    up so that the ``n_streams x tasks`` tasks fill whole
    rounds of ``workers`` (every worker gets the same number of equal tasks;
    with the fixed :data:`TASK_CHUNKS` grouping, 2 x 3 selection tasks on 16
    workers left 10 idle), and at most ``n_chunks`` (a task has a chunk).
    Only for an exactly associative ``combine`` (integer counts): the grouping
    changes float sums in the last bits.

    Raises
    ------
    ValueError
        If ``task_chunks`` < 1.
    """
    if task_chunks < 1:
        raise ValueError(f"task_chunks must be >= 1; got {task_chunks}")
    if n_chunks < 1:
        return 1
    base = -(-n_chunks // task_chunks)
    step = workers // math.gcd(workers, n_streams)
    return max(1, min(n_chunks, -(-base // step) * step))


def _groups(start: int, count: int, tasks: int | None) -> Iterator[tuple[int, int]]:
    """``(first chunk, number of chunks)`` of each task over the chunks ``start .. count - 1``, lazily.

    ``tasks=None``: groups of :data:`TASK_CHUNKS` (a fixed grouping: the fold is
    the same for any executor even when ``combine`` rounds); otherwise ``tasks``
    groups whose sizes differ by at most one.
    """
    total = count - start
    if tasks is None:
        for first in range(start, count, TASK_CHUNKS):
            yield first, min(TASK_CHUNKS, count - first)
        return
    tasks = max(1, min(tasks, total))
    q, r = divmod(total, tasks)
    first = start
    for t in range(tasks):
        m = q + (t < r)
        yield first, m
        first += m


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
    tasks: int | None = None,
    on_task: Callable[[int], None] | None = None,
) -> list[R]:
    """:func:`fold_chunks` for several ``(fn, root)`` streams of the same chunk sizes, all submitted together.

    An audit draws two streams (one per neighbouring input); interleaving
    their tasks keeps every worker busy. ``tasks`` (per stream; ``None``:
    groups of :data:`TASK_CHUNKS`) may be set only when ``combine`` is exactly
    associative (integer counts), since it changes the grouping
    (:func:`balanced_tasks`). ``on_task(samples)`` is called in this process
    as each task's result is folded (a progress bar).

    At most ``4 x workers + 2`` tasks are in flight at once (:func:`worker_count`):
    the driver's memory is flat in the number of chunks.

    Raises
    ------
    ValueError
        If there is no chunk to run (``start >= len(sizes)``).
    """
    count = len(sizes)
    if start >= count:
        raise ValueError(f"no chunk to run: start {start} with {count} chunks")
    n_streams = len(streams)
    acc: list[R | None] = [None] * n_streams

    def fold(s: int, part: R, samples: int) -> None:
        prev = acc[s]
        acc[s] = part if prev is None else combine(prev, part)
        if on_task is not None:
            on_task(samples)

    if executor is None:  # stream by stream, as the draws were always made serially
        for s, (fn, root) in enumerate(streams):
            for first, m in _groups(start, count, tasks):
                part_sizes = sizes[first : first + m]
                fold(s, _fold_group(fn, combine, root, first, part_sizes), sum(part_sizes))
    else:
        window = 4 * worker_count(executor) + 2
        pending: deque[tuple[int, int, Future[R]]] = deque()
        try:
            # interleaved: task k is group k // S of stream k % S, so both sides progress together
            for first, m in _groups(start, count, tasks):
                for s, (fn, root) in enumerate(streams):
                    part_sizes = sizes[first : first + m]
                    future = executor.submit(_fold_group, fn, combine, root, first, part_sizes)
                    pending.append((s, sum(part_sizes), future))
                    if len(pending) >= window:
                        s0, samples, done = pending.popleft()
                        fold(s0, done.result(), samples)
            while pending:
                s0, samples, done = pending.popleft()
                fold(s0, done.result(), samples)
        finally:  # a failed task (or an interrupt) leaves no queued work behind
            for _, _, future in pending:
                future.cancel()
    out: list[R] = []
    for value in acc:
        assert value is not None
        out.append(value)
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
