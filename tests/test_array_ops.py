"""array_ops: op types and TF's default names, static shapes with unknown dims, and kernels."""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_helpers import run_kernel

import placeviz as pv
from placeviz import dtypes
from placeviz import errors as pv_errors
from placeviz.graph.core import Graph, Tensor
from placeviz.graph.ops import array_ops, constant_op, math_ops, state_ops
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.shapes import TensorShape
from placeviz.runtime.session import Session


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[Graph]:
    with Graph().as_default() as graph:
        yield graph


def placeholder(shape: Any, dtype: Any = dtypes.float32) -> Tensor:
    return state_ops.placeholder(dtype, shape)


def shapes(max_rank: int = 4) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(1, 4), min_size=0, max_size=max_rank)


# -- zeros, ones, fill, *_like -----------------------------------------------------------------
def test_zeros_and_ones_are_named_constants() -> None:
    z = array_ops.zeros([2, 3])
    z1 = array_ops.zeros((4,), dtype=dtypes.int32)
    o = array_ops.ones(TensorShape([2]), dtype="bool")
    assert (z.op.type, z.op.name, z1.op.name, o.op.name) == ("Const", "zeros", "zeros_1", "ones")
    assert z.shape == [2, 3]
    assert z.dtype is dtypes.float32
    np.testing.assert_array_equal(run_kernel(z1), np.zeros(4, np.int32))
    np.testing.assert_array_equal(run_kernel(o), np.ones(2, bool))
    assert array_ops.zeros([]).shape == []


def test_zeros_and_ones_of_1000_elements_or_more_are_fills_as_in_tensorflow() -> None:
    """TF 2.21's ``_constant_if_small``: zeros([999]) is a Const, zeros([1000]) and
    zeros([100, 100]) a Fill of a shape_as_tensor and a Const under the zeros scope."""
    assert array_ops.zeros([999]).op.type == "Const"
    z = array_ops.zeros([100, 100], name="z")
    assert (z.op.type, z.op.name, z.shape, z.dtype) == ("Fill", "z", [100, 100], dtypes.float32)
    assert [(t.op.name, t.dtype) for t in z.op.inputs] == [
        ("z/shape_as_tensor", dtypes.int32),
        ("z/Const", dtypes.float32),
    ]
    o = array_ops.ones([1000], dtype=dtypes.bool)
    assert (o.op.type, o.op.name, o.dtype) == ("Fill", "ones", dtypes.bool)
    shape, value = (constant_value(t) for t in o.op.inputs)
    np.testing.assert_array_equal(shape, [1000])
    assert value.dtype == np.bool_ and value == np.bool_(True)
    # A dimension beyond int32 makes the shape int64, as in TF.
    assert array_ops.zeros([3 * 10**9]).op.inputs[0].dtype is dtypes.int64


def test_huge_zeros_ones_and_fill_allocate_nothing_while_the_graph_is_built() -> None:
    tracemalloc.start()
    try:
        z = array_ops.zeros([10**6, 10**6])
        o = array_ops.ones([8000, 8000])
        f = array_ops.fill([10**6, 10**6], 2.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert z.shape == [10**6, 10**6] and o.shape == [8000, 8000] and f.shape == z.shape


def test_zeros_needs_a_static_shape() -> None:
    with pytest.raises(ValueError, match="fully defined"):
        array_ops.zeros(TensorShape([None, 2]))
    with pytest.raises(ValueError, match="non-negative"):
        array_ops.ones([2, -1])


def test_zeros_of_a_shape_tensor_fill_it_at_run_time() -> None:
    """As TF's (an RNN's zero state): ``zeros/Const`` filled as the ``zeros`` op."""
    dims = placeholder([2], dtypes.int32)
    z = array_ops.zeros(dims)
    assert z.op.type == "Fill" and z.op.name == "zeros"
    assert [t.name for t in z.op.inputs] == [dims.name, "zeros/Const:0"]


def test_fill_takes_its_dtype_from_the_value() -> None:
    f = array_ops.fill([2, 3], 7)
    # TF 2.21: inputs ('Fill/dims', int32) and ('Fill/value', the value's dtype)
    assert (f.op.type, f.op.name) == ("Fill", "Fill")
    assert [(t.op.type, t.op.name) for t in f.op.inputs] == [
        ("Const", "Fill/dims"),
        ("Const", "Fill/value"),
    ]
    assert f.op.inputs[0].dtype is dtypes.int32
    assert f.shape == [2, 3]
    assert f.dtype is dtypes.int32
    value = run_kernel(f, np.array([2, 3], np.int32), np.array(7, np.int32))
    np.testing.assert_array_equal(value, np.full((2, 3), 7, np.int32))
    assert value.dtype == np.int32
    scalar = placeholder([], dtypes.float64)
    g = array_ops.fill((4,), scalar, name="filled")
    assert (g.op.name, g.dtype, g.shape) == ("filled", dtypes.float64, TensorShape([4]))


def test_fill_rejects_a_non_scalar_value() -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match=r"'Fill'.*test_array_ops\.py"):
        array_ops.fill([2], [1.0, 2.0])


