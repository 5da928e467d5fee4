"""The ops gradients build: run-time shape ops, tensor-argument forms, Pad, comparisons, SelectV2,
UnsortedSegmentSum and the fused gradient kernels."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_kernel

import placeviz as pv
from placeviz.graph.ops import array_ops, math_ops, nn_ops, shape_ops


@pytest.mark.parametrize(
    ("s0", "s1", "r0", "r1"),
    [
        ([2, 3], [2, 3], (), ()),
        ([], [2, 3], (0, 1), ()),
        ([3, 1], [1, 4], (1,), (0,)),
        ([4], [2, 3, 4], (0, 1), ()),
        ([1, 1], [1], (), (0,)),
        ([2, 1, 5], [3, 1], (1,), (0, 2)),
    ],
)
def test_broadcast_gradient_axes(s0: list, s1: list, r0: tuple, r1: tuple) -> None:
    assert shape_ops.broadcast_gradient_axes(s0, s1) == (r0, r1)
    t0, t1 = pv.constant(s0, dtype=pv.int32), pv.constant(s1, dtype=pv.int32)
    out = shape_ops.broadcast_gradient_args(t0, t1)
    assert out[0].op.type == "BroadcastGradientArgs"
    got = run_kernel(out[0], np.array(s0, np.int32), np.array(s1, np.int32))
    assert [tuple(g.tolist()) for g in got] == [r0, r1]
    assert got[0].dtype == np.int32


def test_broadcast_gradient_args_rejects_incompatible_shapes_at_run_time() -> None:
    a, b = pv.placeholder(pv.float32), pv.placeholder(pv.float32)
    r0, _ = shape_ops.broadcast_gradient_args(shape_ops.shape(a), shape_ops.shape(b))
    with pv.Session() as sess, pytest.raises(pv.errors.InvalidArgumentError, match="Incompatible"):
        sess.run(r0, {a: np.zeros(3), b: np.zeros(4)})


def test_shape_and_size_are_int32_and_known_statically_where_possible() -> None:
    x = pv.placeholder(pv.float32, [None, 3])
    s, n = shape_ops.shape(x), shape_ops.size(x)
    assert (s.dtype, s.shape, n.shape) == (pv.int32, [2], [])
    assert shape_ops.shape_from_tensor(s) == x.shape
    assert shape_ops.constant_value(s) is None
    full = shape_ops.shape(pv.constant(np.zeros((2, 5))))
    np.testing.assert_array_equal(shape_ops.constant_value(full), [2, 5])
    with pv.Session() as sess:
        s_val, n_val = sess.run([s, n], {x: np.zeros((4, 3), np.float32)})
    np.testing.assert_array_equal(s_val, [4, 3])
    assert n_val == 12 and n_val.dtype == np.int32


def test_tensor_shaped_reshape_fill_slice_and_broadcast_infer_what_they_can() -> None:
    x = pv.placeholder(pv.float32, [None, 3])
    flat = pv.placeholder(pv.float32, [None])
    back = shape_ops.reshape(flat, shape_ops.shape(x))
    assert back.shape == [None, 3]
    filled = shape_ops.fill(shape_ops.shape(x), pv.constant(2.0))
    assert filled.shape == [None, 3]
    static = shape_ops.fill(pv.constant([2, 2]), pv.constant(1))
    assert (static.shape, static.dtype) == ([2, 2], pv.int32)
    part = shape_ops.slice(x, pv.constant([0, 1]), pv.constant([-1, 2]))
    assert part.shape == [None, 2]
    wide = shape_ops.broadcast_to(pv.constant([[1.0], [2.0]]), pv.constant([3, 2, 4]))
    assert wide.shape == [3, 2, 4]
    with pv.Session() as sess:
        xv = np.arange(6, dtype=np.float32).reshape(2, 3)
        b, f, p, w = sess.run([back, filled, part, wide], {x: xv, flat: xv.ravel()})
    np.testing.assert_array_equal(b, xv)
    np.testing.assert_array_equal(f, np.full((2, 3), 2.0))
    np.testing.assert_array_equal(p, xv[:, 1:])
    np.testing.assert_array_equal(w, np.broadcast_to([[1.0], [2.0]], (3, 2, 4)))
    assert w.flags.writeable


def test_sum_over_run_time_axes() -> None:
    x = pv.placeholder(pv.float64)
    axes = pv.placeholder(pv.int32, [None])
    total = shape_ops.reduce_sum(x, axes)
    kept = shape_ops.reduce_sum(pv.placeholder(pv.float64, [2, 3]), axes, keepdims=True)
    assert total.shape.ndims is None and kept.shape == [None, None]
    xv = np.arange(6.0).reshape(2, 3)
    with pv.Session() as sess:
        np.testing.assert_array_equal(sess.run(total, {x: xv, axes: [1]}), xv.sum(1))
        np.testing.assert_array_equal(sess.run(total, {x: xv, axes: []}), xv)
        np.testing.assert_array_equal(sess.run(total, {x: xv, axes: [0, -1]}), xv.sum())


def test_concat_offset() -> None:
    shapes = [pv.constant(s, dtype=pv.int32) for s in ([2, 1], [2, 3], [2, 2])]
    offsets = shape_ops.concat_offset(pv.constant(-1), shapes)
    arrays = (np.array(s, np.int32) for s in ([2, 1], [2, 3], [2, 2]))
    got = run_kernel(offsets[0], np.array(-1, np.int32), *arrays)
    assert [o.tolist() for o in got] == [[0, 0], [0, 1], [0, 4]]


def test_pad() -> None:
    x = pv.constant(np.ones((2, 3), np.float32))
    padded = array_ops.pad(x, [[1, 0], [0, 2]])
    assert (padded.op.type, padded.shape) == ("Pad", [3, 5])
    np.testing.assert_array_equal(run_kernel(padded, np.ones((2, 3)), np.array([[1, 0], [0, 2]])),
                                  np.pad(np.ones((2, 3)), [(1, 0), (0, 2)]))  # fmt: skip
    with pytest.raises(pv.errors.InvalidArgumentError, match="non-negative"):
        array_ops.pad(x, [[1, -1], [0, 0]])
    unknown = array_ops.pad(x, pv.placeholder(pv.int32, [2, 2]))
    assert unknown.shape == [None, None]


def test_comparisons_and_where() -> None:
    a, b = pv.constant([1.0, 2.0, 3.0]), pv.constant([2.0])
    ops = [math_ops.equal, math_ops.greater, math_ops.greater_equal, math_ops.less,
           math_ops.less_equal]  # fmt: skip
    results = [op(a, b) for op in ops]
    assert [r.op.type for r in results] == ["Equal", "Greater", "GreaterEqual", "Less", "LessEqual"]
    assert all(r.dtype is pv.bool for r in results)
    chosen = math_ops.where_v2(math_ops.greater(a, b), a, 0.0)
    with pv.Session() as sess:
        values = sess.run([*results, chosen])
    expected = [[0, 1, 0], [0, 0, 1], [0, 1, 1], [1, 0, 0], [1, 1, 0]]
    assert [v.tolist() for v in values[:5]] == [[bool(e) for e in row] for row in expected]
    np.testing.assert_array_equal(values[5], [0.0, 0.0, 3.0])


def test_unsorted_segment_sum() -> None:
    data = pv.constant(np.arange(6.0).reshape(3, 2))
    total = math_ops.unsorted_segment_sum(data, [2, 0, 2], 4)
    assert total.shape == [4, 2]
    got = run_kernel(total, np.arange(6.0).reshape(3, 2), np.array([2, 0, 2]), np.array(4))
    np.testing.assert_array_equal(got, [[2, 3], [0, 0], [4, 6], [0, 0]])


def test_fused_gradient_kernels() -> None:
    y = np.array([0.25, 0.5, 0.75])
    dy = np.array([1.0, 2.0, -1.0])
    yt, dyt = pv.constant(y), pv.constant(dy)
    for op_type, expected in (
        ("TanhGrad", dy * (1 - y * y)),
        ("SigmoidGrad", dy * y * (1 - y)),
        ("SqrtGrad", dy * 0.5 / y),
    ):
        np.testing.assert_allclose(
            run_kernel(math_ops.unary_grad(op_type, yt, dyt), y, dy), expected
        )
    relu = nn_ops.relu_grad(dyt, pv.constant(np.array([-1.0, 0.0, 2.0])))
    np.testing.assert_array_equal(run_kernel(relu, dy, np.array([-1.0, 0.0, 2.0])), [0, 0, -1])
