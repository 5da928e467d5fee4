"""The scheduling core's throughput objective on real DNN graphs (BERT and ResNet-50 operator and
layer graphs, inference and training, with accelerator memory limits and colocation classes) and
on random graphs of the same shapes it was not tuned on (``_dnn_graphs.py``), against their exact
optima.

Input: ../shared/data/dnn (format in ../shared/data/README.md; "FPGA" read as GPU) and
benchmarks/exact_throughput.json (``exact_throughput.py``'s cache: the optimum, or the best
placement and a proven bound, found by a MIP solver). Each graph is placed on its accelerators and
CPU with ``objective="throughput"`` and the default work budget (no clock). Printed per graph:
nodes, placeviz's largest device load, the exact result and placeviz's gap to it, the human
experts' split (where there is one), a plain greedy (each colocation unit, in topological order,
onto the device with the least compute so far that has room), and the time taken. Every
placement is checked here, independently of the core: memory limits, colocation classes, and the
load recomputed from the definition.

Run: python benchmarks/bench_dnn.py [--limit SECONDS]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx
from _dnn_graphs import generated

import placeviz as pv

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dnn"
EXACT = Path(__file__).resolve().parent / "exact_throughput.json"  # exact_throughput.py's


def read(path: Path) -> tuple[nx.DiGraph, list[dict], dict]:
    return parse(json.loads(path.read_text()))


def parse(raw: dict) -> tuple[nx.DiGraph, list[dict], dict]:
    graph = nx.DiGraph()
    for node in raw["nodes"]:
        times = {"CPU": node["cpuLatency"]}
        if node["supportedOnFpga"]:
            times["GPU"] = node["fpgaLatency"]
        graph.add_node(
            node["id"], time=times, memory=node.get("size", 0.0), colocation=node.get("colorClass")
        )
    for edge in raw["edges"]:
        graph.add_edge(edge["sourceId"], edge["destId"], time=edge["cost"])
    devices = [
        {"name": f"GPU:{i}", "type": "GPU", "memory": raw["maxSizePerFPGA"]}
        for i in range(raw["maxFPGAs"])
    ] + [{"name": f"CPU:{i}", "type": "CPU"} for i in range(raw["maxCPUs"])]
    return graph, devices, raw


def max_load(graph: nx.DiGraph, devices: list[dict], device: dict) -> float:
    """The throughput objective from its definition, and the constraints, checked."""
    kinds = {d["name"]: d["type"] for d in devices}
    load = dict.fromkeys(kinds, 0.0)
    used = dict.fromkeys(kinds, 0.0)
    for node, attrs in graph.nodes(data=True):
        load[device[node]] += attrs["time"][kinds[device[node]]]  # KeyError: no kernel there
        used[device[node]] += attrs["memory"]
        largest: dict[str, float] = {}
        for succ in graph.successors(node):
            other = device[succ]
            if other != device[node]:
                largest[other] = max(largest.get(other, 0.0), graph.edges[node, succ]["time"])
        for other, cost in largest.items():
            load[device[node]] += cost
            load[other] += cost
    for d in devices:
        assert used[d["name"]] <= d.get("memory", math.inf), ("memory", d["name"])
    classes: dict = {}
    for node, attrs in graph.nodes(data=True):
        if attrs["colocation"] is not None:
            classes.setdefault(attrs["colocation"], set()).add(device[node])
    assert all(len(placed) == 1 for placed in classes.values()), "colocation"
    return max(load.values())


def problems() -> dict[str, dict]:
    """Every graph of ../shared/data/dnn/throughput-inputs, then the generated ones, by name."""
    given = {
        f"{path.parent.name}/{path.stem}": json.loads(path.read_text())
        for path in sorted((DATA / "throughput-inputs").glob("*/*.json"))
    }
    return given | generated()


def units(graph: nx.DiGraph, order: Callable = nx.lexicographical_topological_sort) -> list[list]:
    """Colocation classes (and lone nodes) as units, in the ``order`` of their first node."""
    found: dict = {}
    for node in order(graph):
        key = graph.nodes[node]["colocation"]
        found.setdefault(node if key is None else ("class", key), []).append(node)
    return list(found.values())


def greedy(graph: nx.DiGraph, devices: list[dict]) -> dict:
    """Each colocation unit, in topological order, onto the device with the least compute so far
    that can run it and has room."""
    kinds = {d["name"]: d["type"] for d in devices}
    load = dict.fromkeys(kinds, 0.0)
    used = dict.fromkeys(kinds, 0.0)
    device = {}
    for members in units(graph, nx.topological_sort):
        options = []
        for d in devices:
            times = [graph.nodes[n]["time"].get(d["type"]) for n in members]
            size = sum(graph.nodes[n]["memory"] for n in members)
            if None not in times and used[d["name"]] + size <= d.get("memory", math.inf):
                options.append((load[d["name"]] + sum(times), d["name"], size))
        total, name, size = min(options)
        load[name], used[name] = total, used[name] + size
        device.update(dict.fromkeys(members, name))
    return device


def expert(name: str, devices: list[dict]) -> dict | None:
    split = DATA / "human-experts" / f"{name.split('/')[-1]}_expert.json"
    if not split.exists():
        return None
    raw = json.loads(split.read_text())
    device = {}
    for kind, key in (("GPU", "fpgas"), ("CPU", "cpus")):
        for i, part in enumerate(raw[key]):
            device.update(dict.fromkeys(part["nodes"], f"{kind}:{i}"))
    return device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=float, default=None, help="also stop after SECONDS")
    args = parser.parse_args()
    exact = json.loads(EXACT.read_text()) if EXACT.exists() else {}
    gaps, times = [], []
    for name, raw in problems().items():
        graph, devices, _ = parse(raw)
        began = time.perf_counter()
        found = pv.placement.schedule(graph, devices, objective="throughput", time_limit=args.limit)
        took = time.perf_counter() - began
        times.append(took)
        ours = max_load(graph, devices, found.device)
        assert math.isclose(ours, found.max_load, rel_tol=1e-9), (ours, found.max_load)
        row = f"{name}: {graph.number_of_nodes()} nodes, placeviz {ours:.4g}"
        solved = exact.get(name)
        if solved is not None:
            best, bound = solved["best"], solved["bound"]
            what = "optimum" if solved["proven_optimal"] else f"best {best:.4g}, bound {bound:.4g}"
            gap = ours / best - 1
            gaps.append(gap)
            row += (
                f" | exact {what} ({solved['solver']}, {solved['time_limit_s']:.0f} s): {gap:+.2%}"
            )
            if not solved["proven_optimal"]:
                row += f" ({ours / bound - 1:+.2%} of the bound)"
        split = expert(name, devices)
        if split is not None and set(split) == set(graph):
            human = max_load(graph, devices, split)
            row += f" | experts {human:.4g}"
        plain = max_load(graph, devices, greedy(graph, devices))
        row += f" | greedy {plain:.4g}; {took * 1e3:.0f} ms"
        print(row, flush=True)
    print(
        f"{len(gaps)} graphs with exact results: worst gap {max(gaps):+.2%}, "
        f"{sum(g <= 0.01 for g in gaps)} within 1%; slowest placement {max(times) * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
