"""What a compiled plan does with what it knows before running: constants taken once, buffers
of dead elementwise outputs reused through ``out=`` — and values bit-identical to plain NumPy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.contract import EventKind

SEQUENTIAL = pv.ConfigProto(inter_op_parallelism_threads=1)
UFUNCS = {
    "add": (pv.add, np.add),
    "mul": (pv.multiply, np.multiply),
    "sub": (pv.subtract, np.subtract),
}


def _flushed(values: np.ndarray) -> np.ndarray:
    """What a run's kernels make of ``values``: denormals flush to zero (test_denormals.py)."""
    return np.where(np.abs(values) < np.finfo(np.float32).tiny, np.float32(0), values)


def _plan_source(sess: pv.Session) -> str:
    return "\n".join(compiled.source for compiled, _ in sess._plans.values())


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(sorted(UFUNCS)),
            st.integers(0, 1_000),  # which earlier value is the other operand
            st.floats(-2, 2, allow_nan=False, width=32),
        ),
        min_size=1,
        max_size=30,
    ),
    parallel=st.booleans(),
)
def test_reused_buffers_give_bit_identical_values(
    steps: list[tuple[str, int, float]], parallel: bool
) -> None:
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    start = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = pv.placeholder(pv.float32, [3, 4])
    arrays = [start]
    for name, other, constant in steps:
        _, reference = UFUNCS[name]
        k = other % len(arrays)
        once = _flushed(reference(arrays[-1], arrays[k]))
        arrays.append(_flushed(reference(once, _flushed(np.float32(constant)))))
    # in parallel, the same chain on two simulated GPUs at once (two streams, each its buffers)
    devices = ["/gpu:0", "/gpu:1"] if parallel else ["/cpu:0"]
    ends = []
    for device in devices:
        with pv.device(device):
            tensors = [x]
            for name, other, constant in steps:
                op, _ = UFUNCS[name]
                k = other % len(tensors)
                tensors.append(op(op(tensors[-1], tensors[k]), np.float32(constant)))
        ends.append(tensors[-1])
    config = pv.ConfigProto() if parallel else SEQUENTIAL
    with pv.Session(config=config) as sess:
        for _ in range(2):  # a second run writes into the same buffers
            for got in sess.run(ends, {x: start}):
                np.testing.assert_array_equal(got, arrays[-1], strict=True)


def test_a_chain_reuses_two_buffers_and_fetched_values_stay_the_callers() -> None:
    x = pv.placeholder(pv.float32, [8])
    values = [x]
    for i in range(10):
        values.append(values[-1] * 2.0 if i % 2 else values[-1] + 1.0)
    middle = values[5]
    with pv.Session(config=SEQUENTIAL) as sess:
        first_end, first_middle = sess.run([values[-1], middle], {x: np.zeros(8, np.float32)})
        sess.run([values[-1], middle], {x: np.ones(8, np.float32)})
        source = _plan_source(sess)
    assert source.count("out=") >= 6
    assert len(set(line.split("out=")[1] for line in source.splitlines() if "out=" in line)) <= 3
    # values the caller holds were neither fetched from a reused buffer nor overwritten later
    np.testing.assert_array_equal(first_middle, np.full(8, 7.0, np.float32))
    np.testing.assert_array_equal(first_end, np.full(8, 62.0, np.float32))


def test_a_value_read_by_a_view_making_op_is_never_overwritten() -> None:
    x = pv.placeholder(pv.float32, [2, 2])
    y = x + 1.0
    flat = pv.reshape(y, [4])  # a view of y's array
    z = (y * 3.0) - 1.0  # would take y's buffer if y were free after `y * 3.0`
    with pv.Session(config=SEQUENTIAL) as sess:
        got_flat, got_z = sess.run([flat, z], {x: np.zeros((2, 2), np.float32)})
    np.testing.assert_array_equal(got_flat, [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(got_z, np.full((2, 2), 2.0, np.float32))


def test_constants_are_taken_when_the_plan_is_compiled_and_take_no_time() -> None:
    c = pv.constant(np.arange(4, dtype=np.float32), name="c")
    y = pv.add(c, 1.0, name="y")
    with pv.Session(config=SEQUENTIAL) as sess:
        np.testing.assert_array_equal(sess.run(y), [1.0, 2.0, 3.0, 4.0])
        assert "c" not in [op.name for op in _called_ops(sess)]
        trace = sess.trace()
    events = trace.events
    ops = events["kind"] == int(EventKind.OP)
    by_name = {trace.node_name(int(n)): i for i, n in enumerate(events["node"]) if ops[i]}
    const_event = by_name["c"]
    assert events["t1"][const_event] == events["t0"][const_event]
    assert events["t1"][by_name["y"]] >= events["t0"][by_name["y"]]


def _called_ops(sess: pv.Session) -> list[pv.Operation]:
    compiled, _ = next(iter(sess._plans.values()))
    return [step.op for step in compiled.steps if step.runs_code]
