"""The document's events carry each op execution's while loop (its LoopCond's node id) and
iteration, so the inspector can draw a loop with its trip count and list an op's executions per
iteration; ops outside loops keep the columns' defaults (-1) without the run allocating them."""

from __future__ import annotations

import numpy as np

import placeviz as pv
from placeviz.contract import COLUMN_NAMES, EventKind
from placeviz.examples.documents import cond_branches, lstm_dynamic
from placeviz.inspector.encoding import decode_events, encode_events

OP, NOT_RUN = int(EventKind.OP), int(EventKind.NOT_RUN)


def _columns(document: dict) -> dict[str, np.ndarray]:
    return {name: np.asarray(values) for name, values in document["events"].items()}


def _node_id(document: dict, name: str) -> int:
    return next(n["id"] for n in document["nodes"] if n["name"] == name)


def test_a_dynamic_rnn_records_each_step_of_each_layer_with_its_iteration() -> None:
    steps = 7
    document = lstm_dynamic(steps).to_document()
    events = _columns(document)
    loop = _node_id(document, "rnn/while/LoopCond")
    in_loop = events["frame"] == loop
    # The condition runs once per step and once more to leave: iterations 0..steps.
    cond = events["node"] == loop
    assert sorted(events["iteration"][cond & (events["kind"] == OP)]) == list(range(steps + 1))
    assert int(events["iteration"][in_loop].max()) == steps
    devices = {d["id"]: d["name"] for d in document["devices"]}
    for layer in range(2):
        matmul = _node_id(document, f"rnn/while/rnn/multi_rnn_cell/cell_{layer}/lstm_cell/MatMul")
        mine = events["node"] == matmul
        ran = mine & (events["kind"] == OP)
        assert sorted(events["iteration"][ran]) == list(range(steps))
        # the iteration that leaves the loop runs only the condition: the body is not run
        assert events["iteration"][mine & (events["kind"] == NOT_RUN)].tolist() == [steps]
        assert {devices[d] for d in events["device"][mine]} == {
            f"/job:localhost/replica:0/task:0/device:GPU:{layer}"
        }
    # Every event outside the loop keeps the defaults.
    assert set(events["frame"][~in_loop].tolist()) == {-1}
    assert set(events["iteration"][~in_loop].tolist()) == {-1}
    assert (events["iteration"][in_loop] >= 0).all()


def test_the_iterations_follow_each_runs_trip_count() -> None:
    pv.reset_default_graph()
    n = pv.placeholder(pv.int32, [], name="n")
    _, total = pv.while_loop(
        lambda i, t: i < n, lambda i, t: (i + 1, t + i), [pv.constant(0), pv.constant(0)]
    )
    sess = pv.Session()
    sess.trace_level = pv.RunOptions.FULL_TRACE
    for count in (3, 6, 0):
        sess.run(total, {n: count})
    document = sess.trace(runs=None).to_document()
    events = _columns(document)
    loop = _node_id(document, "while/LoopCond")
    for run, count in zip((r["id"] for r in document["runs"]), (3, 6, 0), strict=True):
        mine = (events["run"] == run) & (events["frame"] == loop)
        assert int(events["iteration"][mine].max()) == count
        adds = mine & (events["node"] == _node_id(document, "while/add")) & (events["kind"] == OP)
        assert sorted(events["iteration"][adds]) == list(range(count))


def test_ops_outside_loops_leave_the_loop_columns_to_their_defaults() -> None:
    pv.reset_default_graph()
    a = pv.constant(np.ones((4, 4), np.float32))
    b = pv.matmul(a, a)
    sess = pv.Session()
    sess.trace_level = pv.RunOptions.FULL_TRACE
    sess.run(b)
    recorder = sess._log.recorder
    # The run's chunk of events holds no loop columns: the recorder fills them when read.
    assert "frame" not in recorder._chunks[-1].columns
    columns = recorder.batch().columns
    assert set(columns["frame"].tolist()) == {-1}
    assert set(columns["iteration"].tolist()) == {-1}


def test_a_cond_records_the_branch_not_taken_as_not_run_outside_any_loop() -> None:
    document = cond_branches().to_document()
    events = _columns(document)
    last = document["runs"][-1]["id"]
    first = _node_id(document, "pick/first")
    second = _node_id(document, "pick/second")
    steps = (events["run"] == last) & np.isin(events["kind"], [OP, NOT_RUN])
    kinds = {
        node: events["kind"][steps & (events["node"] == node)].tolist() for node in (first, second)
    }
    assert kinds == {first: [NOT_RUN], second: [OP]}
    assert set(events["frame"].tolist()) == {-1}


def test_live_updates_carry_frame_and_iteration() -> None:
    document = lstm_dynamic(3).to_document()
    columns = {
        name: np.asarray(values, dtype=np.int64) for name, values in document["events"].items()
    }
    decoded = decode_events(encode_events(columns, 0))
    assert tuple(decoded) == COLUMN_NAMES
    np.testing.assert_array_equal(decoded["frame"], columns["frame"])
    np.testing.assert_array_equal(decoded["iteration"], columns["iteration"])


def test_a_what_if_leaves_no_event_inside_a_loop() -> None:
    """A prediction lays out plan steps, not a loop's executions: its events keep the columns'
    defaults, never loop 0's iteration 0."""
    trace = lstm_dynamic(3)
    predicted = trace.what_if(devices=1)
    events = _columns(predicted.to_document())
    assert set(events["frame"].tolist()) == {-1}
    assert set(events["iteration"].tolist()) == {-1}
