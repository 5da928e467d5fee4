"""Clusters of real task processes on loopback (issue 14): seed 002's programs, state, faults.

One cluster (2 ps tasks without GPUs, 2 workers with 2 simulated GPUs each) serves the module;
tests that kill or stop tasks start their own.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from processes import listening

import placeviz as pv
from placeviz.cluster.security import PLAIN_SCHEME
from placeviz.cluster.server import free_port
from placeviz.contract import EventKind
from placeviz.events.chrome import chrome_trace

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, list[pv.train.Server]]]:
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    no_gpu = pv.ConfigProto(device_count={"GPU": 0})
    workers, ps = pv.test.create_local_cluster(2, 2, ps_config=no_gpu)
    pv.config.reset_devices()
    yield {"worker": workers, "ps": ps}
    for server in workers + ps:
        server.stop()


def spec_of(servers: dict[str, list[pv.train.Server]]) -> pv.train.ClusterSpec:
    return servers["worker"][0].cluster_spec


def task_pids(trace: pv.Trace) -> dict[str, int]:
    """Device name -> the pid of the task process it belongs to, as the document says."""
    return {device["name"]: device["pid"] for device in trace.to_document()["devices"]}


def test_seed_002_session_on_a_target_runs_on_its_task(cluster) -> None:
    a = pv.constant(1.0)
    b = a + 2
    c = a * 3
    worker1 = cluster["worker"][1]
    with pv.Session(worker1.target) as sess:
        assert c.eval() == 3.0
        # Nothing pinned: everything on the master task's default device, its first GPU.
        assert set(sess.placement.values()) == {"/job:worker/replica:0/task:1/device:GPU:0"}
        assert sess.run(b) == 3.0


def test_seed_002_ops_pinned_across_tasks_run_in_their_processes(cluster) -> None:
    with pv.device("/job:ps/task:0/cpu:0"):
        a = pv.constant(1.0)
    with pv.device("/job:worker/task:0/gpu:1"):
        b = a + 2
    c = a + b
    worker1 = cluster["worker"][1]
    with pv.Session(worker1.target) as sess:
        assert sess.run(c) == 4.0
        placement = dict(sess.placement)
        trace = sess.trace()
    assert placement["Const"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert placement["add"] == "/job:worker/replica:0/task:0/device:GPU:1"
    assert placement["add_1"] == "/job:worker/replica:0/task:1/device:GPU:0"
    pids = task_pids(trace)
    assert pids["/job:ps/replica:0/task:0/device:CPU:0"] == cluster["ps"][0].pid
    assert pids["/job:worker/replica:0/task:0/device:GPU:1"] == cluster["worker"][0].pid
    events = trace.events
    ops = events["kind"] == int(EventKind.OP)
    nodes = {node["id"]: node["name"] for node in trace.nodes}
    ran_on = {
        nodes[n]: trace.devices[d]["name"]
        for n, d in zip(events["node"][ops], events["device"][ops])
    }
    assert ran_on["add"] == placement["add"] and ran_on["add_1"] == placement["add_1"]
    # A request that names a task but no job keeps its task; the session's task fills the rest.
    with pv.device("/task:1/cpu:0"):
        other = a * 2
    with pv.Session(cluster["worker"][0].target) as sess:
        assert sess.run(other) == 2.0
        assert sess.placement[other.op.name] == "/job:worker/replica:0/task:1/device:CPU:0"
    # Perfetto: a process per task, with the task's own process id.
    chrome = chrome_trace(trace)["traceEvents"]
    processes = {e["args"]["name"] for e in chrome if e["name"] == "process_name"}
    for job, servers in cluster.items():
        for index, server in enumerate(servers):
            assert f"/job:{job}/replica:0/task:{index} (pid {server.pid})" in processes


def test_seed_002_replica_device_setter_two_ps_tasks_and_nested_devices(cluster) -> None:
    with pv.device(pv.train.replica_device_setter(ps_tasks=2)):
        v1 = pv.Variable(1.0)
        v2 = pv.Variable(2.0)
        v3 = pv.Variable(3.0)
        v4 = pv.Variable(4.0)
        v5 = pv.Variable(5.0)
        s = v1 + v2
        with pv.device("/gpu:1"):
            p1 = 2 * s
            with pv.device("/task:1"):
                p2 = 3 * s
    with pv.Session(cluster["worker"][0].target) as sess:
        sess.run(pv.global_variables_initializer())
        assert sess.run([p1, p2, v5]) == [6.0, 9.0, 5.0]
        where = sess.placement
        assert [where[v.op.name].split("/device:")[0] for v in (v1, v2, v3, v4, v5)] == [
            "/job:ps/replica:0/task:0",
            "/job:ps/replica:0/task:1",
        ] * 2 + ["/job:ps/replica:0/task:0"]
        assert where[s.op.name] == "/job:worker/replica:0/task:0/device:GPU:0"
        assert where[p1.op.name] == "/job:worker/replica:0/task:0/device:GPU:1"
        assert where[p2.op.name] == "/job:worker/replica:0/task:1/device:GPU:1"
        why = where.explain(v2.op.name).text
        assert "replica_device_setter" in why
        assert "(round robin over 2 ps tasks: variable 2 of 5)" in why
        assert "round robin" not in where.explain(s.op.name).text


def build_mlp(seed: int, spec: pv.train.ClusterSpec | None) -> tuple:
    """A small MLP Adam step, on the cluster (variables spread over the ps tasks) or local."""
    graph = pv.Graph()
    with graph.as_default():
        pv.set_random_seed(seed)
        scope = pv.train.replica_device_setter(cluster=spec) if spec else None
        with pv.device(scope):
            x = pv.placeholder(pv.float32, [None, 8])
            y = pv.placeholder(pv.float32, [None, 1])
            hidden = pv.layers.dense(x, 16, activation=pv.nn.relu)
            out = pv.layers.dense(hidden, 1)
            loss = pv.reduce_mean(pv.square(out - y))
            step = pv.train.get_or_create_global_step()
            train = pv.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
            init = pv.global_variables_initializer()
    return graph, x, y, loss, train, init, step


def training_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.random((32, 8), dtype=np.float32)
    return x, x.sum(axis=1, keepdims=True)


def test_training_on_the_cluster_gives_the_numbers_of_one_process(cluster) -> None:
    data, labels = training_data()
    losses = {}
    for where in ("local", "cluster"):
        spec = spec_of(cluster) if where == "cluster" else None
        graph, x, y, loss, train, init, _ = build_mlp(7, spec)
        target = cluster["worker"][0].target if spec else ""
        with pv.Session(target, graph=graph) as sess:
            sess.run(init)
            losses[where] = [sess.run([loss, train], {x: data, y: labels})[0] for _ in range(5)]
    assert losses["cluster"] == losses["local"]  # bit for bit
    assert losses["cluster"][-1] < losses["cluster"][0]


def test_a_cluster_step_runs_the_ops_a_step_in_one_process_runs(cluster) -> None:
    """A softmax loss's shape arithmetic and its gradient's constants are folded, and the
    labels' gradient, which nothing reads, is a NoOp, on the cluster as in one process (and in
    TensorFlow: tests/conformance/step_ops.json): none runs in a stage of its own to hand its
    value to a later one."""
    rng = np.random.default_rng(1)
    data = rng.random((16, 8), dtype=np.float32)
    labels = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)]
    ran = {}
    for where in ("local", "cluster"):
        spec = spec_of(cluster) if where == "cluster" else None
        graph = pv.Graph()
        with graph.as_default():
            pv.set_random_seed(5)
            on_cpu = "/job:worker/task:0/cpu:0"  # where one process runs them: a CPU's clock
            setter = pv.train.replica_device_setter(cluster=spec, worker_device=on_cpu)
            with pv.device(setter if spec else None):
                x = pv.placeholder(pv.float32, [16, 8])
                y = pv.placeholder(pv.float32, [16, 3])
                logits = pv.layers.dense(pv.layers.dense(x, 6, activation=pv.nn.relu), 3)
                loss = pv.reduce_mean(
                    pv.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits)
                )
                train = pv.train.AdamOptimizer(0.01).minimize(loss)
                init = pv.global_variables_initializer()
        with pv.Session(cluster["worker"][0].target if spec else "", graph=graph) as sess:
            sess.run(init)
            sess.run(train, {x: data, y: labels})
            columns = sess.last_run_events().columns
        ops = graph.get_operations()
        # a kernel that ran took time; a folded op's and a constant's events take none
        computed = (columns["kind"] == EventKind.OP) & (columns["t1"] > columns["t0"])
        ran[where] = {ops[n].name for n in columns["node"][computed]}
    assert "gradients/Mean_grad/Tile" not in ran["local"]  # folded
    assert ran["cluster"] == ran["local"]


@pytest.mark.parametrize(("ps", "workers"), [(1, 8), (4, 4)])
def test_bigger_clusters_train_to_the_numbers_of_one_process(ps: int, workers: int) -> None:
    """1 ps + 8 workers and 4 ps + 4 workers on this machine: the MLP's steps from worker 0 give
    one process's losses bit for bit, with the variables spread over every ps task."""
    data, labels = training_data()
    graph, x, y, loss, train, init, _ = build_mlp(11, None)
    with pv.Session(graph=graph) as sess:
        sess.run(init)
        expected = [sess.run([loss, train], {x: data, y: labels})[0] for _ in range(3)]
    no_gpu = pv.ConfigProto(device_count={"GPU": 0})
    worker_servers, ps_servers = pv.test.create_local_cluster(
        workers, ps, worker_config=no_gpu, ps_config=no_gpu
    )
    try:
        graph, x, y, loss, train, init, _ = build_mlp(11, worker_servers[0].cluster_spec)
        with pv.Session(worker_servers[0].target, graph=graph) as sess:
            sess.run(init)
            got = [sess.run([loss, train], {x: data, y: labels})[0] for _ in range(3)]
            tasks = {device.split("/device:")[0] for device in sess.placement.values()}
    finally:
        for server in worker_servers + ps_servers:
            server.stop()
    assert got == expected
    assert {f"/job:ps/replica:0/task:{i}" for i in range(ps)} <= tasks


