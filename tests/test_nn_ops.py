"""nn_ops: a numerically stable Softmax and the activations ``pv.nn`` re-exports."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_helpers import run_kernel

from placeviz import dtypes
from placeviz import errors as pv_errors
from placeviz.graph.core import Graph
from placeviz.graph.ops import constant_op, math_ops, nn_ops, state_ops
from placeviz.graph.shapes import TensorShape
from placeviz.runtime.session import Session


def reference_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[Graph]:
    with Graph().as_default() as graph:
        yield graph


def test_softmax_op() -> None:
    x = state_ops.placeholder(dtypes.float32, [None, 3])
    s = nn_ops.softmax(x)
    s1 = nn_ops.softmax(x, axis=0, name="probs")
    assert (s.op.type, s.op.name, s1.op.name) == ("Softmax", "Softmax", "probs")
    assert (s.shape, s.dtype) == (TensorShape([None, 3]), dtypes.float32)
    array = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32)
    np.testing.assert_allclose(run_kernel(s, array), reference_softmax(array), rtol=1e-6)
    np.testing.assert_allclose(run_kernel(s1, array), reference_softmax(array, 0), rtol=1e-6)
    assert run_kernel(s, array).dtype == np.float32


def test_softmax_is_stable_for_large_logits() -> None:
    s = nn_ops.softmax(constant_op.constant([1000.0, 1000.0, -1000.0]))
    value = run_kernel(s, np.array([1000.0, 1000.0, -1000.0], np.float32))
    np.testing.assert_allclose(value, [0.5, 0.5, 0.0])


def test_softmax_does_not_modify_its_input() -> None:
    s = nn_ops.softmax(state_ops.placeholder(dtypes.float64, [2]))
    array = np.array([1.0, 2.0])
    run_kernel(s, array)
    np.testing.assert_array_equal(array, [1.0, 2.0])


@settings(max_examples=50, deadline=None)
@given(
    array=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
        elements=st.floats(-50, 50),
    ),
    data=st.data(),
)
def test_softmax_matches_numpy(array: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-array.ndim, array.ndim - 1))
    with Graph().as_default():
        s = nn_ops.softmax(constant_op.constant(array), axis=axis)
        value = run_kernel(s, array)
    np.testing.assert_allclose(value, reference_softmax(array, axis), rtol=1e-12)
    np.testing.assert_allclose(value.sum(axis=axis), 1.0)


def test_softmax_errors_name_the_op() -> None:
    with pytest.raises(
        pv_errors.DTypeMismatchError, match="Softmax does not support int32"
    ) as info:
        nn_ops.softmax(constant_op.constant([1, 2]))
    assert "'Softmax' (Softmax)" in str(info.value)
    with pytest.raises(pv_errors.InvalidArgumentError, match="rank at least 1"):
        nn_ops.softmax(constant_op.constant(1.0))
    with pytest.raises(pv_errors.InvalidArgumentError, match="out of range"):
        nn_ops.softmax(constant_op.constant([1.0]), axis=1)


def test_softmax_has_float_kernels_only() -> None:
    s = nn_ops.softmax(constant_op.constant([1.0]))
    assert s.op.op_def.supports("GPU", dtypes.float16)
    assert not s.op.op_def.supports("CPU", dtypes.int64)


def test_activations_are_math_ops() -> None:
    assert (nn_ops.relu, nn_ops.sigmoid, nn_ops.tanh) == (
        math_ops.relu,
        math_ops.sigmoid,
        math_ops.tanh,
    )
    assert set(nn_ops.__all__) == {
        *("elu", "leaky_relu", "relu", "relu6", "selu", "sigmoid", "softmax", "softplus"),
        "tanh",
    }
    r = nn_ops.relu(constant_op.constant([-1.0, 2.0]))
    assert (r.op.type, r.op.name) == ("Relu", "Relu")


def test_session_runs_softmax(fresh_graph: Graph) -> None:
    logits = state_ops.placeholder(dtypes.float32, [None, 3])
    probs = nn_ops.softmax(nn_ops.relu(logits))
    array = np.array([[-1.0, 0.0, 2.0], [3.0, 1.0, 1.0]], np.float32)
    value = Session(graph=fresh_graph).run(probs, feed_dict={logits: array})
    np.testing.assert_allclose(value, reference_softmax(np.maximum(array, 0.0)), rtol=1e-6)
