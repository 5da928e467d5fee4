"""Events, traces and their exports: what every run records and what FULL_TRACE adds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind, TimingSource
from placeviz.devices.profiles import PROFILES
from placeviz.events.document import DocumentError, validate
from placeviz.runtime.simulation import copy_seconds

FULL = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)


def _kinds(trace: pv.Trace, kind: EventKind) -> np.ndarray:
    return trace.events["kind"] == int(kind)


def _towers(gpus: int = 2) -> pv.Tensor:
    with pv.device("/cpu:0"):
        x = pv.constant(np.ones((64, 64), dtype=np.float32), name="x")
    outs = []
    for i in range(gpus):
        with pv.device(f"/gpu:{i}"), pv.name_scope(f"tower_{i}"):
            outs.append(pv.matmul(x, x) * 2.0)
    with pv.device("/cpu:0"):
        return pv.add_n(outs, name="total")


def test_every_run_records_placements_and_op_timings() -> None:
    a = pv.constant([1.0, 2.0], name="a")
    b = pv.square(a, name="b")
    sess = pv.Session()
    sess.run(b)
    sess.run(b)
    trace = sess.trace()
    assert len(trace.runs) == 1 and trace.runs[0]["id"] == 1
    ops = _kinds(trace, EventKind.OP)
    assert sorted(trace.node_name(n) for n in trace.events["node"][ops]) == ["a", "b"]
    assert (trace.events["t1"][ops] >= trace.events["t0"][ops]).all()
    assert set(trace.events["source"][ops]) == {int(TimingSource.CLOCK)}
    placed = trace.events["node"][_kinds(trace, EventKind.PLACEMENT)]
    assert sorted(trace.node_name(n) for n in placed) == ["a", "b"]
    assert len(sess.trace(runs=None).runs) == 2


def test_full_trace_fills_run_metadata_with_memory_and_transfers() -> None:
    pv.config.simulate_gpus(2)
    total = _towers()
    sess = pv.Session()
    metadata = pv.RunMetadata()
    value = sess.run(total, options=FULL, run_metadata=metadata)
    np.testing.assert_array_equal(value, np.full((64, 64), 256.0))
    trace = metadata.trace
    transfers = _kinds(trace, EventKind.TRANSFER)
    assert transfers.sum() == 4  # x to each GPU, each tower back to the CPU
    assert set(trace.events["bytes"][transfers]) == {64 * 64 * 4}
    summary = trace.summary()
    cpu, gpu0 = summary[f"{LOCAL}CPU:0"], summary[f"{LOCAL}GPU:0"]
    assert gpu0.ops == 3 and gpu0.bytes_in == 16384 and gpu0.bytes_out == 16384
    assert cpu.bytes_out == 2 * 16384 and cpu.bytes_in == 2 * 16384
    assert 0.0 < gpu0.utilisation <= 1.0
    for device in ("CPU:0", "GPU:0", "GPU:1"):
        times, in_use = trace.memory_timeline(device)
        assert len(times) > 0 and in_use[-1] == 0 and (in_use >= 0).all()
        assert (np.diff(times) >= 0).all()
    # While `mul` runs on GPU:1: the product of the matmul, the constant 2.0 and mul's output
    # (x was freed when the matmul ended).
    assert summary[f"{LOCAL}GPU:1"].peak_memory == 2 * 16384 + 4


LOCAL = "/job:localhost/replica:0/task:0/device:"


def test_simulated_gpu_steps_are_modeled_and_cpu_steps_clocked() -> None:
    pv.config.simulate_gpus(2)
    sess = pv.Session()
    metadata = pv.RunMetadata()
    sess.run(_towers(), options=FULL, run_metadata=metadata)
    trace = metadata.trace
    ev = trace.events
    ops = _kinds(trace, EventKind.OP)
    on_gpu = ops & (ev["device"] >= 1)
    assert set(ev["source"][on_gpu]) == {int(TimingSource.MODELED)}
    assert set(ev["source"][ops & (ev["device"] == 0)]) == {int(TimingSource.CLOCK)}
    # A step starts no earlier than the steps it depends on end: the towers' matmuls start
    # after x has arrived on their GPU.
    for gpu in (1, 2):
        arrive = ev["t1"][_kinds(trace, EventKind.TRANSFER) & (ev["device"] == gpu)].min()
        assert ev["t0"][ops & (ev["device"] == gpu)].min() >= arrive


def _training_step_times(batch: int | None, options: pv.RunOptions) -> dict[str, tuple]:
    """(duration ns, timing source) per op and transfer of one training step on a simulated GPU,
    inputs fed from the CPU, 2048 examples; ``batch`` is the placeholders' static first dim."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(1)
    graph = pv.Graph()
    with graph.as_default():
        with pv.device("/cpu:0"):
            x = pv.placeholder(pv.float32, [batch, 128], name="x")
            y = pv.placeholder(pv.float32, [batch, 1], name="y")
        with pv.device("/gpu:0"):
            w = pv.Variable(pv.ones([128, 256]) * 0.01, name="w")
            hidden = pv.nn.relu(pv.matmul(x, w, name="hidden"), name="relu")
            error = pv.reduce_sum(hidden, axis=1, keepdims=True, name="out") - y
            loss = pv.reduce_mean(pv.square(error, name="square"), name="loss")
            train = pv.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = pv.global_variables_initializer()
    sess = pv.Session(graph=graph)
    sess.run(init)
    metadata = pv.RunMetadata()
    feed = {x: np.ones((2048, 128), np.float32), y: np.ones((2048, 1), np.float32)}
    sess.run(train, feed, options=options, run_metadata=metadata)
    trace = metadata.trace
    ev = trace.events
    steps = _kinds(trace, EventKind.OP) | _kinds(trace, EventKind.TRANSFER)
    return {
        f"{EventKind(int(ev['kind'][i])).name} {trace.node_name(int(ev['node'][i]))}": (
            int(ev["t1"][i] - ev["t0"][i]),
            int(ev["source"][i]),
            int(ev["device"][i]),
        )
        for i in np.flatnonzero(steps)
    }


