"""Executor overhead: Session.run of a 2,000-op elementwise chain vs the same NumPy loop.

Targets: Session.run <= 1.5x the plain NumPy loop (issue 2), and the same with FULL_TRACE on
(issue 3), 64x64 float32, on the CPU, measured in one process with the runs interleaved.
Run: python benchmarks/bench_executor_overhead.py [--ops 2000] [--repeats 30]
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

    full = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    metadata = pv.RunMetadata()
    sess.run(out, options=full, run_metadata=metadata)
    for _ in range(3):  # warm every path
        sess.run(out)
        sess.run(out, options=full)
        numpy_chain(args.ops, x0, c)
    # Interleave the measurements so machine noise hits all of them alike.
    plain, traced, loop = [], [], []
    for _ in range(args.repeats):
        plain.append(timed(lambda: sess.run(out)))
        traced.append(timed(lambda: sess.run(out, options=full)))
        loop.append(timed(lambda: numpy_chain(args.ops, x0, c)))
    print(f"chain of {args.ops} ops on 64x64 float32, {args.repeats} interleaved repeats")
    print(f"first Session.run (place + compile + run): {first_run * 1e3:8.2f} ms")
    print(f"events recorded by one FULL_TRACE run: {len(metadata.trace)}")
    base = statistics.median(loop)
    for label, times in (("NumPy loop", loop), ("Session.run", plain), ("FULL_TRACE", traced)):
        median = statistics.median(times)
        print(
            f"{label:<12} best {min(times) * 1e3:8.3f} ms  median {median * 1e3:8.3f} ms"
            f"  ratio (median) {median / base:.3f}x"
        )
    print("targets: Session.run <= 1.5x, FULL_TRACE <= 1.5x the NumPy loop")


if __name__ == "__main__":
    main()
