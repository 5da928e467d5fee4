"""What live streaming costs a run: a loop of Session.run with and without an inspector watching.

Issue 5's check: streaming into the widget costs a run <= 5%. Measured in a real Jupyter kernel
(ipykernel; the widget's comm really sends over ZeroMQ, drained by this process), alternating
blocks without and with the inspector so both see the same machine state; median of the blocks.
Runs are fully traced by default, as the magic traces them.
Run: python benchmarks/bench_stream_cost.py [--runs 2000] [--blocks 7] [--layers 8]
     [--trace-level FULL_TRACE|NO_TRACE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from jupyter_client.manager import start_new_kernel

KERNEL_CODE = """
import json, statistics, time
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

    plain, streamed, sent = [], [], 0
    for _ in range({blocks}):
        plain.append(block({runs}))
        inspector = pv.PlacementInspector()
        stream = inspector.watch(sess)
        streamed.append(block({runs}))
        inspector.stop()
        sent += stream.sent
        inspector.close()
print(json.dumps({{"plain": statistics.median(plain), "streamed": statistics.median(streamed),
                  "updates": sent, "ops": len(pv.get_default_graph().get_operations())}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs per block")
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--layers", type=int, default=8, help="matmul+relu layers per tower")
    parser.add_argument("--trace-level", choices=["FULL_TRACE", "NO_TRACE"], default="FULL_TRACE")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        code = KERNEL_CODE.format(
            runs=args.runs, blocks=args.blocks, layers=args.layers, trace_level=args.trace_level
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
    ratio = result["streamed"] / result["plain"]
    print(
        f"graph: {result['ops']} ops on 4 simulated GPUs, {args.trace_level}; "
        f"{args.blocks} blocks of {args.runs} runs"
    )
    print(f"Session.run without inspector: {result['plain'] * 1e6:8.1f} us (median block)")
    print(f"Session.run, streaming live:   {result['streamed'] * 1e6:8.1f} us (median block)")
    print(f"cost of streaming: {100 * (ratio - 1):+.1f}% (target <= 5%)")
    print(f"updates sent: {result['updates']} (kernel), received here: {updates} comm messages")


if __name__ == "__main__":
    main()