@pytest.mark.parametrize("level", [pv.RunOptions.NO_TRACE, pv.RunOptions.FULL_TRACE])
def test_a_simulated_gpu_fed_run_time_shapes_is_modeled_with_those_shapes(level: int) -> None:
    """Placeholders of shape [None, 128] fed 2048 rows: every step on (or to) the simulated GPU
    is modeled, and each lasts exactly what it lasts when the static shape says 2048 (never the
    host clock's time labelled modeled)."""
    options = pv.RunOptions(trace_level=level)
    dynamic = _training_step_times(None, options)
    static = _training_step_times(2048, options)
    modeled = int(TimingSource.MODELED)
    on_gpu = {name: t for name, t in dynamic.items() if t[2] == 1}
    assert len(on_gpu) > 10
    assert {t[1] for t in on_gpu.values()} == {modeled}
    # The forward ops, the inputs' copies and the gradients that see the same shapes in both
    # graphs (other gradient ops differ: with unknown shapes they are built from Shape ops; with
    # known ones the loss's gradient scale, a Tile of constants, is folded into a constant).
    for name in (
        "OP hidden",
        "OP relu",
        "OP out",
        "OP sub",
        "TRANSFER x",
        "TRANSFER y",
        "OP gradients/relu_grad/ReluGrad",
        "OP gradients/hidden_grad/MatMul_1",
        "OP gradients/square_grad/Mul_1",
    ):
        assert dynamic[name] == static[name], name
    # 2048x128x256 multiply-adds take longer than a launch alone (what w/read costs)
    assert dynamic["OP hidden"][0] > dynamic["OP w/read"][0] + 1_000


