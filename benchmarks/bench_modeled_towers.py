"""Modeled makespan: two towers of 20 matmuls on two simulated GPUs against the same on one GPU.

Issue 3's check (c): with the towers on two GPUs the modeled makespan should be about half the
one-GPU makespan (the towers overlap; one GPU runs them back to back). Values are computed for
real; times come from the roofline model of the H100 profile.
Run: python benchmarks/bench_modeled_towers.py [--size 1024] [--depth 20]
"""

from __future__ import annotations

import argparse

import numpy as np

import placeviz as pv
from placeviz.contract import EventKind


def makespan_s(gpus_for_towers: tuple[int, int], size: int, depth: int) -> tuple[float, float]:
    """(modeled makespan of the run's steps, seconds; the max abs value, a sanity check)."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(2, profile="H100")
    graph = pv.Graph()
    with graph.as_default():
        towers = []
        for tower, gpu in enumerate(gpus_for_towers):
            with pv.device(f"/gpu:{gpu}"), pv.name_scope(f"tower_{tower}"):
                x = pv.random_uniform([size, size], seed=tower) / float(size)
                for _ in range(depth):
                    x = pv.matmul(x, x)
                towers.append(x)
        with pv.device(f"/gpu:{gpus_for_towers[0]}"):
            total = pv.add_n(towers)
    sess = pv.Session(graph=graph)
    metadata = pv.RunMetadata()
    value = sess.run(total, options=pv.RunOptions(trace_level=3), run_metadata=metadata)
    ev = metadata.trace.events
    steps = (ev["kind"] == int(EventKind.OP)) | (ev["kind"] == int(EventKind.TRANSFER))
    return float(ev["t1"][steps].max() - ev["t0"][steps].min()) / 1e9, float(np.abs(value).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--depth", type=int, default=20)
    args = parser.parse_args()
    one, _ = makespan_s((0, 0), args.size, args.depth)
    two, _ = makespan_s((0, 1), args.size, args.depth)
    print(f"two towers of {args.depth} matmuls ({args.size}x{args.size} float32), simulated H100")
    print(f"modeled makespan, both towers on GPU:0       {one * 1e6:10.1f} us")
    print(f"modeled makespan, one tower on each GPU      {two * 1e6:10.1f} us")
    print(f"ratio two-GPU / one-GPU {two / one:.3f}   (about 0.5 expected)")


if __name__ == "__main__":
    main()
