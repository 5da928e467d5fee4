"""A distributed step's timeline (issue 28): per task its ops, the tensors between the tasks
(bytes, both ends) and the time a stage waited for them, in the trace and its Chrome export.

One ps task holds a variable that a matmul on the worker reads: the worker's stage holding the
matmul waits for the variable's value, which the ps task sends it once it has done some heavier
work of its own (so the worker surely waits: a step message reaches both tasks at about the same
time, and a bare variable read could arrive before the worker's stage began). Replies written by
hand check
which arrival ended a wait (a tensor's sender, or a control token's -1).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import placeviz as pv
from placeviz.cluster.events import RemoteRun, TaskInfo, remote_events
from placeviz.cluster.frames import array_parts
from placeviz.cluster.program import RunProgram, StageHead
from placeviz.cluster.task import REPORTED_COLUMNS
from placeviz.contract import EventKind
from placeviz.devices.context import Device, PhysicalDevice
from placeviz.devices.spec import DeviceSpec
from placeviz.events.chrome import chrome_trace

pytest.importorskip("distributed")

OP, TRANSFER, WAIT, RUN = (
    int(k) for k in (EventKind.OP, EventKind.TRANSFER, EventKind.WAIT, EventKind.RUN)
)
# The tasks' clocks are matched to the client's by one round trip each: their offsets may be off
# by up to half of it (a loaded machine's message takes a few ms).
CLOCK_SLACK_NS = 20_000_000


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[list[pv.train.Server], list[pv.train.Server]]]:
    pv.config.reset_devices()
    workers, ps = pv.test.create_local_cluster(1, 1)
    yield workers, ps
    for server in workers + ps:
        server.stop()


def task_of(name: str) -> str:
    return name.split("/device:")[0]


@pytest.fixture(scope="module")
def step(servers) -> tuple[pv.Trace, pv.Graph, np.ndarray, np.ndarray]:
    workers, _ = servers
    graph = pv.Graph()
    weights = np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 1000
    data = np.ones((8, 64), np.float32)
    with graph.as_default():
        with pv.device("/job:ps/task:0"):
            w = pv.Variable(weights, name="w")
            big = pv.Variable(np.eye(512, dtype=np.float32), name="big")
            work = big
            for _ in range(3):  # tens of ms of the ps task's time
                work = pv.matmul(work, big)
            # Kept by what reads it: an op whose outputs nothing reads runs as a NoOp (TF's)
            sink = pv.Variable(np.zeros((512, 512), np.float32), name="sink")
            with pv.control_dependencies([pv.assign(sink, work)]):
                sent = pv.identity(w, name="sent")
        with pv.device("/job:worker/task:0"):
            x = pv.placeholder(pv.float32, (8, 64), name="x")
            y = pv.matmul(x, sent, name="y")
        init = pv.global_variables_initializer()
    with pv.Session(workers[0].target, graph=graph) as sess:
        sess.run(init)
        sess.run(y, {x: data})  # the first ships the graph and the program to the tasks
        got = sess.run(y, {x: data})
        trace = sess.trace()
    np.testing.assert_allclose(got, data @ weights, rtol=1e-5)
    return trace, graph, weights, data


def last_run(trace: pv.Trace) -> np.ndarray:
    ev = trace.events
    return ev["run"] == ev["run"].max()


def test_each_task_runs_its_ops_on_its_devices(step) -> None:
    trace, _, _, _ = step
    ev = trace.events
    names = [d["name"] for d in trace.devices]
    ran = {
        trace.node_name(int(node)): task_of(names[device])
        for kind, node, device in zip(
            ev["kind"][last_run(trace)], ev["node"][last_run(trace)], ev["device"][last_run(trace)]
        )
        if kind == OP
    }
    assert ran["y"] == "/job:worker/replica:0/task:0"
    assert ran["sent"] == ran["w/read"] == ran["MatMul_2"] == "/job:ps/replica:0/task:0"


def test_the_variable_crosses_to_the_worker_with_its_bytes(step) -> None:
    trace, _, weights, _ = step
    ev = trace.events
    names = [d["name"] for d in trace.devices]
    crossing = [
        (trace.node_name(int(node)), names[device], names[peer], int(size))
        for kind, node, device, peer, size in zip(
            *(ev[c][last_run(trace)] for c in ("kind", "node", "device", "peer", "bytes"))
        )
        if kind == TRANSFER and task_of(names[device]) != task_of(names[peer])
    ]
    assert crossing == [
        (
            "sent",
            "/job:worker/replica:0/task:0/device:CPU:0",
            "/job:ps/replica:0/task:0/device:CPU:0",
            weights.nbytes,
        )
    ]


def test_the_worker_waits_for_the_variable_between_the_step_and_its_arrival(step) -> None:
    trace, graph, _, _ = step
    ev = trace.events
    run = last_run(trace)
    names = [d["name"] for d in trace.devices]
    worker_cpu = names.index("/job:worker/replica:0/task:0/device:CPU:0")
    ps_cpu = names.index("/job:ps/replica:0/task:0/device:CPU:0")
    waits = np.flatnonzero(run & (ev["kind"] == WAIT))
    assert waits.size == 1, "the worker's one stage that reads another task's tensor"
    wait = int(waits[0])
    assert ev["device"][wait] == worker_cpu
    assert ev["peer"][wait] == ps_cpu  # what arrived last: the ps task's tensor
    assert trace.node_name(int(ev["node"][wait])) in {op.name for op in graph.get_operations()}
    assert ev["t1"][wait] > ev["t0"][wait]
    arrival = int(
        ev["t1"][np.flatnonzero(run & (ev["kind"] == TRANSFER) & (ev["peer"] == ps_cpu))][0]
    )
    # The wait began once the step message reached the worker, after the run began (on the
    # client's clock), and ended once the tensor arrived (both ends on the worker's clock).
    began = int(ev["t0"][np.flatnonzero(run & (ev["kind"] == RUN))][0])
    assert began - CLOCK_SLACK_NS <= ev["t0"][wait] <= arrival <= ev["t1"][wait]
    # The matmul ran after the wait, on the same device.
    y = np.flatnonzero(
        run & (ev["kind"] == OP) & (ev["node"] == graph.get_operation_by_name("y").id)
    )
    assert ev["device"][y[0]] == worker_cpu and ev["t0"][y[0]] >= ev["t1"][wait]


def test_a_tasks_ops_before_and_after_a_wait_are_reported_once_each(servers) -> None:
    """The worker runs a stage, waits for the ps task, then runs another: the trace has every
    op of both, once, in order around the wait."""
    workers, _ = servers
    graph = pv.Graph()
    with graph.as_default():
        with pv.device("/job:ps/task:0"):
            big = pv.Variable(np.eye(512, dtype=np.float32), name="big")
            work = big
            for _ in range(3):  # tens of ms of the ps task's time: the worker waits
                work = pv.matmul(work, big)
            sent = pv.reduce_sum(work, name="sent")
        with pv.device("/job:worker/task:0"):
            x = pv.placeholder(pv.float32, (4,), name="x")
            before = pv.square(pv.exp(x, name="exp"), name="before")
            after = pv.add(before, sent, name="after")
        init = pv.global_variables_initializer()
    with pv.Session(workers[0].target, graph=graph) as sess:
        sess.run(init)
        sess.run(after, {x: np.zeros(4, np.float32)})
        got = sess.run(after, {x: np.ones(4, np.float32)})
        trace = sess.trace()
    np.testing.assert_allclose(got, np.exp(2.0) + 512, rtol=1e-5)  # big^4 is the identity
    ev = trace.events
    run = last_run(trace)
    names = [d["name"] for d in trace.devices]
    worker_cpu = names.index("/job:worker/replica:0/task:0/device:CPU:0")
    ops = run & (ev["kind"] == OP) & (ev["device"] == worker_cpu)
    ran = [trace.node_name(int(n)) for n in ev["node"][ops]]
    assert sorted(ran) == sorted(set(ran)) and {"exp", "before", "after"} <= set(ran)
    wait = np.flatnonzero(run & (ev["kind"] == WAIT) & (ev["device"] == worker_cpu))
    assert wait.size == 1
    t0 = dict(zip(ran, ev["t0"][ops]))
    t1 = dict(zip(ran, ev["t1"][ops]))
    assert t1["before"] <= ev["t0"][wait[0]] < ev["t1"][wait[0]] <= t0["after"]


def test_the_chrome_export_has_the_tasks_transfers_and_waits(step) -> None:
    trace, _, weights, _ = step
    events = chrome_trace(trace)["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"
    }
    waits = [e for e in events if e.get("cat") == "wait"]
    assert waits and all(e["ph"] == "X" and e["dur"] > 0 for e in waits)
    last = waits[-1]
    assert processes[last["pid"]].startswith("/job:worker/replica:0/task:0")
    assert threads[last["pid"], last["tid"]] == "CPU:0 compute"
    assert last["args"]["last arrival from"] == "/job:ps/replica:0/task:0/device:CPU:0"
    copies = [e for e in events if e.get("cat") == "transfer" and e["ph"] == "X"]
    crossing = [e for e in copies if e["args"]["output of"] == "sent"]
    assert crossing and crossing[-1]["args"]["bytes"] == weights.nbytes
    assert processes[crossing[-1]["pid"]].startswith("/job:worker/")
    # the flow arrow starts on the ps task's process (the op that made the tensor)
    starts = [e for e in events if e["ph"] == "s"]
    assert any(processes[e["pid"]].startswith("/job:ps/") for e in starts)


def cpu_of(task: str) -> Device:
    spec = DeviceSpec.from_string(f"{task}/device:CPU:0")
    return Device(spec, PhysicalDevice(f"{task}/physical_device:CPU:0", "CPU"), 1 << 30, False)


def test_a_waits_peer_is_the_sender_of_the_awaited_tensor_that_arrived_last() -> None:
    """A run's events from replies written by hand: how many, which arrival ended each wait,
    on whose clock."""
    graph = pv.Graph()
    with graph.as_default():
        a, b, c = pv.constant(1.0, name="a"), pv.constant(2.0, name="b"), pv.constant(3.0, name="c")
        first, second, third = (
            pv.identity(a, name="first"),
            pv.identity(b, name="second"),
            pv.identity(c, name="third"),
        )
    ps0, ps1, worker = "/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:0"
    devices = {task: cpu_of(task) for task in (ps0, ps1, worker)}
    device_ids = {device.name: i for i, device in enumerate(devices.values())}
    transfers = {
        ("a:0", worker): (a, devices[ps0], devices[worker]),
        ("b:0", worker): (b, devices[ps1], devices[worker]),
        ("c:0", worker): (c, devices[ps1], devices[worker]),
    }
    heads = {
        # waits for a (from ps 0) and b (from ps 1); c (ps 1), for a later stage, comes after them
        "first": StageHead(first.op, devices[worker], frozenset({"a:0", "b:0"}), frozenset()),
        # waits only for a token from ps 1
        "second": StageHead(second.op, devices[worker], frozenset(), frozenset({ps1})),
        # waited for nothing: its wait took no time
        "third": StageHead(third.op, devices[worker], frozenset({"c:0"}), frozenset()),
    }
    program = RunProgram({}, transfers, heads)
    names = list(device_ids)
    offset = 1_000_000  # the worker's clock is 1 ms behind the client's
    reply = {
        "devices": [devices[worker].name],
        "events": array_parts(np.zeros((len(REPORTED_COLUMNS), 0), np.int64)),  # as a task sends
        "sent": [],
        "received": [[ps1, ["b:0"], 150], [ps0, ["a:0"], 180], [ps1, ["c:0"], 190], [ps1, [], 400]],
        "waits": [["first", 100, 200], ["second", 300, 420], ["third", 500, 500]],
    }
    ps1_reply = {  # two ops; b and c to the worker, and a tensor to ps 0, which did not report
        "devices": [devices[ps1].name],
        "events": array_parts(
            np.array(
                [
                    [OP, OP],
                    [10, 20],
                    [15, 25],
                    [b.op.id, c.op.id],
                    [0, 0],
                    [-1, -1],
                    [4, 4],
                    [0, 0],
                ],
                np.int64,
            )
        ),
        "sent": [
            ["tcp://worker", ["b:0", "c:0"], [4, 4], 120, 125],
            ["tcp://ps0", ["x:0"], [4], 120, 126],
        ],
        "received": [],
        "waits": [],
    }
    fetched = np.ones(1000)  # a fetched value, in its task's reply and in the run
    ps1_reply["values"] = fetched
    reports = [
        (TaskInfo(ps1, "tcp://ps1", 2, 0), ps1_reply),
        (TaskInfo(worker, "tcp://worker", 1, offset), reply),
    ]
    run = RemoteRun({id(fetched): fetched}, reports, program)
    events = remote_events(run, device_ids)
    held = weakref.ref(fetched)
    del fetched, run, reports, ps1_reply
    gc.collect()
    assert held() is None  # the events, which may stay unread for long, keep no fetched value
    columns = events.build()
    # counted before they are made: ps 1's ops and sends to the worker, the worker's lasting waits
    assert events.count == len(columns["kind"]) == 2 + 2 + 2
    sent = columns["kind"] == TRANSFER
    assert columns["t1"][sent].tolist() == [150 + offset, 190 + offset]  # arrival, client's clock
    assert {names[d] for d in columns["device"][sent]} == {devices[worker].name}
    waits = columns["kind"] == WAIT
    assert columns["t0"][waits].tolist() == [100 + offset, 300 + offset]
    assert columns["t1"][waits].tolist() == [200 + offset, 420 + offset]
    assert [graph._ops[n].name for n in columns["node"][waits]] == ["first", "second"]
    assert {names[d] for d in columns["device"][waits]} == {devices[worker].name}
    # a (ps 0) arrived after b (ps 1); c came later still but was not awaited; a token has no device
    assert columns["peer"][waits].tolist() == [device_ids[devices[ps0].name], -1]
    assert columns["bytes"][waits].tolist() == [0, 0]


def test_the_plotly_timeline_has_the_workers_wait_on_its_row(step) -> None:
    pytest.importorskip("plotly")
    trace, _, _, _ = step
    figure = trace.plot_timeline()
    rows = {bar.name: bar for bar in figure.data}
    waiting = rows["/job:worker/task:0/CPU:0 waiting"]
    assert set(waiting.y) == {"/job:worker/task:0/CPU:0"}
    assert waiting.legendgroup == rows["/job:worker/task:0/CPU:0"].legendgroup
    ev = trace.events
    waits = ev["kind"] == WAIT
    assert np.allclose(sorted(waiting.x), sorted((ev["t1"][waits] - ev["t0"][waits]) / 1e6))
    assert "/job:ps/task:0/CPU:0 waiting" not in rows  # the ps task waited for nothing


def test_unread_steps_events_hold_few_objects_for_the_garbage_collector() -> None:
    """A step's events wait, unread, for as long as the recorder keeps them (thousands of
    steps): as the reports' own lists, each full collection would walk dozens a step."""
    info = TaskInfo("/job:worker/task:0", "tcp://worker", 1, 0)

    def step_reply() -> dict:  # as a task's reply arrives: new lists each step
        return {
            "devices": ["/job:worker/replica:0/task:0/device:CPU:0"],
            "events": array_parts(np.zeros((len(REPORTED_COLUMNS), 5), np.int64)),
            "sent": [["tcp://gone", ["a:0", "b:0"], [4, 4], 1, 2]],  # to a task that did not report
            "received": [["tcp://x", ["c:0"], 3], ["tcp://y", ["d:0"], 4]],
            "waits": [["first", 1, 5], ["second", 6, 9]],
            "values": [],
        }

    program = RunProgram({}, {}, {})
    gc.collect()
    before = len(gc.get_objects())
    steps = [remote_events(RemoteRun({}, [(info, step_reply())], program), {}) for _ in range(200)]
    gc.collect()
    assert [events.count for events in steps[:1]] == [5 + 2]  # its ops and its lasting waits
    assert (len(gc.get_objects()) - before) / len(steps) < 12