@pytest.mark.parametrize("level", [pv.RunOptions.NO_TRACE, pv.RunOptions.FULL_TRACE])
def test_shapes_only_a_run_knows_the_rank_of_are_still_modeled(level: int) -> None:
    """A reshape to a fed shape has no static rank: its consumers' times come from the sizes
    the run measured, and every step on the simulated GPU stays modeled."""
    from placeviz.graph.ops import shape_ops

    pv.config.simulate_gpus(1)
    with pv.device("/cpu:0"):
        x = pv.placeholder(pv.float32, [None, None], name="x")
        target = pv.placeholder(pv.int32, [None], name="target")
    with pv.device("/gpu:0"):
        h = pv.matmul(x, pv.ones([128, 256]), name="h")
        flat = shape_ops.reshape(h, target)
        total = pv.reduce_sum(pv.matmul(flat, pv.ones([256, 4]))) + pv.reduce_sum(flat)
    metadata = pv.RunMetadata()
    feed = {x: np.ones((2048, 128), np.float32), target: [-1, 256]}
    options = pv.RunOptions(trace_level=level)
    assert pv.Session().run(total, feed, options=options, run_metadata=metadata) == 2048 * 256 * 640
    ev = metadata.trace.events
    steps = _kinds(metadata.trace, EventKind.OP) | _kinds(metadata.trace, EventKind.TRANSFER)
    assert set(ev["source"][steps & (ev["device"] == 1)]) == {int(TimingSource.MODELED)}


def test_two_towers_overlap_on_two_simulated_gpus() -> None:
    def makespan(gpus: tuple[int, int]) -> int:
        pv.config.reset_devices()
        pv.config.simulate_gpus(2)
        graph = pv.Graph()
        with graph.as_default():
            start = pv.placeholder(pv.float32, [512, 512])  # fed: nothing is folded
            outs = []
            for gpu in gpus:
                with pv.device(f"/gpu:{gpu}"):
                    h = start
                    for _ in range(10):
                        h = pv.matmul(h, h) * 0.001
                    outs.append(h)
            with pv.device(f"/gpu:{gpus[0]}"):
                total = pv.add_n(outs)
        metadata = pv.RunMetadata()
        ones = np.ones((512, 512), np.float32)
        pv.Session(graph=graph).run(total, {start: ones}, options=FULL, run_metadata=metadata)
        ev = metadata.trace.events
        steps = (ev["kind"] == int(EventKind.OP)) | (ev["kind"] == int(EventKind.TRANSFER))
        return int(ev["t1"][steps].max() - ev["t0"][steps].min())

    ratio = makespan((0, 1)) / makespan((0, 0))
    assert 0.45 < ratio < 0.65


def test_a_failed_run_still_has_a_complete_trace() -> None:
    a = pv.placeholder(pv.float32, shape=[None], name="a")
    b = pv.placeholder(pv.float32, shape=[None], name="b")
    first = pv.square(a, name="first")
    bad = pv.add(first, b, name="bad")
    sess = pv.Session()
    metadata = pv.RunMetadata()
    with pytest.raises(pv.errors.InvalidArgumentError, match="'bad'"):
        feed = {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]}
        sess.run(bad, feed_dict=feed, options=FULL, run_metadata=metadata)
    trace = metadata.trace
    assert trace.runs[0]["status"] == "error" and "'bad'" in trace.runs[0]["error"]
    ran = [trace.node_name(n) for n in trace.events["node"][_kinds(trace, EventKind.OP)]]
    assert ran == ["first", "bad"]  # the failing op is there, up to the moment it failed
    validate(trace.to_document())


def test_document_validates_and_cross_references_are_checked() -> None:
    pv.config.simulate_gpus(2)
    sess = pv.Session()
    metadata = pv.RunMetadata()
    sess.run(_towers(), options=FULL, run_metadata=metadata)
    document = metadata.trace.to_document()
    validate(document)
    json.dumps(document)  # plain JSON
    nodes = {n["name"]: n for n in document["nodes"]}
    assert nodes["total"]["reason"]["kind"] == "pinned"
    assert nodes["tower_0/MatMul"]["scope"] == "tower_0"
    assert nodes["tower_0/MatMul"]["shapes"] == [[64, 64]]
    assert any(e["crosses"] for e in document["edges"])
    assert {d["kind"] for d in document["devices"]} == {"real", "simulated"}
    broken = json.loads(json.dumps(document))
    broken["events"]["node"].append(10_000)
    with pytest.raises(DocumentError):
        validate(broken)
    broken = json.loads(json.dumps(document))
    broken["nodes"][0]["reason"] = {"kind": "guessed", "text": "?"}
    with pytest.raises(DocumentError, match="nodes/0/reason"):
        validate(broken)


