"""Values of a while loop that cross devices are copied each iteration, as TensorFlow's
partitioned graph does with a Send/Recv pair per iteration: a TRANSFER event (node = producer,
device = destination, peer = source) with the loop's frame and iteration, which starts when its
producer ended and which the readers on the destination wait for; one per value, device and
iteration, however many ops there read it; a dead value's copy is NOT_RUN with its peer."""

from __future__ import annotations

import numpy as np

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples.documents import lstm_dynamic

OP, TRANSFER, NOT_RUN = int(EventKind.OP), int(EventKind.TRANSFER), int(EventKind.NOT_RUN)
GPU = "/job:localhost/replica:0/task:0/device:GPU:{}"
LAYER_0_OUTPUT = "rnn/while/rnn/multi_rnn_cell/cell_0/lstm_cell/mul_2"


def _device_ids(trace: pv.Trace) -> dict[str, int]:
    return {d["name"]: d["id"] for d in trace.devices}


def _node(trace: pv.Trace, name: str) -> int:
    return next(n["id"] for n in trace.nodes if n["name"] == name)


def _copies(trace: pv.Trace, name: str) -> np.ndarray:
    """Rows of the copies of ``name``'s output inside loops (run or dead)."""
    ev = trace.events
    kinds = np.isin(ev["kind"], [TRANSFER, NOT_RUN]) & (ev["peer"] >= 0)
    return np.flatnonzero(kinds & (ev["node"] == _node(trace, name)) & (ev["frame"] >= 0))


def test_an_lstm_a_layer_per_gpu_copies_layer_0s_output_to_gpu_1_once_per_step() -> None:
    steps, batch, width = 6, 4, 32  # lstm_dynamic's batch and width
    trace = lstm_dynamic(steps)
    ev = trace.events
    ids = _device_ids(trace)
    rows = _copies(trace, LAYER_0_OUTPUT)
    ran = rows[ev["kind"][rows] == TRANSFER]
    assert sorted(ev["iteration"][ran].tolist()) == list(range(steps))
    assert set(ev["peer"][ran].tolist()) == {ids[GPU.format(0)]}
    assert set(ev["device"][ran].tolist()) == {ids[GPU.format(1)]}
    assert set(ev["bytes"][ran].tolist()) == {batch * width * 4}
    assert set(ev["frame"][ran].tolist()) == {_node(trace, "rnn/while/LoopCond")}
    assert (ev["t1"][ran] > ev["t0"][ran]).all()  # a modeled copy takes time
    # The iteration that leaves the loop: layer 0's output is dead, its copy moves nothing.
    dead = rows[ev["kind"][rows] == NOT_RUN]
    assert ev["iteration"][dead].tolist() == [steps]
    assert ev["peer"][dead].tolist() == [ids[GPU.format(0)]]


def test_a_copy_starts_when_its_producer_ends_and_its_readers_wait_for_it() -> None:
    steps = 5
    trace = lstm_dynamic(steps)
    graph = pv.get_default_graph()
    ev = trace.events
    produced = graph.get_operation_by_name(LAYER_0_OUTPUT)
    readers = [
        op
        for op in graph.get_operations()
        if any(t.op is produced for t in op.inputs) and op.device.endswith("GPU:1")
    ]
    assert readers
    ran = ev["kind"] == OP
    rows = _copies(trace, LAYER_0_OUTPUT)
    rows = rows[ev["kind"][rows] == TRANSFER]
    assert len(rows) == steps
    for row in rows:
        same = ran & (ev["iteration"] == ev["iteration"][row])
        producer = np.flatnonzero(same & (ev["node"] == produced.id))
        assert len(producer) == 1
        assert ev["t0"][row] >= ev["t1"][producer[0]]
        for reader in readers:
            (read,) = np.flatnonzero(same & (ev["node"] == reader.id))
            assert ev["t0"][read] >= ev["t1"][row]