def test_a_step_is_one_message_to_each_task_and_no_tensor_passes_the_scheduler(cluster) -> None:
    """Tasks keep a run's partitions: after the first step, a step is one message to each task
    it needs; tensors go task to task (counted where they arrive), none through Dask's
    scheduler or its worker-to-worker transfers of task results."""
    from placeviz.cluster.steps import handled

    data, labels = training_data()
    graph, x, y, _loss, train, init, _ = build_mlp(5, spec_of(cluster))
    with pv.Session(cluster["worker"][0].target, graph=graph) as sess:
        sess.run(init)
        sess.run(train, {x: data, y: labels})  # ships the step's program to each task
        client = sess._remote.client
        before = client.run(handled)
        for _ in range(4):
            sess.run(train, {x: data, y: labels})
        after = client.run(handled)
        names = {address: info.name for address, info in sess._remote.tasks.items()}
        scheduled = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        fetched = client.run(lambda dask_worker: len(dask_worker.transfer_incoming_log))
    steps = {names[a]: after[a].get("step", 0) - before[a].get("step", 0) for a in after}
    programs = {names[a]: after[a].get("program", 0) - before[a].get("program", 0) for a in after}
    tensors = {names[a]: after[a].get("tensors", 0) - before[a].get("tensors", 0) for a in after}
    involved = {"/job:worker/task:0", "/job:ps/task:0", "/job:ps/task:1"}
    assert {task for task, count in steps.items() if count} == involved
    assert all(steps[task] == 4 for task in involved)
    assert not any(programs.values())  # kept from the first step
    # the ps tasks receive gradients every step, the worker the variables: 4 steps' worth
    assert all(tensors[task] >= 4 for task in involved)
    assert tensors["/job:worker/task:1"] == 0
    assert scheduled == 0 and not any(fetched.values())