def test_chrome_trace_has_processes_threads_ops_counters_and_flows(tmp_path: Path) -> None:
    pv.config.simulate_gpus(2)
    sess = pv.Session()
    metadata = pv.RunMetadata()
    sess.run(_towers(), options=FULL, run_metadata=metadata)
    path = tmp_path / "trace.json"
    metadata.trace.to_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {f"{LOCAL.removesuffix('/device:')} (pid {os.getpid()})", "Session.run"}
    threads = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert {"CPU:0 compute", "GPU:1 (simulated) compute", "GPU:1 (simulated) copies in"} <= threads
    ops = [e for e in events if e["ph"] == "X" and e["cat"] == "op"]
    matmuls = [e for e in ops if e["name"] == "MatMul"]
    assert {e["args"]["name"] for e in matmuls} == {"tower_0/MatMul", "tower_1/MatMul"}
    assert all(e["dur"] >= 0 and "ts" in e for e in ops)
    assert any(e["ph"] == "C" and e["name"] == "memory GPU:0 (simulated)" for e in events)
    starts = {e["id"] for e in events if e["ph"] == "s"}
    finishes = {e["id"] for e in events if e["ph"] == "f"}
    assert starts == finishes and len(starts) == 4


def test_subscribers_receive_each_run_and_old_events_roll_over() -> None:
    sess = pv.Session()
    sess.recorder.max_events = 50
    batches = []
    unsubscribe = sess.recorder.subscribe(batches.append)
    c = pv.constant(1.0)
    for _ in range(30):
        sess.run(c + 1.0)
    assert len(batches) == 60  # each run places its new ops, then runs
    assert sum(len(b) for b in batches) == sess.recorder.total
    assert len(sess.recorder) <= 50
    unsubscribe()
    sess.run(c)
    assert len(batches) == 60


def test_placements_stay_in_the_trace_after_their_events_rolled_over() -> None:
    x = pv.constant([1.0, 2.0], name="x")
    y = pv.square(x, name="y")
    sess = pv.Session()
    sess.recorder.max_events = 50
    for _ in range(40):
        sess.run(y)
    assert len(sess.recorder) <= 50  # the first run's placement events are no longer held
    for trace in (sess.trace(runs=1), sess.trace(runs=None)):
        events = trace.events
        placed = events["node"][events["kind"] == int(EventKind.PLACEMENT)]
        assert sorted(placed.tolist()) == sorted([x.op.id, y.op.id])


def test_reserved_memory_follows_the_gpu_options() -> None:
    pv.config.simulate_gpus(1, memory_limit_mb=1024)
    with pv.device("/gpu:0"):
        y = pv.ones([1024, 1024]) * 2.0  # 4 MiB + 4 MiB + the scalar

    def reserved(config: pv.ConfigProto) -> tuple[int, int]:
        sess = pv.Session(config=config)
        sess.run(y)
        gpu = sess.trace().summary()[f"{LOCAL}GPU:0"]
        return gpu.reserved, sess.devices[1].memory_limit

    everything, limit = reserved(pv.ConfigProto())
    assert everything == limit == 1024 << 20  # TF's default: map (nearly) all of it
    grown, _ = reserved(pv.ConfigProto(gpu_options=pv.GPUOptions(allow_growth=True)))
    assert grown == 10 << 20  # 8 MiB and 4 bytes, in 2 MiB chunks
    share, limit = reserved(
        pv.ConfigProto(gpu_options=pv.GPUOptions(per_process_gpu_memory_fraction=0.25))
    )
    assert share == limit == 256 << 20


