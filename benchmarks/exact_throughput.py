"""The throughput objective solved exactly: a mixed-integer program of each graph in
../shared/data/dnn/throughput-inputs, solved with HiGHS, its optimum (or best placement and proven
bound where the time limit came first) cached in benchmarks/exact_throughput.json for
bench_dnn.py to measure the cost placer against.

HiGHS is a benchmark-only dependency, never placeviz's:
``pip install -r benchmarks/requirements-exact.txt``.

The graphs: those of the data, then random ones of the same shapes and sizes
(``_dnn_graphs.py``) that the placer was not tuned on.

The program (placeviz/placement/pipeline.py's objective): a binary ``x[u, d]`` per colocation
unit and device it can run on. Per node ``v`` whose value another unit reads, and per device:
``r[v, e] >= cost(v, w) * (x[w, e] - x[v, e])`` for each such reader ``w``, the value's largest
edge into ``e`` (what ``e`` receives), and ``q[v, d] >= sum(r[v, e] for e != d) - M * (1 -
x[v, d])``, ``M`` the most that sum can be (what ``d`` sends), with the cut ``q[v, d] >= cost(v,
w) * (x[v, d] - x[w, d])`` (a value read elsewhere is sent at least once). Each device's load,
its units' times plus what it receives and sends, is at most ``L``; GPU memory limits hold;
minimise ``L``. Identical devices are ordered (a unit takes a GPU only if an earlier unit may
have taken the one before) to cut symmetric solutions. Its relaxation is tighter, and it has a
variable per node and device rather than per node and pair of devices: on ResNet-50's graphs its
first 200 s found better placements and higher bounds than 300-1,800 s of a program with
``s[v, d, e] >= cost * (x[v, d] + x[w, e] - 1)`` per pair.

Run: python benchmarks/exact_throughput.py [--time-limit 300] [GRAPH-SUBSTRING ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dnn import max_load, parse, problems, units

CACHE = Path(__file__).resolve().parent / "exact_throughput.json"


def units_of(graph, devices) -> tuple[list[list], list[list[int]]]:
    """Colocation units in the order of their first node, and the devices each can run on."""
    members = units(graph)
    allowed = [
        [k for k, d in enumerate(devices) if all(d["type"] in graph.nodes[n]["time"] for n in unit)]
        for unit in members
    ]
    return members, allowed


def solve(graph, devices, time_limit: float) -> dict:
    import highspy

    members, allowed = units_of(graph, devices)
    unit_of = {n: u for u, unit in enumerate(members) for n in unit}
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", 1)
    h.setOptionValue("mip_rel_gap", 1e-6)
    kinds = [d["type"] for d in devices]
    x: dict[tuple[int, int], object] = {}
    # Symmetry: among devices of one type (identical), unit u may use the j-th only if j <= u.
    rank_in_type = [
        sum(1 for e in devices[:k] if e["type"] == d["type"]) for k, d in enumerate(devices)
    ]
    for u, options in enumerate(allowed):
        for k in options:
            if rank_in_type[k] <= u:
                x[u, k] = h.addBinary()
    for u in range(len(members)):
        h.addConstr(sum(x[u, k] for k in range(len(devices)) if (u, k) in x) == 1)
    for k, d in enumerate(devices):
        if math.isfinite(d.get("memory", math.inf)):
            used = [
                (x[u, k], sum(graph.nodes[n]["memory"] for n in unit))
                for u, unit in enumerate(members)
                if (u, k) in x
            ]
            h.addConstr(sum(size * var for var, size in used) <= d["memory"])
    big = h.addVariable(lb=0.0)
    load: list[list] = [[] for _ in devices]
    for u, unit in enumerate(members):
        for k in range(len(devices)):
            if (u, k) in x:
                load[k].append(sum(graph.nodes[n]["time"][kinds[k]] for n in unit) * x[u, k])

    def on(u: int, k: int) -> object:
        return x.get((u, k), 0)  # a unit that cannot run on k is not there

    for v in graph.nodes:
        readers = [w for w in graph.successors(v) if unit_of[w] != unit_of[v]]
        if not readers:
            continue
        here = unit_of[v]
        received = {}
        for e in range(len(devices)):
            if any((unit_of[w], e) in x for w in readers):
                received[e] = r = h.addVariable(lb=0.0)
                for w in readers:
                    if (unit_of[w], e) in x:
                        cost = graph.edges[v, w]["time"]
                        h.addConstr(r >= cost * (x[unit_of[w], e] - on(here, e)))
                load[e].append(r)
        largest = max(graph.edges[v, w]["time"] for w in readers)
        for d in range(len(devices)):
            if (here, d) not in x:
                continue
            sent = h.addVariable(lb=0.0)
            others = [r for e, r in received.items() if e != d]
            if others:
                h.addConstr(sent >= sum(others) - largest * len(others) * (1 - x[here, d]))
            for w in readers:
                cost = graph.edges[v, w]["time"]
                h.addConstr(sent >= cost * (x[here, d] - on(unit_of[w], d)))
            load[d].append(sent)
    for k in range(len(devices)):
        h.addConstr(sum(load[k]) <= big)
    began = time.perf_counter()
    h.minimize(big)  # solves
    took = time.perf_counter() - began
    info = h.getInfo()
    values = h.getSolution().col_value
    device = {}
    for u, unit in enumerate(members):
        k = max(
            (k for k in range(len(devices)) if (u, k) in x), key=lambda k: values[x[u, k].index]
        )
        device.update(dict.fromkeys(unit, devices[k]["name"]))
    objective = max_load(graph, devices, device)  # recomputed from the definition
    status = h.modelStatusToString(h.getModelStatus())
    return {
        "status": status,
        "best": objective,
        "bound": min(info.mip_dual_bound, objective),
        "proven_optimal": status == "Optimal",
        "seconds": round(took, 1),
        "device": {str(node): name for node, name in device.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per graph")
    parser.add_argument("graphs", nargs="*", help="solve only graphs whose name holds one of these")
    args = parser.parse_args()
    import highspy

    for name, raw in problems().items():
        if args.graphs and not any(part in name for part in args.graphs):
            continue
        graph, devices, _ = parse(raw)
        found = solve(graph, devices, args.time_limit)
        found["solver"] = f"HiGHS {highspy.Highs().version()}"
        found["time_limit_s"] = args.time_limit
        cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
        cache[name] = found
        print(
            f"{name}: {found['status']}, best {found['best']:.6g}, bound {found['bound']:.6g}, "
            f"{found['seconds']} s",
            flush=True,
        )
        CACHE.write_text(json.dumps(dict(sorted(cache.items())), indent=1) + "\n")


if __name__ == "__main__":
    main()