def test_zeros_like_and_ones_like_keep_unknown_dims() -> None:
    """TF's forms where the shape is partly unknown: a ZerosLike op, a Fill of the run's Shape."""
    x = placeholder([None, 3])
    z = array_ops.zeros_like(x)
    o = array_ops.ones_like(x, dtype=dtypes.int64)
    assert [(op.name, op.type) for op in (z.op, o.op, *(t.op for t in o.op.inputs))] == [
        ("zeros_like", "ZerosLike"),
        ("ones_like", "Fill"),
        ("ones_like/Shape", "Shape"),
        ("ones_like/Const", "Const"),
    ]
    assert (z.shape, o.shape) == (TensorShape([None, 3]), TensorShape([None, 3]))
    assert (z.dtype, o.dtype) == (dtypes.float32, dtypes.int64)
    np.testing.assert_array_equal(run_kernel(z, np.ones((5, 3), np.float32)), np.zeros((5, 3)))
    with Session(graph=x.graph) as sess:
        value = sess.run(o, {x: np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(value, np.ones((2, 3), np.int64))
    assert value.dtype == np.int64


def test_zeros_like_and_ones_like_of_known_shapes_are_tensorflows_constants() -> None:
    """A fully known shape makes zeros a Const named zeros_like (a Fill from 1000 elements, as
    ``zeros``), ones a Fill of a Shape/shape_as_tensor Const; another dtype for an unknown
    shape fills the run's Shape."""
    z = array_ops.zeros_like(constant_op.constant([[1.0, 2.0]]))
    assert (z.op.type, z.op.name, z.shape) == ("Const", "zeros_like", TensorShape([1, 2]))
    big = array_ops.zeros_like(placeholder([40, 30]))
    assert (big.op.type, [t.op.name for t in big.op.inputs]) == (
        "Fill",
        ["zeros_like_1/shape_as_tensor", "zeros_like_1/Const"],
    )
    cast = array_ops.zeros_like(placeholder([None]), dtype=dtypes.int32)
    assert (cast.op.type, cast.dtype, cast.op.inputs[0].op.type) == ("Fill", dtypes.int32, "Shape")
    o = array_ops.ones_like([4, 5], name="o")
    assert [t.op.name for t in o.op.inputs] == ["o/Shape/shape_as_tensor", "o/Const"]
    assert o.graph.get_operation_by_name("o/tensor").type == "Const"
    with Session(graph=o.graph) as sess:
        np.testing.assert_array_equal(sess.run(o), [1, 1])
        assert sess.run(z).tolist() == [[0.0, 0.0]]


# -- reshape -----------------------------------------------------------------------------------
def test_reshape_names_and_inferred_dimension() -> None:
    x = constant_op.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    r = array_ops.reshape(x, [2, -1])
    r1 = array_ops.reshape(x, [12])
    assert (r.op.type, r.op.name, r1.op.name) == ("Reshape", "Reshape", "Reshape_1")
    assert r.shape == [2, 6]
    # TF's inputs: the tensor and an int32 Const 'Reshape/shape'
    assert r.op.inputs[0] is x and r.op.inputs[1].op.name == "Reshape/shape"
    shape = r.op.inputs[1].op.attrs["value"]
    assert shape.dtype == np.int32 and shape.tolist() == [2, -1]
    np.testing.assert_array_equal(
        run_kernel(r, np.arange(12.0).reshape(3, 4)), np.arange(12.0).reshape(2, 6)
    )


def test_reshape_with_unknown_dims() -> None:
    x = placeholder([None, 3])
    assert array_ops.reshape(x, [-1]).shape == TensorShape([None])
    assert array_ops.reshape(x, [-1, 3, 1]).shape == TensorShape([None, 3, 1])
    assert array_ops.reshape(x, [2, 3]).shape == [2, 3]
    unknown_rank = placeholder(None)
    assert array_ops.reshape(unknown_rank, [4, -1]).shape == TensorShape([4, None])


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ([5], "Cannot reshape a tensor with 6 elements to shape \\[5\\] \\(5 elements\\)"),
        ([4, -1], "evenly divisible by 4 but is 6"),
        ([-1, -1], "Only one input size may be -1"),
        ([0, -1], "empty tensor"),
        ([-2, 3], "must be non-negative"),
    ],
)
def test_reshape_errors_name_the_op(shape: list[int], message: str) -> None:
    x = constant_op.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(pv_errors.InvalidArgumentError, match=message) as info:
        array_ops.reshape(x, shape, name="bad")
    assert "'bad' (Reshape)" in str(info.value)
    assert "test_array_ops.py" in str(info.value)