def test_plan_order_memory_events_match_the_general_path() -> None:
    with pv.device("/cpu:0"):
        x = pv.placeholder(pv.float32, shape=[None, 4], name="x")
        parts = pv.split(x * 2.0, 2, axis=1)
        y = pv.concat([parts[1], parts[0]], axis=1) + 1.0
        z = pv.reduce_sum(y * y, axis=0)
    feed = {x: np.arange(12, dtype=np.float32).reshape(3, 4)}
    sess = pv.Session()
    first = pv.RunMetadata()
    sess.run([y, z], feed_dict=feed, options=FULL, run_metadata=first)
    (_, columns) = next(v for k, v in sess._plans.items() if k[0] == "full trace")
    assert columns.sequential_clock  # one clocked stream: the plan-order path ran
    columns.sequential_clock = False
    second = pv.RunMetadata()
    sess.run([y, z], feed_dict=feed, options=FULL, run_metadata=second)

    def memory(trace: pv.Trace) -> list[tuple[int, ...]]:
        ev = trace.events
        rows = (ev["kind"] == int(EventKind.ALLOC)) | (ev["kind"] == int(EventKind.FREE))
        return list(zip(*(ev[c][rows].tolist() for c in ("kind", "node", "device", "bytes"))))

    assert memory(first.trace) == memory(second.trace)
    times, in_use = first.trace.memory_timeline("CPU:0")
    assert (np.diff(times) >= 0).all() and in_use[-1] == 0
    assert max(in_use) >= 3 * 4 * 4 * 2  # x * 2.0 and its two halves were live together


def test_a_scalar_fed_to_a_placeholder_of_unknown_shape_is_modeled_as_a_scalar() -> None:
    pv.config.simulate_gpus(1)
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, name="x")
        y = pv.square(x, name="y")
    metadata = pv.RunMetadata()
    assert pv.Session().run(y, {x: 3.0}, run_metadata=metadata) == 9.0
    ev = metadata.trace.events
    ops = _kinds(metadata.trace, EventKind.OP)
    assert set(ev["source"][ops]) == {int(TimingSource.MODELED)}


def test_a_plan_run_with_another_batch_size_is_modeled_with_that_size() -> None:
    """The modeled durations follow each run's shapes, also when a plan alternates sizes."""
    pv.config.simulate_gpus(1)
    with pv.device("/cpu:0"):
        x = pv.placeholder(pv.float32, [None, 256], name="x")
    with pv.device("/gpu:0"):
        product = pv.matmul(x, pv.ones([256, 1024]), name="product")
    sess = pv.Session()

    def product_ns(rows: int) -> int:
        metadata = pv.RunMetadata()
        sess.run(product, {x: np.ones((rows, 256), np.float32)}, run_metadata=metadata)
        trace = metadata.trace
        ev = trace.events
        (i,) = np.flatnonzero(_kinds(trace, EventKind.OP) & (ev["node"] == product.op.id))
        assert ev["source"][i] == int(TimingSource.MODELED)
        return int(ev["t1"][i] - ev["t0"][i])

    big, small = product_ns(8192), product_ns(16)
    assert big > small
    assert product_ns(8192) == big and product_ns(16) == small


def test_an_op_that_launches_no_kernel_costs_a_dispatch_not_a_launch() -> None:
    """On a GPU, TensorFlow's Identity, Reshape, Shape and Const launch no kernel: modeled, they
    take the executor's dispatch only, while an op with a kernel pays the launch latency."""
    pv.config.simulate_gpus(1)
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, [4, 4], name="x")  # fed: nothing is folded
        y = pv.identity(pv.reshape(pv.matmul(x, x, name="mm"), [16], name="flat"), name="out")
    sess = pv.Session()
    metadata = pv.RunMetadata()
    sess.run(y, {x: np.ones((4, 4), np.float32)}, options=FULL, run_metadata=metadata)
    trace = metadata.trace
    ev = trace.events
    ops = _kinds(trace, EventKind.OP)
    took = {
        trace.node_name(int(n)): int(t1 - t0)
        for n, t0, t1 in zip(ev["node"][ops], ev["t0"][ops], ev["t1"][ops], strict=True)
    }
    launch_ns = PROFILES["H100"].launch_latency_s * 1e9  # the simulated GPUs' default card
    assert took["mm"] >= launch_ns
    assert took["flat"] == took["out"] < launch_ns / 2


