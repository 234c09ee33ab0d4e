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


def _chunk_sum(j: int, gen: np.random.Generator, size: int) -> tuple[int, float]:
    """Module level, so that a process pool can run it."""
    return j, float(gen.random(size).sum())


def _pairs(a: tuple[int, float], b: tuple[int, float]) -> tuple[int, float]:
    return a[0] + b[0], a[1] + b[1]


def test_fold_chunks_folds_every_chunk_in_order_wherever_it_runs() -> None:
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    sizes = _engine.chunk_sizes(10 * _engine.TASK_CHUNKS + 3, 5)  # 2 * TASK_CHUNKS + 1 chunks: three tasks
    root = np.random.SeedSequence(8)
    serial = _engine.fold_chunks(_chunk_sum, _pairs, sizes, root)
    by_hand = sum(range(len(sizes))), 0.0
    for j, m in enumerate(sizes):
        by_hand = by_hand[0], by_hand[1] + float(_engine.chunk_rng(root, j).random(m).sum())
    assert serial[0] == by_hand[0] and serial[1] == pytest.approx(by_hand[1], rel=1e-12)
    with ThreadPoolExecutor(3) as threads, ProcessPoolExecutor(2) as processes:
        assert _engine.fold_chunks(_chunk_sum, _pairs, sizes, root, executor=threads) == serial
        assert _engine.fold_chunks(_chunk_sum, _pairs, sizes, root, executor=processes) == serial
    tail = _engine.fold_chunks(_chunk_sum, _pairs, sizes, root, start=1)
    assert tail[0] == serial[0] and tail[1] < serial[1]  # chunk 0 left out
    two = _engine.fold_streams([(_chunk_sum, root), (_chunk_sum, np.random.SeedSequence(9))], _pairs, sizes)
    assert two[0] == serial and two[1] != serial
    with pytest.raises(ValueError, match="no chunk to run"):
        _engine.fold_chunks(_chunk_sum, _pairs, sizes, root, start=len(sizes))


def test_every_monte_carlo_check_gives_the_same_result_on_an_executor() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def sampler(g: np.random.Generator, n: int) -> np.ndarray:
        return g.laplace(0.0, 1.0, n)

    kw = dict(rng=5, chunk_size=64)  # 8000 samples: 125 chunks, two tasks
    n = 8000
    runs = {}
    for ex in (None, ThreadPoolExecutor(2)):
        runs[ex is None] = [
            dpcore.check_probability(sampler, lambda x: x < 0, n, 0.5, executor=ex, **kw),
            dpcore.check_bounded_mean(lambda g, m: g.random(m), n, 0.5, lower=0, upper=1, executor=ex, **kw),
            dpcore.check_mean(sampler, n, 0.0, variance_bound=2.0, executor=ex, **kw),
            dpcore.check_variance(sampler, n, 2.0, kurtosis_bound=6, executor=ex, **kw),
            dpcore.check_cdf(
                sampler, n, lambda t: 0.5 + 0.5 * np.sign(t) * (1 - np.exp(-np.abs(t))), executor=ex, **kw
            ),
            *dpcore.check_law(
                sampler,
                n,
                cdf=lambda t: 0.5 + 0.5 * np.sign(t) * (1 - np.exp(-np.abs(t))),
                mean=0.0,
                variance=2.0,
                variance_bound=2.0,
                kurtosis_bound=6,
                event=lambda x: x < 0,
                event_probability=0.5,
                executor=ex,
                **kw,
            ),
        ]
        if ex is not None:
            ex.shutdown()
    assert runs[True] == runs[False]
    assert all(r.passed for r in runs[True])  # each at false alarm <= 1e-6