def test_reshape_takes_a_shape_tensor_as_tensorflow_does() -> None:
    x = constant_op.constant([1, 2])
    r = array_ops.reshape(x, constant_op.constant([2, 1], name="to"))
    assert r.shape == [2, 1] and r.op.inputs[1].op.name == "to"


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_reshape_matches_numpy(data: st.DataObject) -> None:
    shape = data.draw(shapes())
    size = int(np.prod(shape))
    factors = [f for f in range(1, size + 1) if size % f == 0]
    first = data.draw(st.sampled_from(factors))
    target = [first, size // first]
    if data.draw(st.booleans()):
        target[data.draw(st.integers(0, 1))] = -1
    array = np.arange(size, dtype=np.float32).reshape(shape)
    with Graph().as_default():
        r = array_ops.reshape(constant_op.constant(array), target)
        expected = array.reshape(target)
        assert r.shape == list(expected.shape)
        np.testing.assert_array_equal(run_kernel(r, array), expected)


# -- transpose ---------------------------------------------------------------------------------
def test_transpose_defaults_to_reversing_dimensions() -> None:
    x = placeholder([None, 2, 3])
    t = array_ops.transpose(x)
    t1 = array_ops.transpose(x, perm=[1, 0, 2])
    assert (t.op.type, t.op.name, t1.op.name) == ("Transpose", "transpose", "transpose_1")
    assert t.shape == TensorShape([3, 2, None])
    assert t1.shape == TensorShape([2, None, 3])
    assert array_ops.transpose(placeholder(None)).shape == TensorShape(None)
    assert array_ops.transpose(placeholder(None), [1, 0]).shape == TensorShape([None, None])
    array = np.arange(24).reshape(4, 2, 3)
    np.testing.assert_array_equal(run_kernel(t, array), array.T)


@pytest.mark.parametrize(
    ("perm", "message"), [([0, 0], "not a permutation"), ([1, 0, 2], "rank 2")]
)
def test_transpose_rejects_bad_perms(perm: list[int], message: str) -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match=message) as info:
        array_ops.transpose(placeholder([2, 3]), perm)
    assert "'transpose' (Transpose)" in str(info.value)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_transpose_matches_numpy(data: st.DataObject) -> None:
    shape = data.draw(shapes())
    perm = data.draw(st.permutations(range(len(shape))))
    array = np.arange(int(np.prod(shape))).reshape(shape)
    with Graph().as_default():
        t = array_ops.transpose(constant_op.constant(array, dtype=dtypes.int64), perm)
        expected = np.transpose(array, perm)
        assert t.shape == list(expected.shape)
        np.testing.assert_array_equal(run_kernel(t, array), expected)


# -- squeeze, expand_dims ----------------------------------------------------------------------
def test_squeeze_all_and_named_axes() -> None:
    x = placeholder([1, 2, 1, 3])
    s = array_ops.squeeze(x)
    s1 = array_ops.squeeze(x, axis=[-2])
    assert (s.op.type, s.op.name, s1.op.name) == ("Squeeze", "Squeeze", "Squeeze_1")
    assert s.shape == [2, 3]
    assert s1.shape == [1, 2, 3]
    array = np.zeros((1, 2, 1, 3))
    assert run_kernel(s, array).shape == (2, 3)
    assert run_kernel(s1, array).shape == (1, 2, 3)


def test_squeeze_with_unknown_dims() -> None:
    x = placeholder([None, 1, 3])
    assert array_ops.squeeze(x).shape == TensorShape(None)  # the ? might be 1 too
    assert array_ops.squeeze(x, 0).shape == TensorShape([1, 3])  # assumed 1, as in TF
    assert array_ops.squeeze(placeholder(None), [1]).shape == TensorShape(None)


def test_squeeze_rejects_a_dimension_that_is_not_one() -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match=r"Can not squeeze dim\[1\]") as info:
        array_ops.squeeze(placeholder([1, 3]), axis=1)
    assert "'Squeeze' (Squeeze)" in str(info.value)
    with pytest.raises(pv_errors.InvalidArgumentError, match="out of range"):
        array_ops.squeeze(placeholder([1, 3]), axis=2)


