"""Chrome's Trace Event format, which Perfetto UI and chrome://tracing open.

One process per task (the session's own, or each cluster task's, named with its process id), two
threads per device in it: the device's compute stream and its copy engine. Ops are complete
events named by op type with the op name in args; memory in use is a counter per device; each
transfer has a flow arrow from the producing op. A cluster task's stage waiting for what other
tasks send it is a "wait" slice on its device's compute thread, naming what arrived last.
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


def _threads(trace: Trace) -> tuple[list[dict[str, Any]], dict[int, int], list[str]]:
    """Metadata naming each task's process and each device's threads; the pid of each device
    (0 is the runs' own process) and each device's short label."""
    out: list[dict[str, Any]] = []
    pids: dict[str, int] = {}
    pid_of: dict[int, int] = {}
    labels: list[str] = []
    for device in trace.devices:
        task, _, short = device["name"].partition("/device:")
        if device["kind"] != "real":
            short += f" ({device['kind']})"
        labels.append(short)
        if task not in pids:
            pid = pids[task] = len(pids) + 1
            process = task + (f" (pid {device['pid']})" if "pid" in device else "")
            out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": process}})
            out.append(
                {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}}
            )
        pid = pid_of[device["id"]] = pids[task]
        for stream, what in ((_COMPUTE, "compute"), (_COPY, "copies in")):
            tid = 2 * device["id"] + stream
            for name, args in (
                ("thread_name", {"name": f"{short} {what}"}),
                ("thread_sort_index", {"sort_index": tid}),
            ):
                out.append({"ph": "M", "name": name, "pid": pid, "tid": tid, "args": args})
    out.append({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "Session.run"}})
    return out, pid_of, labels


def chrome_trace(trace: Trace) -> dict[str, Any]:
    origin = trace.origin_ns
    out, pid_of, labels = _threads(trace)
    ev = trace.events
    last_op_end: dict[int, tuple[int, int, int]] = {}  # node -> (pid, tid, end ns) of its op
    flow = 0
    timing_labels = {int(source): source.label for source in TimingSource}
    dry_runs = {run["id"] for run in trace.runs if run.get("dry")}
    for i in np.argsort(ev["t0"], kind="stable"):
        kind = int(ev["kind"][i])
        t0, t1 = int(ev["t0"][i]), int(ev["t1"][i])
        node, device = int(ev["node"][i]), int(ev["device"][i])
        timing = timing_labels[int(ev["source"][i])]
        nbytes = int(ev["bytes"][i])
        if kind == EventKind.RUN:
            run = int(ev["run"][i])
            name = f"run {run} (dry run, shapes only)" if run in dry_runs else f"run {run}"
            out.append(_complete(name, "run", 0, 0, t0, t1, origin, {}))
        elif kind == EventKind.OP:
            args = {"name": trace.node_name(node), "timing": timing, "bytes": nbytes}
            pid, tid = pid_of[device], 2 * device + _COMPUTE
            out.append(_complete(trace.node_type(node), "op", pid, tid, t0, t1, origin, args))
            last_op_end[node] = (pid, tid, t1)
        elif kind == EventKind.TRANSFER:
            tensor = trace.node_name(node)
            source = int(ev["peer"][i])
            args = {"output of": tensor, "from": labels[source], "timing": timing}
            args["bytes"] = nbytes
            pid, tid = pid_of[device], 2 * device + _COPY
            out.append(_complete(f"copy {tensor}", "transfer", pid, tid, t0, t1, origin, args))
            start = last_op_end.get(node, (pid_of[source], 2 * source + _COMPUTE, t0))
            flow += 1
            out.append(_flow("s", flow, start[0], start[1], _us(start[2], origin)))
            out.append(_flow("f", flow, pid, tid, _us(t0, origin)))
        elif kind == EventKind.WAIT:
            peer = int(ev["peer"][i])
            args = {"before": trace.node_name(node), "timing": timing}
            last = trace.devices[peer]["name"] if peer >= 0 else "a control token"
            args["last arrival from"] = last
            pid, tid = pid_of[device], 2 * device + _COMPUTE
            out.append(_complete("waiting for other tasks", "wait", pid, tid, t0, t1, origin, args))
    for device in trace.devices:
        times, in_use = trace.memory_timeline(device["id"])
        pid, name = pid_of[device["id"]], f"memory {labels[device['id']]}"
        for t, value in zip(times.tolist(), in_use.tolist()):
            args = {"bytes in use": value}
            out.append({"ph": "C", "name": name, "pid": pid, "ts": t * 1e6, "args": args})
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