def test_chunk_sizes_are_lazy_and_agree_with_the_list() -> None:
    """No list of n / chunk_size entries: 2**62 one-sample chunks cost nothing to describe."""
    huge = _engine.chunk_sizes(2**62, 1)
    assert len(huge) == 2**62 and huge[0] == 1 and huge[-1] == 1 and huge[2**61 : 2**61 + 3] == [1, 1, 1]
    last = _engine.chunk_sizes(10**15 + 7, 10**6)
    assert len(last) == 10**9 + 1 and last[-1] == 7 and last[10**9 - 1] == 10**6
    for n, c in [(7, 3), (6, 3), (2, 5), (0, 4), (100, 1)]:
        by_hand = [c] * (n // c) + ([n % c] if n % c else [])
        assert _engine.chunk_sizes(n, c) == by_hand and list(_engine.chunk_sizes(n, c)) == by_hand
    with pytest.raises(IndexError):
        _engine.chunk_sizes(7, 3)[3]


def test_balanced_tasks_fill_whole_rounds_of_workers() -> None:
    # the audit of 5e7 samples per side on 16 workers (issue 15): 153 selection and 611 estimation chunks
    # were 3 and 10 tasks per side (6 and 20 tasks on 16 workers); now 16 and 32, in whole rounds
    assert _engine.balanced_tasks(153, 2, 16) == 8 and _engine.balanced_tasks(611, 2, 16) == 16
    for chunks in (1, 2, 5, 63, 64, 65, 153, 611, 10_000):
        for workers in (1, 2, 3, 4, 7, 16, 64):
            t = _engine.balanced_tasks(chunks, 2, workers)
            assert 1 <= t <= chunks
            assert -(-chunks // t) <= _engine.TASK_CHUNKS  # no task above TASK_CHUNKS chunks
            if t < chunks:
                assert (2 * t) % workers == 0  # whole rounds
    groups = list(_engine._groups(1, 154, 8))
    assert sum(m for _, m in groups) == 153 and max(m for _, m in groups) - min(m for _, m in groups) <= 1
    assert [f for f, _ in groups] == [1 + sum(m for _, m in groups[:i]) for i in range(8)]


def test_tasks_on_dask_hold_up_to_distributed_task_chunks() -> None:
    # ceil(611 / 1024) = 1 task per side; on 16 workers, 16 / gcd(16, 2) = 8 per side fill whole rounds
    big = _engine.DISTRIBUTED_TASK_CHUNKS
    assert big == 1024
    assert _engine.balanced_tasks(611, 2, 1, big) == 1 and _engine.balanced_tasks(611, 2, 2, big) == 1
    assert _engine.balanced_tasks(611, 2, 16, big) == 8 and _engine.balanced_tasks(3000, 2, 1, big) == 3
    for chunks in (1, 63, 1023, 1024, 1025, 12_208):
        for workers in (1, 2, 3, 16):
            t = _engine.balanced_tasks(chunks, 2, workers, big)
            assert 1 <= t <= chunks and -(-chunks // t) <= big
            assert t >= _engine.balanced_tasks(chunks, 2, workers, 10**9)  # never fewer than one round
    with pytest.raises(ValueError, match="task_chunks"):
        _engine.balanced_tasks(10, 2, 2, 0)


def test_max_task_chunks_is_larger_only_for_a_dask_executor() -> None:
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    class DaskLike:
        _client = object()  # what dask.distributed's ClientExecutor has

    assert _engine.max_task_chunks(DaskLike()) == _engine.DISTRIBUTED_TASK_CHUNKS
    assert _engine.max_task_chunks(None) == _engine.TASK_CHUNKS
    with ThreadPoolExecutor(1) as t, ProcessPoolExecutor(1) as p:
        assert _engine.max_task_chunks(t) == _engine.max_task_chunks(p) == _engine.TASK_CHUNKS


def test_worker_count_of_each_kind_of_executor() -> None:
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    assert _engine.worker_count(None) == 1
    with ThreadPoolExecutor(3) as t, ProcessPoolExecutor(2) as p:
        assert _engine.worker_count(t) == 3 and _engine.worker_count(p) == 2

    class Client:
        def nthreads(self) -> dict[str, int]:
            return {"a": 2, "b": 3}

    class DaskLike:
        _client = Client()

    assert _engine.worker_count(DaskLike()) == 5


class _CountingExecutor:
    """Runs each task at once but keeps its future pending until the driver asks: counts tasks in flight."""

    _max_workers = 2

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0

    def submit(self, fn, *args):  # type: ignore[no-untyped-def]
        from concurrent.futures import Future

        executor = self
        value = fn(*args)

        class Lazy(Future):  # type: ignore[type-arg]
            def result(self, timeout=None):  # type: ignore[no-untyped-def]
                executor.in_flight -= 1
                return value

        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        return Lazy()


def test_tasks_in_flight_are_bounded_and_progress_counts_every_sample() -> None:
    sizes = _engine.chunk_sizes(5000 * 7 + 3, 7)  # 5001 chunks
    root = np.random.SeedSequence(2)
    seen: list[int] = []
    ex = _CountingExecutor()
    got = _engine.fold_streams(
        [(_chunk_sum, root), (_chunk_sum, root)], _pairs, sizes, executor=ex, tasks=2000, on_task=seen.append
    )
    assert ex.most <= 4 * 2 + 2  # the driver never holds more than a window of results
    assert sum(seen) == 2 * (5000 * 7 + 3) and len(seen) == 2 * 2000
    serial = _engine.fold_chunks(_chunk_sum, _pairs, sizes, root)
    assert got[0][0] == got[1][0] == serial[0]
    assert got[0][1] == pytest.approx(serial[1], rel=1e-12)  # regrouped float sums: equal up to rounding
