"""An op computed from constants alone is folded into a constant when its run's plan is
compiled, as TensorFlow's grappler folds it before the graph runs: its kernel never runs in a
step. tests/conformance/step_ops.json records which ops TensorFlow 2.21 ran in one training
step of each zoo model and of conformance/step_programs.py's MLP, and which of those it ran as a
constant (scripts/record_tf_step_ops.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conformance.step_programs import STEP_PROGRAMS

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.events.document import validate
from placeviz.examples import zoo

STEP_OPS = json.loads((Path(__file__).parent / "conformance" / "step_ops.json").read_text())
# What TensorFlow ran as a constant that placeviz computes: grappler's arithmetic optimizer
# pushes the attention scale into the mask (``(scores * c) * mask`` -> ``scores * (c * mask)``)
# and folds the product under the first Mul's name; placeviz multiplies as the graph says.
KNOWN_NOT_FOLDED = {"gpt": {"h0/attn/mul"}}


def _step(name: str) -> tuple[pv.Graph, pv.Session, dict[str, object]]:
    """One training step of the zoo model or step program ``name``, and its run's record."""
    pv.config.simulate_gpus(0)
    graph = pv.Graph()
    with graph.as_default():
        if name in STEP_PROGRAMS:
            train, _loss, feed = STEP_PROGRAMS[name](pv)
        else:
            model = zoo.ZOO[name](pv, gpus=0, pin=False)
            train, feed = model.train_op, model.feed
        init = pv.global_variables_initializer()
    sess = pv.Session(graph=graph)
    sess.run(init)
    sess.run(train, feed)
    document = sess.trace(runs=1).to_document()
    validate(document)  # the schema's RunRecord.folded
    return graph, sess, document["runs"][-1]


def _computed(sess: pv.Session, graph: pv.Graph) -> set[str]:
    """The ops whose kernels ran in the last run (an op folded or a constant takes no time)."""
    columns = sess.trace(runs=1).events
    ops = graph.get_operations()
    return {
        ops[int(n)].name
        for k, n, t0, t1 in zip(columns["kind"], columns["node"], columns["t0"], columns["t1"])
        if k == EventKind.OP and t1 > t0
    }


@pytest.mark.parametrize("name", sorted([*zoo.ZOO, *STEP_PROGRAMS]))
def test_a_step_folds_what_tensorflow_folded_and_nothing_it_computed(name: str) -> None:
    graph, sess, record = _step(name)
    ops = graph.get_operations()
    folded = {ops[n].name for n in record.get("folded", [])}
    computed = _computed(sess, graph)
    sess.close()
    assert not folded & computed  # a folded op's kernel did not run in the step
    by_tf = set(STEP_OPS["ran"][name])
    as_constants = set(STEP_OPS["folded"][name])
    # Every op TensorFlow ran as a constant that placeviz's step has is folded here too...
    in_step = (computed | folded) & as_constants
    assert in_step - folded == KNOWN_NOT_FOLDED.get(name, set())
    # ...and none that TensorFlow's kernels computed.
    assert not folded & (by_tf - as_constants)
    assert folded, "a training step has shape arithmetic to fold"


def test_a_fed_fetched_or_random_op_is_not_folded() -> None:
    graph = pv.Graph()
    with graph.as_default():
        two = pv.constant(2.0, name="two")
        doubled = pv.multiply(two, pv.constant(3.0), name="doubled")  # folded: constants only
        fetched = pv.add(two, 1.0, name="fetched")
        noise = pv.random_uniform([2], seed=1, name="noise")
        shifted = pv.add(noise, doubled, name="shifted")
    with pv.Session(graph=graph) as sess:
        first = sess.run([shifted, fetched])
        record = sess.trace(runs=1).to_document()["runs"][-1]
        folded = {graph.get_operations()[n].name for n in record.get("folded", [])}
        assert folded == {"doubled"}
        assert "fetched" in _computed(sess, graph) and first[1] == 3.0
        second = sess.run(shifted)
        assert not np.array_equal(first[0], second)  # the random op still draws each run
        np.testing.assert_array_equal(sess.run(doubled, {two: 5.0}), 15.0)  # fed: computed


def test_an_op_reading_a_fed_output_of_a_folded_op_reads_the_fed_value() -> None:
    graph = pv.Graph()
    with graph.as_default():
        first, second = pv.split(pv.constant([1.0, 2.0, 3.0, 4.0]), 2)  # folded
        twice = pv.multiply(first, 2.0, name="twice")
        kept = pv.add(second, 0.0, name="kept")
    with pv.Session(graph=graph) as sess:
        np.testing.assert_array_equal(sess.run(twice), [2.0, 4.0])
        got = sess.run([twice, kept], {first: np.array([5.0, 6.0], np.float32)})
        np.testing.assert_array_equal(got[0], [10.0, 12.0])
        np.testing.assert_array_equal(got[1], [3.0, 4.0])


def test_an_op_whose_constant_inputs_make_it_fail_fails_when_it_runs() -> None:
    """Folding it fails when the plan is compiled, so it runs in the step and fails there,
    naming itself, as TensorFlow's executor fails what grappler could not fold; the session
    stays usable."""
    graph = pv.Graph()
    with graph.as_default():
        picked = pv.gather(pv.constant([1.0, 2.0]), pv.constant(5), name="picked")
        after = pv.add(picked, 1.0, name="after")
        fine = pv.add(pv.constant(1.0), 2.0, name="fine")
    with pv.Session(graph=graph) as sess:
        with pytest.raises(pv.errors.InvalidArgumentError, match="node 'picked'"):
            sess.run(after)
        assert sess.run(fine) == 3.0
