"""The graph validator: a graph changed after construction fails before its plan is compiled,
naming the op and its source line, and the session stays usable."""

from __future__ import annotations

import pytest

import placeviz as pv
from placeviz.graph.validate import validate


def _session() -> pv.Session:
    return pv.Session(config=pv.ConfigProto(inter_op_parallelism_threads=1))


def test_a_control_edge_that_closes_a_cycle_names_every_op_of_it() -> None:
    a = pv.constant(1.0, name="a")
    b = pv.identity(a, name="b")
    c = pv.identity(b, name="c")
    other = pv.constant(2.0, name="other")
    a.op._add_control_input(c.op)  # a -> b -> c -> a
    sess = _session()
    with pytest.raises(pv.errors.InvalidArgumentError) as caught:
        sess.run(c)
    message = str(caught.value)
    assert "contains a cycle with 3 nodes" in message
    for name in ("'a' (Const)", "'b' (Identity)", "'c' (Identity)"):
        assert name in message
    assert "test_validate.py:" in message  # each op's source line
    assert caught.value.op in (a.op, b.op, c.op)
    assert sess.run(other) == 2.0  # the session is still usable


def test_a_control_edge_to_a_later_op_without_a_cycle_is_valid() -> None:
    a = pv.constant(1.0)
    later = pv.constant(2.0)
    a.op._add_control_input(later.op)
    validate(pv.get_default_graph().get_operations())
    assert _session().run(a) == 1.0


def test_a_dependency_from_another_graph_is_named() -> None:
    x = pv.constant(1.0, name="x")
    with pv.Graph().as_default():
        stranger = pv.constant(2.0, name="stranger")
    x.op.control_inputs.append(stranger.op)  # edited in place, past _add_control_input's check
    with pytest.raises(pv.errors.InvalidArgumentError, match=r"'stranger'.*not an op of its graph"):
        _session().run(x)


def test_inputs_the_opdef_does_not_accept_are_reported() -> None:
    a = pv.constant(1.0, name="a")
    total = pv.add(a, a, name="total")
    ints = pv.constant(1, name="ints")
    total.op.inputs = (a, ints)  # float32 + int32: Add's rule refuses it
    with pytest.raises(pv.errors.InvalidArgumentError) as caught:
        _session().run(total)
    assert "'total' (Add" in str(caught.value)
    assert "inputs its OpDef does not accept" in str(caught.value)
    assert caught.value.op is total.op


def test_outputs_that_disagree_with_the_opdef_are_reported() -> None:
    x = pv.constant(1.0)
    y = pv.cast(x, pv.int32, name="y")
    y.op.attrs["dtype"] = pv.float64  # the op now claims a cast its output does not have
    with pytest.raises(pv.errors.InvalidArgumentError, match=r"'y' \(Cast\).*outputs of dtypes"):
        _session().run(y)
