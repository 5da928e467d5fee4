"""Graphs the cost placer was not tuned on: random DNN-shaped throughput problems in the format of
../shared/data/dnn (README there), made from a seed so that their exact optima can be cached.

- ``layers``: a chain of layers with skip connections every few layers (as ResNet's blocks),
  each layer its own colocation class; the training form adds a backward chain whose layers
  share their forward layer's class (the stage that holds a layer also runs its gradient).
- ``operators``: blocks that fan out into parallel branches and join again (as attention's
  heads), each op reading a weight colocated with it, some ops CPU-only, activations that are
  costly to move at some depths and cheap at others.
- ``residual``: ResNet's operator graphs in small: blocks of two or three ops whose input also
  goes round them (sometimes through a projection op) to the add that ends the block, each op
  reading a weight colocated with it, activations that shrink now and then as the depth grows.
"""

from __future__ import annotations

import random

GIB = 2.0**30


def generated() -> dict[str, dict]:
    """Name -> problem, the same on every machine."""
    return {
        "random/layers-40": layers(40, training=False, seed=1),
        "random/layers-120": layers(120, training=False, seed=2, gpus=6),
        "random/layers-60-training": layers(60, training=True, seed=3),
        "random/layers-100-training": layers(100, training=True, seed=4, gpus=6),
        "random/operators-6x4": operators(6, 4, seed=5),
        "random/operators-10x3": operators(10, 3, seed=6, gpus=6),
        "random/operators-8x5": operators(8, 5, seed=7, gpus=3),
        "random/operators-12x4": operators(12, 4, seed=8, gpus=6),
        "random/residual-12": residual(12, seed=9),
        "random/residual-20": residual(20, seed=10, gpus=6),
    }


def _problem(nodes: list[dict], edges: list[dict], gpus: int, memory: float) -> dict:
    return {
        "maxSizePerFPGA": memory,
        "maxFPGAs": gpus,
        "maxCPUs": 1,
        "nodes": nodes,
        "edges": edges,
    }


def _node(index: int, rng: random.Random, time: float, size: float, cls: int, gpu: bool = True):
    return {
        "id": index,
        "name": f"n{index}",
        "supportedOnFpga": gpu,
        "fpgaLatency": time if gpu else 0.0,
        "cpuLatency": time * rng.uniform(6.0, 14.0),
        "isBackwardNode": False,
        "colorClass": cls,
        "size": size,
    }


def layers(count: int, *, training: bool, seed: int, gpus: int = 4) -> dict:
    rng = random.Random(seed)
    nodes, edges = [], []
    activation = [rng.choice((0.2, 0.5, 1.0, 2.0, 4.0)) for _ in range(count)]
    for i in range(count):
        time = rng.lognormvariate(0.0, 0.6)
        nodes.append(_node(i, rng, time, rng.uniform(0.05, 0.6) * GIB, i))
        if i:
            edges.append({"sourceId": i - 1, "destId": i, "cost": activation[i - 1]})
        if i >= 3 and i % 3 == 0:
            edges.append({"sourceId": i - 3, "destId": i, "cost": activation[i - 3]})
    if training:
        for i in reversed(range(count)):
            back = len(nodes)
            node = _node(back, rng, 2.0 * nodes[i]["fpgaLatency"], nodes[i]["size"], i)
            node["isBackwardNode"] = True
            nodes.append(node)
            edges.append({"sourceId": i, "destId": back, "cost": activation[i]})
            if i < count - 1:
                edges.append({"sourceId": back - 1, "destId": back, "cost": activation[i]})
    total = sum(n["size"] for n in nodes)
    return _problem(nodes, edges, gpus, total / (gpus - 1.5))


def operators(blocks: int, width: int, *, seed: int, gpus: int = 4) -> dict:
    rng = random.Random(seed)
    nodes: list[dict] = []
    edges: list[dict] = []

    op = _weighted_ops(rng, nodes, edges)
    head = op([], 1.0)
    for _ in range(blocks):
        cost = rng.choice((0.1, 0.5, 2.0, 6.0))
        branches = [op([head], cost) for _ in range(width)]
        branches = [op([b], cost * 0.5, gpu=rng.random() > 0.1) for b in branches]
        head = op(branches, cost)
        head = op([head], cost)
    total = sum(n["size"] for n in nodes)
    return _problem(nodes, edges, gpus, total / max(1.0, gpus - 2.5))


def residual(blocks: int, *, seed: int, gpus: int = 4) -> dict:
    rng = random.Random(seed)
    nodes: list[dict] = []
    edges: list[dict] = []
    op = _weighted_ops(rng, nodes, edges)
    head = op([], 1.0)
    size = rng.choice((2.0, 4.0, 8.0))  # moving a block's output
    for _ in range(blocks):
        if rng.random() < 0.25:
            size = max(0.5, size / 2)
        main = head
        for _ in range(rng.randint(2, 3)):
            main = op([main], size * rng.choice((0.25, 0.5, 1.0)))
        skip = op([head], size) if rng.random() < 0.3 else head
        head = op([main, skip], size, time=rng.uniform(0.02, 0.2))
    total = sum(n["size"] for n in nodes)
    return _problem(nodes, edges, gpus, total / max(1.0, gpus - 2.5))


def _weighted_ops(rng: random.Random, nodes: list[dict], edges: list[dict]):
    """``op(after, cost, gpu=True, time=None)``: a node reading ``after`` (each edge ``cost``) and
    a weight colocated with it; its time drawn unless given. Returns the node's index."""

    def op(after: list[int], cost: float, gpu: bool = True, time: float | None = None) -> int:
        index = len(nodes)
        drawn = rng.lognormvariate(-0.5, 0.8)
        nodes.append(_node(index, rng, drawn if time is None else time, 0.0, index, gpu))
        weight = len(nodes)
        nodes.append(_node(weight, rng, 0.0, rng.uniform(0.01, 0.3) * GIB, index))
        edges.append({"sourceId": weight, "destId": index, "cost": rng.uniform(0.05, 0.3)})
        for source in after:
            edges.append({"sourceId": source, "destId": index, "cost": cost})
        return index

    return op
