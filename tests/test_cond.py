"""pv.cond and pv.case at run time: only the branch taken runs, the other's ops are recorded as
not run, values and gradients match the branch taken, and graphs without a cond keep plans
without dead checks."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.errors import InaccessibleTensorError, InvalidArgumentError


def _kinds_by_node(sess: pv.Session) -> dict[str, set[int]]:
    trace = sess.trace()
    names = {n["id"]: n["name"] for n in trace.nodes}
    kinds: dict[str, set[int]] = {}
    steps = {int(EventKind.OP), int(EventKind.NOT_RUN)}
    for kind, node in zip(trace.events["kind"], trace.events["node"]):
        if node >= 0 and int(kind) in steps:
            kinds.setdefault(names[int(node)], set()).add(int(kind))
    return kinds


def _cond_graph() -> tuple[pv.Graph, pv.Tensor, pv.Tensor, pv.Tensor]:
    graph = pv.Graph()
    with graph.as_default():
        p = pv.placeholder(pv.bool, [], name="p")
        x = pv.placeholder(pv.float32, [2], name="x")
        r = pv.cond(p, lambda: pv.square(x) * 2.0, lambda: x + 1.0)
    return graph, p, x, r


@pytest.mark.parametrize("taken", [True, False])
def test_only_the_branch_taken_runs(taken: bool) -> None:
    graph, p, x, r = _cond_graph()
    with pv.Session(graph=graph) as sess:
        value = sess.run(r, {p: taken, x: [1.0, 3.0]})
        kinds = _kinds_by_node(sess)
    expected = np.array([2.0, 18.0]) if taken else np.array([2.0, 4.0])
    np.testing.assert_allclose(value, expected)
    ran, skipped = ("cond/Square", "cond/add") if taken else ("cond/add", "cond/Square")
    assert kinds[ran] == {int(EventKind.OP)}
    assert kinds[skipped] == {int(EventKind.NOT_RUN)}
    # the constant of the branch not taken waits on its pivot, so it too did not run
    const = "cond/mul/y" if not taken else "cond/add/y"
    assert kinds[const] == {int(EventKind.NOT_RUN)}
    assert kinds["cond/Merge"] == {int(EventKind.OP)}


def test_a_plan_without_a_switch_has_no_dead_checks() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [2], name="x")
        y = pv.square(x) + 1.0
    with pv.Session(graph=graph) as sess:
        sess.run(y, {x: [1.0, 2.0]})
        source = "\n".join(compiled.source for compiled, _ in sess._plans.values())
    assert "k" in source and "DEAD" not in source


def test_ops_of_a_branch_cannot_be_fetched() -> None:
    graph, p, x, _ = _cond_graph()
    with pv.Session(graph=graph) as sess, pytest.raises(InaccessibleTensorError, match="cond/add"):
        sess.run(graph.get_tensor_by_name("cond/add:0"), {p: True, x: [1.0, 2.0]})


def test_gradient_flows_only_through_the_branch_taken() -> None:
    graph = pv.Graph()
    with graph.as_default():
        p = pv.placeholder(pv.bool, [], name="p")
        x = pv.constant([1.0, 2.0])
        v = pv.Variable([3.0, 4.0], name="v")
        r = pv.cond(p, lambda: x * v, lambda: v * v)
        (grad,) = pv.gradients(pv.reduce_sum(r), [v])
        with pv.Session() as sess:
            sess.run(pv.global_variables_initializer())
            np.testing.assert_allclose(sess.run(grad, {p: True}), [1.0, 2.0])
            np.testing.assert_allclose(sess.run(grad, {p: False}), [6.0, 8.0])


def test_case_picks_the_first_true_predicate() -> None:
    graph = pv.Graph()
    with graph.as_default():
        i = pv.placeholder(pv.int32, [])
        r = pv.case(
            [(i > 0, lambda: pv.constant(1)), (i > 1, lambda: pv.constant(2))],
            default=lambda: pv.constant(0),
        )
        with pv.Session() as sess:
            assert [sess.run(r, {i: k}) for k in (3, 1, -1)] == [1, 1, 0]


def test_a_non_boolean_predicate_is_refused_naming_the_op() -> None:
    with pv.Graph().as_default(), pytest.raises(TypeError, match="cond/Switch"):
        pv.cond(pv.constant(1.0), lambda: pv.constant(1), lambda: pv.constant(2))


def test_initialized_value_reads_the_initial_value_until_initialized() -> None:
    graph = pv.Graph()
    with graph.as_default():
        v = pv.Variable([1.0, 2.0], name="v")
        value = v.initialized_value()
        with pv.Session() as sess:
            np.testing.assert_allclose(sess.run(value), [1.0, 2.0])
            sess.run(v.initializer)
            sess.run(pv.assign(v, [5.0, 6.0]))
            np.testing.assert_allclose(sess.run(value), [5.0, 6.0])


def test_a_dead_value_reaching_a_fetch_is_an_error() -> None:
    """A Merge whose every input is dead (a cond inside a branch not taken) has no value."""
    graph = pv.Graph()
    with graph.as_default():
        p = pv.placeholder(pv.bool, [], name="p")
        inner: list[pv.Tensor] = []

        def branch() -> pv.Tensor:
            inner.append(pv.cond(p, lambda: pv.constant(1.0), lambda: pv.constant(2.0)))
            return inner[0]

        pv.cond(p, branch, lambda: pv.constant(3.0))
        graph._unfetchable.clear()  # reach the inner Merge's value as an executor would
        with pv.Session() as sess, pytest.raises(InvalidArgumentError, match="does not have"):
            sess.run(inner[0], {p: False})


def test_a_plan_with_a_cond_checks_only_the_ops_a_switch_reaches() -> None:
    graph, p, x, r = _cond_graph()
    with graph.as_default():
        before = pv.square(x, name="before")
        y = r + before
    with pv.Session(graph=graph) as sess:
        sess.run(y, {p: True, x: [1.0, 2.0]})
        source = "\n".join(compiled.source for compiled, _ in sess._plans.values())
    line = next(text for text in source.splitlines() if f"t{before.op.id}_0 =" in text)
    assert "DEAD" not in line
    assert any("DEAD" in text for text in source.splitlines() if f"t{r.op.id}_0" in text)


def test_eager_cond_runs_only_the_branch_its_predicate_picks() -> None:
    pv.enable_eager_execution()
    x = pv.constant([1.0, 2.0])
    picked = pv.cond(pv.constant(False), lambda: pv.constant(0.0), lambda: x * 3.0)
    np.testing.assert_allclose(picked.numpy(), [3.0, 6.0])


def test_each_branch_runs_on_the_gpu_its_scope_asks_for(gpus4: None) -> None:
    """Branch ops follow their device scopes; the Switch that brings a value into a branch
    stays with the value; the branch not taken is recorded as not run on its own GPU."""
    graph = pv.Graph()
    with graph.as_default():
        p = pv.placeholder(pv.bool, [], name="p")
        with pv.device("/gpu:0"):
            x = pv.constant([1.0, 2.0], name="x")

        def on(gpu: str, fn):  # type: ignore[no-untyped-def]
            def branch():  # type: ignore[no-untyped-def]
                with pv.device(gpu):
                    return fn()

            return branch

        r = pv.cond(p, on("/gpu:1", lambda: x * 2.0), on("/gpu:2", lambda: x + 1.0))
        with pv.Session() as sess:
            sess.trace_level = pv.RunOptions.FULL_TRACE  # memory events too
            np.testing.assert_allclose(sess.run(r, {p: True}), [2.0, 4.0])
            placement = dict(sess.placement)
            trace = sess.trace()
    assert placement["cond/mul"].endswith("GPU:1")
    assert placement["cond/add"].endswith("GPU:2")
    assert placement["cond/mul/Switch"].endswith("GPU:0")  # with x
    devices = {d["id"]: d["name"] for d in trace.devices}
    names = {n["id"]: n["name"] for n in trace.nodes}
    not_run = [
        (names[int(n)], devices[int(d)], int(peer))
        for k, n, d, peer in zip(
            trace.events["kind"], trace.events["node"], trace.events["device"], trace.events["peer"]
        )
        if int(k) == int(EventKind.NOT_RUN)
    ]
    skipped = {name: device for name, device, peer in not_run if peer < 0}
    assert skipped["cond/add"].endswith("GPU:2")
    # Dead values move nothing: the Switch's untaken output to the branch on GPU:2, and
    # cond/add's to the Merge on GPU:0; no memory holds what the branch did not make.
    moved = {(name, device.rsplit("device:", 1)[-1]) for name, device, peer in not_run if peer >= 0}
    assert moved == {("cond/add/Switch", "GPU:2"), ("cond/add", "GPU:0")}
    held = {
        (names[int(n)], devices[int(d)].rsplit("device:", 1)[-1])
        for k, n, d in zip(trace.events["kind"], trace.events["node"], trace.events["device"])
        if int(k) == int(EventKind.ALLOC)
    }
    assert ("cond/mul", "GPU:1") in held
    assert not {(name, gpu) for name, gpu in held if name == "cond/add" or gpu == "GPU:2"}
