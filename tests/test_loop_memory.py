"""Memory inside while loops: each value a loop's op makes is allocated on its device and freed
after its last reader, forwarded values share their buffer, a value pushed on a stack for the
gradient loop stays until popped, and an op inside a loop that does not fit its GPU fails with
TensorFlow's out-of-memory error."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_memory_accounting import balances, variable_bytes

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples.zoo import ZOO

FULL = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)


def peak(trace: pv.Trace, device: str) -> int:
    """The most bytes ``device`` held at once (events in time order, as the inspector reads)."""
    _, in_use = trace.memory_timeline(device)
    return int(in_use.max())


def lstm_peaks(dynamic: bool, steps: int = 8, batch: int = 16, width: int = 128) -> list[int]:
    """A 2-layer LSTM, a layer per GPU, over ``steps`` steps (forward): each GPU's peak."""
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    x = pv.placeholder(pv.float32, [batch, steps, width], name="x")
    cell = pv.nn.rnn_cell.MultiRNNCell(
        [
            pv.nn.rnn_cell.DeviceWrapper(pv.nn.rnn_cell.BasicLSTMCell(width), f"/gpu:{layer}")
            for layer in range(2)
        ]
    )
    with pv.device("/gpu:0"):
        if dynamic:
            outputs, _ = pv.nn.dynamic_rnn(cell, x, dtype=pv.float32)
            last = outputs[:, -1]
        else:
            outputs, _ = pv.nn.static_rnn(cell, pv.unstack(x, num=steps, axis=1), dtype=pv.float32)
            last = outputs[-1]
        total = pv.reduce_sum(last)
    with pv.Session(config=pv.ConfigProto(allow_soft_placement=True)) as session:
        session.run(pv.global_variables_initializer())
        session.run(total, {x: np.ones((batch, steps, width), np.float32)}, options=FULL)
        trace = session.trace()
    assert balances(trace) == {
        f"/job:localhost/replica:0/task:0/device:GPU:{i}": 526336 for i in (0, 1)
    }
    return [peak(trace, f"GPU:{i}") for i in (0, 1)]


@pytest.mark.parametrize("steps", [8, 16])
def test_a_looped_lstm_peaks_where_the_unrolled_one_does(steps: int) -> None:
    # weights ([256, 512] + [512] float32 per layer) plus a step's activations: the loop holds
    # what the unrolled graph holds, step for step. Then dynamic_rnn's outputs ([steps, 16,
    # 128] floats) are held whole: on GPU:1, where the top layer wrote them into the loop's
    # TensorArray, and twice on GPU:0, where dynamic_rnn was called: gathered, and transposed
    # to batch-major while the gathered copy is still held
    looped, unrolled = lstm_peaks(True, steps), lstm_peaks(False, steps)
    weights, outputs = 526336, steps * 16 * 128 * 4
    for gpu, after_the_loop in ((0, weights + 2 * outputs), (1, weights + outputs)):
        expected = max(unrolled[gpu], after_the_loop)
        assert looped[gpu] == pytest.approx(expected, rel=0.04)
        assert looped[gpu] > weights + 2 * 16 * 128 * 4  # more than the weights and a state


def stacked_run(iterations: int) -> pv.Trace:
    """``v = tanh(v * x)`` ``iterations`` times on GPU:0 and its gradient: the forward loop
    pushes ``tanh``'s output (and the next iteration's ``v``: the same buffer) for the
    backward loop."""
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(1)
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, [256], name="x")
        _, v = pv.while_loop(
            lambda i, v: i < iterations, lambda i, v: (i + 1, pv.tanh(v * x)), [0, x]
        )
        grad = pv.gradients(pv.reduce_sum(v), x)[0]
    with pv.Session() as session:
        session.run(grad, {x: np.full(256, 0.5, np.float32)}, options=FULL)
        trace = session.trace()
    assert balances(trace) == {}
    return trace


def test_values_pushed_for_the_gradient_are_held_until_popped() -> None:
    # each iteration pushes one new [256] float32 buffer (1 KiB): 10 more iterations, 10 KiB
    ten, twenty = peak(stacked_run(10), "GPU:0"), peak(stacked_run(20), "GPU:0")
    assert twenty - ten == 10 * 256 * 4
    trace = stacked_run(10)
    events = trace.events
    pops = {op.id for op in pv.get_default_graph().get_operations() if op.type == "StackPopV2"}
    # the pushed buffers are freed in the backward loop, after their pops ran
    freed = events["t0"][(events["kind"] == EventKind.FREE)]
    popped = events["t1"][np.isin(events["node"], list(pops)) & (events["kind"] == EventKind.OP)]
    assert len(popped) == 2 * 10 and freed.max() >= popped.max()


