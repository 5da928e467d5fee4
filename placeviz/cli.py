"""The ``placeviz`` command. ``placeviz demo`` runs the seeds' tower example and explains it;
``placeviz server --cluster SPEC --job NAME --task I`` runs one cluster task in the foreground."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import placeviz as pv
from placeviz.devices import context as _context
from placeviz.devices.profiles import DEFAULT_PROFILE
from placeviz.examples.towers import build_towers


def demo(gpus: int, profile: str, simulate: bool) -> int:
    """Run the seeds' tower example with the placement log, then explain every placement."""
    if gpus < 4:
        print("the tower example pins ops to GPU:2 and GPU:3, so it needs --gpus 4 or more")
        return 2
    print(f"devices: {_context.context().provide_gpus(gpus, profile, simulate)}\n", flush=True)
    total = build_towers()
    sess = pv.Session(config=pv.ConfigProto(log_device_placement=True))
    result = sess.run(total)
    sys.stderr.flush()
    print(f"\nresult:\n{result}\n\nwhy each op went where it did:")
    width = max(len(name) for name in sess.placement)
    for name in sess.placement:
        reason = sess.placement.explain(name)
        print(f"  {name:<{width}}  [{reason.kind}] {reason.text}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="placeviz", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run_demo = commands.add_parser("demo", help="run the seeds' tower example and explain it")
    run_demo.add_argument("--gpus", type=int, default=4, help="GPUs to use or simulate")
    run_demo.add_argument("--profile", default=DEFAULT_PROFILE, help="simulated GPU profile")
    run_demo.add_argument("--simulate", action="store_true", help="simulate even with real GPUs")
    serve = commands.add_parser("server", help="run one task of a cluster until stopped")
    serve.add_argument(
        "--cluster", required=True, help='the cluster spec as JSON: {"ps": ["localhost:2221"]}'
    )
    serve.add_argument("--job", required=True, help="this task's job name")
    serve.add_argument("--task", type=int, default=0, help="this task's index in its job")
    serve.add_argument("--scheduler", help="the cluster's Dask scheduler (default: found)")
    serve.add_argument("--parent", type=int, help="end when this process (the starter) ends")
    args = parser.parse_args(argv)
    if args.command == "server":
        from placeviz.cluster.process import serve as serve_task

        cluster = pv.train.ClusterSpec(json.loads(args.cluster))
        serve_task(cluster, args.job, args.task, args.scheduler, args.parent)
        return 0
    return demo(args.gpus, args.profile, args.simulate)


if __name__ == "__main__":
    raise SystemExit(main())
