"""placeviz on a real card against plain CuPy, side by side in one process (issue 23).

1. 1,000 matmuls of 1024x1024 float32: four chains of 250, one per logical GPU carved from the
   card, in one Session.run; against the same 1,000 products in a plain CuPy loop on one stream.
   Target: placeviz <= 1.1x.
2. A 2,000-op chain of 64x64 float32 elementwise ops (add and multiply alternating) on one GPU;
   against the same CuPy loop: placeviz's overhead per op, in microseconds.

Rounds interleave placeviz and CuPy; each figure is the median of the rounds. Needs a CUDA GPU.
Run: python benchmarks/bench_gpu.py [--rounds 15] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import placeviz as pv

MATMULS, GPUS, SIZE = 1000, 4, 1024
CHAIN_OPS, CHAIN_SIZE = 2000, 64


def orthogonal(n: int, seed: int) -> np.ndarray:
    """Chained products of an orthogonal matrix keep their scale: no overflow in 250 hops."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q.astype(np.float32)


def seconds(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(
    plain: Callable[[], Any], placed: Callable[[], Any], rounds: int
) -> tuple[float, float]:
    """Median seconds of ``placed`` and ``plain``, after 3 warm-ups of each (cuBLAS handles,
    kernels, pools), the rounds alternating so both see the same card."""
    for _ in range(3):
        plain()
        placed()
    ours, theirs = [], []
    for _ in range(rounds):
        theirs.append(seconds(plain))
        ours.append(seconds(placed))
    return statistics.median(ours), statistics.median(theirs)


def carve(count: int) -> None:
    pv.config.reset_devices()
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus[:1], "GPU")
    pv.config.set_logical_device_configuration(
        gpus[0], [pv.config.LogicalDeviceConfiguration(memory_limit=2048)] * count
    )


def matmuls(rounds: int) -> dict[str, float]:
    import cupy

    carve(GPUS)
    starts = [
        np.random.default_rng(i).standard_normal((SIZE, SIZE)).astype(np.float32)
        for i in range(GPUS)
    ]
    weights = [orthogonal(SIZE, 10 + i) for i in range(GPUS)]
    graph = pv.Graph()
    with graph.as_default():
        outs = []
        for gpu in range(GPUS):
            with pv.device(f"/gpu:{gpu}"):
                x, w = pv.Variable(starts[gpu]), pv.Variable(weights[gpu])
                for _ in range(MATMULS // GPUS):
                    x = pv.matmul(x, w)
                outs.append(x)
        step = pv.group(*outs)
        init = pv.global_variables_initializer()
    sess = pv.Session(graph=graph)
    sess.run(init)

    stream = cupy.cuda.Stream(non_blocking=True)
    xs = [cupy.asarray(s) for s in starts]
    ws = [cupy.asarray(w) for w in weights]

    def plain() -> None:
        with stream:
            for gpu in range(GPUS):
                x = xs[gpu]
                for _ in range(MATMULS // GPUS):
                    x = x @ ws[gpu]
        stream.synchronize()

    def placed() -> None:
        sess.run(step)

    check = sess.run(outs[0])
    want = starts[0]
    for _ in range(MATMULS // GPUS):
        want = want @ weights[0]
    np.testing.assert_allclose(check, want, rtol=1e-2, atol=1e-2)
    t_ours, t_theirs = interleaved(plain, placed, rounds)
    sess.close()
    return {"placeviz_s": t_ours, "cupy_s": t_theirs, "ratio": t_ours / t_theirs}


def elementwise(rounds: int) -> dict[str, float]:
    import cupy

    carve(1)
    rng = np.random.default_rng(0)
    x0 = rng.random((CHAIN_SIZE, CHAIN_SIZE), dtype=np.float32)
    c = (rng.random((CHAIN_SIZE, CHAIN_SIZE), dtype=np.float32) * 0.001 + 0.9995).astype(np.float32)
    graph = pv.Graph()
    with graph.as_default(), pv.device("/gpu:0"):
        x, k = pv.Variable(x0), pv.Variable(c)
        for i in range(CHAIN_OPS):
            x = pv.add(x, k) if i % 2 == 0 else pv.multiply(x, k)
        out = x
        step = pv.group(out)
        init = pv.global_variables_initializer()
    sess = pv.Session(graph=graph)
    sess.run(init)
    stream = cupy.cuda.Stream(non_blocking=True)
    gx, gc = cupy.asarray(x0), cupy.asarray(c)

    def plain() -> None:
        with stream:
            y = gx
            for i in range(CHAIN_OPS):
                y = cupy.add(y, gc) if i % 2 == 0 else cupy.multiply(y, gc)
        stream.synchronize()

    def placed() -> None:
        sess.run(step)

    want = x0
    for i in range(CHAIN_OPS):
        want = np.add(want, c) if i % 2 == 0 else np.multiply(want, c)
    np.testing.assert_allclose(sess.run(out), want, rtol=1e-4)
    t_ours, t_theirs = interleaved(plain, placed, rounds)
    sess.close()
    return {
        "placeviz_s": t_ours,
        "cupy_s": t_theirs,
        "overhead_us_per_op": (t_ours - t_theirs) / CHAIN_OPS * 1e6,
        "cupy_us_per_op": t_theirs / CHAIN_OPS * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    import cupy

    card = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    card = card.decode() if isinstance(card, bytes) else str(card)
    results = {
        "card": card,
        "cupy": cupy.__version__,
        "matmuls": matmuls(args.rounds),
        "elementwise": elementwise(args.rounds),
    }
    m, e = results["matmuls"], results["elementwise"]
    print(f"card: {card}, CuPy {cupy.__version__}, median of {args.rounds} rounds")
    print(
        f"{MATMULS} matmuls {SIZE}x{SIZE} on {GPUS} logical GPUs: placeviz "
        f"{m['placeviz_s'] * 1e3:.2f} ms, CuPy one stream {m['cupy_s'] * 1e3:.2f} ms, "
        f"ratio {m['ratio']:.3f} (target <= 1.1)"
    )
    print(
        f"{CHAIN_OPS}-op {CHAIN_SIZE}x{CHAIN_SIZE} elementwise chain on one GPU: placeviz "
        f"{e['placeviz_s'] * 1e3:.2f} ms, CuPy {e['cupy_s'] * 1e3:.2f} ms "
        f"({e['cupy_us_per_op']:.1f} us/op): overhead {e['overhead_us_per_op']:.1f} us per op"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(results, file, indent=2)


if __name__ == "__main__":
    main()
