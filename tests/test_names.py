"""Op names, types and scope rules as TensorFlow 2.21 in TF1 graph mode makes them.

Every expected list below was recorded by running the same program with
``tf.compat.v1`` after ``disable_v2_behavior()``.
"""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind


def _names() -> list[str]:
    return [op.name for op in pv.get_default_graph().get_operations()]


def test_converted_python_values_are_named_after_their_argument() -> None:
    x = pv.placeholder(pv.float32, [1, 1], name="x")
    _ = x + 1.0
    _ = 2.0 * x
    _ = pv.matmul([[1.0]], x)
    _ = x @ x
    _ = x - 1
    _ = x / 2.0
    assert _names() == [
        "x",
        "add/y",
        "add",
        "mul/x",
        "mul",
        "MatMul/a",
        "MatMul",
        "matmul_1",  # `@` names its op "matmul", unique case-insensitively after MatMul
        "sub/y",
        "sub",
        "truediv/y",
        "truediv",
    ]


def test_module_functions_name_their_converted_operands() -> None:
    x = pv.placeholder(pv.float32, [2, 2], name="x")
    for fn in (pv.add, pv.subtract, pv.multiply, pv.divide, pv.pow, pv.maximum, pv.minimum):
        fn(x, 1.0)
    pv.matmul(x, [[1.0, 1.0], [1.0, 1.0]])
    assert _names() == [
        "x",
        *("Add/y", "Add", "Sub/y", "Sub", "Mul/y", "Mul", "truediv/y", "truediv"),
        *("Pow/y", "Pow", "Maximum/y", "Maximum", "Minimum/y", "Minimum"),
        *("MatMul/b", "MatMul"),
    ]


def test_assign_value_and_read_value_names() -> None:
    v = pv.Variable(1.0, name="v")
    v.assign(5.0)
    read = v.read_value()
    assert _names() == [
        "v/initial_value",
        "v",
        "v/Assign",
        "v/read",
        "Assign/value",
        "Assign",
        "read",
    ]
    assert read.op.inputs[0].op.name == "v"
    sess = pv.Session()
    sess.run(v.initializer)
    assert sess.run(read) == 1.0


def test_the_implicit_gradient_seed_is_a_fill_named_grad_ys() -> None:
    x = pv.placeholder(pv.float32, [2], name="x")
    y = x * x
    pv.gradients(y, [x])
    assert _names() == [
        "x",
        "mul",
        "gradients/Shape",
        "gradients/grad_ys_0/Const",
        "gradients/grad_ys_0",
        "gradients/mul_grad/Mul",
        "gradients/mul_grad/Mul_1",
        "gradients/AddN",
    ]
    (g,) = pv.gradients(y, [x])
    np.testing.assert_allclose(pv.Session().run(g, {x: [1.0, 3.0]}), [2.0, 6.0])


def _optimizer_step_names(optimizer: pv.train.Optimizer) -> list[str]:
    x = pv.placeholder(pv.float32, [2, 2], name="x")
    w = pv.Variable(pv.ones([2, 1]), name="w")
    loss = pv.reduce_sum(pv.matmul(x, w))
    optimizer.minimize(loss)
    # TF passes Sum its axes as a Const input and builds Sum's gradient from Reshape and Tile;
    # placeviz keeps the axes an attr and broadcasts: those ops are left out of the comparison.
    return [n for n in _names() if not n.startswith(("gradients/Sum_grad/", "Const"))]


FORWARD_AND_GRADIENTS = (
    *("x", "ones", "w", "w/Assign", "w/read", "MatMul", "Sum"),
    *("gradients/Shape", "gradients/grad_ys_0/Const", "gradients/grad_ys_0"),
    *("gradients/MatMul_grad/MatMul", "gradients/MatMul_grad/MatMul_1"),
    "gradients/MatMul_grad/tuple/group_deps",
    "gradients/MatMul_grad/tuple/control_dependency",
    "gradients/MatMul_grad/tuple/control_dependency_1",
)


def test_gradient_descent_step_names() -> None:
    assert _optimizer_step_names(pv.train.GradientDescentOptimizer(0.1)) == [
        *FORWARD_AND_GRADIENTS,
        *("GradientDescent/learning_rate", "GradientDescent/update_w/ApplyGradientDescent"),
        "GradientDescent",
    ]


def test_momentum_step_names() -> None:
    assert _optimizer_step_names(pv.train.MomentumOptimizer(0.1, momentum=0.9)) == [
        *FORWARD_AND_GRADIENTS,
        *("w/Momentum/Initializer/zeros", "w/Momentum", "w/Momentum/Assign", "w/Momentum/read"),
        *("Momentum/learning_rate", "Momentum/momentum", "Momentum/update_w/ApplyMomentum"),
        "Momentum",
    ]