def test_the_tasks_and_their_scheduler_check_their_event_loops_each_second(cluster) -> None:
    """Dask's servers check their event loop every 20 ms by default: 50 wake-ups a second in
    every process of the cluster, idle or not (``coordinator.check_loop_each_second``)."""
    with pv.Session(cluster["worker"][0].target) as sess:
        client = sess._remote.client
        tasks = client.run(lambda dask_worker: dask_worker.periodic_callbacks["tick"].callback_time)
        scheduler = client.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.periodic_callbacks["tick"].callback_time
        )
    assert len(tasks) == 4 and set(tasks.values()) == {1000}
    assert scheduler == 1000


def test_no_step_message_is_walked_to_choose_a_serializing_thread(
    cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step's messages carry tensors as pickle-5 frames: neither the master nor a task makes
    Dask walk them (``sizeof``, tens of us a message) for a thread that would buy nothing."""
    from distributed.comm import utils

    def count_walks() -> int:
        """Count, from now on, the messages a task's Dask walks (the counter stays in its
        process); the count so far. Local, so Dask sends it by value."""
        from distributed.comm import utils

        walk = utils.safe_sizeof
        counted = getattr(walk, "counted", None)
        if counted is None:

            def counting(*args: Any, **kwargs: Any) -> Any:
                counted[0] += 1
                return walk(*args, **kwargs)

            counted = [0]
            counting.counted = counted  # type: ignore[attr-defined]
            utils.safe_sizeof = counting
        return counted[0]

    walked: list[object] = []
    walk = utils.safe_sizeof
    monkeypatch.setattr(utils, "safe_sizeof", lambda msg, **kw: walked.append(msg) or walk(msg))
    data, labels = training_data()
    graph, x, y, _loss, train, init, _ = build_mlp(5, spec_of(cluster))
    with pv.Session(cluster["worker"][0].target, graph=graph) as sess:
        sess.run(init)
        sess.run(train, {x: data, y: labels})
        client = sess._remote.client
        walked.clear()
        tasks = client.run(count_walks)
        for _ in range(3):
            sess.run(train, {x: data, y: labels})
        after = client.run(count_walks)
    assert after == tasks
    assert [m for m in walked if "placeviz_step" in str(m)] == []


def _benchmark(name: str) -> Any:
    """A helper module of benchmarks/ (bench_cluster's), imported from its file."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmarks_floor_replays_the_bytes_a_step_moves(cluster) -> None:
    """bench_cluster's floor (benchmarks/_dask_floor.py) reads a session's program: each
    variable goes from its ps task to the worker and its gradient back, the worker is fed the
    batch, each op's kernel time is kept; and its replay on bare Dask servers runs."""
    floor, graphs = _benchmark("_dask_floor"), _benchmark("_cluster_graph")
    widths, batch = [12, 6, 3], 4
    graph, x, y, train, init = graphs.build(pv, widths, batch, spec_of(cluster))
    data, labels = graphs.inputs(widths, batch)
    with pv.Session(cluster["worker"][0].target, graph=graph) as sess:
        sess.run(init)
        sess.run(train, {x: data, y: labels})
        spec = floor.floor_spec(sess, train)
        kernels = {op.name for op in graph.get_operations() if op.type == "ApplyAdam"}
    sent = [
        size
        for task in spec["tasks"]
        for stage in task["stages"]
        for names in stage["sends"].values()
        for size in names.values()
    ]
    variables = sum(a * b + b for a, b in itertools.pairwise(widths)) * 4  # float32 bytes
    # Adam's beta powers, and its hyperparameters: on this cluster the worker's (simulated) GPU
    # holds them, and two stages of a ps task read them, which the replay must await once.
    scalars = sum(size for size in sent if size == 4)
    assert sum(sent) - scalars == 2 * variables
    assert sorted(b for task in spec["tasks"] for b in task["feed_bytes"]) == sorted(
        [data.nbytes, labels.nbytes]
    )
    assert len(kernels) == 4 and all(spec["placeviz_kernel_ns"][k] > 0 for k in kernels)
    assert floor.measure(spec, steps=3, warmup=1, timeout=60) > 0


def test_a_closed_session_leaves_nothing_of_its_graph_in_the_tasks(cluster) -> None:
    from placeviz.cluster.steps import held

    target = cluster["worker"][0].target
    with pv.device("/job:ps/task:0"):
        a = pv.constant(1.0) + 1
    with pv.Session(target, graph=pv.Graph()) as probe:  # it ships nothing itself
        before = probe._remote.client.run(held)
        with pv.Session(target, graph=a.graph) as sess:
            assert sess.run(a) == 2.0
            during = probe._remote.client.run(held)
        after = probe._remote.client.run(held)
    assert during != before and after == before


def test_a_training_step_moves_each_gradient_from_the_worker_to_its_ps_task(cluster) -> None:
    data, labels = training_data()
    graph, x, y, _loss, train, init, _ = build_mlp(3, spec_of(cluster))
    with pv.Session(cluster["worker"][0].target, graph=graph) as sess:
        sess.run(init)
        sess.trace_level = pv.RunOptions.FULL_TRACE  # also each task's memory
        sess.run(train, {x: data, y: labels})
        trace = sess.trace()
        placement = dict(sess.placement)
    variables = [op for op in graph.get_operations() if op.type == "VariableV2"]
    expected: dict[str, int] = {}
    largest: dict[str, int] = {}  # the largest gradient each ps task receives
    for op in variables:
        if "Adam" in op.name or op.name in ("global_step", "beta1_power", "beta2_power"):
            continue
        task = placement[op.name].split("/device:")[0]
        size = int(np.prod(op.outputs[0].shape.dims)) * 4
        expected[task] = expected.get(task, 0) + size
        largest[task] = max(largest.get(task, 0), size)
    events = trace.events
    names = [d["name"] for d in trace.devices]
    moved: dict[str, int] = {}
    for kind, device, peer, size in zip(
        events["kind"], events["device"], events["peer"], events["bytes"]
    ):
        if kind == int(EventKind.TRANSFER) and names[peer].startswith("/job:worker/"):
            task = names[device].split("/device:")[0]
            if task.startswith("/job:ps/"):
                moved[task] = moved.get(task, 0) + int(size)
    assert set(moved) == set(expected) == {"/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1"}
    # Each tensor reaches each task once, recorded at the task that reads it: the learning rate
    # (on the worker) goes to both ps tasks, whose updates read it.
    crossed = [
        (node, names[device].split("/device:")[0])
        for kind, node, device, peer in zip(
            events["kind"], events["node"], events["device"], events["peer"]
        )
        if kind == int(EventKind.TRANSFER)
        and names[device].split("/device:")[0] != names[peer].split("/device:")[0]
    ]
    assert len(crossed) == len(set(crossed))
    learning_rate = graph.get_operation_by_name("Adam/learning_rate").id
    assert {task for node, task in crossed if node == learning_rate} == set(expected)
    for task, size in expected.items():
        # every gradient crossed; besides them only scalars (the learning rate's inputs)
        assert size <= moved[task] <= size + 1024, (task, moved[task], size)
    # Memory per task: each task's devices held the tensors its ops made, the ps tasks at
    # least the largest gradient they received (each is freed once its update read it; a
    # variable's read forwards the variable, holding nothing of the run's).
    ran = set(events["device"][events["kind"] == int(EventKind.OP)].tolist())
    for device in (d for d in trace.devices if d["id"] in ran):
        _, in_use = trace.memory_timeline(device["id"])
        task = device["name"].split("/device:")[0]
        assert in_use.max() >= largest.get(task, 1), device["name"]
        # what the task's allocator holds: its peak (a GPU's in 2 MiB chunks)
        assert in_use.max() <= device["reserved"] < in_use.max() + 2**21


def test_variables_and_queues_live_in_their_tasks_across_sessions_until_reset(cluster) -> None:
    target = cluster["worker"][0].target
    with pv.device("/job:ps/task:1"):
        counter = pv.Variable(0.0, name="counter")
        bump = pv.assign_add(counter, 1.0)
        queue = pv.FIFOQueue(5, pv.float32, shapes=[[]], shared_name="kept")
        put = queue.enqueue(7.0)
        size = queue.size()
    with pv.Session(target) as first:
        first.run(counter.initializer)
        for _ in range(3):
            first.run(bump)
        first.run(put)
    with pv.Session(cluster["worker"][1].target) as second:
        assert second.run([counter, size]) == [3.0, 1]
    pv.Session.reset(target)
    with pv.Session(target) as third:
        assert third.run(size) == 0  # TF's reset clears the container's queues too
        with pytest.raises(pv.errors.FailedPreconditionError) as info:
            third.run(counter)
    assert "counter" in str(info.value)


# One client of between-graph replication: its own process and graph, the model's variables on
# the ps tasks (shared by name), its ops on its worker. argv: cluster, worker index, steps, init.
REPLICA_CLIENT = """
import json, sys
import numpy as np
import placeviz as pv

spec = pv.train.ClusterSpec(json.loads(sys.argv[1]))
worker, steps, init = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "init"
device = pv.train.replica_device_setter(
    cluster=spec, worker_device=f"/job:worker/task:{worker}"
)
with pv.device(device):
    x = pv.placeholder(pv.float32, [None, 4])
    w = pv.Variable(pv.zeros([4, 1]), name="w")
    loss = pv.reduce_mean(pv.square(pv.matmul(x, w) - 1.0))
    step = pv.train.get_or_create_global_step()
    train = pv.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
with pv.Session("grpc://" + spec.task_address("worker", worker)) as sess:
    if init:
        sess.run(pv.global_variables_initializer())
    data = np.ones((8, 4), np.float32)
    for _ in range(steps):
        sess.run(train, {x: data})
    print(json.dumps({"global_step": int(sess.run(step))}))
"""


def replica_client(spec: pv.train.ClusterSpec, worker: int, steps: int, init: bool = False):
    args = [json.dumps(spec.as_dict()), str(worker), str(steps), "init" if init else "-"]
    return subprocess.Popen(
        [sys.executable, "-c", REPLICA_CLIENT, *args], stdout=subprocess.PIPE, text=True
    )


def global_step_of(client: subprocess.Popen) -> int:
    out, _ = client.communicate(timeout=120)
    assert client.returncode == 0
    return json.loads(out.strip().splitlines()[-1])["global_step"]


def test_between_graph_replication_two_clients_count_one_global_step(cluster) -> None:
    spec = spec_of(cluster)
    assert global_step_of(replica_client(spec, 0, 0, init=True)) == 0
    clients = [replica_client(spec, worker, 15) for worker in (0, 1)]
    finals = [global_step_of(client) for client in clients]
    # Each client saw the other's steps (async: its last read is at least its own count).
    assert all(15 <= final <= 30 for final in finals)
    assert global_step_of(replica_client(spec, 1, 0)) == 30


def test_an_error_in_a_task_reaches_the_client_named_and_typed(cluster) -> None:
    with pv.device("/job:ps/task:0"):
        never = pv.Variable(1.0, name="never_initialized")
    with pv.Session(cluster["worker"][0].target) as sess:
        with pytest.raises(pv.errors.FailedPreconditionError, match="never_initialized"):
            sess.run(never + 1.0)
        assert sess.last_run["status"] == "error"
        assert sess.run(pv.constant(2.0) * 2) == 4.0  # still usable


def test_a_run_inside_a_running_event_loop_works_and_hands_the_loop_back(cluster) -> None:
    """A Jupyter cell runs inside the kernel's event loop: a step runs on a loop of its own in
    the cell's thread, and the kernel's loop is the running one again after."""
    with pv.device("/job:ps/task:1"):
        a = pv.constant([1.0, 2.0])
    with pv.device("/job:worker/task:0"):
        b = a * 3.0

    async def cell() -> tuple[list[float], bool]:
        outer = asyncio.get_running_loop()
        with pv.Session(cluster["worker"][0].target) as sess:
            values = [sess.run(b).tolist() for _ in range(3)]
        return values[-1], asyncio.get_running_loop() is outer

    assert asyncio.run(cell()) == ([3.0, 6.0], True)


def test_threads_that_ran_steps_and_ended_leave_no_connections_behind(cluster) -> None:
    """Each thread runs its steps on a loop and connections of its own; those of threads that
    ended close when another thread starts its own, not only when the session closes."""
    import psutil

    ps1 = cluster["ps"][1]
    port = int(ps1.target.rsplit(":", 1)[1])
    with pv.device("/job:ps/task:1"):
        x = pv.placeholder(pv.float32, [])
        doubled = x * 2.0

    def to_ps1() -> int:
        found = [c for c in psutil.Process().net_connections(kind="tcp") if c.raddr]
        return sum(1 for c in found if c.raddr.port == port and c.status == "ESTABLISHED")

    with pv.Session(cluster["worker"][0].target) as sess:
        assert sess.run(doubled, {x: 1.0}) == 2.0
        before = to_ps1()
        for value in range(6):
            thread = threading.Thread(target=sess.run, args=(doubled, {x: float(value)}))
            thread.start()
            thread.join()
        assert to_ps1() <= before + 1  # the last thread's, until a next one starts


def test_an_interrupted_run_ends_on_its_tasks_and_leaves_the_session_usable(cluster) -> None:
    """Ctrl-C while a step waits in a task (a dequeue from an empty queue) ends the step there
    too: the dequeue does not stay behind to take what the next run puts in the queue."""
    with pv.device("/job:ps/task:0"):
        queue = pv.FIFOQueue(5, pv.float32, shapes=[[]], shared_name="interrupted")
        put = queue.enqueue(5.0)
        take = queue.dequeue()
        size = queue.size()
    with pv.Session(cluster["worker"][0].target) as sess:
        interrupt = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        interrupt.start()
        with pytest.raises(KeyboardInterrupt):
            sess.run(take)
        interrupted, trace = sess.last_run, sess.trace()
        sess.run(put)
        assert sess.run(size) == 1
        assert sess.run(take) == 5.0
    assert interrupted["status"] == "error" and interrupted["error"] == "KeyboardInterrupt"
    # what ps 0 ran until then: the dequeue that waited, in the interrupted run's trace
    names = {node["id"]: node["name"] for node in trace.to_document()["nodes"]}
    ran = {names[n] for n in trace.events["node"][trace.events["kind"] == int(EventKind.OP)]}
    assert take.op.name in ran


def test_a_failed_run_keeps_in_its_trace_what_every_task_ran_before_it_failed(cluster) -> None:
    with pv.device("/job:worker/task:1"):
        x = pv.placeholder(pv.float32, [None])
        tripled = x * 3.0
    with pv.device("/job:ps/task:0"):
        wrong = pv.reshape(tripled, [3])  # 2 values: fails when it runs, on ps 0
    with pv.Session(cluster["worker"][0].target) as sess:
        with pytest.raises(pv.errors.InvalidArgumentError, match="Reshape"):
            sess.run(wrong, {x: [1.0, 2.0]})
        trace = sess.trace()
        assert sess.last_run["status"] == "error"
        assert sess.run(tripled, {x: [1.0]}).tolist() == [3.0]  # still usable
    events = trace.events
    names = {node["id"]: node["name"] for node in trace.to_document()["nodes"]}
    ran = {names[n] for n in events["node"][events["kind"] == int(EventKind.OP)]}
    moved = {names[n] for n in events["node"][events["kind"] == int(EventKind.TRANSFER)]}
    assert tripled.op.name in ran  # worker 1's op, before ps 0 failed
    assert tripled.op.name in moved  # and its tensor, sent to ps 0


def test_every_task_listens_on_loopback_only(cluster) -> None:
    for server in cluster["worker"] + cluster["ps"]:
        sockets = listening(server.pid)
        port = int(server.target.rsplit(":", 1)[1])
        assert ("127.0.0.1", port) in sockets
        assert all(address == "127.0.0.1" for address, _ in sockets), sockets


def children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def test_a_dead_ps_task_fails_the_run_fast_rejoins_when_restarted_and_stop_leaves_nothing() -> None:
    before = children()
    workers, ps = pv.test.create_local_cluster(1, 1)
    started = children() - before
    assert {workers[0].pid, ps[0].pid} <= started  # and the scheduler
    with pv.device("/job:ps/task:0"):
        v = pv.Variable(2.0)
        product = pv.random_normal([2000, 2000], seed=1)
        for _ in range(24):  # seconds of work on the ps task
            product = pv.matmul(product, product) * 1e-3
        slow = pv.reduce_sum(product) + v
    with pv.device("/job:worker/task:0"):
        doubled = v * 2
        after_slow = slow * 2
        alone = pv.constant(5.0) + 1
    with pv.Session(workers[0].target) as sess:
        sess.run(v.initializer)
        assert sess.run(doubled) == 4.0
        # The ps task dies mid-step, while it multiplies.
        killer = threading.Timer(0.5, os.kill, (ps[0].pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(pv.errors.UnavailableError, match="/job:ps/task:0"):
            sess.run(after_slow)  # the run notices the dead task (it would wait for it forever)
        assert sess.last_run["status"] == "error"  # the failed run is in the trace
        assert sess.run(alone) == 6.0  # runs that do not need the dead task still work
        restarted = pv.train.Server(ps[0].cluster_spec, "ps", 0)
        with pytest.raises(pv.errors.FailedPreconditionError, match=v.op.name):
            sess.run(doubled)  # a new process: its variables are uninitialized
        sess.run(v.initializer)
        assert sess.run(doubled) == 4.0
        ps_cpu = sess.placement[v.op.name]
        record = next(d for d in sess.trace().devices if d["name"] == ps_cpu)
        assert record["pid"] == restarted.pid != ps[0].pid
    ports = [int(s.target.rsplit(":", 1)[1]) for s in workers + ps]
    for server in [*workers, *ps, restarted]:
        server.stop()
    assert not (children() - before)
    for port in ports:
        with socket.socket() as probe:  # nothing listens there: a new server could
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
            probe.listen()


def test_tls_turned_on_authenticates_every_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    from placeviz.cluster.coordinator import identity

    monkeypatch.setenv("PLACEVIZ_CLUSTER_TLS", "1")  # what pv.config.set_cluster_tls(True) sets
    workers, ps = pv.test.create_local_cluster(1, 1)
    try:
        with pv.device("/job:ps/task:0"):
            v = pv.Variable(2.0)
        with pv.device("/job:worker/task:0"):
            tripled = v * 3
        with pv.Session(workers[0].target) as sess:
            sess.run(v.initializer)
            assert sess.run(tripled) == 6.0
            addresses = [
                sess._remote.scheduler,
                *(t.address for t in sess._remote.tasks.values()),
            ]
        assert len(addresses) == 3 and all(a.startswith("tls://127.0.0.1:") for a in addresses)
        worker = addresses[1].removeprefix("tls://")
        assert identity(f"tls://{worker}") is not None
        monkeypatch.delenv("PLACEVIZ_CLUSTER_TLS")
        assert identity(f"tcp://{worker}") is None  # no plain-text peer gets an answer
    finally:
        for server in workers + ps:
            server.stop()


def test_placeviz_server_runs_a_task_in_the_foreground_until_interrupted() -> None:
    port = free_port()
    spec = json.dumps({"worker": [f"localhost:{port}"]})
    command = [sys.executable, "-m", "placeviz", "server", "--cluster", spec]
    task = subprocess.Popen(
        [*command, "--job", "worker", "--task", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = task.stdout.readline()  # type: ignore[union-attr]
        address = f"{PLAIN_SCHEME}://127.0.0.1:{port}"
        assert f"placeviz task /job:worker/task:0 listening on {address}" in line
        with pv.Session(f"grpc://localhost:{port}") as sess:
            assert sess.run(pv.constant(3.0) * 2) == 6.0
            assert sess.trace().devices[0]["pid"] == task.pid
    finally:
        task.send_signal(signal.SIGINT)  # Ctrl-C, as in a terminal
        assert task.wait(timeout=20) == 0
    from placeviz.cluster.coordinator import release

    release(pv.train.ClusterSpec(json.loads(spec)))  # its scheduler goes with its last task


def test_a_task_of_a_sparse_job_starts_and_serves() -> None:
    """A ClusterSpec may name only some tasks of a job (TF's dict form): task 3 alone."""
    spec = {"worker": {3: f"localhost:{free_port()}"}}
    server = pv.train.Server(spec, "worker", 3)
    try:
        doubled = pv.constant(2.0) * 2
        with pv.Session(server.target) as sess:
            assert sess.run(doubled) == 4.0
            assert sess.placement[doubled.op.name].startswith("/job:worker/replica:0/task:3/")
    finally:
        server.stop()


def test_a_local_cluster_whose_port_was_taken_starts_again_on_new_ports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A picked port another process took before its task bound it (an outgoing connection
    may, in the same range): create_local_cluster stops what it started and tries new ports."""
    from placeviz.cluster import server as pv_server

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([taken.getsockname()[1]])
    monkeypatch.setattr(pv_server, "free_port", lambda: next(ports, None) or free_port())
    try:
        (worker,), () = pv.test.create_local_cluster(1, 0)
        try:
            assert worker.running
            assert worker.target != f"grpc://localhost:{taken.getsockname()[1]}"
        finally:
            worker.stop()
    finally:
        taken.close()