@pytest.mark.parametrize("dry", [False, True])
def test_an_op_inside_a_loop_that_does_not_fit_its_gpu_fails_with_tfs_words(dry: bool) -> None:
    pv.config.simulate_gpus(1, "H100", memory_limit_mb=4)
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, [256, 256], name="x")  # 256 KiB
        _, v = pv.while_loop(
            lambda i, v: i < 40, lambda i, v: (i + 1, pv.tanh(pv.matmul(v, x))), [0, x]
        )
        grad = pv.gradients(pv.reduce_sum(v), x)[0]  # each iteration keeps 2 x 256 KiB
    options = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE, dry_run=dry)
    with pv.Session() as session:
        with pytest.raises(pv.errors.ResourceExhaustedError) as caught:
            session.run(grad, {x: np.zeros((256, 256), np.float32)}, options=options)
        trace = session.trace()
    message = str(caught.value)
    # a dry run counts what a real one does: it fails at the same op, in the same words
    assert caught.value.op.name == "while/Tanh"
    assert message.startswith(f"OOM when allocating tensor {caught.value.op.name}:0 ")
    assert "with shape [256,256] and type float32 (262144 bytes)" in message
    assert "/device:GPU:0" in message and "limit 4194304 bytes (4 MiB)" in message
    assert "Largest live tensors: " in message
    assert "while/Tanh:0 from 'while/Tanh' (Tanh): 262144 bytes" in message
    assert balances(trace) == {}  # what the failed loop held is freed when the run ends


@st.composite
def loops(draw: Any) -> dict[str, Any]:
    return {
        "iterations": draw(st.integers(0, 5)),
        "devices": draw(
            st.lists(st.sampled_from(["/cpu:0", "/gpu:0", "/gpu:1"]), min_size=3, max_size=3)
        ),
        "gradient": draw(st.booleans()),
        "parallel": draw(st.sampled_from([1, 10])),
        "nested": draw(st.booleans()),
        "fetch_body": draw(st.booleans()),
    }


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=loops())
def test_loop_memory_never_goes_below_zero_and_holds_nothing_after_a_run(
    program: dict[str, Any],
) -> None:
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    first, second, third = program["devices"]
    with pv.device(first):
        x = pv.placeholder(pv.float32, [8, 8], name="x")
        w = pv.Variable(np.eye(8, dtype=np.float32) * 0.5, name="w")

    def body(i: Any, v: Any) -> tuple[Any, Any]:
        with pv.device(second):
            h = pv.tanh(pv.matmul(v, w))
        if program["nested"]:
            with pv.device(third):
                _, h = pv.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u * 0.5 + h), [0, h])
        return i + 1, pv.reshape(h, [8, 8]) + x

    _, v = pv.while_loop(
        lambda i, v: i < program["iterations"],
        body,
        [0, x],
        parallel_iterations=program["parallel"],
    )
    with pv.device(third):
        fetches: list[Any] = [pv.reduce_sum(v)]
    if program["gradient"]:
        fetches.append(pv.gradients(fetches[0], [x, w]))
    if program["fetch_body"]:
        fetches.append(v)
    held = []
    for dry in (False, True):  # a dry run counts what the real one does
        with pv.Session(config=pv.ConfigProto(dry_run=dry)) as session:
            session.run(w.initializer)
            session.run(fetches, {x: np.ones((8, 8), np.float32)}, options=FULL)
            trace = session.trace(runs=None)
            assert balances(trace) == variable_bytes(session, [w])
            held.append(memory_events(session.trace(runs=1)))
    assert held[0] == held[1]


def memory_events(trace: pv.Trace) -> Counter:
    """A run's allocations and frees: (kind, node, device, bytes), each with its count."""
    events = trace.events
    memory = np.isin(events["kind"], [int(EventKind.ALLOC), int(EventKind.FREE)])
    columns = [events[c][memory].tolist() for c in ("kind", "node", "device", "bytes")]
    return Counter(zip(*columns))


def test_the_zoos_looped_lstm_training_step_frees_all_but_its_variables() -> None:
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    model = ZOO["lstm_dynamic"](pv, batch=4, steps=5, width=16, vocab=50)
    with pv.Session(config=pv.ConfigProto(allow_soft_placement=True)) as session:
        session.run(pv.global_variables_initializer())
        session.run(model.train_op, model.feed, options=FULL)
        trace = session.trace()
        assert balances(trace) == variable_bytes(session, pv.global_variables())
    events = trace.events
    looped = (events["frame"] >= 0) & (events["kind"] == EventKind.OP)
    made = set(events["node"][events["kind"] == EventKind.ALLOC].tolist())
    # ops inside the loops allocate (their ALLOCs are in the memory timeline)
    assert made & set(events["node"][looped].tolist())


def test_an_op_inside_a_loop_fails_on_top_of_what_the_plan_holds_while_the_loop_runs() -> None:
    pv.config.simulate_gpus(1, "H100", memory_limit_mb=4)
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, [256, 256], name="x")  # 256 KiB
        big = pv.fill([896, 1024], 1.0, name="big")  # 3.5 MiB, read after the loop
        _, v = pv.while_loop(
            lambda i, v: i < 3, lambda i, v: (i + 1, pv.tanh(pv.matmul(v, x))), [0, x]
        )
        total = pv.reduce_sum(v) + pv.reduce_sum(big)
    with pv.Session() as session, pytest.raises(pv.errors.ResourceExhaustedError) as caught:
        session.run(total, {x: np.zeros((256, 256), np.float32)})
    message = str(caught.value)
    # the loop alone holds at most 3 x 256 KiB (v, matmul's output, tanh's): it fits 4 MiB
    assert caught.value.op.name in ("while/MatMul", "while/Tanh")
    assert "Largest live tensors: big:0 from 'big' (Fill): 3670016 bytes" in message
