"""The scheduling core on the Standard Task Graph Set: 180 random graphs of 50 tasks with proven
optimal makespans on P = 2, 4, 8 and 16 identical processors (no communication cost).

Input: ../shared/data/stg (format in ../shared/data/README.md). Printed per P: the mean and worst
deviation from the optimum (instances whose optimum is proven), the share solved exactly, and the
mean and worst time per instance; with --baseline, the same for one list-scheduling pass.

Run: python benchmarks/bench_stg.py [--processors 2,4,8,16] [--limit SECONDS] [--baseline]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import networkx as nx

import placeviz as pv

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "stg"


def read_stg(path: Path) -> nx.DiGraph:
    """Tasks with their processing times and precedence; the dummy entry and exit kept (time 0)."""
    graph = nx.DiGraph()
    lines = path.read_text().splitlines()
    for line in lines[1:]:
        if line.lstrip().startswith("#"):
            break
        fields = [int(v) for v in line.split()]
        if not fields:
            continue
        task, cost, count, preds = fields[0], fields[1], fields[2], fields[3:]
        assert len(preds) == count, path
        graph.add_node(task, time=float(cost))
        for pred in preds:
            graph.add_edge(pred, task)
    return graph


def optima(processors: int) -> dict[str, int]:
    """Instance file name -> proven optimum (instances with only bounds are left out)."""
    found = {}
    for line in (DATA / "optima" / f"Case50_{processors}_OPT.csv").read_text().splitlines():
        fields = line.strip().split(",")
        if len(fields) == 3:
            found[fields[0].split("/")[-1]] = int(fields[2])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processors", default="2,4,8,16")
    parser.add_argument(
        "--limit", type=float, default=None, help="also stop each search after SECONDS"
    )
    parser.add_argument("--baseline", action="store_true", help="also one list-scheduling pass")
    args = parser.parse_args()
    graphs = {path.name: read_stg(path) for path in sorted((DATA / "50").glob("*.stg"))}
    limits = [("core", {"time_limit": args.limit})]
    limits += [("one pass", {"max_passes": 1})] if args.baseline else []
    for processors in (int(p) for p in args.processors.split(",")):
        best = optima(processors)
        for label, options in limits:
            deviations, took, exact = [], [], 0
            for name, optimum in best.items():
                began = time.perf_counter()
                found = pv.placement.schedule(graphs[name], processors, **options)
                took.append(time.perf_counter() - began)
                deviation = found.makespan / optimum - 1
                assert deviation >= -1e-9, (name, found.makespan, optimum)  # never below OPT
                deviations.append(deviation)
                exact += deviation < 1e-9
            print(
                f"P={processors:2} {label:8}: {len(best)} proven optima, mean deviation "
                f"{statistics.mean(deviations):.3%}, worst {max(deviations):.2%}, exact "
                f"{exact / len(best):.1%}; {statistics.mean(took) * 1e3:.1f} ms per graph "
                f"(worst {max(took) * 1e3:.1f} ms)"
            )


if __name__ == "__main__":
    main()
