"""Chrome's Trace Event format, which Perfetto UI and chrome://tracing open.

One process per device, named by its full device name; thread 0 is the device's compute stream
and thread 1 its copy engine; ops are complete events named by op type with the op name in args;
memory in use is a counter per device; each transfer has a flow arrow from the producing op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from placeviz.contract import EventKind, TimingSource

if TYPE_CHECKING:
    from placeviz.events.trace import Trace

_COMPUTE, _COPY = 0, 1


def _us(ns: int, origin: int) -> float:
    return (ns - origin) / 1000.0


def chrome_trace(trace: Trace) -> dict[str, Any]:
    origin = trace.origin_ns
    out: list[dict[str, Any]] = []
    for device in trace.devices:
        pid = device["id"] + 1
        label = device["name"] + (f" ({device['kind']})" if device["kind"] != "real" else "")
        out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": label}})
        out.append(
            {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}}
        )
        for tid, stream in ((_COMPUTE, "compute stream"), (_COPY, "copies in")):
            out.append(
                {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": stream}}
            )
    out.append({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "Session.run"}})
    ev = trace.events
    last_op_end: dict[int, tuple[int, int]] = {}  # node -> (pid, end ns) of the op that made it
    flow = 0
    timing_labels = {int(source): source.label for source in TimingSource}
    for i in np.argsort(ev["t0"], kind="stable"):
        kind = int(ev["kind"][i])
        t0, t1 = int(ev["t0"][i]), int(ev["t1"][i])
        node, pid = int(ev["node"][i]), int(ev["device"][i]) + 1
        timing = timing_labels[int(ev["source"][i])]
        nbytes = int(ev["bytes"][i])
        if kind == EventKind.RUN:
            out.append(_complete(f"run {int(ev['run'][i])}", "run", 0, 0, t0, t1, origin, {}))
        elif kind == EventKind.OP:
            args = {"name": trace.node_name(node), "timing": timing, "bytes": nbytes}
            out.append(_complete(trace.node_type(node), "op", pid, _COMPUTE, t0, t1, origin, args))
            last_op_end[node] = (pid, t1)
        elif kind == EventKind.TRANSFER:
            tensor = trace.node_name(node)
            src_pid = int(ev["peer"][i]) + 1
            args = {"output of": tensor, "from": src_pid - 1, "timing": timing, "bytes": nbytes}
            out.append(_complete(f"copy {tensor}", "transfer", pid, _COPY, t0, t1, origin, args))
            start_pid, start_ts = last_op_end.get(node, (src_pid, t0))
            flow += 1
            out.append(_flow("s", flow, start_pid, _COMPUTE, _us(start_ts, origin)))
            out.append(_flow("f", flow, pid, _COPY, _us(t0, origin)))
    for device in trace.devices:
        times, in_use = trace.memory_timeline(device["id"])
        pid = device["id"] + 1
        for t, value in zip(times.tolist(), in_use.tolist()):
            args = {"bytes in use": value}
            out.append({"ph": "C", "name": "memory", "pid": pid, "ts": t * 1e6, "args": args})
    return {"traceEvents": out, "displayTimeUnit": "ms", "otherData": {"schema": "placeviz/1"}}


def _complete(
    name: str, cat: str, pid: int, tid: int, t0: int, t1: int, origin: int, args: dict[str, Any]
) -> dict[str, Any]:
    return {
        "ph": "X",
        "name": name,
        "cat": cat,
        "pid": pid,
        "tid": tid,
        "ts": _us(t0, origin),
        "dur": (t1 - t0) / 1000.0,
        "args": args,
    }


def _flow(phase: str, flow_id: int, pid: int, tid: int, ts: float) -> dict[str, Any]:
    event = {"ph": phase, "id": flow_id, "name": "transfer", "cat": "transfer", "pid": pid}
    event.update(tid=tid, ts=ts)
    if phase == "f":
        event["bp"] = "e"  # bind the arrow to the enclosing copy event
    return event
