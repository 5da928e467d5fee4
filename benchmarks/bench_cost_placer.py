"""The cost-model placer in sessions against TensorFlow's simple placer, side by side in one run.

For each graph, made without device scopes: the ops, the time the first run spends placing them
(``Session._place``: colocation, the schedule, the reasons) with each placer, the modeled step
on simulated H100s (the last of three runs, run dry so the CPU's ops are modeled too; ``--clock``
times them by the clock) with each placer, and the cost placer's speedup.
Graphs: a transformer block (heads side by side) on 2 and 4 GPUs; an MLP trained with Adam
(one tower: the placer can only spread its updates); a 3,001-op chain of small matmuls (how
placing scales; no step gain to find).
Run: python benchmarks/bench_cost_placer.py
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import networkx  # noqa: F401  (imported here, so no placing time below includes importing it)
import numpy as np

import placeviz as pv
from placeviz.examples.documents import scoped_chain
from placeviz.examples.transformer import build_transformer_block

Build = Callable[[], tuple[pv.Operation | pv.Tensor, dict[pv.Tensor, np.ndarray]]]


def transformer(tokens: int, width: int, heads: int) -> Build:
    def build() -> tuple[pv.Tensor, dict[pv.Tensor, np.ndarray]]:
        x, out = build_transformer_block(tokens, width, heads)
        return out, {x: np.ones((tokens, width), np.float32)}

    return build


def mlp_training(batch: int = 512, width: int = 1024, layers: int = 6) -> Build:
    def build() -> tuple[pv.Operation, dict[pv.Tensor, np.ndarray]]:
        x = pv.placeholder(pv.float32, [batch, width], name="x")
        h = x
        for i in range(layers):
            h = pv.layers.dense(h, width, activation=pv.nn.relu, name=f"dense_{i}")
        loss = pv.reduce_mean(pv.square(h), name="loss")
        train = pv.train.AdamOptimizer(1e-3).minimize(loss)
        return train, {x: np.ones((batch, width), np.float32)}

    return build


def chain(blocks: int = 100) -> Build:
    def build() -> tuple[pv.Tensor, dict[pv.Tensor, np.ndarray]]:
        return scoped_chain(blocks), {}

    return build


def measure(build: Build, gpus: int, placer: str, dry: bool) -> tuple[int, float, float]:
    """(ops, seconds placing them, modeled step seconds)."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus)
    graph = pv.Graph()
    with graph.as_default():
        fetch, feed = build()
        init = pv.global_variables_initializer()
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer=placer))
    start = time.perf_counter()
    session._place(feed)
    placing = time.perf_counter() - start
    session.run(init)
    for _ in range(2):
        session.run(fetch, feed)
    metadata = pv.RunMetadata()
    # Dry: every op's time modeled, the CPU's too (a real run's CPU ops are timed by the clock,
    # which another process on the machine makes longer), so the figure is the same each time.
    session.run(fetch, feed, run_metadata=metadata, options=pv.RunOptions(dry_run=dry))
    return len(graph.get_operations()), placing, metadata.trace.step_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--clock", action="store_true", help="time the CPU's ops by the clock (a real last run)"
    )
    dry = not parser.parse_args().clock
    cases = [
        ("transformer block, 8 heads", transformer(1024, 512, 8), 2),
        ("transformer block, 16 heads", transformer(2048, 1024, 16), 4),
        ("MLP + Adam, 6 layers", mlp_training(), 2),
        ("chain of 100 blocks", chain(), 2),
    ]
    for name, build, gpus in cases:
        ops, place_simple, step_simple = measure(build, gpus, "simple", dry)
        _, place_cost, step_cost = measure(build, gpus, "cost", dry)
        print(
            f"{name:<28} {ops:>5} ops, {gpus} GPUs: placing {place_simple * 1e3:6.1f} ms simple, "
            f"{place_cost * 1e3:6.1f} ms cost; step {step_simple * 1e3:7.3f} ms simple, "
            f"{step_cost * 1e3:7.3f} ms cost ({step_simple / step_cost:.2f}x)"
        )


if __name__ == "__main__":
    main()
