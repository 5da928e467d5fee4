"""How long ``pv.test.create_local_cluster(W, P)`` takes until every task listens.

Each try is a new Python process that has imported placeviz (as a notebook has), so the first
cluster pays for starting the launcher (placeviz/cluster/launcher.py) and the scheduler: "first"
is that. "next" is a second cluster started while the first still runs (the launcher is warm;
the second cluster has a scheduler of its own). Printed: each try's times, their median and min.

Run: python benchmarks/bench_cluster_start.py [--tries 5] [--workers 2] [--ps 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

# One try: (first, next) start times in seconds, as JSON on stdout.
TRY = """
import json, sys, time
import placeviz as pv

workers, ps = int(sys.argv[1]), int(sys.argv[2])
start = time.perf_counter()
first = pv.test.create_local_cluster(workers, ps)
first_s = time.perf_counter() - start
start = time.perf_counter()
second = pv.test.create_local_cluster(workers, ps)
next_s = time.perf_counter() - start
for server in [*first[0], *first[1], *second[0], *second[1]]:
    server.stop()
print(json.dumps([first_s, next_s]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps", type=int, default=2)
    args = parser.parse_args()
    firsts, nexts = [], []
    for _ in range(args.tries):
        out = subprocess.run(
            [sys.executable, "-c", TRY, str(args.workers), str(args.ps)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        first, following = json.loads(out.strip().splitlines()[-1])
        firsts.append(first)
        nexts.append(following)
    print(f"create_local_cluster({args.workers}, {args.ps}), {args.tries} tries, each its process")
    for name, times in (("first", firsts), ("next", nexts)):
        listed = " ".join(f"{t:.2f}" for t in times)
        print(
            f"  {name:<5}: median {statistics.median(times):.2f} s, "
            f"min {min(times):.2f} s  ({listed})"
        )


if __name__ == "__main__":
    main()