def test_adam_step_names() -> None:
    assert _optimizer_step_names(pv.train.AdamOptimizer(0.1)) == [
        *FORWARD_AND_GRADIENTS,
        *("beta1_power/initial_value", "beta1_power", "beta1_power/Assign", "beta1_power/read"),
        *("beta2_power/initial_value", "beta2_power", "beta2_power/Assign", "beta2_power/read"),
        *("w/Adam/Initializer/zeros", "w/Adam", "w/Adam/Assign", "w/Adam/read"),
        *("w/Adam_1/Initializer/zeros", "w/Adam_1", "w/Adam_1/Assign", "w/Adam_1/read"),
        *("Adam/learning_rate", "Adam/beta1", "Adam/beta2", "Adam/epsilon"),
        *("Adam/update_w/ApplyAdam", "Adam/mul", "Adam/Assign", "Adam/mul_1", "Adam/Assign_1"),
        "Adam",
    ]


def test_name_scope_edge_cases() -> None:
    with pv.name_scope("") as scope:
        assert scope == "" and pv.constant(1.0).op.name == "Const"
    with pv.name_scope("a/") as scope:  # a name ending in "/" is taken as it is
        assert scope == "a/" and pv.constant(1.0).op.name == "a/Const"
    with pv.name_scope("outer"):
        with pv.name_scope("_a") as inner:  # inner scopes may start with "_" or "-"
            assert inner == "outer/_a/"
        with pv.name_scope("") as reset:
            assert reset == ""
    for bad in ("/", "_a", "-a", "a b", "bad!", "x:0"):
        with pytest.raises(ValueError, match="is not a valid root scope name"):
            pv.get_default_graph().name_scope(bad).__enter__()


@pytest.mark.parametrize("bad", ["x:0", "", "a\x00b", "_a", "-a", "a b"])
def test_invalid_op_names_raise_as_in_tensorflow(bad: str) -> None:
    x = pv.constant(1.0, name="x")
    with pytest.raises(ValueError, match="is not a valid node name"):
        pv.constant(2.0, name=bad)
    if bad:  # TF's op functions (identity, add, placeholder) take "" as their default name
        with pytest.raises(ValueError, match=r"Identity op created at test_names\.py:\d+"):
            pv.identity(x, name=bad)
    else:
        assert pv.identity(x, name=bad).op.name == "Identity"
    # The failed names were not taken: x is still found by its own name.
    assert [n for n in _names() if n != "Identity"] == ["x"]
    assert pv.get_default_graph().get_tensor_by_name("x:0") is x


def test_names_tensorflow_accepts() -> None:
    names = [pv.constant(1.0, name=n).op.name for n in ("a//b", "a/", ".a", "a-b.c_d", "a>b")]
    assert names == ["a//b", "a", ".a", "a-b.c_d", "a>b"]


def test_consumers_list_an_op_once_per_input_that_reads_the_tensor() -> None:
    x = pv.placeholder(pv.float32, [2], name="x")
    square = x * x
    double = x + 1.0
    assert [op.name for op in x.consumers()] == [square.op.name, square.op.name, double.op.name]
    assert double.consumers() == []


def test_shape_size_and_rank_fold_what_construction_knows() -> None:
    # TF 2.21's names, op types, dtypes and static shapes for the same ten calls.
    x = pv.placeholder(pv.float32, [2, 3], name="x")
    u = pv.placeholder(pv.float32, None, name="u")
    p = pv.placeholder(pv.float32, [None, 3], name="p")
    tensors = [
        *(pv.shape(x), pv.size(x), pv.rank(x)),
        *(pv.shape(u), pv.size(u), pv.rank(u)),
        *(pv.shape(p), pv.size(p, out_type=pv.int64), pv.rank(p)),
        pv.shape(p, out_type=pv.int64, name="s64"),
    ]
    assert [(t.op.name, t.op.type, t.dtype.name, str(t.shape)) for t in tensors] == [
        ("Shape", "Const", "int32", "(2,)"),
        ("Size", "Const", "int32", "()"),
        ("Rank", "Const", "int32", "()"),
        ("Shape_1", "Shape", "int32", "(?,)"),
        ("Size_1", "Size", "int32", "()"),
        ("Rank_1", "Rank", "int32", "()"),
        ("Shape_2", "Shape", "int32", "(2,)"),
        ("Size_2", "Size", "int64", "()"),
        ("Rank_2", "Const", "int32", "()"),
        ("s64", "Shape", "int64", "(2,)"),
    ]
    values = pv.Session().run(tensors[3:], {u: [[1.0, 2.0]], p: [[1.0, 2.0, 3.0]]})
    expected = [[1, 2], 2, 2, [1, 3], 3, 2, [1, 3]]
    for value, want, tensor in zip(values, expected, tensors[3:]):
        np.testing.assert_array_equal(value, want)
        assert value.dtype == tensor.dtype.np


