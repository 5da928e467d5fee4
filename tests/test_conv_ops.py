"""Convolution and pooling ops against NumPy references written out loop by loop, their
gradients against finite differences, and TF's errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from test_gradients import check_gradients

import placeviz as pv
from placeviz import errors as pv_errors
from placeviz.graph.core import Graph
from placeviz.graph.ops import conv_ops

Pads = tuple[tuple[int, int], tuple[int, int]]


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[Graph]:
    with Graph().as_default() as graph:
        yield graph


def run(fetches: Any, cpus: int = 1) -> Any:
    with pv.Session(config=pv.ConfigProto(device_count={"CPU": cpus})) as sess:
        return sess.run(fetches)


def arange(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    """Distinct, sign-mixed values so that every tap and every window shows in the result."""
    values = np.arange(np.prod(shape), dtype=np.float64)
    return ((values * 7 % 23) - 11).reshape(shape).astype(dtype) / 4


# -- references: loops over output positions, independent of the im2col engine ----------------
def same_pads(size: int, window: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + (window - 1) * dilation + 1 - size)
    return total // 2, total - total // 2


def reference_conv(
    x: np.ndarray, w: np.ndarray, strides: tuple[int, int], dilations: tuple[int, int], pads: Pads
) -> np.ndarray:
    padded = np.pad(x, ((0, 0), *pads, (0, 0)))
    kh, kw, depth, out_depth = w.shape
    per_group = out_depth // (x.shape[3] // depth)
    ho = (padded.shape[1] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    wo = (padded.shape[2] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.zeros((x.shape[0], ho, wo, out_depth))
    for i in range(ho):
        for j in range(wo):
            for o in range(out_depth):
                g = o // per_group
                for a in range(kh):
                    for b in range(kw):
                        row = i * strides[0] + a * dilations[0]
                        col = j * strides[1] + b * dilations[1]
                        pixel = padded[:, row, col, g * depth : (g + 1) * depth]
                        out[:, i, j, o] += pixel @ w[a, b, :, o]
    return out


def reference_pool(
    x: np.ndarray, size: tuple[int, int], strides: tuple[int, int], pads: Pads, mode: str
) -> np.ndarray:
    ho = (x.shape[1] + sum(pads[0]) - size[0]) // strides[0] + 1
    wo = (x.shape[2] + sum(pads[1]) - size[1]) // strides[1] + 1
    out = np.zeros((x.shape[0], ho, wo, x.shape[3]))
    for i in range(ho):
        for j in range(wo):
            top, left = i * strides[0] - pads[0][0], j * strides[1] - pads[1][0]
            rows = slice(max(top, 0), min(top + size[0], x.shape[1]))
            cols = slice(max(left, 0), min(left + size[1], x.shape[2]))
            block = x[:, rows, cols, :]
            out[:, i, j, :] = block.max(axis=(1, 2)) if mode == "max" else block.mean(axis=(1, 2))
    return out


def reference_lrn(x: np.ndarray, radius: int, bias: float, alpha: float, beta: float) -> np.ndarray:
    out = np.empty_like(x)
    depth = x.shape[-1]
    for d in range(depth):
        lo, hi = max(0, d - radius), min(depth, d + radius + 1)
        norm = bias + alpha * (x[..., lo:hi] ** 2).sum(axis=-1)
        out[..., d] = x[..., d] / norm**beta
    return out


def numeric_gradient(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-5) -> Any:
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


# -- values ------------------------------------------------------------------------------------
CONV_CASES = [
    # input shape, filter shape, strides, dilations, padding
    ((1, 5, 5, 2), (3, 3, 2, 3), (1, 1), (1, 1), "SAME"),
    ((2, 5, 6, 2), (3, 2, 2, 2), (2, 2), (1, 1), "SAME"),
    ((1, 6, 5, 3), (2, 3, 3, 2), (1, 2), (1, 1), "VALID"),
    ((1, 7, 7, 2), (3, 3, 2, 2), (1, 1), (2, 2), "SAME"),
    ((1, 7, 6, 2), (2, 2, 2, 1), (2, 1), (2, 3), "VALID"),
    ((1, 5, 5, 4), (3, 3, 2, 6), (1, 1), (1, 1), "SAME"),  # two groups
    ((1, 5, 5, 2), (2, 2, 2, 2), (1, 1), (1, 1), [[0, 0], [1, 2], [0, 1], [0, 0]]),
]


def _pads(padding: Any, x_shape: tuple[int, ...], w_shape: tuple[int, ...], s: Any, d: Any) -> Pads:
    if isinstance(padding, list):
        return (tuple(padding[1]), tuple(padding[2]))  # type: ignore[return-value]
    if padding == "VALID":
        return ((0, 0), (0, 0))
    return (
        same_pads(x_shape[1], w_shape[0], s[0], d[0]),
        same_pads(x_shape[2], w_shape[1], s[1], d[1]),
    )


@pytest.mark.parametrize(("x_shape", "w_shape", "strides", "dilations", "padding"), CONV_CASES)
def test_conv2d_matches_reference(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], strides: Any, dilations: Any, padding: Any
) -> None:
    x, w = arange(*x_shape), arange(*w_shape)
    y = pv.nn.conv2d(x, w, strides=list(strides), padding=padding, dilations=list(dilations))
    want = reference_conv(
        x, w, strides, dilations, _pads(padding, x_shape, w_shape, strides, dilations)
    )
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(y), want, rtol=1e-12, atol=1e-12)


def test_conv2d_nchw_is_nhwc_transposed() -> None:
    x, w = arange(2, 5, 6, 3), arange(3, 3, 3, 4)
    nhwc = pv.nn.conv2d(x, w, strides=[1, 2, 1, 1], padding="SAME")
    nchw = pv.nn.conv2d(
        x.transpose(0, 3, 1, 2), w, strides=[1, 1, 2, 1], padding="SAME", data_format="NCHW"
    )
    assert nchw.shape.as_list() == [2, 4, 3, 6]
    a, b = run([nhwc, nchw])
    np.testing.assert_allclose(b, a.transpose(0, 3, 1, 2), rtol=1e-12)


def test_conv2d_float32_and_int32_keep_their_dtype() -> None:
    x, w = np.arange(50).reshape(1, 5, 5, 2), np.arange(36).reshape(3, 3, 2, 2)
    want = reference_conv(x.astype(float), w.astype(float), (1, 1), (1, 1), ((1, 1), (1, 1)))
    for dtype in (np.float32, np.int32):
        y = run(pv.nn.conv2d(pv.constant(x.astype(dtype)), w.astype(dtype), 1, "SAME"))
        assert y.dtype == dtype
        np.testing.assert_allclose(y, want, rtol=1e-6)


def test_depthwise_conv2d_matches_per_channel_reference() -> None:
    x, w = arange(1, 6, 5, 3), arange(3, 2, 3, 2)
    y = pv.nn.depthwise_conv2d(x, w, [1, 2, 1, 1], "SAME")
    pads = (same_pads(6, 3, 2), same_pads(5, 2, 1))
    want = np.concatenate(
        [
            reference_conv(x[..., c : c + 1], w[:, :, c : c + 1], (2, 1), (1, 1), pads)
            for c in range(3)
        ],
        axis=-1,
    )
    assert (y.op.type, y.op.name, y.shape.as_list()) == (
        "DepthwiseConv2dNative",
        "depthwise",
        [1, 3, 5, 6],
    )
    np.testing.assert_allclose(run(y), want, rtol=1e-12)


@pytest.mark.parametrize(
    ("size", "strides", "padding"),
    [
        ((2, 2), (2, 2), "VALID"),
        ((3, 3), (2, 2), "SAME"),
        ((2, 3), (1, 2), "SAME"),
        ((3, 2), (1, 1), "VALID"),
    ],
)
@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pools_match_reference(size: Any, strides: Any, padding: str, mode: str) -> None:
    x = arange(2, 5, 6, 3)
    pool = pv.nn.max_pool if mode == "max" else pv.nn.avg_pool
    y = pool(x, [1, *size, 1], [1, *strides, 1], padding)
    pads = (
        ((0, 0), (0, 0))
        if padding == "VALID"
        else (same_pads(5, size[0], strides[0]), same_pads(6, size[1], strides[1]))
    )
    np.testing.assert_allclose(run(y), reference_pool(x, size, strides, pads, mode), rtol=1e-12)


def test_pool_nchw_and_integer_max_pool() -> None:
    x = np.arange(60, dtype=np.int64).reshape(1, 4, 5, 3) * 7 % 11
    pooled = run(pv.nn.max_pool(pv.constant(x), 2, 2, "SAME"))
    assert pooled.dtype == np.int64
    np.testing.assert_array_equal(
        pooled, reference_pool(x, (2, 2), (2, 2), ((0, 0), (0, 1)), "max")
    )
    f = arange(1, 4, 5, 3)
    nchw = pv.nn.avg_pool(f.transpose(0, 3, 1, 2), 2, 2, "SAME", data_format="NCHW")
    want = reference_pool(f, (2, 2), (2, 2), ((0, 0), (0, 1)), "avg")
    np.testing.assert_allclose(run(nchw), want.transpose(0, 3, 1, 2), rtol=1e-12)


def test_lrn_matches_reference() -> None:
    x = arange(2, 3, 3, 6, dtype=np.float32)
    y = pv.nn.lrn(x, depth_radius=2, bias=2.0, alpha=0.5, beta=0.75)
    want = reference_lrn(x.astype(float), 2, 2.0, 0.5, 0.75)
    np.testing.assert_allclose(run(y), want, rtol=1e-5)
    assert pv.nn.local_response_normalization is pv.nn.lrn


def test_bias_add_nchw_adds_along_axis_one() -> None:
    x, b = arange(2, 3, 4, 5), np.array([1.0, 10.0, 100.0])
    y = pv.nn.bias_add(x, b, data_format="NCHW")
    np.testing.assert_allclose(run(y), x + b[None, :, None, None])
    (grad,) = pv.gradients(pv.reduce_sum(y * arange(2, 3, 4, 5)), [y.op.inputs[1]])
    assert grad.op.type == "BiasAddGrad"
    np.testing.assert_allclose(run(grad), arange(2, 3, 4, 5).sum(axis=(0, 2, 3)))


def test_conv2d_transpose_is_the_input_gradient_of_conv2d() -> None:
    w, dy = arange(3, 3, 2, 3), arange(1, 3, 3, 3)
    x0 = arange(1, 6, 6, 2)
    y = pv.nn.conv2d_transpose(dy, w, [1, 6, 6, 2], [1, 2, 2, 1], "SAME")
    pads = (same_pads(6, 3, 2), same_pads(6, 3, 2))
    want = numeric_gradient(
        lambda x: float((reference_conv(x, w, (2, 2), (1, 1), pads) * dy).sum()), x0
    )
    assert (y.op.type, y.op.name) == ("Conv2DBackpropInput", "conv2d_transpose")
    np.testing.assert_allclose(run(y), want, rtol=1e-6, atol=1e-8)


# -- gradients against finite differences ------------------------------------------------------
@pytest.mark.parametrize(("x_shape", "w_shape", "strides", "dilations", "padding"), CONV_CASES)
def test_conv2d_gradients(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], strides: Any, dilations: Any, padding: Any
) -> None:
    check_gradients(
        lambda x, w: pv.nn.conv2d(x, w, list(strides), padding, dilations=list(dilations)),
        [arange(*x_shape), arange(*w_shape)],
    )


def test_conv2d_transpose_gradients() -> None:
    check_gradients(
        lambda v, w: pv.nn.conv2d_transpose(v, w, [1, 6, 5, 3], [1, 2, 2, 1], "SAME"),
        [arange(1, 3, 3, 2), arange(3, 2, 3, 2)],
    )


def test_conv2d_nchw_gradients() -> None:
    check_gradients(
        lambda x, w: pv.nn.conv2d(x, w, [1, 1, 2, 1], "SAME", data_format="NCHW"),
        [arange(1, 2, 5, 4), arange(3, 2, 2, 2)],
    )


def test_depthwise_gradients() -> None:
    check_gradients(
        lambda x, w: pv.nn.depthwise_conv2d(x, w, [1, 2, 1, 1], "SAME"),
        [arange(1, 5, 4, 2), arange(2, 3, 2, 2)],
    )


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool_and_lrn_gradients(padding: str) -> None:
    x = arange(1, 5, 6, 3)
    check_gradients(lambda t: pv.nn.max_pool(t, [1, 3, 2, 1], [1, 2, 2, 1], padding), [x])
    check_gradients(lambda t: pv.nn.avg_pool(t, [1, 3, 2, 1], [1, 2, 1, 1], padding), [x])


def test_lrn_gradient() -> None:
    x = arange(1, 2, 2, 5, dtype=np.float32)
    with Graph().as_default():
        t = pv.constant(x)
        y = pv.nn.lrn(t, depth_radius=1, bias=1.5, alpha=0.3, beta=0.6)
        (grad,) = pv.gradients(pv.reduce_sum(y * (arange(1, 2, 2, 5) + 0.5)), [t])
        got = run(grad)
    weights = arange(1, 2, 2, 5) + 0.5
    want = numeric_gradient(
        lambda a: float((reference_lrn(a, 1, 1.5, 0.3, 0.6) * weights).sum()), x.astype(float)
    )
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_gradient_ops_are_tensorflows() -> None:
    x = pv.placeholder(pv.float32, [None, 5, 5, 2])
    y = pv.nn.conv2d(x, arange(3, 3, 2, 2, dtype=np.float32), 1, "SAME")
    types = [op.type for op in pv.gradients(pv.reduce_sum(y), [x])[0].graph.get_operations()]
    assert "ShapeN" in types and "Conv2DBackpropInput" in types
    dx = pv.get_default_graph().get_operation_by_name("gradients/Conv2D_grad/Conv2DBackpropInput")
    assert dx.outputs[0].shape.as_list() == [None, 5, 5, 2]


# -- errors --------------------------------------------------------------------------------------
X = arange(1, 5, 5, 2, dtype=np.float32)
W = arange(3, 3, 2, 2, dtype=np.float32)


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (
            lambda: pv.nn.conv2d(X[0], W, 1, "SAME"),
            ValueError,
            "Shape must be rank 4 but is rank 3",
        ),
        (
            lambda: pv.nn.conv2d(X, arange(3, 3, 3, 2, dtype=np.float32), 1, "SAME"),
            ValueError,
            "Depth of input (2) is not a multiple of input depth of filter (3)",
        ),
        (
            lambda: pv.nn.conv2d(X, W, 1, "same"),
            ValueError,
            "Attr 'padding' of 'Conv2D' Op passed string 'same'",
        ),
        (
            lambda: pv.nn.conv2d(X, W, [1, 1, 1], "SAME"),
            ValueError,
            "strides should be of length 1, 2 or 4",
        ),
        (
            lambda: pv.nn.conv2d(X[:, :2, :2], W, 1, "VALID"),
            ValueError,
            "Negative dimension size caused by subtracting 3 from 2",
        ),
        (
            lambda: pv.nn.conv2d(pv.constant(X.astype(np.int64)), W.astype(np.int64), 1, "SAME"),
            TypeError,
            "has DataType int64 not in list of allowed values",
        ),
        (
            lambda: pv.nn.lrn(pv.constant(X.astype(np.float64))),
            TypeError,
            "DataType float64 not in list",
        ),
        (
            lambda: pv.nn.avg_pool(pv.constant(X.astype(np.int32)), 2, 2, "SAME"),
            TypeError,
            "parameter 'value' has DataType int32",
        ),
        (
            lambda: pv.nn.bias_add(X, np.ones(2, np.float32), data_format="NHCW"),
            ValueError,
            "must be of the form `N...C` or `NC...`",
        ),
        (
            lambda: pv.nn.bias_add(X, np.ones(2, np.float32), data_format="NCHW"),
            ValueError,
            "Dimensions must be equal, but are 5 and 2",
        ),
    ],
)
def test_build_errors(build: Callable[[], Any], error: type, words: str) -> None:
    with pytest.raises(error) as info:
        build()
    assert words in str(info.value)


def test_run_errors() -> None:
    with pytest.raises(pv_errors.UnimplementedError, match="strides in the batch and depth"):
        run(pv.nn.conv2d(X, W, [2, 1, 1, 1], "SAME"))
    with pytest.raises(pv_errors.UnimplementedError, match="not yet supported on the batch"):
        run(pv.nn.max_pool(X, [2, 2, 2, 1], [1, 1, 1, 1], "SAME"))
    with pytest.raises(pv_errors.InvalidArgumentError, match="Right padding 2 needs to be smaller"):
        run(pv.nn.max_pool(X, 2, 1, [[0, 0], [1, 0], [0, 2], [0, 0]]))
    pool_attrs = {
        "ksize": [1, 2, 2, 1],
        "strides": [1, 1, 1, 1],
        "padding": "EXPLICIT",
        "explicit_paddings": [0, 0, 0, 1, 0, 2, 0, 0],
        "data_format": "NHWC",
    }
    y = pv.constant(np.zeros((1, 5, 6, 2), np.float32))
    with pytest.raises(pv_errors.InvalidArgumentError, match="Right padding 2 needs to be smaller"):
        run(conv_ops.backprop("MaxPoolGrad", [pv.constant(X), y, y], pool_attrs))
    with pytest.raises(pv_errors.InvalidArgumentError, match="evenly divisible by filter depth"):
        run(pv.nn.conv2d_transpose(X, W, [1, 10, 10, 3], [1, 2, 2, 1], "SAME"))
    with pytest.raises(pv_errors.InvalidArgumentError, match="Size of out_backprop doesn't match"):
        run(pv.nn.conv2d_transpose(X, W, [1, 7, 7, 2], [1, 2, 2, 1], "SAME"))


def test_run_errors_of_shapes_known_only_at_run_time() -> None:
    x = pv.placeholder(pv.float32, [1, 5, 5, None])
    y = pv.nn.conv2d(x, W, 1, "SAME")
    with (
        pytest.raises(pv_errors.InvalidArgumentError, match="divisible by filter depth: 3 vs 2"),
        pv.Session() as sess,
    ):
        sess.run(y, {x: np.zeros((1, 5, 5, 3), np.float32)})
    attrs = {
        "strides": [1, 2, 2, 1],
        "padding": "SAME",
        "explicit_paddings": [],
        "data_format": "NHWC",
        "dilations": [1, 1, 1, 1],
    }
    grad = pv.constant(np.zeros((1, 3, 3, 4), np.float32))
    dx = conv_ops.backprop(
        "DepthwiseConv2dNativeBackpropInput",
        [pv.constant([1, 7, 7, 2]), pv.constant(W), grad],
        attrs,
    )
    with pytest.raises(
        pv_errors.InvalidArgumentError,
        match="DepthwiseConv2DBackpropInput: Number of rows of out_backprop doesn't match "
        "computed: actual = 3, computed = 4",
    ):
        run(dx)


def test_conv_cost_counts_multiply_adds() -> None:
    y = pv.nn.conv2d(
        arange(2, 6, 6, 4, dtype=np.float32), arange(3, 3, 2, 6, dtype=np.float32), 2, "SAME"
    )
    cost = y.op.op_def.cost(y.op, [(2, 6, 6, 4), (3, 3, 2, 6)], [(2, 3, 3, 6)])
    assert cost.flops == 2 * 2 * 3 * 3 * 6 * 3 * 3 * 2
    assert cost.bytes == 4 * (2 * 6 * 6 * 4 + 3 * 3 * 2 * 6 + 2 * 3 * 3 * 6)


def test_shape_n_gives_each_shape() -> None:
    a, b = conv_ops.shape_n([X, W])
    assert (a.op.type, a.op.name, b.value_index) == ("ShapeN", "ShapeN", 1)
    np.testing.assert_array_equal(run(b), [3, 3, 2, 2])


# -- dilation through SpaceToBatchND -------------------------------------------------------------
def test_space_to_batch_matches_reference_and_inverts() -> None:
    x = arange(2, 5, 4, 3)
    block, pads = [2, 3], [[1, 0], [1, 1]]
    s2b = conv_ops.space_to_batch_nd(x, block, pads)
    padded = np.pad(x, ((0, 0), (1, 0), (1, 1), (0, 0)))
    want = np.zeros((12, 3, 2, 3))
    for i1 in range(2):
        for i2 in range(3):
            for b in range(2):
                want[(i1 * 3 + i2) * 2 + b] = padded[b, i1::2, i2::3, :]
    assert s2b.shape.as_list() == [12, 3, 2, 3]
    back = conv_ops.batch_to_space_nd(s2b, block, pads)
    assert back.shape.as_list() == [2, 5, 4, 3]
    got, restored = run([s2b, back])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(restored, x)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_dilated_convolution_and_depthwise_match_reference(padding: str) -> None:
    x, w, dw = arange(2, 7, 6, 2), arange(3, 2, 2, 3), arange(3, 2, 2, 1)
    y = pv.nn.convolution(x, w, padding, dilation_rate=[2, 3])
    d = pv.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], padding, rate=[2, 3])
    assert [y.op.type, d.op.type] == ["BatchToSpaceND", "BatchToSpaceND"]
    pads = _pads(padding, x.shape, w.shape, (1, 1), (2, 3))
    want = reference_conv(x, w, (1, 1), (2, 3), pads)
    want_d = np.concatenate(
        [
            reference_conv(x[..., c : c + 1], dw[:, :, c : c + 1], (1, 1), (2, 3), pads)
            for c in (0, 1)
        ],
        axis=-1,
    )
    got, got_d = run([y, d])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_d, want_d, rtol=1e-12)


def test_dilated_convolution_gradients() -> None:
    check_gradients(
        lambda x, w: pv.nn.convolution(x, w, "SAME", dilation_rate=2),
        [arange(1, 5, 6, 2), arange(2, 2, 2, 2)],
    )


# -- layers --------------------------------------------------------------------------------------
def test_conv2d_layer_is_conv_plus_bias_then_activation() -> None:
    x = arange(2, 6, 6, 3, dtype=np.float32)
    layer = pv.layers.Conv2D(
        4,
        [3, 2],
        strides=2,
        padding="same",
        activation="relu",
        kernel_initializer=pv.constant_initializer(0.1),
        bias_initializer=pv.constant_initializer(-0.5),
    )
    y = layer(x)
    assert [v.name for v in layer.weights] == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert layer.kernel.shape.as_list() == [3, 2, 3, 4]
    assert [y.op.name, y.op.inputs[0].op.name] == ["conv2d/Relu", "conv2d/BiasAdd"]
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        got = sess.run(y)
    pads = (same_pads(6, 3, 2), same_pads(6, 2, 2))
    conv = reference_conv(x.astype(float), np.full((3, 2, 3, 4), 0.1), (2, 2), (1, 1), pads)
    np.testing.assert_allclose(got, np.maximum(conv - 0.5, 0), rtol=1e-5, atol=1e-6)


def test_channels_first_layers_are_channels_last_transposed() -> None:
    x = arange(1, 6, 6, 2, dtype=np.float32)
    init = pv.constant_initializer(0.2)

    def model(inputs: Any, data_format: str) -> Any:
        h = pv.layers.conv2d(inputs, 3, 3, data_format=data_format, kernel_initializer=init)
        h = pv.layers.max_pooling2d(h, 2, 2, data_format=data_format)
        return pv.layers.flatten(h, data_format=data_format)

    last, first = model(x, "channels_last"), model(x.transpose(0, 3, 1, 2), "channels_first")
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        a, b = sess.run([last, first])
    np.testing.assert_allclose(b, a, rtol=1e-6)


def test_keras_serves_the_same_layers_with_keras_defaults() -> None:
    layers = pv.keras.layers
    shared = [(layers.Conv2D, pv.layers.Conv2D), (layers.MaxPooling2D, pv.layers.MaxPooling2D)]
    shared.append((layers.Flatten, pv.layers.Flatten))
    assert all(issubclass(keras_class, legacy) for keras_class, legacy in shared)
    pooled = layers.AveragePooling2D(2)(arange(1, 4, 6, 1))
    assert pooled.shape.as_list() == [1, 2, 3, 1]
    with pytest.raises(ValueError, match="The `padding` argument must be"):
        layers.Conv2D(2, 3, padding="full")


DEEP = 64  # as deep as ResNet's third stage


def reference_filter_grad(
    x: np.ndarray, g: np.ndarray, size: tuple[int, int], strides: Any, dilations: Any, pads: Pads
) -> np.ndarray:
    """Each filter tap's gradient: the input under that tap at every output position against
    the output gradient there, summed over positions and the batch."""
    padded = np.pad(x, ((0, 0), *pads, (0, 0)))
    _, ho, wo, _ = g.shape
    out = np.zeros((*size, x.shape[3], g.shape[3]))
    for a in range(size[0]):
        for b in range(size[1]):
            top, left = a * dilations[0], b * dilations[1]
            rows = slice(top, top + (ho - 1) * strides[0] + 1, strides[0])
            cols = slice(left, left + (wo - 1) * strides[1] + 1, strides[1])
            out[a, b] = np.einsum("nhwc,nhwo->co", padded[:, rows, cols], g)
    return out


@pytest.mark.parametrize("filter_width", [2, 4])  # rows of 128 and 256 inputs: both products
@pytest.mark.parametrize(
    ("strides", "dilations", "padding"),
    [((1, 1), (1, 1), "SAME"), ((2, 1), (1, 1), "VALID"), ((1, 1), (2, 2), "SAME")],
)
def test_deep_input_conv2d_and_its_gradients(
    strides: Any, dilations: Any, padding: str, filter_width: int
) -> None:
    """The value and the filter's gradient against the references; the input's gradient by
    bilinearity: sum(conv(x, w) * g) equals sum(x * dx) for the dx that g sends back."""
    x, w = arange(2, 5, 6, DEEP), arange(3, filter_width, DEEP, 3)
    with Graph().as_default():
        tx, tw = pv.constant(x), pv.constant(w)
        y = pv.nn.conv2d(tx, tw, [1, *strides, 1], padding, dilations=[1, *dilations, 1])
        g = arange(*y.shape.as_list()) + 0.5
        dx, dw = pv.gradients(y, [tx, tw], grad_ys=pv.constant(g))
        got_y, got_dx, got_dw = run([y, dx, dw])
    pads = _pads(padding, x.shape, w.shape, strides, dilations)
    np.testing.assert_allclose(got_y, reference_conv(x, w, strides, dilations, pads), rtol=1e-12)
    pairing = float(np.sum(got_y * g))
    assert float(np.sum(x * got_dx)) == pytest.approx(pairing, rel=1e-12)
    want_dw = reference_filter_grad(x, g, w.shape[:2], strides, dilations, pads)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-12)
