"""What the placement document says about an op that could not be placed or whose kernel failed:
the inspector marks it red and shows the error as its reason, from the document alone."""

from __future__ import annotations

from typing import Any

import pytest

import placeviz as pv
from placeviz.contract import ReasonKind
from placeviz.events.document import validate

LOCAL = "/job:localhost/replica:0/task:0/device:"


def _nodes(sess: pv.Session) -> dict[str, dict[str, Any]]:
    document = sess.trace().to_document()
    validate(document)
    return {node["name"]: node for node in document["nodes"]}


def test_an_op_pinned_to_a_missing_gpu_carries_the_error_as_its_reason() -> None:
    pv.config.simulate_gpus(2)
    a = pv.constant([1.0, 2.0], name="a")
    with pv.device("/gpu:7"):
        b = pv.add(a, a, name="b")
    sess = pv.Session()
    with pytest.raises(pv.errors.InvalidArgumentError) as raised:
        sess.run(b)
    nodes = _nodes(sess)
    assert nodes["b"]["device"] is None
    assert nodes["b"]["reason"] == {
        "kind": ReasonKind.UNPLACED,
        "text": str(raised.value),
        "anchor": None,
    }
    text = nodes["b"]["reason"]["text"]
    # The op, its source line and the devices involved, as the raised error names them.
    assert "'b' (AddV2, created at test_failed_ops_document.py:" in text
    assert "'/device:GPU:7'" in text and f"{LOCAL}GPU:1" in text
    assert nodes["a"]["reason"]["kind"] == "default"  # placed: its own group did not fail


def test_every_op_of_a_group_without_a_kernel_on_its_device_carries_the_error() -> None:
    pv.config.simulate_gpus(1)
    with pv.device("/gpu:0"):
        counter = pv.Variable(3, name="counter")  # no GPU kernel for an int32 variable
    sess = pv.Session()
    with pytest.raises(pv.errors.InvalidArgumentError) as raised:
        sess.run(counter.initializer)
    nodes = _nodes(sess)
    for name in ("counter", "counter/Assign", "counter/read"):  # the variable's colocated ops
        assert nodes[name]["device"] is None, name
        assert nodes[name]["reason"]["kind"] == ReasonKind.UNPLACED, name
        assert nodes[name]["reason"]["text"] == str(raised.value)
    assert "no supported kernel for GPU devices" in str(raised.value)


def test_an_op_not_needed_by_any_run_yet_has_no_reason() -> None:
    a = pv.constant(1.0, name="a")
    sess = pv.Session()
    sess.run(a)
    pv.square(a, name="later")
    sess.run(a)  # places 'later' too: placement covers the whole graph
    pv.negative(a, name="unrun")
    nodes = _nodes(sess)
    assert nodes["later"]["reason"]["kind"] == "default"
    assert nodes["unrun"]["device"] is None and nodes["unrun"]["reason"] is None


def test_a_kernel_that_fails_at_run_time_leaves_the_error_quoting_it_in_its_run() -> None:
    pv.config.simulate_gpus(2)
    x = pv.placeholder(pv.float32, [None], name="x")
    r = pv.reshape(x, [3], name="r")
    y = pv.add(r, 1.0, name="y")
    sess = pv.Session()
    with pytest.raises(pv.errors.InvalidArgumentError) as raised:
        sess.run(y, feed_dict={x: [1.0, 2.0]})
    document = sess.trace().to_document()
    validate(document)
    (run,) = document["runs"]
    assert run["status"] == "error" and run["error"] == str(raised.value)
    # The browser marks failed the ops a failed run's error quotes: 'r', the one that raised.
    assert "[[node 'r' (Reshape) created at test_failed_ops_document.py:" in run["error"]
    assert "'y'" not in run["error"]
    nodes = {node["name"]: node for node in document["nodes"]}
    assert nodes["r"]["reason"]["kind"] == "default" and nodes["r"]["device"] is not None
