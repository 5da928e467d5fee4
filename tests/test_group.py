"""tf.group: a NoOp per device of its inputs, then the named NoOp (TF 2.21's names, devices)."""

from __future__ import annotations

import pytest

import placeviz as pv

LOCAL = "/job:localhost/replica:0/task:0/device:"


def noops() -> dict[str, tuple[str, list[str]]]:
    return {
        op.name: (op.device, [dep.name for dep in op.control_inputs])
        for op in pv.get_default_graph().get_operations()
        if op.type == "NoOp"
    }


def test_group_makes_one_noop_per_device_in_device_string_order() -> None:
    with pv.device("/cpu:1"):
        a = pv.constant(1.0, name="a")
        a2 = pv.negative(a, name="a2")
    with pv.device("/cpu:2"):
        b = pv.negative(a, name="b")
    c = pv.negative(a, name="c")
    with pv.device("/cpu:3"):
        grp = pv.group(a2, b, c, name="grp")
    two = pv.group(a2, b, name="two")
    single = pv.group(a2, name="single")
    # What TF 2.21 builds for the same calls: '' sorts first, and its NoOp takes the outer scope.
    assert noops() == {
        "grp/NoOp": ("/device:CPU:3", ["c"]),
        "grp/NoOp_1": ("/device:CPU:1", ["a2"]),
        "grp/NoOp_2": ("/device:CPU:2", ["b"]),
        "grp": ("/device:CPU:3", ["grp/NoOp", "grp/NoOp_1", "grp/NoOp_2"]),
        "two/NoOp": ("/device:CPU:1", ["a2"]),
        "two/NoOp_1": ("/device:CPU:2", ["b"]),
        "two": ("", ["two/NoOp", "two/NoOp_1"]),
        "single": ("/device:CPU:1", ["a2"]),
    }
    with pv.Session(config=pv.ConfigProto(device_count={"CPU": 4})) as sess:
        sess.run([grp, two, single])
        where = {name: sess.placement[name].removeprefix(LOCAL) for name in noops()}
    assert where == {
        "grp/NoOp": "CPU:3",
        "grp/NoOp_1": "CPU:1",
        "grp/NoOp_2": "CPU:2",
        "grp": "CPU:3",
        "two/NoOp": "CPU:1",
        "two/NoOp_1": "CPU:2",
        "two": "CPU:0",
        "single": "CPU:1",
    }


def test_group_of_nothing_is_a_plain_noop() -> None:
    done = pv.group(name="nothing")
    assert (done.name, done.control_inputs) == ("nothing", [])
    assert pv.group().name == "group_deps"


def test_tuple_returns_each_value_after_all_of_them() -> None:
    """TF's tuple: Identities colocated with their values behind one group_deps NoOp; an op
    comes back as a group after it, None as None; control_inputs join the gate."""
    a, b = pv.constant(1.0, name="a"), pv.constant(2.0, name="b")
    extra = pv.no_op(name="extra")
    step = pv.no_op(name="step")
    ga, none, gs, gb = pv.tuple([a, None, step, b], control_inputs=[extra])
    gate = ga.graph.get_operation_by_name("tuple/group_deps")
    assert {op.name for op in gate.control_inputs} == {"a", "b", "step", "extra"}
    assert (ga.op.name, gb.op.name, none) == (
        "tuple/control_dependency",
        "tuple/control_dependency_1",
        None,
    )
    assert ga.op.control_inputs == [gate] and ga.op.colocation_groups() == ["loc:@a"]
    assert gs.type == "NoOp" and set(gs.control_inputs) == {gate, step}
    with pv.Session() as sess:
        assert sess.run([ga, gb]) == [1.0, 2.0]
    with pytest.raises(ValueError, match="at least one Tensor"):
        pv.tuple([None])