def _loop(devices: tuple[str, str], parallel: int = 10) -> tuple[pv.Trace, np.ndarray]:
    """A loop whose value ``x`` is made on ``devices[0]`` and read by two ops on
    ``devices[1]``, 4 iterations, fully traced: its trace and its result."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    pv.reset_default_graph()

    def body(i: pv.Tensor, acc: pv.Tensor) -> tuple[pv.Tensor, pv.Tensor]:
        with pv.device(devices[0]):
            x = pv.multiply(acc, 2.0, name="x")
        with pv.device(devices[1]):
            total = pv.add(pv.square(x), pv.sqrt(x), name="total")
        return i + 1, total

    with pv.device(devices[0]):
        _, result = pv.while_loop(
            lambda i, acc: i < 4,
            body,
            [pv.constant(0), pv.constant(np.full([8, 8], 0.5, np.float32))],
            parallel_iterations=parallel,
        )
    sess = pv.Session()
    sess.trace_level = pv.RunOptions.FULL_TRACE
    value = sess.run(result)
    return sess.trace(), value


def _reference() -> np.ndarray:
    acc = np.full([8, 8], 0.5, np.float32)
    for _ in range(4):
        x = acc * np.float32(2.0)
        acc = np.square(x) + np.sqrt(x)
    return acc


def test_a_value_read_by_several_ops_on_a_device_is_copied_there_once_per_iteration() -> None:
    trace, value = _loop(("/gpu:0", "/gpu:1"))
    np.testing.assert_allclose(value, _reference(), rtol=1e-6)
    ev = trace.events
    ids = _device_ids(trace)
    rows = _copies(trace, "while/x")
    ran = rows[ev["kind"][rows] == TRANSFER]
    assert sorted(ev["iteration"][ran].tolist()) == [0, 1, 2, 3]
    assert set(ev["bytes"][ran].tolist()) == {8 * 8 * 4}
    assert set(ev["device"][ran].tolist()) == {ids[GPU.format(1)]}
    assert set(ev["peer"][ran].tolist()) == {ids[GPU.format(0)]}


def test_a_loop_on_one_device_copies_nothing() -> None:
    trace, value = _loop(("/gpu:0", "/gpu:0"))
    np.testing.assert_allclose(value, _reference(), rtol=1e-6)
    ev = trace.events
    in_loop = ev["frame"] >= 0
    assert in_loop.any()
    assert not (in_loop & (ev["peer"] >= 0)).any()
    assert not (in_loop & (ev["kind"] == TRANSFER)).any()


def test_a_value_an_inner_loop_reads_on_another_device_is_copied_once_per_outer_iteration() -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    pv.reset_default_graph()

    def outer_body(i: pv.Tensor, acc: pv.Tensor) -> tuple[pv.Tensor, pv.Tensor]:
        with pv.device("/gpu:0"):
            x = pv.multiply(acc, 0.5, name="x")
        with pv.device("/gpu:1"):
            _, total = pv.while_loop(
                lambda j, s: j < 3,
                lambda j, s: (j + 1, s + x),
                [pv.constant(0), pv.zeros([4, 4])],
                name="inner",
            )
        return i + 1, total

    with pv.device("/gpu:0"):
        _, result = pv.while_loop(lambda i, a: i < 2, outer_body, [pv.constant(0), pv.ones([4, 4])])
    sess = pv.Session()
    sess.trace_level = pv.RunOptions.FULL_TRACE
    value = sess.run(result)
    np.testing.assert_allclose(value, np.full((4, 4), (3 * 0.5) ** 2))
    trace = sess.trace()
    ev = trace.events
    rows = _copies(trace, "while/x")
    assert ev["kind"][rows].tolist() == [TRANSFER, TRANSFER, NOT_RUN]
    assert ev["iteration"][rows].tolist() == [0, 1, 2]
    assert set(ev["frame"][rows].tolist()) == {_node(trace, "while/LoopCond")}
    assert ev["bytes"][rows].tolist() == [4 * 4 * 4, 4 * 4 * 4, 0]