@pytest.mark.parametrize(
    ("axis", "expected"),
    [(0, [1, None, 3]), (2, [None, 3, 1]), (-1, [None, 3, 1]), (-3, [1, None, 3])],
)
def test_expand_dims_positions(axis: int, expected: list[Any]) -> None:
    e = array_ops.expand_dims(placeholder([None, 3]), axis)
    assert (e.op.type, e.op.name) == ("ExpandDims", "ExpandDims")
    assert e.shape == TensorShape(expected)
    array = np.zeros((2, 3))
    assert run_kernel(e, array).shape == np.expand_dims(array, axis).shape


def test_expand_dims_range() -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match="'ExpandDims'"):
        array_ops.expand_dims(placeholder([2, 3]), 3)
    assert array_ops.expand_dims(placeholder(None), 0).shape == TensorShape(None)


# -- stack, unstack ----------------------------------------------------------------------------
def test_stack_is_pack() -> None:
    a, b = placeholder([None, 3]), placeholder([2, None])
    s = array_ops.stack([a, b])
    s1 = array_ops.stack([a, b], axis=-1)
    assert (s.op.type, s.op.name, s1.op.name) == ("Pack", "stack", "stack_1")
    assert s.shape == TensorShape([2, 2, 3])
    assert s1.shape == TensorShape([2, 3, 2])
    x, y = np.ones((2, 3)), np.zeros((2, 3))
    np.testing.assert_array_equal(run_kernel(s1, x, y), np.stack([x, y], axis=-1))


def test_stack_of_constants_folds_into_one_const() -> None:
    s = array_ops.stack([[1, 2], [3, 4]])
    assert (s.op.type, s.op.name, s.shape) == ("Const", "stack", TensorShape([2, 2]))


def test_stack_converts_python_values_to_the_tensor_dtype() -> None:
    x = placeholder([], dtypes.float64)
    s = array_ops.stack([1, x, 2.5])
    assert s.op.type == "Pack"
    assert [t.dtype for t in s.op.inputs] == [dtypes.float64] * 3
    packed = constant_op.convert_to_tensor([x, x])
    assert (packed.op.type, packed.op.name, packed.shape) == ("Pack", "packed", TensorShape([2]))


