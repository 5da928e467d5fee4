"""pv.while_loop at run time: a data-dependent trip count, each op execution kept with its
frame and iteration, the last iteration running only the condition, nested loops run once per
outer iteration, and TF's errors for a loop variable that changes shape."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind


def _run(fetch: object, feed: dict | None = None) -> tuple[object, list]:
    with pv.Session() as sess:
        value = sess.run(fetch, feed)
        compiled = next(iter(sess._plans.values()))[0]
        return value, list(compiled.executions)


def test_the_trip_count_follows_the_fed_value() -> None:
    with pv.Graph().as_default():
        n = pv.placeholder(pv.int32, [], name="n")
        i, total = pv.while_loop(
            lambda i, t: i < n, lambda i, t: (i + 1, t + i), [pv.constant(0), pv.constant(0)]
        )
        with pv.Session() as sess:
            assert sess.run([i, total], {n: 5}) == [5, 10]
            assert sess.run([i, total], {n: 0}) == [0, 0]


def test_each_op_execution_carries_its_frame_and_iteration() -> None:
    with pv.Graph().as_default():
        x = pv.constant([1.0, 2.0])
        r = pv.while_loop(lambda a: pv.reduce_sum(a) < 20.0, lambda a: a * 2.0, [x])
        value, executions = _run(r)
    np.testing.assert_allclose(value, [8.0, 16.0])  # 3 iterations of the body
    body = [e for e in executions if e.op.name == "while/mul"]
    assert [e.iteration for e in body] == [0, 1, 2, 3]
    assert [e.ran for e in body] == [True, True, True, False]  # the last: condition only
    assert {e.frame for e in executions} == {"while/while_context"}
    exits = [e for e in executions if e.op.type == "Exit" and e.ran]
    assert [e.iteration for e in exits] == [3]


def test_an_inner_loop_runs_once_per_outer_iteration() -> None:
    with pv.Graph().as_default():
        _, total = pv.while_loop(
            lambda i, t: i < 3,
            lambda i, t: (
                i + 1,
                t + pv.while_loop(lambda j, s: j < i + 2, lambda j, s: (j + 1, s + j), [0, 0])[1],
            ),
            [pv.constant(0), pv.constant(0)],
        )
        value, executions = _run(total)
    assert value == sum(sum(range(i + 2)) for i in range(3))
    inner = {e.frame for e in executions if e.frame != "while/while_context"}
    assert inner == {"while/while/while_context"}


def test_a_loop_variable_that_changes_shape_needs_a_shape_invariant() -> None:
    with pv.Graph().as_default():
        start = [pv.constant(0), pv.constant([1.0])]
        with pytest.raises(ValueError, match="enters the loop with shape"):
            pv.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, pv.concat([a, a], 0)), start)
        _, grown = pv.while_loop(
            lambda i, a: i < 3,
            lambda i, a: (i + 1, pv.concat([a, a], 0)),
            start,
            shape_invariants=[pv.TensorShape([]), pv.TensorShape([None])],
        )
        assert grown.shape.as_list() == [None]
        with pv.Session() as sess:
            assert sess.run(grown).shape == (8,)


def test_maximum_iterations_stops_a_loop_whose_condition_always_holds() -> None:
    with pv.Graph().as_default():
        r = pv.while_loop(
            lambda a: True, lambda a: a + 1.0, [pv.constant(0.0)], maximum_iterations=7
        )
        with pv.Session() as sess:
            assert sess.run(r) == 7.0


def test_ops_inside_a_loop_cannot_be_fetched() -> None:
    graph = pv.Graph()
    with graph.as_default():
        pv.while_loop(lambda i: i < 3, lambda i: i + 1, [pv.constant(0)])
        with pv.Session() as sess, pytest.raises(ValueError, match="not fetchable"):
            sess.run(graph.get_tensor_by_name("while/add:0"))


def test_a_loop_in_a_branch_not_taken_does_not_run() -> None:
    with pv.Graph().as_default():
        p = pv.placeholder(pv.bool, [])
        x = pv.constant([1.0])
        r = pv.cond(
            p, lambda: pv.while_loop(lambda a: a[0] < 10.0, lambda a: a * 3.0, [x]), lambda: x
        )
        with pv.Session() as sess:
            np.testing.assert_allclose(sess.run(r, {p: True}), [27.0])
            compiled = next(iter(sess._plans.values()))[0]
            assert len(compiled.executions) > 0
            np.testing.assert_allclose(sess.run(r, {p: False}), [1.0])
            assert compiled.executions == []


def test_the_trace_has_an_event_per_op_execution_inside_the_loop() -> None:
    """The loop's step is a FRAME event; each execution inside it an OP (or NOT_RUN) event
    within that span."""
    from placeviz.contract import EventKind

    with pv.Graph().as_default():
        r = pv.while_loop(lambda a: a < 3.0, lambda a: a + 1.0, [pv.constant(0.0)])
        with pv.Session() as sess:
            assert sess.run(r) == 3.0
            trace = sess.trace()
    names = {n["id"]: n["name"] for n in trace.nodes}
    ev = trace.events
    frame = [i for i, k in enumerate(ev["kind"]) if k == int(EventKind.FRAME)]
    assert [names[int(ev["node"][i])] for i in frame] == ["while/LoopCond"]
    steps = (int(EventKind.OP), int(EventKind.NOT_RUN))
    body = [
        int(k)
        for k, n in zip(ev["kind"], ev["node"])
        if names.get(int(n)) == "while/add" and int(k) in steps
    ]
    assert body == [int(EventKind.OP)] * 3 + [int(EventKind.NOT_RUN)]
    inside = [
        i
        for i, k in enumerate(ev["kind"])
        if int(k) in steps and names.get(int(ev["node"][i]), "").startswith("while/")
    ]
    (span,) = frame
    assert all(ev["t0"][span] <= ev["t0"][i] <= ev["t1"][i] <= ev["t1"][span] for i in inside)


def test_eager_while_loop_runs_the_body_in_python() -> None:
    pv.enable_eager_execution()
    x = pv.constant([1.0, 2.0])
    _, doubled = pv.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [0, x])
    np.testing.assert_allclose(doubled.numpy(), [8.0, 16.0])
    capped = pv.while_loop(lambda a: True, lambda a: a + 1.0, [x], maximum_iterations=4)
    np.testing.assert_allclose(capped.numpy(), [5.0, 6.0])


def _two_layer_loop(parallel_iterations: int, steps: int = 6) -> pv.Tensor:
    """A 2-layer recurrence, layer 0 on GPU:0 and layer 1 on GPU:1: layer 0's step t+1 needs
    only its own step t, so it may run while layer 1 works on step t."""
    rng = np.random.default_rng(0)
    w0 = pv.constant(rng.standard_normal((1024, 1024), dtype=np.float32) * 0.03, name="w0")
    w1 = pv.constant(rng.standard_normal((1024, 1024), dtype=np.float32) * 0.03, name="w1")

    def body(t: pv.Tensor, h0: pv.Tensor, h1: pv.Tensor) -> tuple[pv.Tensor, ...]:
        with pv.device("/gpu:0"):
            h0 = pv.tanh(pv.matmul(h0, w0), name="layer_0")
        with pv.device("/gpu:1"):
            h1 = pv.tanh(pv.matmul(h0, w1) + h1, name="layer_1")
        return t + 1, h0, h1

    start = [pv.constant(0), pv.ones([512, 1024]), pv.zeros([512, 1024])]
    _, _, h1 = pv.while_loop(
        lambda t, h0, h1: t < steps, body, start, parallel_iterations=parallel_iterations
    )
    return h1


def _busy(trace: object, device_suffix: str, ops: tuple[str, ...]) -> list[tuple[int, int]]:
    """When ``ops`` (names in the loop) ran on the device: the event intervals of a trace."""
    ev = trace.events  # type: ignore[attr-defined]
    names = {d["id"]: d["name"] for d in trace.devices}  # type: ignore[attr-defined]
    return sorted(
        (int(ev["t0"][i]), int(ev["t1"][i]))
        for i in range(len(ev["kind"]))
        if ev["kind"][i] == int(EventKind.OP)
        and names[int(ev["device"][i])].endswith(device_suffix)
        and trace.node_name(int(ev["node"][i])) in ops  # type: ignore[attr-defined]
        and ev["t1"][i] > ev["t0"][i]
    )


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(a1, b1) - max(a0, b0)) for a0, a1 in a for b0, b1 in b)


def test_parallel_iterations_overlap_layers_on_their_devices() -> None:
    pv.config.simulate_gpus(2, "H100 PCIe")  # cards joined by PCIe: copies take a while
    results, spans = {}, {}
    for n in (1, 4):
        with pv.Graph().as_default() as graph:
            h1 = _two_layer_loop(n)
            with pv.Session() as sess:
                results[n] = sess.run(h1)
                trace = sess.trace()
        gpu0 = _busy(trace, "GPU:0", ("while/MatMul", "while/layer_0"))
        gpu1 = _busy(trace, "GPU:1", ("while/MatMul_1", "while/add", "while/layer_1"))
        assert gpu0 and gpu1
        for lane in (gpu0, gpu1):  # one op at a time on each device's stream
            assert all(a1 <= b0 for (_, a1), (b0, _) in itertools.pairwise(lane))
        shared = _overlap(gpu0, gpu1)
        if n == 1:
            # layer 0's step t+1 waits for the whole of step t, layer 1's part included
            assert shared == 0
        else:
            # GPU:0 runs step t+1 before GPU:1 runs step t (all modeled: the same every run):
            # GPU:1's step waits for copies over PCIe, of layer 0's output and of its own
            # state, whose loop variable lives on GPU:0 with the loop's counter and plumbing
            assert shared > 0
            ev = trace.events
            ran = ev["kind"] == int(EventKind.OP)
            layer = {
                name: {
                    int(ev["iteration"][i]): (int(ev["t0"][i]), int(ev["t1"][i]))
                    for i in np.flatnonzero(
                        ran & (ev["node"] == graph.get_operation_by_name(name).id)
                    )
                }
                for name in ("while/layer_0", "while/layer_1")
            }
            assert all(
                layer["while/layer_0"][t + 1][1] <= layer["while/layer_1"][t][0] for t in range(5)
            )
        spans[n] = max(b for _, b in gpu1) - min(a for a, _ in gpu0)
    assert spans[4] < spans[1]
    np.testing.assert_array_equal(results[1], results[4])


def test_a_loop_in_a_cond_has_its_gradient_where_the_branch_ran() -> None:
    """r is x doubled until its sum reaches 9 (8x for this x) when p holds, else x; the
    gradient of sum(r * r) is 2 * r * dr/dx."""
    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [3], name="x")
        p = pv.placeholder(pv.bool, [], name="p")
        r = pv.cond(
            p,
            lambda: pv.while_loop(lambda a: pv.reduce_sum(a) < 9.0, lambda a: a * 2.0, [x]),
            lambda: x,
        )
        grad = pv.gradients(pv.reduce_sum(r * r), x)[0]
        values = np.array([1.0, 0.5, 0.25], np.float32)
        with pv.Session() as sess:
            taken = sess.run(grad, {x: values, p: True})
            not_taken = sess.run(grad, {x: values, p: False})
    np.testing.assert_allclose(taken, 2 * (8 * values) * 8)
    np.testing.assert_allclose(not_taken, 2 * values)


def test_a_loop_in_a_loop_keeps_its_values_per_outer_iteration() -> None:
    """The inner loop runs i + 1 times in outer iteration i; its gradient reads each run's
    own trip count and values (d/dx of x * 2^(1+2+3) is 64)."""
    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [], name="x")
        _, r = pv.while_loop(
            lambda i, a: i < 3,
            lambda i, a: (
                i + 1,
                pv.while_loop(lambda j, b: j < i + 1, lambda j, b: (j + 1, b * 2.0), [0, a])[1],
            ),
            [0, x],
        )
        (g,) = pv.gradients(r * r, x)
        with pv.Session() as sess:
            value, grad = sess.run([r, g], {x: 0.5})
    assert value == 0.5 * 64
    assert grad == 2 * 0.5 * 64 * 64