def test_a_variable_stands_for_its_variable_op_as_a_graph_element() -> None:
    # TF1's RefVariable._as_graph_element is the VariableV2 op's output, not v/read.
    v = pv.Variable(2.0, name="v")
    graph = pv.get_default_graph()
    assert v.op.type == "VariableV2"
    assert graph.as_graph_element(v) is v.op.outputs[0]
    one = pv.constant(1.0)
    with pv.control_dependencies([v]):
        after = pv.identity(one, name="after")
    assert [op.name for op in after.op.control_inputs] == ["v"]
    # As an operand the variable is still its value, read through v/read.
    double = v * 2.0
    assert double.op.inputs[0].op.name == "v/read"
    sess = pv.Session()
    sess.run(v.initializer)
    metadata = pv.RunMetadata()
    options = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    assert sess.run(v, options=options, run_metadata=metadata) == 2.0
    trace = metadata.trace
    names = {node["id"]: node["name"] for node in trace.nodes}
    is_op = trace.events["kind"] == int(EventKind.OP)
    ran = {names[int(i)] for i in trace.events["node"][is_op]}
    assert "v/read" not in ran and "v" in ran
    assert sess.run(after) == 1.0


def test_a_fetched_variable_holds_the_runs_update_as_in_tensorflow() -> None:
    # TF 2.21: sess.run([train_op, loss, w]) gives the loss before and w after the step.
    w = pv.Variable(0.0, name="weight")
    x = pv.placeholder(pv.float32, [None])
    out = pv.placeholder(pv.float32, [None])
    loss = pv.reduce_mean(pv.square(w * x - out))
    train = pv.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess = pv.Session()
    sess.run(w.initializer)
    steps = [sess.run([train, loss, w], {x: [1, 2], out: [3, 5]})[1:] for _ in range(2)]
    np.testing.assert_allclose(steps, [[17.0, 0.13], [15.352249, 0.2535]], rtol=1e-5)


def test_optimizers_gate_each_ops_gradients_as_tensorflow() -> None:
    x = pv.placeholder(pv.float32, [2, 2], name="x")
    w = pv.Variable(pv.ones([2, 1]), name="w")
    optimizer = pv.train.GradientDescentOptimizer(0.1)
    ((grad, _),) = optimizer.compute_gradients(pv.reduce_sum(pv.matmul(x, w)))
    graph = pv.get_default_graph()
    group = graph.get_operation_by_name("gradients/MatMul_grad/tuple/group_deps")
    assert [op.name for op in group.control_inputs] == [
        "gradients/MatMul_grad/MatMul",
        "gradients/MatMul_grad/MatMul_1",
    ]
    assert grad.op.name == "gradients/MatMul_grad/tuple/control_dependency_1"
    assert grad.op.type == "Identity" and grad.op.control_inputs == [group]
    assert grad.op.inputs[0].op.name == "gradients/MatMul_grad/MatMul_1"
    # pv.gradients, as tf.gradients, does not gate (gate_gradients=False).
    (plain,) = pv.gradients(pv.matmul(x, w, name="again"), [w])
    assert plain.op.name == "gradients_1/again_grad/MatMul_1"


def test_gate_graph_joins_all_gradients_in_one_tuple() -> None:
    # TF 2.21: GATE_GRAPH gates no op's gradients, then one top-level tuple over all of them.
    x = pv.placeholder(pv.float32, [2, 2], name="x")
    w = pv.Variable(pv.ones([2, 1]), name="w")
    b = pv.Variable(pv.ones([1]), name="b")
    optimizer = pv.train.GradientDescentOptimizer(0.1)
    pairs = optimizer.compute_gradients(
        pv.reduce_sum(pv.matmul(x, w) + b), gate_gradients=optimizer.GATE_GRAPH
    )
    assert [n for n in _names() if "tuple" in n] == [
        "tuple/group_deps",
        "tuple/control_dependency",
        "tuple/control_dependency_1",
    ]
    assert [g.op.name for g, _ in pairs] == [
        "tuple/control_dependency",
        "tuple/control_dependency_1",
    ]
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    gw, gb = sess.run([g for g, _ in pairs], {x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_allclose(gw, [[4.0], [6.0]])
    np.testing.assert_allclose(gb, [2.0])


def test_base_dtype_is_the_dtype_itself() -> None:
    # TF: v.dtype is float32_ref and v.dtype.base_dtype float32; placeviz has no ref dtypes.
    v = pv.Variable(1.0)
    assert v.dtype.base_dtype is pv.float32
    assert pv.zeros([2], dtype=v.dtype.base_dtype).dtype is pv.float32


def test_name_scope_default_name_only_replaces_none() -> None:
    # TF 2.21: name_scope(None, "d") opens "d/"; name_scope("", "d") resets to the root.
    with pv.name_scope(None, "d") as scope:
        assert scope == "d/"
        with pv.name_scope("", "d") as reset:
            assert reset == "" and pv.constant(1.0).op.name == "Const"