def test_stack_errors() -> None:
    with pytest.raises(pv_errors.DTypeMismatchError, match="'stack' \\(Pack\\)"):
        array_ops.stack([placeholder([2]), placeholder([2], dtypes.int32)])
    with pytest.raises(pv_errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        array_ops.stack([placeholder([2]), placeholder([3])])
    with pytest.raises(pv_errors.InvalidArgumentError, match="out of range"):
        array_ops.stack([placeholder([2]), placeholder([2])], axis=2)
    with pytest.raises(ValueError, match="at least one"):
        array_ops.stack([], axis=1)


def test_unstack_is_multi_output_unpack() -> None:
    x = placeholder([3, None])
    parts = array_ops.unstack(x)
    assert len(parts) == 3
    assert [p.name for p in parts] == ["unstack:0", "unstack:1", "unstack:2"]
    assert parts[0].op.type == "Unpack"
    assert all(p.shape == TensorShape([None]) for p in parts)
    cols = array_ops.unstack(placeholder([2, 4]), axis=-1)
    assert (cols[0].op.name, len(cols), cols[0].shape) == ("unstack_1", 4, TensorShape([2]))
    array = np.arange(8).reshape(2, 4)
    values = run_kernel(cols[0], array)
    assert isinstance(values, tuple)
    for got, want in zip(values, np.moveaxis(array, -1, 0), strict=True):
        np.testing.assert_array_equal(got, want)


def test_unstack_of_a_vector_gives_0d_arrays() -> None:
    parts = array_ops.unstack(constant_op.constant([1.0, 2.0]))
    values = run_kernel(parts[0], np.array([1.0, 2.0]))
    assert all(isinstance(v, np.ndarray) and v.shape == () for v in values)


def test_unstack_needs_a_known_num() -> None:
    with pytest.raises(ValueError, match="Cannot infer num"):
        array_ops.unstack(placeholder([None, 2]))
    with pytest.raises(ValueError, match="not in"):
        array_ops.unstack(placeholder([2]), axis=1)
    parts = array_ops.unstack(placeholder(None), num=2, axis=-1)
    assert [p.shape for p in parts] == [TensorShape(None)] * 2
    with pytest.raises(pv_errors.InvalidArgumentError, match="num=3"):
        array_ops.unstack(placeholder([2]), num=3)


# -- concat ------------------------------------------------------------------------------------
def test_concat_is_concat_v2() -> None:
    a, b = placeholder([None, 3]), placeholder([2, 3])
    c = array_ops.concat([a, b], 0)
    c1 = array_ops.concat([b, b], axis=-1)
    assert (c.op.type, c.op.name, c1.op.name) == ("ConcatV2", "concat", "concat_1")
    assert c.shape == TensorShape([None, 3])
    assert c1.shape == [2, 6]
    assert array_ops.concat([placeholder(None), b], 1).shape == TensorShape([2, None])


def test_concat_of_one_value_is_an_identity() -> None:
    x = placeholder([2])
    c = array_ops.concat([x], 0)
    # TensorFlow 2.21's names: the Identity 'concat/concat' beside a Const 'concat/concat_dim'
    assert (c.op.type, c.op.name, c.shape) == ("Identity", "concat/concat", TensorShape([2]))
    dim = c.graph.get_operation_by_name("concat/concat_dim")
    assert dim.attrs["value"].tolist() == 0


def test_concat_errors() -> None:
    # TF's words: the shapes without the axis
    with pytest.raises(
        pv_errors.InvalidArgumentError,
        match=r"Dimension 0 in both shapes must be equal, but are 3 and 4\. Shapes are \[3\] and "
        r"\[4\]",
    ) as info:
        array_ops.concat([placeholder([2, 3]), placeholder([2, 4])], 0)
    assert "'concat' (ConcatV2)" in str(info.value)
    with pytest.raises(pv_errors.InvalidArgumentError, match="same rank"):
        array_ops.concat([placeholder([2, 3]), placeholder([2])], 0)
    with pytest.raises(pv_errors.InvalidArgumentError, match="scalars"):
        array_ops.concat([placeholder([]), placeholder([])], 0)
    with pytest.raises(pv_errors.DTypeMismatchError, match="'concat"):
        array_ops.concat([placeholder([2]), placeholder([2], dtypes.int32)], 0)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_concat_matches_numpy(data: st.DataObject) -> None:
    base = data.draw(shapes().filter(bool))
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    arrays = []
    for i, size in enumerate(sizes):
        shape = list(base)
        shape[axis] = size
        arrays.append(np.full(shape, i, np.float32))
    with Graph().as_default():
        c = array_ops.concat([constant_op.constant(a) for a in arrays], axis)
        expected = np.concatenate(arrays, axis=axis)
        assert c.shape == list(expected.shape)
        if c.op.type == "ConcatV2":
            np.testing.assert_array_equal(run_kernel(c, *arrays), expected)


# -- split -------------------------------------------------------------------------------------
def test_split_into_equal_pieces() -> None:
    x = placeholder([None, 6])
    parts = array_ops.split(x, 3, axis=1)
    assert isinstance(parts, list)
    assert [p.name for p in parts] == ["split:0", "split:1", "split:2"]
    assert parts[0].op.type == "Split"
    assert all(p.shape == TensorShape([None, 2]) for p in parts)
    rows = array_ops.split(x, 2)
    assert (rows[0].op.name, rows[0].shape) == ("split_1", TensorShape([None, 6]))
    array = np.arange(12).reshape(2, 6)
    values = run_kernel(parts[0], array)
    assert isinstance(values, tuple)
    for got, want in zip(values, np.split(array, 3, axis=1), strict=True):
        np.testing.assert_array_equal(got, want)


def test_split_must_divide_evenly() -> None:
    with pytest.raises(
        pv_errors.InvalidArgumentError, match="evenly divisible by 3 but is 10"
    ) as info:
        array_ops.split(placeholder([10]), 3)
    assert "'split' (Split)" in str(info.value)
    with pytest.raises(pv_errors.InvalidArgumentError, match="at least 1"):
        array_ops.split(placeholder([10]), 0)


def test_split_by_sizes_is_split_v() -> None:
    x = placeholder([7, None])
    parts = array_ops.split(x, [2, -1, 1])
    assert parts[0].op.type == "SplitV"
    assert [p.shape for p in parts] == [TensorShape([n, None]) for n in (2, 4, 1)]
    array = np.arange(14).reshape(7, 2)
    values = run_kernel(parts[0], array)
    for got, want in zip(values, np.split(array, [2, 6]), strict=True):
        np.testing.assert_array_equal(got, want)
    cols = array_ops.split(x, [1, 1], axis=1, num=2)
    assert [c.shape for c in cols] == [TensorShape([7, 1])] * 2


@pytest.mark.parametrize("sizes", [[2, 2], [5, -1, 1], [-1, -1], [3, -2]])
def test_split_v_sizes_must_fit(sizes: list[int]) -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match="'split' \\(SplitV\\)"):
        array_ops.split(placeholder([5]), sizes)


