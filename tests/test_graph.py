"""Graph construction: names, scopes, operators, dtypes and construction-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv


def test_unique_names_follow_tensorflow() -> None:
    m = [pv.matmul(pv.ones([2, 2]), pv.ones([2, 2])) for _ in range(3)]
    assert [t.op.name for t in m] == ["MatMul", "MatMul_1", "MatMul_2"]
    assert m[1].name == "MatMul_1:0"
    with pv.name_scope("tower_0"):
        t = pv.matmul(pv.ones([2, 2]), pv.ones([2, 2]))
    assert t.op.name == "tower_0/MatMul"
    with pv.name_scope("tower_0") as scope:
        assert scope == "tower_0_1/"
        assert pv.constant(1.0).op.name == "tower_0_1/Const"
    with pv.name_scope("tower_0/"):
        assert pv.constant(1.0).op.name == "tower_0/Const"
        assert pv.constant(1.0).op.name == "tower_0/Const_1"
    # TensorFlow matches names case-insensitively when making them unique.
    assert pv.constant(1.0, name="matmul").op.name == "matmul_3"


def test_operator_default_names_and_types() -> None:
    a, b = pv.constant(1.0), pv.constant(2.0)
    cases = {
        "add": (a + b, "AddV2"),
        "sub": (a - b, "Sub"),
        "mul": (a * b, "Mul"),
        "truediv": (a / b, "RealDiv"),
        "Neg": (-a, "Neg"),
        "pow": (a**b, "Pow"),
    }
    for name, (tensor, op_type) in cases.items():
        assert (tensor.op.name, tensor.op.type) == (name, op_type)
    m = pv.ones([2, 2]) @ pv.ones([2, 2])
    assert m.op.type == "MatMul"
    assert pv.add_n([a, b]).op.type == "AddN"
    # as TF: one tensor is its own sum, or an Identity of it when the sum is named
    assert pv.add_n([a]) is a
    named = pv.add_n([a], name="total")
    assert (named.op.type, named.op.name, named.op.inputs[0]) == ("Identity", "total", a)
    assert pv.placeholder(pv.float32).op.type == "Placeholder"
    assert pv.Variable(1.0).op.type == "VariableV2"


def test_python_numbers_take_the_tensor_dtype() -> None:
    half = pv.constant([1.0, 2.0], dtype=pv.float16)
    assert (half * 2).dtype is pv.float16
    assert (2 * half).dtype is pv.float16
    assert (pv.constant(3) + 1).dtype is pv.int32
    assert (pv.constant(3) / 2).dtype is pv.float64  # TensorFlow's truediv of ints
    with pytest.raises(TypeError):
        pv.constant(3) + 2.5
    assert pv.Session().run(half * 2).dtype == np.float16


def test_constant_shapes_and_dtypes() -> None:
    assert pv.constant([1, 2, 3, 4, 5, 6], shape=[2, 3]).shape == [2, 3]
    assert pv.constant(7.0, shape=[2, 2]).shape.as_list() == [2, 2]
    assert pv.constant([1, 2]).dtype is pv.int32
    assert pv.constant([1.5]).dtype is pv.float32
    assert pv.constant(True).dtype is pv.bool
    assert pv.constant(np.arange(3, dtype=np.int64)).dtype is pv.int64
    with pytest.raises(TypeError):
        pv.constant([1, 2, 3], shape=[2, 2])


def test_shape_mismatch_raises_at_construction_naming_the_op() -> None:
    a = pv.ones([2, 3])
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        pv.matmul(a, a)
    message = str(info.value)
    assert "Dimensions must be equal, but are 3 and 2" in message
    assert "'MatMul' (MatMul)" in message and "test_graph.py" in message
    assert "[2,3], [2,3]" in message
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        pv.ones([2, 3]) + pv.ones([4])
    # The failed op was not added; the graph stays usable.
    assert pv.Session().run(pv.matmul(a, pv.ones([3, 1]))).shape == (2, 1)


def test_dtype_mismatch_raises_a_type_error_naming_the_op() -> None:
    with pytest.raises(pv.errors.DTypeMismatchError) as info:
        pv.add(pv.constant(1.0), pv.constant(1))
    assert isinstance(info.value, TypeError)
    assert "'Add' (AddV2)" in str(info.value)
    assert "int32 that does not match type float32" in str(info.value)
    with pytest.raises(TypeError, match="Sqrt does not support int32"):
        pv.sqrt(pv.constant(4))


def test_placeholders_have_partial_shapes() -> None:
    x = pv.placeholder(pv.float32, shape=[None, 3], name="x")
    assert x.shape.as_list() == [None, 3]
    y = pv.matmul(x, pv.ones([3, 2]))
    assert y.shape.as_list() == [None, 2]
    assert (x + 1.0).shape.as_list() == [None, 3]
    unknown = pv.placeholder(pv.float32)
    assert unknown.shape.ndims is None
    assert (unknown * 2.0).shape.ndims is None


def test_device_scopes_merge_field_by_field() -> None:
    with pv.device("/job:worker"):
        s = pv.constant(1.0)
        with pv.device("/gpu:1"):
            p1 = 2 * s
            with pv.device("/task:1"):
                p2 = 3 * s
            with pv.device(None):
                free = pv.constant(0.0)
    assert s.op.device == "/job:worker"
    assert p1.op.device == "/job:worker/device:GPU:1"
    assert p2.op.device == "/job:worker/task:1/device:GPU:1"
    assert free.op.device == ""
    with pv.device(pv.DeviceSpec(device_type="GPU", device_index=0)):
        assert pv.constant(1.0).device == "/device:GPU:0"


def test_malformed_device_spec_in_a_scope_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="/gpu:zero"), pv.device("/gpu:zero"):
        pass


def test_colocate_with_ignores_outer_device_scopes() -> None:
    with pv.device("/cpu:0"):
        a = pv.constant(1.0)
    with pv.device("/gpu:0"), pv.colocate_with(a):
        b = a + 1.0
    assert b.op.colocation_groups() == ["loc:@Const"]
    assert b.op.device == "/device:CPU:0"


def test_control_dependencies_skip_inputs_that_already_depend() -> None:
    a = pv.constant(1.0)
    with pv.control_dependencies([a]):
        b = pv.constant(2.0)
        c = b + 1.0  # b already waits for a
    assert b.op.control_inputs == [a.op]
    assert c.op.control_inputs == []
    with pv.control_dependencies([a]), pv.control_dependencies(None):
        assert pv.constant(3.0).op.control_inputs == []


def test_graph_lookup_and_isolation() -> None:
    g = pv.Graph()
    with g.as_default():
        c = pv.constant(1.0, name="c")
        assert pv.get_default_graph() is g
    assert g.get_tensor_by_name("c:0") is c
    assert g.get_operation_by_name("c") is c.op
    assert g.as_graph_element("c:0") is c
    assert pv.get_default_graph() is not g
    with pytest.raises(KeyError):
        g.get_operation_by_name("missing")
    with pytest.raises(ValueError, match="same graph"):
        pv.add(c, pv.constant(1.0))


def test_variable_creates_tensorflow_ops() -> None:
    v = pv.Variable(3.0, name="a")
    names = [op.name for op in pv.get_default_graph().get_operations()]
    assert names == ["a/initial_value", "a", "a/Assign", "a/read"]
    # TF1's variables are reference tensors: float32_ref, whose base_dtype is float32
    assert v.name == "a:0" and v.dtype is pv.float32_ref and v.shape == []
    assert v.dtype.base_dtype is pv.float32 and v.value().dtype is pv.float32
    assert v.initializer.type == "Assign"
    assert (v * 2.0).op.inputs[0] is v.value()
    w = pv.Variable(np.zeros((2, 3), dtype=np.float32))
    assert w.op.name == "Variable" and w.shape == [2, 3]
    assert pv.global_variables() == [v, w]
    assert pv.global_variables_initializer().name == "init"


def test_tensor_is_not_a_python_bool() -> None:
    """TF's OperatorNotAllowedInGraphError, a TypeError, so `except TypeError` still works."""
    with pytest.raises(pv.errors.OperatorNotAllowedInGraphError, match="as a Python `bool`"):
        bool(pv.constant(True))
    assert issubclass(pv.errors.OperatorNotAllowedInGraphError, TypeError)