@pytest.mark.parametrize("profile", ["H100", "L4"])
def test_a_copy_between_two_cards_takes_their_peer_link_and_to_the_host_its_pcie_link(
    profile: str,
) -> None:
    """The same 64 MiB tensor copied GPU:0 -> GPU:1 and GPU:0 -> CPU: on H100s the first goes
    over NVLink (450 GB/s each way), 7x faster than PCIe 5's 64; L4s have no NVLink, so both
    copies take PCIe 4's 32 GB/s (each after the copy's fixed latency)."""
    pv.config.simulate_gpus(2, profile=profile)
    size = 1 << 26
    with pv.device("/gpu:0"):
        x = pv.zeros([size // 4], name="x")
        made = pv.identity(x, name="made")
    with pv.device("/gpu:1"):
        peer = pv.identity(made, name="on_gpu1")
    with pv.device("/cpu:0"):
        host = pv.identity(made, name="on_cpu")
    metadata = pv.RunMetadata()
    pv.Session().run([peer, host], options=FULL, run_metadata=metadata)
    trace = metadata.trace
    ev = trace.events
    copies = _kinds(trace, EventKind.TRANSFER)
    names = {d["id"]: d["name"] for d in trace.devices}
    took = {
        names[int(device)].rsplit("/", 1)[-1]: int(t1 - t0)
        for device, t0, t1 in zip(ev["device"][copies], ev["t0"][copies], ev["t1"][copies])
    }
    card = PROFILES[profile.upper()]
    for destination, bandwidth in (
        ("device:GPU:1", card.peer_link_bandwidth),
        ("device:CPU:0", card.host_link_bandwidth),
    ):
        assert took[destination] == pytest.approx(copy_seconds(size, bandwidth) * 1e9, abs=1)


@pytest.mark.parametrize("dry", [False, True], ids=["real", "dry"])
def test_a_run_out_of_memory_keeps_its_trace_up_to_the_failing_allocation(dry: bool) -> None:
    """Three 4 MiB products on a 10 MiB GPU: the third cannot be allocated. As in TensorFlow
    the run executes up to that op and fails there; its trace holds the steps that ran, the
    failing one, and memory up to the 8 MiB in use when the allocation failed (not the 12 the
    failed allocation would have made)."""
    pv.config.simulate_gpus(1, memory_limit_mb=10)
    with pv.device("/gpu:0"):
        ones = pv.ones([1024, 1024], name="ones")
        first = pv.matmul(ones, ones, name="first")
        second = pv.matmul(first, first, name="second")
        third = pv.matmul(second, first, name="third")
    sess = pv.Session(config=pv.ConfigProto(dry_run=dry))
    for _ in range(2):  # the plan is cached: its second run fails the same way
        metadata = pv.RunMetadata()
        with pytest.raises(pv.errors.ResourceExhaustedError, match="'third'") as caught:
            sess.run(third, options=FULL, run_metadata=metadata)
        assert "8388608 bytes already in use" in str(caught.value)
        trace = metadata.trace
        assert trace.runs[0]["status"] == "error" and "'third'" in trace.runs[0]["error"]
        ran = [trace.node_name(n) for n in trace.events["node"][_kinds(trace, EventKind.OP)]]
        assert ran[-3:] == ["first", "second", "third"]
        gpu = next(d["name"] for d in trace.devices if ":GPU:" in d["name"])
        assert trace.summary()[gpu].peak_memory == 8 << 20
        allocated = {
            trace.node_name(n) for n in trace.events["node"][_kinds(trace, EventKind.ALLOC)]
        }
        assert {"first", "second"} <= allocated and "third" not in allocated
        validate(trace.to_document())
    assert sess.run(first, options=FULL).shape == (1024, 1024)  # the session stays usable