def test_split_v_checks_unknown_sizes_at_run_time() -> None:
    parts = array_ops.split(placeholder([None]), [2, 3])
    assert [p.shape for p in parts] == [TensorShape([2]), TensorShape([3])]
    assert [v.tolist() for v in run_kernel(parts[0], np.arange(5))] == [[0, 1], [2, 3, 4]]
    with pytest.raises(ValueError, match="do not add up to the size 6"):
        run_kernel(parts[0], np.arange(6))
    rest = array_ops.split(placeholder([None]), [2, -1])
    assert [p.shape for p in rest] == [TensorShape([2]), TensorShape([None])]
    assert [v.tolist() for v in run_kernel(rest[0], np.arange(4))] == [[0, 1], [2, 3]]


def test_split_num_must_match_sizes() -> None:
    with pytest.raises(ValueError, match="num=3"):
        array_ops.split(placeholder([4]), [2, 2], num=3)


# -- slice, gather -----------------------------------------------------------------------------
def test_slice_with_size_minus_one() -> None:
    x = placeholder([None, 5])
    s = array_ops.slice(x, [1, 2], [-1, 2])
    assert (s.op.type, s.op.name) == ("Slice", "Slice")
    assert s.shape == TensorShape([None, 2])
    s1 = array_ops.slice(placeholder([4, 5]), [1, 0], [2, -1])
    assert (s1.op.name, s1.shape) == ("Slice_1", TensorShape([2, 5]))
    array = np.arange(20).reshape(4, 5)
    np.testing.assert_array_equal(run_kernel(s, array), array[1:, 2:4])
    np.testing.assert_array_equal(run_kernel(s1, array), array[1:3, :])
    none = constant_op.constant(np.zeros(0, np.int32))
    scalar = array_ops.slice(placeholder([]), none, none)
    assert isinstance(run_kernel(scalar, np.array(3.0)), np.ndarray)


def test_slice_and_reshape_of_empty_lists_follow_tensorflow() -> None:
    """An empty list has no element to give its type: TF's op helper first makes a float32
    Const of it, which Reshape (shape type defaults to int32) leaves unused beside an int32
    ``Reshape/shape_1``, and Slice (no default) rejects."""
    r = array_ops.reshape(constant_op.constant([3.0]), [])
    assert [(t.op.name, t.dtype) for t in r.op.inputs[1:]] == [("Reshape/shape_1", dtypes.int32)]
    unused = r.graph.get_operation_by_name("Reshape/shape").outputs[0]
    assert (unused.dtype, unused.shape, r.shape) == (dtypes.float32, [0], [])
    with pytest.raises(TypeError, match="parameter 'begin' has DataType float32"):
        array_ops.slice(placeholder([]), [], [])


@pytest.mark.parametrize(
    ("begin", "size", "message"),
    [
        ([0], [1], "to have 2 entries"),
        ([3, 0], [1, 1], r"begin\[0\] in \[0, 2\]"),
        ([1, 0], [2, 1], r"size\[0\] in \[0, 1\]"),
        ([0, 0], [1, -2], r"size\[1\]"),
    ],
)
def test_slice_errors(begin: list[int], size: list[int], message: str) -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match=message) as info:
        array_ops.slice(placeholder([2, 3]), begin, size)
    assert "'Slice' (Slice)" in str(info.value)


def test_tile_repeats_along_each_dimension() -> None:
    """As in TF the multiples are the op's second input, ``Tile/multiples`` (int32)."""
    t = array_ops.tile(placeholder([2, None]), [3, 2])
    multiples = t.op.inputs[1]
    assert (t.op.type, t.op.name, multiples.op.name) == ("Tile", "Tile", "Tile/multiples")
    assert (multiples.dtype, t.shape) == (dtypes.int32, TensorShape([6, None]))
    array = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run_kernel(t, array), np.tile(array, [3, 2]))
    fed = array_ops.tile(placeholder([2]), placeholder([1], dtypes.int32))
    assert fed.shape == TensorShape([None])
    with pytest.raises(pv_errors.InvalidArgumentError, match="'Tile_2' \\(Tile\\)"):
        array_ops.tile(placeholder([2, 3]), [2])
    with pytest.raises(pv_errors.InvalidArgumentError, match="non-negative"):
        array_ops.tile(placeholder([2]), [-1])


