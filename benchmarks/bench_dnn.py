"""The scheduling core's throughput objective on real DNN graphs: BERT and ResNet-50 operator and
layer graphs (inference and training) with accelerator memory limits and colocation classes.

Input: ../shared/data/dnn (format in ../shared/data/README.md; "FPGA" read as GPU). Each graph is
placed on its accelerators and CPU with `objective="throughput"`. Printed per graph: nodes, the
largest device load found, the same objective for the human experts' split (where there is one),
for everything on one accelerator (where it fits) and for a plain greedy (each colocation unit, in
topological order, onto the device with the least compute so far that has room), the proven lower
bound, and the time taken. Every placement is checked here, independently of the core: memory
limits, colocation classes, and the load recomputed from the definition.

Run: python benchmarks/bench_dnn.py [--limit SECONDS]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import networkx as nx

import placeviz as pv

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dnn"


def read(path: Path) -> tuple[nx.DiGraph, list[dict], dict]:
    raw = json.loads(path.read_text())
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


def greedy(graph: nx.DiGraph, devices: list[dict]) -> dict:
    """Each colocation unit, in topological order, onto the device with the least compute so far
    that can run it and has room."""
    kinds = {d["name"]: d["type"] for d in devices}
    units: dict = {}
    for node in nx.topological_sort(graph):
        key = graph.nodes[node]["colocation"]
        units.setdefault(node if key is None else ("class", key), []).append(node)
    load = dict.fromkeys(kinds, 0.0)
    used = dict.fromkeys(kinds, 0.0)
    device = {}
    for members in units.values():
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


def expert(path: Path, devices: list[dict]) -> dict | None:
    split = DATA / "human-experts" / f"{path.stem}_expert.json"
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
    parser.add_argument("--limit", type=float, default=0.5, help="search seconds per graph")
    args = parser.parse_args()
    for path in sorted((DATA / "throughput-inputs").glob("*/*.json")):
        graph, devices, _ = read(path)
        began = time.perf_counter()
        found = pv.placement.schedule(graph, devices, objective="throughput", time_limit=args.limit)
        took = time.perf_counter() - began
        ours = max_load(graph, devices, found.device)
        assert math.isclose(ours, found.max_load, rel_tol=1e-9), (ours, found.max_load)
        row = f"{path.parent.name}/{path.stem}: {graph.number_of_nodes()} nodes, core {ours:.4g}"
        split = expert(path, devices)
        if split is not None and set(split) == set(graph):
            human = max_load(graph, devices, split)
            row += f", experts {human:.4g} ({ours / human - 1:+.1%})"
        total_mem = sum(a["memory"] for _, a in graph.nodes(data=True))
        if total_mem <= devices[0]["memory"]:
            one = max_load(graph, devices, dict.fromkeys(graph, "GPU:0"))
            row += f", one GPU {one:.4g} ({one / ours:.2f}x)"
        plain = max_load(graph, devices, greedy(graph, devices))
        row += f", greedy {plain:.4g} ({plain / ours:.2f}x), bound {found.lower_bound:.4g}"
        print(f"{row}; {took * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
