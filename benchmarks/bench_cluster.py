"""One Adam step of an MLP on a 2-ps/2-worker cluster of task processes, against one process.

The cluster is real: four `placeviz server` processes and a Dask scheduler on loopback, variables
spread over the ps tasks by `replica_device_setter`, the step run from a session on worker 0.
The same graph without the device setter runs in this process. Printed: the median step time of
each (after warm-up), the ratio, the overhead per op of the step, and the bytes that crossed
between tasks in one step (Dask's transfer log), by direction.

Run: python benchmarks/bench_cluster.py [--steps 30] [--widths 784,256,256,10] [--batch 64]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from typing import Any

import numpy as np

import placeviz as pv
from placeviz.contract import EventKind


def build(widths: list[int], batch: int, spec: pv.train.ClusterSpec | None) -> tuple:
    graph = pv.Graph()
    with graph.as_default():
        pv.set_random_seed(0)
        with pv.device(pv.train.replica_device_setter(cluster=spec) if spec else None):
            x = pv.placeholder(pv.float32, [batch, widths[0]])
            labels = pv.placeholder(pv.float32, [batch, widths[-1]])
            h = x
            for i, width in enumerate(widths[1:]):
                last = i == len(widths) - 2
                h = pv.layers.dense(h, width, activation=None if last else pv.nn.relu)
            loss = pv.reduce_mean(
                pv.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=h)
            )
            step = pv.train.get_or_create_global_step()
            train = pv.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
            init = pv.global_variables_initializer()
    return graph, x, labels, train, init


def timed_steps(sess: Any, train: Any, feed: dict, steps: int) -> list[float]:
    for _ in range(3):
        sess.run(train, feed)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        sess.run(train, feed)
        times.append(time.perf_counter() - start)
    return times


def crossed(trace: pv.Trace) -> dict[str, int]:
    """Bytes of the last run's transfers between tasks, by 'from task -> to task'."""
    names = [d["name"] for d in trace.devices]
    events = trace.events
    moved: dict[str, int] = {}
    for kind, device, peer, size in zip(
        events["kind"], events["device"], events["peer"], events["bytes"]
    ):
        if kind != int(EventKind.TRANSFER) or peer < 0:
            continue
        src, dst = (names[i].split("/device:")[0].replace("/replica:0", "") for i in (peer, device))
        if src != dst:
            moved[f"{src} -> {dst}"] = moved.get(f"{src} -> {dst}", 0) + int(size)
    return moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--widths", default="784,256,256,10")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    rng = np.random.default_rng(0)
    data = rng.random((args.batch, widths[0]), dtype=np.float32)
    labels = np.eye(widths[-1], dtype=np.float32)[rng.integers(0, widths[-1], args.batch)]

    pv.config.simulate_gpus(0)
    graph, x, y, train, init = build(widths, args.batch, None)
    with pv.Session(graph=graph) as sess:
        sess.run(init)
        local = timed_steps(sess, train, {x: data, y: labels}, args.steps)
        ops = sum(1 for _ in sess.placement)

    start = time.perf_counter()
    workers, ps = pv.test.create_local_cluster(2, 2)
    started = time.perf_counter() - start
    try:
        graph, x, y, train, init = build(widths, args.batch, workers[0].cluster_spec)
        with pv.Session(workers[0].target, graph=graph) as sess:
            sess.run(init)
            remote = timed_steps(sess, train, {x: data, y: labels}, args.steps)
            moved = crossed(sess.trace(runs=1))
    finally:
        for server in itertools.chain(workers, ps):
            server.stop()

    one, many = statistics.median(local), statistics.median(remote)
    print(f"MLP {args.widths}, batch {args.batch}, Adam, {ops} ops; {args.steps} steps after 3")
    print(f"  cluster of 2 ps + 2 workers started in {started:.2f} s")
    print(f"  one process   : {one * 1e3:8.2f} ms per step")
    print(f"  2 ps/2 workers: {many * 1e3:8.2f} ms per step ({many / one:.1f}x one process)")
    print(f"  overhead per op of the step: {(many - one) / ops * 1e6:.0f} us")
    print(f"  bytes between tasks per step: {sum(moved.values()):,}")
    for direction, size in sorted(moved.items()):
        print(f"    {direction:<40} {size:>12,}")


if __name__ == "__main__":
    main()