def test_gather_shapes_and_values() -> None:
    params = placeholder([5, None, 3])
    g = array_ops.gather(params, [[0, 4], [1, 1]])
    assert (g.op.type, g.op.name) == ("GatherV2", "GatherV2")
    assert g.op.inputs[1].dtype is dtypes.int32
    assert g.shape == TensorShape([2, 2, None, 3])
    indices = placeholder([None], dtypes.int64)
    g1 = array_ops.gather(params, indices, axis=-1)
    assert (g1.op.name, g1.shape) == ("GatherV2_1", TensorShape([5, None, None]))
    array = np.arange(30).reshape(5, 2, 3)
    np.testing.assert_array_equal(
        run_kernel(g, array, np.array([[0, 4], [1, 1]])), array[[[0, 4], [1, 1]]]
    )
    np.testing.assert_array_equal(run_kernel(g1, array, np.array([2, 0])), array[..., [2, 0]])


def test_gather_errors() -> None:
    with pytest.raises(pv_errors.DTypeMismatchError, match="'indices'") as info:
        array_ops.gather(placeholder([3]), [0.5])
    assert "'GatherV2' (GatherV2)" in str(info.value)
    with pytest.raises(pv_errors.InvalidArgumentError, match="at least 1 dimensional"):
        array_ops.gather(placeholder([]), [0])
    with pytest.raises(pv_errors.InvalidArgumentError, match="out of range"):
        array_ops.gather(placeholder([3]), [0], axis=1)


# -- cast --------------------------------------------------------------------------------------
def test_cast() -> None:
    x = placeholder([None, 2])
    c = array_ops.cast(x, dtypes.int32)
    assert (c.op.type, c.op.name, c.dtype, c.shape) == (
        "Cast",
        "Cast",
        dtypes.int32,
        TensorShape([None, 2]),
    )
    assert array_ops.cast(x, "float32") is x
    value = run_kernel(c, np.array([[1.7, -1.7]], np.float32))
    np.testing.assert_array_equal(value, [[1, -1]])
    assert value.dtype == np.int32
    b = array_ops.cast(constant_op.constant([0.0, 2.0]), dtypes.bool, name="nonzero")
    assert b.op.name == "nonzero"
    np.testing.assert_array_equal(run_kernel(b, np.array([0.0, 2.0])), [False, True])


def test_cast_has_kernels_for_every_dtype_but_strings_on_gpu() -> None:
    c = array_ops.cast(placeholder([2]), dtypes.int32)
    assert all(c.op.op_def.supports("GPU", d) for d in dtypes.ALL if d is not dtypes.string)
    assert c.op.op_def.supports("CPU", dtypes.string)
    assert not c.op.op_def.supports("GPU", dtypes.string)


def test_string_constants_hold_bytes_and_stay_on_the_cpu() -> None:
    """As TF: str becomes UTF-8 bytes; a scalar fetches as bytes, an array as objects."""
    text = constant_op.constant("hé")
    many = constant_op.constant([["a", b"b"]])
    assert (text.dtype, text.shape, many.shape) == (dtypes.string, [], [1, 2])
    with pytest.raises(TypeError, match="dtype string"):
        constant_op.constant([1, 2], dtype=dtypes.string)
    with pytest.raises(TypeError, match="dtype int32"):
        constant_op.constant("7", dtype=dtypes.int32)
    with Session(graph=text.graph) as sess:
        assert sess.run(text) == "hé".encode()
        assert sess.run(many).tolist() == [[b"a", b"b"]]


# -- costs -------------------------------------------------------------------------------------
def test_costs() -> None:
    x = placeholder([4, 5])
    s = array_ops.slice(x, [0, 0], [2, -1])
    # the 10 elements copied out, read and written, and the int32 begin and size it reads
    assert s.op.op_def.cost(s.op, [(4, 5), (2,), (2,)], [(2, 5)]) == (0.0, 2 * 10 * 4 + 2 * 2 * 4)
    c = array_ops.cast(x, dtypes.float64)
    assert c.op.op_def.cost(c.op, [(4, 5)], [(4, 5)]) == (20.0, 20 * (4 + 8))
    r = array_ops.reshape(x, [-1])
    assert r.op.op_def.cost(r.op, [(4, 5)], [(20,)]) == (0.0, 0.0)
    f = array_ops.fill([3], 1.0)
    assert f.op.op_def.cost(f.op, [()], [(3,)]) == (0.0, 12.0)


def test_ops_work_with_math_ops_results() -> None:
    x = placeholder([None, 4])
    y = array_ops.reshape(math_ops.add(x, 1.0), [-1, 2])
    assert y.shape == TensorShape([None, 2])


