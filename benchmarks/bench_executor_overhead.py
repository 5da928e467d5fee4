"""Executor overhead: Session.run of a 2,000-op elementwise chain vs the same NumPy loop.

Issue 2's target: Session.run <= 1.5x the plain NumPy loop, 64x64 float32, on the CPU, measured
in one process. Run: python benchmarks/bench_executor_overhead.py [--ops 2000] [--repeats 30]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import placeviz as pv


def build_chain(n_ops: int, x0: np.ndarray, c: np.ndarray) -> pv.Tensor:
    """Alternate add and multiply, as the NumPy loop does."""
    with pv.device("/cpu:0"):
        x = pv.constant(x0)
        k = pv.constant(c)
        for i in range(n_ops):
            x = pv.add(x, k) if i % 2 == 0 else pv.multiply(x, k)
    return x


def numpy_chain(n_ops: int, x0: np.ndarray, c: np.ndarray) -> np.ndarray:
    x = x0
    for i in range(n_ops):
        x = np.add(x, c) if i % 2 == 0 else np.multiply(x, c)
    return x


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x0 = rng.random((64, 64), dtype=np.float32)
    c = (rng.random((64, 64), dtype=np.float32) * 0.001 + 0.9995).astype(np.float32)

    graph = pv.Graph()
    with graph.as_default():
        out = build_chain(args.ops, x0, c)
    sess = pv.Session(graph=graph)
    start = time.perf_counter()
    first = sess.run(out)
    first_run = time.perf_counter() - start
    np.testing.assert_allclose(first, numpy_chain(args.ops, x0, c), rtol=1e-5)

    for _ in range(3):  # warm both paths
        sess.run(out)
        numpy_chain(args.ops, x0, c)
    # Interleave the two measurements so machine noise hits both alike.
    pv_times, np_times = [], []
    for _ in range(args.repeats):
        pv_times.append(timed(lambda: sess.run(out)))
        np_times.append(timed(lambda: numpy_chain(args.ops, x0, c)))
    pv_best, np_best = min(pv_times), min(np_times)
    pv_med, np_med = statistics.median(pv_times), statistics.median(np_times)
    print(f"chain of {args.ops} ops on 64x64 float32, {args.repeats} interleaved repeats")
    print(f"first Session.run (place + compile + run): {first_run * 1e3:8.2f} ms")
    print(f"Session.run  best {pv_best * 1e3:8.3f} ms  median {pv_med * 1e3:8.3f} ms")
    print(f"NumPy loop   best {np_best * 1e3:8.3f} ms  median {np_med * 1e3:8.3f} ms")
    print(
        f"ratio (median) {pv_med / np_med:.3f}x   ratio (best) {pv_best / np_best:.3f}x"
        "   target <= 1.5x"
    )


if __name__ == "__main__":
    main()
