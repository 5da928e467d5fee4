"""An op whose outputs nothing in a run reads runs as a NoOp, as TensorFlow's grappler makes it.

``tf.gradients`` groups each op's input gradients (``tuple``), so a gradient nothing reads (a
first layer's input gradient, a constant's) still has a control edge on it; grappler's
dependency optimizer turns such an op into a NoOp, and TensorFlow's executor never runs its
kernel. tests/conformance/step_ops.json records which ops TensorFlow 2.21 ran in one training
step of each zoo model and of conformance/step_programs.py's MLP
(scripts/record_tf_step_ops.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conformance.step_programs import mlp

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.events.document import validate
from placeviz.examples import zoo

STEP_OPS = json.loads((Path(__file__).parent / "conformance" / "step_ops.json").read_text())
# Ops TensorFlow ran that placeviz's graph does not need: its Adam applies an embedding's
# gradient (IndexedSlices) densely, so it reads no slot through ``/read`` as TF's sparse apply.
KNOWN_NOT_RUN = {
    "bert": {"embeddings/word_embeddings/Adam/read", "embeddings/word_embeddings/Adam_1/read"}
}

GRAD = "gradients/softmax_cross_entropy_with_logits_grad/"
UNREAD = {
    "gradients/dense/MatMul_grad/MatMul",
    f"{GRAD}ExpandDims_1",
    f"{GRAD}LogSoftmax",
    f"{GRAD}Neg",
    f"{GRAD}mul_1",
}
RUN_BY_TF = {"gradients/dense/MatMul_grad/MatMul_1", f"{GRAD}mul", f"{GRAD}ExpandDims"}


def ran_ops(sess: pv.Session, graph: pv.Graph) -> list[str]:
    columns = sess.trace(runs=1).events
    ops = graph.get_operations()
    return [ops[int(n)].name for k, n in zip(columns["kind"], columns["node"]) if k == EventKind.OP]


def test_a_training_step_skips_the_gradients_nothing_reads_as_tensorflow_did() -> None:
    by_tf = set(STEP_OPS["ran"]["mlp"])
    assert not by_tf & UNREAD and by_tf >= RUN_BY_TF  # what TensorFlow's step ran
    graph = pv.Graph()
    with graph.as_default():
        train, loss, feed = mlp(pv)
        init = pv.global_variables_initializer()
    losses = {}
    for forced in (False, True):
        with pv.Session(graph=graph) as sess:
            sess.run(init)
            # Fetching the input gradient too makes it read: it runs, and changes nothing else.
            extra = [graph.get_tensor_by_name("gradients/dense/MatMul_grad/MatMul:0")]
            fetches = [loss, train, *(extra if forced else [])]
            losses[forced] = [sess.run(fetches, feed)[0] for _ in range(3)]
            ran = set(ran_ops(sess, graph))
            document = sess.trace(runs=1).to_document()
            validate(document)  # the schema's RunRecord.unread
            record = document["runs"][-1]
        unread = {graph.get_operations()[n].name for n in record.get("unread", [])}
        assert unread == (UNREAD - {"gradients/dense/MatMul_grad/MatMul"} if forced else UNREAD)
        if forced:
            assert "gradients/dense/MatMul_grad/MatMul" in ran
        else:
            assert not ran & UNREAD
            assert ran >= RUN_BY_TF
    assert losses[False] == losses[True]  # bit for bit


def test_a_control_edge_on_an_unread_op_waits_for_what_it_would_have_read() -> None:
    """The NoOp still orders: ``after``, on another CPU and reading only ``x``, waits for the
    product the unread op would have read (which another fetch keeps), not only for ``x``."""
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [768, 768], name="x")
        with pv.device("/cpu:0"):
            made = pv.matmul(x, x, name="made")
            kept = pv.reduce_sum(made, name="kept")
            unread = pv.multiply(made, 2.0, name="unread")
        with pv.device("/cpu:1"), pv.control_dependencies([unread]):
            after = pv.add(x, 1.0, name="after")
    feed = {x: np.ones((768, 768), np.float32)}
    config = pv.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=2)
    with pv.Session(graph=graph, config=config) as sess:
        sess.run([after, kept], feed)
        events = sess.trace(runs=1).events
        ops = graph.get_operations()
        span = {
            ops[int(n)].name: (int(t0), int(t1))
            for k, n, t0, t1 in zip(events["kind"], events["node"], events["t0"], events["t1"])
            if k == EventKind.OP
        }
        assert "unread" not in span and {"made", "kept", "after"} <= set(span)
        assert span["after"][0] >= span["made"][1]
        sess.run(unread.op, feed)  # a target runs
        assert "unread" in ran_ops(sess, graph)


def test_a_stateful_op_runs_though_nothing_reads_it() -> None:
    """A dequeue only a control edge waits on still takes an element (TF keeps stateful ops)."""
    graph = pv.Graph()
    with graph.as_default():
        queue = pv.FIFOQueue(5, [pv.float32], shapes=[[]])
        fill = queue.enqueue_many([[1.0, 2.0, 3.0]])
        taken = queue.dequeue()
        with pv.control_dependencies([taken]):
            done = pv.no_op()
        size = queue.size()
    with pv.Session(graph=graph) as sess:
        sess.run(fill)
        sess.run(done)
        assert sess.run(size) == 2


def test_an_op_with_side_effects_runs_though_nothing_reads_it() -> None:
    graph = pv.Graph()
    with graph.as_default():
        counter = pv.Variable(0.0, name="counter")
        bump = pv.assign_add(counter, 1.0)
        with pv.control_dependencies([bump]):
            done = pv.no_op()
        init = pv.global_variables_initializer()
    with pv.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(done)
        assert sess.run(counter) == 3.0


@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_a_zoo_step_runs_every_op_tensorflow_ran(name: str) -> None:
    """Skipping what nothing reads never skips an op TensorFlow's executor ran (its NoOps
    aside, which placeviz records no event for), on every zoo model's training step."""
    pv.config.simulate_gpus(0)
    model = zoo.ZOO[name](pv, gpus=0, pin=False)
    graph = pv.get_default_graph()
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        sess.run(model.train_op, model.feed)
        ran = set(ran_ops(sess, graph))
    names = {op.name: op.type for op in graph.get_operations()}
    # the ops of placeviz's graph TF ran (grappler adds some of its own; a sparse gradient's
    # apply is TF's alone)
    by_tf = {op for op in STEP_OPS["ran"][name] if names.get(op, "NoOp") != "NoOp"}
    assert by_tf - ran == KNOWN_NOT_RUN.get(name, set())
    if name == "bert":  # attention's scale: its gradient would read each layer's scores
        skipped = "gradients/layer_0/attention/mul_grad/Mul_1"
        assert skipped not in ran and skipped not in STEP_OPS["ran"][name]
