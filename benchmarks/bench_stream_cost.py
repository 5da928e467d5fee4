"""What live streaming costs a run: a loop of Session.run with and without an inspector watching.

Issue 5's check: streaming into the widget costs a run <= 5%. Measured in a real Jupyter kernel
(ipykernel; the widget's comm really sends over ZeroMQ, drained by this process). A run of this
graph hands work between five threads, so its time swings by several percent from block to block
whatever else happens; hence many short pairs of blocks, one without and one with the inspector in
a random order, and the median of the pairs' ratios with a bootstrap 95% confidence interval: the
target is met when the interval's top is under it.
Runs are fully traced by default, as the magic traces them.
Run: python benchmarks/bench_stream_cost.py [--runs 250] [--pairs 40] [--rate 20] [--layers 8]
     [--trace-level FULL_TRACE|NO_TRACE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from pathlib import Path

from jupyter_client.manager import start_new_kernel

from placeviz.events.trace import RUNS_LISTED

KERNEL_CODE = """
import json, random, statistics, time
import placeviz as pv
from placeviz.devices import context as dc

ctx = dc.DeviceContext()
ctx.provide_gpus(4, "H100", simulate=True)
with dc.use(ctx):
    x = pv.random_uniform([64, 64], seed=1)
    towers = []
    for gpu in range(4):
        with pv.device(f"/gpu:{{gpu}}"), pv.name_scope(f"tower_{{gpu}}"):
            y = x
            for _ in range({layers}):
                y = pv.nn.relu(pv.matmul(y, y) * 0.01)
            towers.append(y)
    total = pv.add_n(towers)
    sess = pv.Session(config=pv.ConfigProto(allow_soft_placement=True))
    sess.trace_level = pv.RunOptions.{trace_level}  # FULL_TRACE: as in a %%placement cell
    sess.run(total)

    def block(runs):
        began = time.perf_counter()
        for _ in range(runs):
            sess.run(total)
        return (time.perf_counter() - began) / runs

    def streamed_block(runs):
        inspector = pv.PlacementInspector()
        stream = inspector.watch(sess, max_rate={rate})
        # A view's first update (reset, tables, the session's run history) is sent once per
        # cell; timed apart, so the blocks measure what streaming costs each run.
        sess.run(total)
        began = time.perf_counter()
        stream.flush()
        first = time.perf_counter() - began
        seconds = block(runs)
        inspector.stop()
        inspector.close()
        return seconds, stream.sent, first

    order = random.Random(0)
    plain, streamed, firsts, sent = [], [], [], 0
    for _ in range({pairs}):
        if order.random() < 0.5:
            plain.append(block({runs}))
        seconds, updates, first = streamed_block({runs})
        streamed.append(seconds)
        firsts.append(first)
        sent += updates
        if len(plain) < len(streamed):
            plain.append(block({runs}))
print(json.dumps({{"plain": statistics.median(plain), "streamed": statistics.median(streamed),
                  "ratios": [s / p for p, s in zip(plain, streamed)], "updates": sent,
                  "first": statistics.median(firsts),
                  "ops": len(pv.get_default_graph().get_operations())}}))
"""


def _bootstrap_interval(ratios: list[float], resamples: int = 4000) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the median over resamples of ``ratios``."""
    draw = random.Random(1)
    medians = sorted(
        statistics.median(draw.choices(ratios, k=len(ratios))) for _ in range(resamples)
    )
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=250, help="runs per block")
    parser.add_argument("--pairs", type=int, default=40, help="pairs of blocks")
    parser.add_argument("--rate", type=float, default=20.0, help="updates a second at most")
    parser.add_argument("--layers", type=int, default=8, help="matmul+relu layers per tower")
    parser.add_argument("--trace-level", choices=["FULL_TRACE", "NO_TRACE"], default="FULL_TRACE")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        code = KERNEL_CODE.format(
            runs=args.runs,
            pairs=args.pairs,
            rate=args.rate,
            layers=args.layers,
            trace_level=args.trace_level,
        )
        msg_id = client.execute(code)
        printed, updates = "", 0
        while True:
            message = client.get_iopub_msg(timeout=600)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "comm_msg":
                updates += 1
            elif kind == "stream":
                printed += content["text"]
            elif kind == "error":
                sys.exit("\n".join(content["traceback"]))
            elif kind == "status" and content["execution_state"] == "idle":
                break
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    result = json.loads(printed.strip().splitlines()[-1])
    ratios = result["ratios"]
    median = 100 * (statistics.median(ratios) - 1)
    low, high = (100 * (ratio - 1) for ratio in _bootstrap_interval(ratios))
    print(
        f"graph: {result['ops']} ops on 4 simulated GPUs, {args.trace_level}; "
        f"{args.pairs} pairs of blocks of {args.runs} runs"
    )
    print(f"Session.run without inspector: {result['plain'] * 1e6:8.1f} us (median block)")
    print(f"Session.run, streaming live:   {result['streamed'] * 1e6:8.1f} us (median block)")
    print(
        f"cost of streaming: {median:+.1f}% (median of {len(ratios)} pairs; 95% interval "
        f"{low:+.1f}% to {high:+.1f}%; target <= 5%)"
    )
    print(
        f"a view's first update (tables of {result['ops']} ops, {RUNS_LISTED} run records): "
        f"{result['first'] * 1e3:.1f} ms once (median)"
    )
    print(f"updates sent: {result['updates']} (kernel), received here: {updates} comm messages")


if __name__ == "__main__":
    main()