# -- end to end through a Session --------------------------------------------------------------
def test_session_runs_array_ops(fresh_graph: Graph) -> None:
    x = placeholder([None, 4])
    flat = array_ops.reshape(array_ops.transpose(x), [-1])
    halves = array_ops.split(x, [1, -1], axis=1)
    joined = array_ops.concat([halves[1], halves[0]], axis=1)
    picked = array_ops.gather(joined, [1, 0])
    rows = array_ops.unstack(array_ops.cast(picked, dtypes.int32))
    middle = array_ops.slice(x, [0, 1], [-1, 2])
    zeros = array_ops.slice(array_ops.zeros_like(x), [0, 0], [-1, 2])
    stacked = array_ops.stack([middle, zeros], axis=1)
    array = np.arange(8, dtype=np.float32).reshape(2, 4) + 0.5
    got = Session(graph=fresh_graph).run([flat, joined, picked, rows, stacked], {x: array})
    expected_joined = np.concatenate([array[:, 1:], array[:, :1]], axis=1)
    np.testing.assert_array_equal(got[0], array.T.reshape(-1))
    np.testing.assert_array_equal(got[1], expected_joined)
    np.testing.assert_array_equal(got[2], expected_joined[[1, 0]])
    for row, want in zip(got[3], expected_joined[[1, 0]].astype(np.int32), strict=True):
        np.testing.assert_array_equal(row, want)
    np.testing.assert_array_equal(got[4], np.stack([array[:, 1:3], np.zeros((2, 2))], axis=1))


def test_session_runs_fills_and_squeezes(fresh_graph: Graph) -> None:
    filled = array_ops.fill([2, 1, 3], 2.5)
    squeezed = array_ops.squeeze(array_ops.expand_dims(filled, 0))
    total = math_ops.add(squeezed, array_ops.ones([2, 3]))
    value = Session(graph=fresh_graph).run(total)
    np.testing.assert_array_equal(value, np.full((2, 3), 3.5, np.float32))


def test_session_reports_a_split_that_does_not_fit(fresh_graph: Graph) -> None:
    x = placeholder([None])
    parts = array_ops.split(x, [2, 2])
    with pytest.raises(pv_errors.InvalidArgumentError, match=r"(?s)size 5.*'split' \(SplitV\)"):
        Session(graph=fresh_graph).run(parts, {x: np.arange(5, dtype=np.float32)})


def test_a_fed_shape_is_read_afresh_on_every_run() -> None:
    """Kernels keep a shape input's ints only while the run brings the same array."""
    x = pv.constant(np.arange(6.0, dtype=np.float32))
    shape = pv.placeholder(pv.int32, [2])
    r = pv.reshape(x, shape)
    with pv.Session() as sess:
        assert sess.run(r, {shape: [2, 3]}).shape == (2, 3)
        assert sess.run(r, {shape: [3, 2]}).shape == (3, 2)
        assert sess.run(pv.reshape(x, [6, 1])).shape == (6, 1)


def test_getitem_reads_a_fed_index_afresh_and_slices_variables() -> None:
    """t[i] is TF's StridedSlice; its bounds are read per array, so a fed index that changes
    between runs is honoured; a Variable slices its value; a tensor still cannot be iterated."""
    x = pv.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    i = pv.placeholder(pv.int32, [])
    row = x[i]
    v = pv.Variable([1.0, 2.0, 3.0])
    tail = v[1:]
    assert (row.op.type, row.shape, tail.shape) == ("StridedSlice", TensorShape([2]), [2])
    with pv.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(row, {i: 2}).tolist() == [4.0, 5.0]
        assert sess.run(row, {i: 0}).tolist() == [0.0, 1.0]
        assert sess.run(tail).tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match="Iterating over a symbolic"):
        list(x)


def test_gather_refuses_indices_outside_the_axis_with_tensorflows_words() -> None:
    """NumPy would count -1 from the end; TF names the first bad index of any rank."""
    params = pv.constant([1, 2, 3])
    indices = pv.placeholder(pv.int32, [2, 2])
    g = pv.gather(params, indices)
    with pv.Session() as sess:
        assert sess.run(g, {indices: [[0, 1], [2, 2]]}).tolist() == [[1, 2], [3, 3]]
        for bad, words in (
            ([[0, 1], [7, 0]], "indices[1,0] = 7"),
            ([[0, -1], [0, 0]], "[0,1] = -1"),
        ):
            with pytest.raises(
                pv_errors.InvalidArgumentError, match=re.escape(f"{words} is not in [0, 3)")
            ):
                sess.run(g, {indices: bad})


def test_a_tensor_shape_of_one_dimension_is_tfs_singleton_shape() -> None:
    # tf.TensorShape(3) is TensorShape([3]); None stays the unknown rank
    assert pv.TensorShape(3) == pv.TensorShape([3])
    assert pv.TensorShape(3).as_list() == [3]
    assert pv.TensorShape(None).ndims is None
