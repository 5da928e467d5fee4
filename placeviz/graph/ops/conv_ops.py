"""Convolution and pooling: TensorFlow's Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool, LRN,
their gradient ops, ShapeN (which Conv2D's gradient reads its operands' shapes with), and the
SpaceToBatchND/BatchToSpaceND pair TF wraps a dilated convolution in.

Every convolution is computed by one engine in NHWC: the padded input's sliding windows as a
strided view (im2col without a copy until the reshape), one batched matrix product over channel
groups. A depthwise convolution is the grouped case with one input channel per group, and each
backprop is a correlation of the same kind (the input gradient correlates the zero-stuffed
output gradient with the flipped filter), so the kernels are BLAS products with no loop over
pixels, on NumPy and CuPy alike. NCHW arrays are transposed around the engine.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.dtypes import DType
from placeviz.errors import InvalidArgumentError, UnimplementedError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, is_tensor_like
from placeviz.graph.ops import shape_ops
from placeviz.graph.ops._build import (
    check_dtype,
    deprecated_argument,
    make_op,
    op_scope,
    same_dtype,
    single,
)
from placeviz.graph.ops.constant_op import convert_pair, convert_to_tensor
from placeviz.graph.registry import Cost, OpDef, OutputSpec, free_cost, itemsize
from placeviz.graph.shapes import ShapeError, TensorShape

Dim = int | None
Pair = tuple[int, int]

_CONV_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32)
_FLOATS = tuple(dtypes.FLOATS)
_REAL = (*_FLOATS, dtypes.int32, dtypes.int64)
_LRN_DTYPES = (dtypes.float16, dtypes.float32)
# TF's op definitions list bfloat16 too, which placeviz has no dtype for.
_ALLOWED_NAMES = {
    _CONV_DTYPES: "float16, bfloat16, float32, float64, int32",
    _FLOATS: "float16, bfloat16, float32, float64",
    _REAL: "float16, bfloat16, float32, float64, int32, int64, uint8, int16, int8, uint16, qint8",
    _LRN_DTYPES: "float16, bfloat16, float32",
}
PADDINGS = ("SAME", "VALID", "EXPLICIT")
DATA_FORMATS = ("NHWC", "NCHW")


def _kernels(cpu: Sequence[DType], gpu: Sequence[DType]) -> dict[str, frozenset[DType]]:
    return {"CPU": frozenset(cpu), "GPU": frozenset(gpu)}


# -- geometry ----------------------------------------------------------------------------------
def to_nhwc(values: Sequence[Any], data_format: str) -> tuple[Any, Any, Any, Any]:
    """Four per-dimension values given in ``data_format``'s order, in NHWC order."""
    n, a, b, c = values
    return (n, b, c, a) if data_format == "NCHW" else (n, a, b, c)


def from_nhwc(values: Sequence[Any], data_format: str) -> list[Any]:
    n, h, w, c = values
    return [n, c, h, w] if data_format == "NCHW" else [n, h, w, c]


def _axis_geometry(
    size: int, window: int, stride: int, dilation: int, padding: str, explicit: Pair
) -> tuple[int, int, int]:
    """TF's ``GetWindowedOutputSize`` for one spatial axis: output size, padding before, after."""
    effective = (window - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        needed = max(0, (out - 1) * stride + effective - size)
        return out, needed // 2, needed - needed // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    if padding == "VALID" and size < effective:
        raise ShapeError(f"Negative dimension size caused by subtracting {effective} from {size}")
    out = (size + before + after - effective + stride) // stride
    if out < 0:
        raise ShapeError(
            f"Computed output size would be negative: {out} [input_size: {size}, "
            f"effective_filter_size: {effective}, stride: {stride}]"
        )
    return out, before, after


@dataclass(frozen=True)
class Window:
    """A 2-D sliding window over an NHWC array: its size, steps and padding, all per axis."""

    size: Pair
    strides: Pair
    dilations: Pair
    pads: tuple[Pair, Pair]
    out: Pair

    def pad(self, xp: Any, x: Any, value: Any = 0) -> Any:
        """``x`` inside a border of ``value``: a filled array and one copy (2x faster than
        ``xp.pad`` on ResNet's 1 MiB activations)."""
        (top, bottom), (left, right) = self.pads
        if not (top or bottom or left or right):
            return x
        n, height, width, depth = x.shape
        shape = (n, height + top + bottom, width + left + right, depth)
        padded = xp.full(shape, value, dtype=x.dtype)
        padded[:, top : top + height, left : left + width, :] = x
        return padded

    def crop(self, padded: Any, height: int, width: int) -> Any:
        (top, _), (left, _) = self.pads
        return padded[:, top : top + height, left : left + width, :]

    def tap(self, padded: Any, i: int, j: int, height_axis: int = 1) -> Any:
        """What filter tap (i, j) sees of a padded NHWC array (or any layout with height and
        width at ``height_axis`` and the next) at every output position, as a strided view."""
        (ho, wo), (sh, sw), (dh, dw) = self.out, self.strides, self.dilations
        rows = slice(i * dh, i * dh + (ho - 1) * sh + 1, sh)
        cols = slice(j * dw, j * dw + (wo - 1) * sw + 1, sw)
        return padded[(slice(None),) * height_axis + (rows, cols)]

    def tap_rows(self, xp: Any, padded: Any) -> Any:
        """For stride 1: each image's padded rows, every output column holding the ``Kw``
        pixels its filter row sees, as an (N, Hp * Wo, Kw * C) array (a copy Kw times the
        input, not im2col's Kh * Kw). Filter row ``i`` then reads the contiguous rows from
        ``i * dilation * Wo`` on."""
        n, height, _, depth = padded.shape
        return self._row_windows(xp, padded, batch_inside=False).reshape(
            n, height * self.out[1], self.size[1] * depth
        )

    def batch_tap_rows(self, xp: Any, padded: Any) -> Any:
        """``tap_rows`` with the batch inside the height, (Hp * N * Wo, Kw * C): filter row
        ``i`` then reads the contiguous rows from ``i * dilation * N * Wo`` on, the whole
        batch's in one matrix."""
        n, height, _, depth = padded.shape
        return self._row_windows(xp, padded, batch_inside=True).reshape(
            height * n * self.out[1], self.size[1] * depth
        )

    def _row_windows(self, xp: Any, padded: Any, batch_inside: bool) -> Any:
        """A strided view (N, Hp, Wo, Kw, C) of what each output column's filter row sees,
        (Hp, N, Wo, Kw, C) with the batch inside the height."""
        n, height, _, depth = padded.shape
        sn, sh, sw, sc = padded.strides
        kw, wo = self.size[1], self.out[1]
        outer = ((height, sh), (n, sn)) if batch_inside else ((n, sn), (height, sh))
        shape = (outer[0][0], outer[1][0], wo, kw, depth)
        steps = (outer[0][1], outer[1][1], sw, sw * self.dilations[1], sc)
        return xp.lib.stride_tricks.as_strided(padded, shape=shape, strides=steps)

    def view(self, xp: Any, padded: Any) -> Any:
        """The windows of a padded NHWC array as an (N, Ho, Wo, Kh, Kw, C) strided view."""
        sn, sh, sw, sc = padded.strides
        shape = (padded.shape[0], *self.out, *self.size, padded.shape[3])
        steps = (
            sn,
            sh * self.strides[0],
            sw * self.strides[1],
            sh * self.dilations[0],
            sw * self.dilations[1],
            sc,
        )
        return xp.lib.stride_tricks.as_strided(padded, shape=shape, strides=steps)


def window(attrs: Mapping[str, Any], input_hw: Pair, size: Pair) -> Window:
    """The window an op's attrs describe over an input of the given height and width."""
    fmt = attrs["data_format"]
    strides = to_nhwc(attrs["strides"], fmt)[1:3]
    dilations = to_nhwc(attrs.get("dilations", (1, 1, 1, 1)), fmt)[1:3]
    explicit = attrs.get("explicit_paddings") or [0] * 8
    pairs = to_nhwc([tuple(explicit[i : i + 2]) for i in range(0, 8, 2)], fmt)[1:3]
    axes = [
        _axis_geometry(input_hw[i], size[i], strides[i], dilations[i], attrs["padding"], pairs[i])
        for i in (0, 1)
    ]
    return Window(
        tuple(size),  # type: ignore[arg-type]
        tuple(strides),  # type: ignore[arg-type]
        tuple(dilations),  # type: ignore[arg-type]
        (axes[0][1:], axes[1][1:]),  # type: ignore[arg-type]
        (axes[0][0], axes[1][0]),
    )


def _output_hw(attrs: Mapping[str, Any], input_hw: Sequence[Dim], size: Sequence[Dim]) -> list[Dim]:
    """The output's height and width as far as the static shapes tell them, after TF's checks
    of explicit paddings."""
    explicit = attrs.get("explicit_paddings") or []
    if any(p < 0 for p in explicit):
        raise ShapeError("All elements of explicit_paddings must be nonnegative")
    if explicit:
        n, _, _, c = to_nhwc([explicit[i : i + 2] for i in range(0, 8, 2)], attrs["data_format"])
        if any(n) or any(c):
            raise ShapeError(
                "Nonzero explicit padding in the batch or depth dimensions is not supported"
            )
    known = [a is not None and k is not None for a, k in zip(input_hw, size)]
    filled = [a if ok else 1 for a, ok in zip(input_hw, known)]
    sizes = [k if ok else 1 for k, ok in zip(size, known)]
    shape = window(attrs, tuple(filled), tuple(sizes))  # type: ignore[arg-type]
    return [o if ok else None for o, ok in zip(shape.out, known)]


def _rank4(shape: TensorShape) -> list[Dim]:
    if shape.ndims is None:
        return [None] * 4
    if shape.ndims != 4:
        raise ShapeError(f"Shape must be rank 4 but is rank {shape.ndims}")
    return list(shape.dims)


def _allowed(dtype: DType, arg: str, allowed: tuple[DType, ...]) -> None:
    """TF's op-definition check: the type attr takes only these dtypes, named as TF names them."""
    check_dtype(arg, dtype, allowed, _ALLOWED_NAMES[allowed])


def _typed(op_type: str, inputs: Sequence[Tensor], names: Sequence[str], allowed: Any) -> DType:
    dtype = same_dtype(op_type, inputs, names)
    _allowed(dtype, names[0], allowed)
    return dtype


def _sizes_shape(tensor: Tensor) -> TensorShape:
    """The static shape a sizes input holds; a ShapeN output holds its operand's shape."""
    if tensor.op.type == "ShapeN":
        return tensor.op.inputs[tensor.value_index].shape
    return shape_ops.shape_from_tensor(tensor)


def _conv_refusal(attrs: Mapping[str, Any]) -> str | None:
    """TF's run-time refusal of strides or dilations outside height and width, if any."""
    fmt = attrs["data_format"]
    for attr in ("strides", "dilations"):
        n, _, _, c = to_nhwc(attrs.get(attr, (1, 1, 1, 1)), fmt)
        if n != 1 or c != 1:
            return (
                f"Current implementation does not yet support {attr} in the batch and depth "
                "dimensions."
            )
    return None


# -- the engine --------------------------------------------------------------------------------
# Up to this input depth (an image's channels) the input gradient is scattered depth-first: the
# scatter's contiguous runs are then image rows (measured: depth 3 2x faster, depth 16 2x slower).
SHALLOW_DEPTH = 4


def correlate(xp: Any, padded: Any, filters: Any, groups: int, shape: Window) -> Any:
    """Grouped 2-D cross-correlation of a padded NHWC array with an HWIO filter whose input
    depth is the input's divided by ``groups``: at stride 1 a product per filter row over
    ``Window.tap_rows``; otherwise im2col and one batched matrix product (at stride 2 as fast
    as a product per tap, measured up to 128 channels)."""
    kh, kw, depth, out_depth = filters.shape
    n = padded.shape[0]
    ho, wo = shape.out
    rows = n * ho * wo
    if groups == 1 and shape.strides == (1, 1):
        return _correlate_by_filter_row(xp, padded, filters, shape)
    patches = shape.view(xp, padded).reshape(rows, kh * kw, groups, depth)
    patches = patches.transpose(2, 0, 1, 3).reshape(groups, rows, kh * kw * depth)
    matrix = filters.reshape(kh * kw * depth, groups, out_depth // groups).transpose(1, 0, 2)
    product = xp.matmul(patches, matrix)
    return product.transpose(1, 0, 2).reshape(n, ho, wo, out_depth)


def _correlate_by_filter_row(xp: Any, padded: Any, filters: Any, shape: Window) -> Any:
    """``correlate`` at stride 1: for each filter row one matrix product per image of that
    row's (Ho * Wo, Kw * C) slice of ``Window.tap_rows`` (1.1x to 3x faster than im2col on the
    zoo's and ResNet-50's 3x3 layers: a third of the copy, and per-image products that stay
    in cache)."""
    kh, kw, depth, out_depth = filters.shape
    ho, wo = shape.out
    step = shape.dilations[0] * wo
    rows = shape.tap_rows(xp, padded)
    weights = filters.reshape(kh, kw * depth, out_depth)
    out = xp.matmul(rows[:, : ho * wo], weights[0])
    for i in range(1, kh):
        out += xp.matmul(rows[:, i * step : i * step + ho * wo], weights[i])
    return out.reshape(padded.shape[0], ho, wo, out_depth)


def correlate_input_grad(
    xp: Any, grad: Any, filters: Any, input_shape: Sequence[int], groups: int, shape: Window
) -> Any:
    """The input's gradient: for each of the kh * kw filter taps, the output gradient times
    that tap's weights (one matrix product) is what each window owes the input element under
    the tap, added back onto the padded input (a loop over taps, never over pixels). Two
    ungrouped cases go faster another way: shallow inputs (``_shallow_input_grad``) and stride
    1 (a forward correlation with the flipped filter over ``_full_window``)."""
    n, height, width, _ = input_shape
    kh, kw, depth, out_depth = filters.shape
    if groups == 1 and depth <= SHALLOW_DEPTH:
        return _shallow_input_grad(xp, grad, filters, input_shape, shape)
    full = _full_window(shape, height, width) if groups == 1 else None
    if full is not None:
        flipped = filters[::-1, ::-1].transpose(0, 1, 3, 2)
        return correlate(xp, full.pad(xp, grad), flipped, 1, full)
    ho, wo = shape.out
    per_group = out_depth // groups
    grads = grad.reshape(n * ho * wo, groups, per_group).transpose(1, 0, 2)
    taps = xp.ascontiguousarray(
        filters.reshape(kh, kw, depth, groups, per_group).transpose(0, 1, 3, 4, 2)
    )
    (top, bottom), (left, right) = shape.pads
    padded = xp.zeros((n, height + top + bottom, width + left + right, groups * depth), grad.dtype)
    for i in range(kh):
        for j in range(kw):
            share = xp.matmul(grads, taps[i, j])  # (groups, rows, depth)
            share = share[0] if groups == 1 else share.transpose(1, 0, 2)
            target = shape.tap(padded, i, j)
            target += share.reshape(n, ho, wo, groups * depth)
    return shape.crop(padded, height, width)


def _full_window(shape: Window, height: int, width: int) -> Window | None:
    """The window whose correlation of the output gradient with the flipped filter is the
    input's gradient (a forward convolution: no scatter), or None for strides above 1 or
    padding that outgrows the filter."""
    if shape.strides != (1, 1):
        return None
    pads = []
    for axis, size in enumerate((height, width)):
        reach = (shape.size[axis] - 1) * shape.dilations[axis]
        before = reach - shape.pads[axis][0]
        after = size - shape.out[axis] + shape.pads[axis][0]
        if before < 0 or after < 0:
            return None
        pads.append((before, after))
    return Window(shape.size, (1, 1), shape.dilations, (pads[0], pads[1]), (height, width))


def _shallow_input_grad(
    xp: Any, grad: Any, filters: Any, input_shape: Sequence[int], shape: Window
) -> Any:
    """``correlate_input_grad`` of an ungrouped shallow input: one product gives every tap's
    share, (Kh, Kw, C, N, Ho, Wo), added onto the padded input held depth-first so that each
    tap's add runs over contiguous rows, not depth-long runs (2x faster for a depth of 3)."""
    n, height, width, _ = input_shape
    kh, kw, depth, out_depth = filters.shape
    ho, wo = shape.out
    (top, bottom), (left, right) = shape.pads
    shares = xp.matmul(filters.reshape(kh * kw * depth, out_depth), grad.reshape(-1, out_depth).T)
    shares = shares.reshape(kh, kw, depth, n, ho, wo)
    padded = xp.zeros((depth, n, height + top + bottom, width + left + right), grad.dtype)
    for i in range(kh):
        for j in range(kw):
            target = shape.tap(padded, i, j, height_axis=2)
            target += shares[i, j]
    return padded[:, :, top : top + height, left : left + width].transpose(1, 2, 3, 0)


def correlate_filter_grad(
    xp: Any, padded: Any, grad: Any, filter_shape: Sequence[int], groups: int, shape: Window
) -> Any:
    """The filter's gradient: the input's windows against the output gradient, per group (at
    stride 1 per filter row, as ``correlate``)."""
    kh, kw, depth, out_depth = filter_shape
    rows = grad.shape[0] * grad.shape[1] * grad.shape[2]
    if groups == 1 and shape.strides == (1, 1):
        return _filter_grad_by_filter_row(xp, padded, grad, filter_shape, shape)
    patches = shape.view(xp, padded).reshape(rows, kh * kw, groups, depth)
    patches = patches.transpose(2, 1, 3, 0).reshape(groups, kh * kw * depth, rows)
    grads = grad.reshape(rows, groups, out_depth // groups).transpose(1, 0, 2)
    product = xp.matmul(patches, grads).reshape(groups, kh, kw, depth, out_depth // groups)
    return product.transpose(1, 2, 3, 0, 4).reshape(kh, kw, depth, out_depth)


def _filter_grad_by_filter_row(
    xp: Any, padded: Any, grad: Any, filter_shape: Sequence[int], shape: Window
) -> Any:
    """``correlate_filter_grad`` at stride 1, as ``_correlate_by_filter_row``: each filter
    row's weights are its slice of ``Window.tap_rows`` against the output gradient, per image,
    summed over the batch; for filter rows of ``WIDE_FILTER_ROW`` inputs or more, one product
    over the whole batch per filter row instead (``Window.batch_tap_rows``)."""
    kh, kw, depth, out_depth = filter_shape
    n, ho, wo, _ = grad.shape
    if kw * depth >= WIDE_FILTER_ROW:
        return _filter_grad_over_batch(xp, padded, grad, filter_shape, shape)
    step = shape.dilations[0] * wo
    rows = shape.tap_rows(xp, padded)
    grads = grad.reshape(n, ho * wo, out_depth)
    per_row = [
        xp.matmul(rows[:, i * step : i * step + ho * wo].transpose(0, 2, 1), grads).sum(axis=0)
        for i in range(kh)
    ]
    return xp.stack(per_row).reshape(kh, kw, depth, out_depth)


# From this many inputs to a filter row (Kw * C) on, the filter's gradient is faster as one
# product over the whole batch per filter row than per image (measured: 5x5x64 filters 1.2x,
# 4x4x64 and 3x3x128 1.1x faster; 3x3x64 even; 3x3 of 16 and 32 channels 1.2x to 1.4x slower).
WIDE_FILTER_ROW = 256


def _filter_grad_over_batch(
    xp: Any, padded: Any, grad: Any, filter_shape: Sequence[int], shape: Window
) -> Any:
    """``_filter_grad_by_filter_row`` as one (Co, N * Ho * Wo) by (N * Ho * Wo, Kw * C)
    product per filter row, the output gradient's rows ordered as ``Window.batch_tap_rows``."""
    kh, kw, depth, out_depth = filter_shape
    n, ho, wo, _ = grad.shape
    count = ho * n * wo
    step = shape.dilations[0] * n * wo
    rows = shape.batch_tap_rows(xp, padded)
    grads = xp.ascontiguousarray(grad.transpose(1, 0, 2, 3)).reshape(count, out_depth)
    out = xp.empty((kh, out_depth, kw * depth), dtype=grad.dtype)
    for i in range(kh):
        xp.matmul(grads.T, rows[i * step : i * step + count], out=out[i])
    return xp.ascontiguousarray(out.transpose(0, 2, 1)).reshape(kh, kw, depth, out_depth)


def _nhwc_kernel(
    fmt: str, compute: Callable[..., Any], images: Sequence[int] = (0,)
) -> Callable[..., Any]:
    """``compute`` on NHWC arrays: for NCHW the operands at ``images`` and the result are
    transposed (filters and sizes are not images)."""
    if fmt == "NHWC":
        return compute

    def transposed(*arrays: Any) -> Any:
        inputs = [a.transpose(0, 2, 3, 1) if i in images else a for i, a in enumerate(arrays)]
        return compute(*inputs).transpose(0, 3, 1, 2)

    return transposed


def _conv_cost(
    op: Operation, ins: Sequence[tuple[int, ...]], outs: Sequence[tuple[int, ...]]
) -> Cost:
    """2 * N * Ho * Wo * Co * Kh * Kw * Ci FLOPs, Ci the filter's input depth (1 for a
    depthwise filter), the same for each backprop; every input and output element moved once."""
    if op.type.endswith("BackpropFilter"):
        filter_shape, output_shape = outs[0], ins[2]
    elif op.type.endswith("BackpropInput"):
        filter_shape, output_shape = ins[1], ins[2]
    else:
        filter_shape, output_shape = ins[1], outs[0]
    n, ho, wo, co = to_nhwc(output_shape, op.attrs["data_format"])
    kh, kw, ci, _ = filter_shape
    if op.type.startswith("Depthwise"):
        ci = 1
    moved = sum(int(np.prod(s)) for s in (*ins, *outs))
    return Cost(2.0 * n * ho * wo * co * kh * kw * ci, float(moved * itemsize(op)))


# -- Conv2D and DepthwiseConv2dNative ----------------------------------------------------------
def _groups(input_depth: Dim, filter_depth: Dim, out_depth: Dim) -> None:
    if input_depth is None or filter_depth is None:
        return
    if filter_depth == 0 or input_depth % filter_depth:
        raise ShapeError(
            f"Depth of input ({input_depth}) is not a multiple of input depth of filter "
            f"({filter_depth})"
        )
    groups = input_depth // filter_depth
    if out_depth is not None and out_depth % groups:
        raise ShapeError(
            f"Depth of output ({out_depth}) is not a multiple of the number of groups ({groups})"
        )


def _infer_conv2d(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = _typed("Conv2D", inputs, ("input", "filter"), _CONV_DTYPES)
    fmt = attrs["data_format"]
    n, h, w, c = to_nhwc(_rank4(inputs[0].shape), fmt)
    kh, kw, ci, co = _rank4(inputs[1].shape)
    _groups(c, ci, co)
    ho, wo = _output_hw(attrs, (h, w), (kh, kw))
    return single(TensorShape(from_nhwc([n, ho, wo, co], fmt)), dtype)


def _infer_depthwise(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = _typed("DepthwiseConv2dNative", inputs, ("input", "filter"), _FLOATS)
    fmt = attrs["data_format"]
    n, h, w, c = to_nhwc(_rank4(inputs[0].shape), fmt)
    kh, kw, ci, multiplier = _rank4(inputs[1].shape)
    _equal_depths(c, ci)
    ho, wo = _output_hw(attrs, (h, w), (kh, kw))
    co = None if ci is None or multiplier is None else ci * multiplier
    return single(TensorShape(from_nhwc([n, ho, wo, co], fmt)), dtype)


def _equal_depths(input_depth: Dim, filter_depth: Dim) -> None:
    if input_depth is not None and filter_depth is not None and input_depth != filter_depth:
        raise ShapeError(f"Dimensions must be equal, but are {input_depth} and {filter_depth}")


def _grouped(filters: Any, depthwise: bool) -> Any:
    """A depthwise HWCM filter as the grouped HW1(C*M) filter it equals."""
    if not depthwise:
        return filters
    kh, kw, c, m = filters.shape
    return filters.reshape(kh, kw, 1, c * m)


def _check_depth(op: Operation, input_depth: int, filter_depth: int) -> None:
    """TF's run-time check of an input depth the static shapes did not tell."""
    if input_depth % filter_depth:
        raise InvalidArgumentError(
            f"input depth must be evenly divisible by filter depth: {input_depth} vs "
            f"{filter_depth}",
            op=op,
        )


def _conv_kernel(depthwise: bool) -> Callable[[Any, Operation, Any], Any]:
    def build(xp: Any, op: Operation, state: Any) -> Any:
        refusal = _conv_refusal(op.attrs)

        def conv(x: Any, filters: Any) -> Any:
            if refusal is not None:
                raise UnimplementedError(refusal)
            kh, kw, _, _ = filters.shape
            shape = window(op.attrs, x.shape[1:3], (kh, kw))
            grouped = _grouped(filters, depthwise)
            _check_depth(op, x.shape[3], grouped.shape[2])
            return correlate(xp, shape.pad(xp, x), grouped, x.shape[3] // grouped.shape[2], shape)

        return _nhwc_kernel(op.attrs["data_format"], conv)

    return build


registry.register(
    OpDef(
        type="Conv2D",
        infer=_infer_conv2d,
        kernel=_conv_kernel(depthwise=False),
        cost=_conv_cost,
        supported=_kernels(_CONV_DTYPES, _CONV_DTYPES),
    )
)
registry.register(
    OpDef(
        type="DepthwiseConv2dNative",
        infer=_infer_depthwise,
        kernel=_conv_kernel(depthwise=True),
        cost=_conv_cost,
        supported=_kernels(_FLOATS, _FLOATS),
    )
)


# -- Conv2DBackpropInput, DepthwiseConv2dNativeBackpropInput -----------------------------------
def _infer_backprop_input(op_type: str, allowed: Any) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        sizes, filters, grad = inputs
        shape_ops.check_shape_tensor(sizes, "input_sizes")
        dtype = _typed(op_type, inputs[1:], ("filter", "out_backprop"), allowed)
        _rank4(filters.shape)
        _rank4(grad.shape)
        shape = _sizes_shape(sizes)
        if shape.ndims is not None and shape.ndims != 4:
            raise ShapeError(f"input_sizes must have 4 elements, but has {shape.ndims}")
        return single(shape if shape.ndims is not None else TensorShape([None] * 4), dtype)

    return infer


def _check_backprop(
    op: Operation, shape: Window, grad_hw: Sequence[int], input_hw: Sequence[int]
) -> None:
    """TF's run-time check that the output gradient has the forward output's size, in the
    words of its CPU kernel for the op."""
    for axis in (0, 1):
        actual, computed = grad_hw[axis], shape.out[axis]
        if actual == computed:
            continue
        if op.type.startswith("Depthwise"):
            label = "DepthwiseConv2D" + op.type.removeprefix("DepthwiseConv2dNative")
            what = ("rows", "cols")[axis]
            message = (
                f"{label}: Number of {what} of out_backprop doesn't match computed: actual = "
                f"{actual}, computed = {computed}"
            )
        else:
            label = "Conv2DCustom" + op.type.removeprefix("Conv2D")
            message = (
                f"{label}: Size of out_backprop doesn't match computed: actual = {actual}, "
                f"computed = {computed} spatial_dim: {axis + 1} input: {input_hw[axis]} filter: "
                f"{shape.size[axis]} output: {actual} stride: {shape.strides[axis]} dilation: "
                f"{shape.dilations[axis]}"
            )
        raise InvalidArgumentError(message, op=op)


def _backprop_input_kernel(depthwise: bool) -> Callable[[Any, Operation, Any], Any]:
    def build(xp: Any, op: Operation, state: Any) -> Any:
        fmt = op.attrs["data_format"]
        sizes = shape_ops.run_ints()
        refusal = _conv_refusal(op.attrs)

        def backprop(input_sizes: Any, filters: Any, grad: Any) -> Any:
            if refusal is not None:
                raise UnimplementedError(refusal)
            nhwc = to_nhwc(sizes(input_sizes), fmt)
            kh, kw, _, _ = filters.shape
            grouped = _grouped(filters, depthwise)
            _check_depth(op, nhwc[3], grouped.shape[2])
            shape = window(op.attrs, nhwc[1:3], (kh, kw))
            _check_backprop(op, shape, grad.shape[1:3], nhwc[1:3])
            groups = nhwc[3] // grouped.shape[2]
            return correlate_input_grad(xp, grad, grouped, nhwc, groups, shape)

        return _nhwc_kernel(fmt, backprop, images=(2,))

    return build


for _type, _depthwise, _dtypes in (
    ("Conv2DBackpropInput", False, _CONV_DTYPES),
    ("DepthwiseConv2dNativeBackpropInput", True, _FLOATS),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_backprop_input(_type, _dtypes),
            kernel=_backprop_input_kernel(_depthwise),
            cost=_conv_cost,
            supported=_kernels(_dtypes, _dtypes),
        )
    )


# -- Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropFilter ---------------------------------
def _infer_backprop_filter(op_type: str) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        x, sizes, grad = inputs
        shape_ops.check_shape_tensor(sizes, "filter_sizes")
        dtype = _typed(op_type, [x, grad], ("input", "out_backprop"), _FLOATS)
        _rank4(x.shape)
        _rank4(grad.shape)
        shape = _sizes_shape(sizes)
        if shape.ndims is not None and shape.ndims != 4:
            raise ShapeError(f"filter_sizes must have 4 elements, but has {shape.ndims}")
        return single(shape if shape.ndims is not None else TensorShape([None] * 4), dtype)

    return infer


def _backprop_filter_kernel(depthwise: bool) -> Callable[[Any, Operation, Any], Any]:
    def build(xp: Any, op: Operation, state: Any) -> Any:
        fmt = op.attrs["data_format"]
        sizes = shape_ops.run_ints()
        refusal = _conv_refusal(op.attrs)

        def backprop(x: Any, filter_sizes: Any, grad: Any) -> Any:
            if refusal is not None:
                raise UnimplementedError(refusal)
            if fmt == "NCHW":
                x, grad = x.transpose(0, 2, 3, 1), grad.transpose(0, 2, 3, 1)
            kh, kw, depth, out_depth = sizes(filter_sizes)
            shape = window(op.attrs, x.shape[1:3], (kh, kw))
            _check_backprop(op, shape, grad.shape[1:3], x.shape[1:3])
            grouped = (kh, kw, 1, depth * out_depth) if depthwise else (kh, kw, depth, out_depth)
            groups = x.shape[3] // grouped[2]
            result = correlate_filter_grad(xp, shape.pad(xp, x), grad, grouped, groups, shape)
            return result.reshape(kh, kw, depth, out_depth)

        return backprop

    return build


for _type, _depthwise in (
    ("Conv2DBackpropFilter", False),
    ("DepthwiseConv2dNativeBackpropFilter", True),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_backprop_filter(_type),
            kernel=_backprop_filter_kernel(_depthwise),
            cost=_conv_cost,
            supported=_kernels(_FLOATS, _FLOATS),
        )
    )


# -- MaxPool, AvgPool and their gradients ------------------------------------------------------
def _pool_cost(
    op: Operation, ins: Sequence[tuple[int, ...]], outs: Sequence[tuple[int, ...]]
) -> Cost:
    """One FLOP per window element of each pooled element (the forward op's output: the
    smallest image among a pooling op's or its gradient's operands)."""
    _, kh, kw, _ = to_nhwc(op.attrs["ksize"], op.attrs["data_format"])
    pooled = min(int(np.prod(s)) for s in (*ins, *outs) if len(s) == 4)
    moved = sum(int(np.prod(s)) for s in (*ins, *outs))
    return Cost(float(pooled * kh * kw), float(moved * itemsize(op)))


def _pool_window(attrs: Mapping[str, Any], input_hw: Pair) -> Window:
    _, kh, kw, _ = to_nhwc(attrs["ksize"], attrs["data_format"])
    return window(attrs, input_hw, (kh, kw))


def _infer_pool(op_type: str, allowed: Any) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        dtype = inputs[0].dtype.base_dtype
        _allowed(dtype, "input" if op_type == "MaxPool" else "value", allowed)
        fmt = attrs["data_format"]
        n, h, w, c = to_nhwc(_rank4(inputs[0].shape), fmt)
        _, kh, kw, _ = to_nhwc(attrs["ksize"], fmt)
        ho, wo = _output_hw(attrs, (h, w), (kh, kw))
        return single(TensorShape(from_nhwc([n, ho, wo, c], fmt)), dtype)

    return infer


def _pool_refusal(attrs: Mapping[str, Any]) -> str | None:
    fmt = attrs["data_format"]
    ksize, strides = to_nhwc(attrs["ksize"], fmt), to_nhwc(attrs["strides"], fmt)
    if ksize[0] != 1 or strides[0] != 1:
        return "Pooling is not yet supported on the batch dimension."
    if ksize[3] != 1 or strides[3] != 1:
        return "placeviz pools over height and width only: ksize and strides in depth must be 1."
    return None


def _pool_kernel(
    compute: Callable[..., Any], images: Sequence[int]
) -> Callable[[Any, Operation, Any], Any]:
    """A pooling op's kernel: TF's run-time refusals, then ``compute(xp, op, *arrays)`` on NHWC
    arrays (the operands at ``images`` are images)."""

    def build(xp: Any, op: Operation, state: Any) -> Any:
        refusal = _pool_refusal(op.attrs)

        def pool(*arrays: Any) -> Any:
            if refusal is not None:
                raise UnimplementedError(refusal)
            return compute(xp, op, *arrays)

        return _nhwc_kernel(op.attrs["data_format"], pool, images)

    return build


def _lowest(dtype: Any) -> Any:
    """The dtype's lowest finite value (Eigen's ``NumTraits<T>::lowest``: TF's max pool of
    windows holding only NaNs and -infs)."""
    kind = np.dtype(dtype)
    return np.finfo(kind).min if kind.kind == "f" else np.iinfo(kind).min


def _max_pool_window(op: Operation, input_hw: Pair) -> Window:
    """A max pool's window after TF's check (its PoolParameters, for the gradient too) that
    every window holds an input element."""
    shape = _pool_window(op.attrs, input_hw)
    sides = (("Top", "Bottom"), ("Left", "Right"))
    for axis, names in enumerate(sides):
        for side, pad in zip(names, shape.pads[axis]):
            if pad >= shape.size[axis]:
                raise InvalidArgumentError(
                    f"{side} padding {pad} needs to be smaller than the window size "
                    f"{shape.size[axis]}",
                    op=op,
                )
    return shape


def _max_pool(xp: Any, op: Operation, x: Any) -> Any:
    """Each window's maximum as TF's CPU kernel takes it, from the lowest finite value up with
    NaNs passed over (``fmax``): one in-place pass per tap over the padded input, whole arrays
    (2x faster than a reduction over the windows' strided view; 15% faster than sub-blocks of
    the output over the unpadded input)."""
    shape = _max_pool_window(op, x.shape[1:3])
    lowest = _lowest(x.dtype)
    larger = xp.fmax if np.dtype(x.dtype).kind == "f" else xp.maximum
    padded = shape.pad(xp, x, lowest)
    out = larger(shape.tap(padded, 0, 0), lowest)
    for i in range(shape.size[0]):
        for j in range(shape.size[1]):
            if i or j:
                larger(out, shape.tap(padded, i, j), out=out)
    return out


def _window_counts(xp: Any, shape: Window, input_hw: Sequence[int], dtype: Any) -> Any:
    """How many input (not padding) elements each output window holds, as (Ho, Wo, 1)."""
    counts = []
    for axis in (0, 1):
        starts = xp.arange(shape.out[axis]) * shape.strides[axis] - shape.pads[axis][0]
        ends = xp.minimum(starts + shape.size[axis], input_hw[axis])
        counts.append(ends - xp.maximum(starts, 0))
    return (counts[0][:, None] * counts[1][None, :]).astype(dtype)[:, :, None]


def _avg_pool(xp: Any, op: Operation, x: Any) -> Any:
    shape = _pool_window(op.attrs, x.shape[1:3])
    total = shape.view(xp, shape.pad(xp, x)).sum(axis=(3, 4), dtype=x.dtype)
    return total / _window_counts(xp, shape, x.shape[1:3], x.dtype)


def _avg_pool_grad(xp: Any, op: Operation, sizes: Any, grad: Any) -> Any:
    """Each window's gradient shared evenly by the input elements it holds: the adjoint of a
    depthwise all-ones correlation, which ``correlate_input_grad`` computes."""
    n, height, width, depth = to_nhwc(shape_ops.host_ints(sizes), op.attrs["data_format"])
    shape = _pool_window(op.attrs, (height, width))
    scaled = grad / _window_counts(xp, shape, (height, width), grad.dtype)
    ones = xp.ones((*shape.size, 1, depth), dtype=grad.dtype)
    return correlate_input_grad(xp, scaled, ones, (n, height, width, depth), depth, shape)


def _first_real_taps(shape: Window, axis: int) -> list[tuple[int, slice]]:
    """Along ``axis``: the first filter tap over an input (not padding) element, for each run
    of output indices that share it (the runs over the padding before the input, then 0)."""
    starts = np.arange(shape.out[axis]) * shape.strides[axis]
    first = np.maximum(0, -(-(shape.pads[axis][0] - starts) // shape.dilations[axis]))
    bounds = [0, *(np.flatnonzero(np.diff(first)) + 1).tolist(), len(first)]
    return [(int(first[a]), slice(a, b)) for a, b in itertools.pairwise(bounds) if b > a]


def _max_pool_grad(xp: Any, op: Operation, x: Any, y: Any, grad: Any) -> Any:
    """Each window's gradient goes to its maximum as TF's CPU kernel finds it: the window's
    first input element, then each later one that is greater (a NaN first is never beaten,
    a NaN later never wins). One pass over the kh * kw taps of the input padded with NaNs
    (never taken) finds each window's winning tap (a first NaN held as +inf), then the
    gradient goes onto the winners: loops over taps, never over pixels, in place over whole
    arrays (an argmax over a middle axis is 4x slower; ``where=`` masks 15x slower than
    arithmetic; the taps over the unpadded input, sub-blocks of the windows, 20% slower)."""
    shape = _max_pool_window(op, x.shape[1:3])
    floating = np.dtype(x.dtype).kind == "f"
    padded = shape.pad(xp, x, np.nan if floating else _lowest(x.dtype))
    kh, kw = shape.size
    index = np.dtype(np.int8 if kh * kw < 128 else np.int32)
    best = shape.tap(padded, 0, 0).copy()
    winner = xp.zeros(best.shape, dtype=index)
    for i, rows in _first_real_taps(shape, 0):
        for j, cols in _first_real_taps(shape, 1):
            if i or j:  # windows over the padding before the input
                best[:, rows, cols] = shape.tap(padded, i, j)[:, rows, cols]
                winner[:, rows, cols] = i * kw + j
    if floating:
        xp.fmin(best, np.inf, out=best)
    larger = xp.fmax if floating else xp.maximum
    taken = xp.empty(best.shape, dtype=bool)
    marks = xp.empty(best.shape, dtype=index)
    for i in range(kh):
        for j in range(1 if i == 0 else 0, kw):
            candidate = shape.tap(padded, i, j)
            xp.less(best, candidate, out=taken)
            # the taps come in order, so the last to improve on the best is the highest index
            xp.multiply(taken, index.type(i * kw + j), out=marks)
            xp.maximum(winner, marks, out=winner)
            larger(best, candidate, out=best)
    if xp is np:
        return _scatter_to_winners(shape, x.shape, winner, grad)
    spread = xp.zeros(padded.shape, dtype=grad.dtype)
    share = xp.empty_like(grad)
    # the taps backwards: each input element sums its windows' shares in the order of the
    # windows, as TF's kernel does (float16 sums round in that order)
    for i in reversed(range(kh)):
        for j in reversed(range(kw)):
            xp.equal(winner, index.type(i * kw + j), out=taken)
            xp.multiply(grad, taken, out=share)
            target = shape.tap(spread, i, j)
            target += share
    return xp.ascontiguousarray(shape.crop(spread, x.shape[1], x.shape[2]))


def _scatter_to_winners(shape: Window, input_shape: Sequence[int], winner: Any, grad: Any) -> Any:
    """On NumPy, each window's gradient added onto its winning tap's input element by one
    ``np.add.at`` in the windows' order, as TF's kernel adds them (2x faster than a masked add
    per tap; CuPy's scatter-add has no such order)."""
    n, height, width, depth = input_shape
    (sh, sw), (dh, dw), (ho, wo) = shape.strides, shape.dilations, shape.out
    (top, _), (left, _) = shape.pads
    kh, kw = shape.size
    row = width * depth
    offsets = np.array([i * dh * row + j * dw * depth for i in range(kh) for j in range(kw)])
    target = offsets[winner]
    target += (np.arange(n) * (height * row))[:, None, None, None]
    target += ((np.arange(ho) * sh - top) * row)[:, None, None]
    target += ((np.arange(wo) * sw - left) * depth)[:, None]
    target += np.arange(depth)
    spread = np.zeros(n * height * row, dtype=grad.dtype)
    np.add.at(spread, target.ravel(), grad.ravel())
    return spread.reshape(input_shape)


def _infer_max_pool_grad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = _typed("MaxPoolGrad", inputs, ("orig_input", "orig_output", "grad"), _REAL)
    for tensor in inputs:
        _rank4(tensor.shape)
    return single(inputs[0].shape, dtype)


def _infer_avg_pool_grad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    sizes, grad = inputs
    shape_ops.check_shape_tensor(sizes, "orig_input_shape")
    _allowed(grad.dtype, "grad", _FLOATS)
    _rank4(grad.shape)
    shape = _sizes_shape(sizes)
    return single(shape if shape.ndims is not None else TensorShape([None] * 4), grad.dtype)


for _type, _infer, _compute, _images, _cpu, _gpu in (
    ("MaxPool", _infer_pool("MaxPool", _REAL), _max_pool, (0,), _REAL, (*_FLOATS, dtypes.int32)),
    ("AvgPool", _infer_pool("AvgPool", _FLOATS), _avg_pool, (0,), _FLOATS, _FLOATS),
    ("MaxPoolGrad", _infer_max_pool_grad, _max_pool_grad, (0, 1, 2), _REAL, _FLOATS),
    ("AvgPoolGrad", _infer_avg_pool_grad, _avg_pool_grad, (1,), _FLOATS, _FLOATS),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer,
            kernel=_pool_kernel(_compute, _images),
            cost=_pool_cost,
            supported=_kernels(_cpu, _gpu),
        )
    )


# -- LRN, LRNGrad ------------------------------------------------------------------------------
def _depth_window_sum(xp: Any, values: Any, radius: int) -> Any:
    """Each element's sum over the channels within ``radius`` of its own (last axis), added
    from the lowest channel up as TF's kernel adds them: one shifted add per offset over the
    values between zeros (a reduction over a short strided axis is many times slower; adds of
    channel slices or of the values channel-major are slower, the latter by its layout)."""
    depth = values.shape[-1]
    padded = xp.zeros((*values.shape[:-1], depth + 2 * radius), dtype=values.dtype)
    padded[..., radius : radius + depth] = values
    total = padded[..., :depth].copy()
    for offset in range(1, 2 * radius + 1):
        total += padded[..., offset : offset + depth]
    return total


def _lrn_norm(xp: Any, attrs: Mapping[str, Any], x: Any) -> Any:
    """bias + alpha * the window's sum of squares, in one new array."""
    norm = _depth_window_sum(xp, x * x, attrs["depth_radius"])
    norm *= attrs["alpha"]
    norm += attrs["bias"]
    return norm


def _lrn_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """x * norm^-beta, in place over the norm."""
    beta = op.attrs["beta"]

    def lrn(x: Any) -> Any:
        norm = _lrn_norm(xp, op.attrs, x)
        xp.power(norm, -beta, out=norm)
        norm *= x
        return norm

    return lrn


def _lrn_grad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """dx = dy * norm^-beta - 2 * alpha * beta * x * window_sum(dy * y / norm), in place over
    new arrays."""
    attrs = op.attrs
    scale = 2 * attrs["alpha"] * attrs["beta"]

    def lrn_grad(grad: Any, x: Any, y: Any) -> Any:
        norm = _lrn_norm(xp, attrs, x)
        shares = grad * y
        shares /= norm
        spread = _depth_window_sum(xp, shares, attrs["depth_radius"])
        xp.power(norm, -attrs["beta"], out=norm)
        norm *= grad
        xp.multiply(x, scale, out=shares)
        shares *= spread
        norm -= shares
        return norm

    return lrn_grad


def _infer_lrn(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = _typed("LRN", inputs, ("input",), _LRN_DTYPES)
    _rank4(inputs[0].shape)
    return single(inputs[0].shape, dtype)


def _infer_lrn_grad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = _typed("LRNGrad", inputs, ("input_grads", "input_image", "output_image"), _LRN_DTYPES)
    shape = TensorShape(_rank4(inputs[0].shape))
    for tensor in inputs[1:]:
        shape = shape.merge_with(TensorShape(_rank4(tensor.shape)))
    return single(shape, dtype)


def _lrn_cost(
    op: Operation, ins: Sequence[tuple[int, ...]], outs: Sequence[tuple[int, ...]]
) -> Cost:
    """A square and a sum per channel of each window, then the power and the product."""
    elements = int(np.prod(outs[0]))
    window_flops = 2 * (2 * op.attrs["depth_radius"] + 1) + 10
    moved = sum(int(np.prod(s)) for s in (*ins, *outs))
    return Cost(float(elements * window_flops * len(ins)), float(moved * itemsize(op)))


for _type, _infer, _kernel in (
    ("LRN", _infer_lrn, _lrn_kernel),
    ("LRNGrad", _infer_lrn_grad, _lrn_grad_kernel),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer,
            kernel=_kernel,
            cost=_lrn_cost,
            supported=_kernels(_LRN_DTYPES, (dtypes.float32,)),
        )
    )


# -- ShapeN ------------------------------------------------------------------------------------
def _infer_shape_n(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    same_dtype("ShapeN", inputs, [f"input_{i}" for i in range(len(inputs))])
    return [(TensorShape([t.shape.ndims]), attrs["out_type"]) for t in inputs]


def _shape_n_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.attrs["out_type"].np
    return lambda *arrays: tuple(xp.asarray(a.shape, dtype=dtype) for a in arrays)


registry.register(
    OpDef(
        type="ShapeN",
        infer=_infer_shape_n,
        kernel=_shape_n_kernel,
        cost=free_cost,
        multi_output=True,
    )
)


def shape_n(
    inputs: Sequence[Any], out_type: Any = dtypes.int32, name: str | None = None
) -> list[Tensor]:
    """The shapes of several tensors as int vectors, from one op (TF's ``shape_n``)."""
    tensors = [convert_to_tensor(t) for t in inputs]
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return list(make_op("ShapeN", tensors, name or "ShapeN", attrs).outputs)


# -- SpaceToBatchND, BatchToSpaceND: how TF builds a dilated convolution ----------------------
def _block_args(inputs: Sequence[Tensor]) -> tuple[list[int] | None, np.ndarray | None]:
    block = shape_ops.constant_value(inputs[1])
    pads = shape_ops.constant_value(inputs[2])
    return (
        None if block is None else [int(b) for b in block.reshape(-1)],
        None if pads is None else pads.reshape(-1, 2),
    )


def _infer_block_op(to_batch: bool) -> Any:
    """The output shape once the block shape and the paddings (or crops) are constants."""

    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        x = inputs[0]
        for tensor, what in zip(inputs[1:], ("block_shape", "paddings" if to_batch else "crops")):
            if tensor.dtype.base_dtype not in shape_ops.INDEX_DTYPES:
                raise TypeError(f"{what} must be int32 or int64, not {tensor.dtype.name}")
        block, pads = _block_args(inputs)
        if x.shape.ndims is None or block is None or pads is None:
            return single(
                TensorShape(None if x.shape.ndims is None else [None] * x.shape.ndims), x.dtype
            )
        dims = list(x.shape.dims)
        count = int(np.prod(block))
        batch = dims[0]
        dims[0] = None if batch is None else (batch * count if to_batch else batch // count)
        for axis, (k, (before, after)) in enumerate(zip(block, pads.tolist()), start=1):
            size = dims[axis]
            if size is not None:
                dims[axis] = (size + before + after) // k if to_batch else size * k - before - after
        return single(TensorShape(dims), x.dtype)

    return infer


def _space_to_batch_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """Pad, split each blocked axis into (size / block, block) and move the block offsets in
    front of the batch: TF's output batch index is (offsets..., batch)."""
    read = shape_ops.run_derived(
        lambda block, pads: (block, [pads[i : i + 2] for i in range(0, len(pads), 2)])
    )

    def space_to_batch(x: Any, block_shape: Any, paddings: Any) -> Any:
        block, pads = read(block_shape, paddings)
        m = len(block)
        widths = [(0, 0), *[tuple(p) for p in pads], *[(0, 0)] * (x.ndim - m - 1)]
        padded = xp.pad(x, widths, mode="constant")
        for axis, k in enumerate(block):
            if padded.shape[axis + 1] % k:
                raise InvalidArgumentError(
                    f"padded_shape[{axis}]={padded.shape[axis + 1]} is not divisible by "
                    f"block_shape[{axis}]={k}",
                    op=op,
                )
        spatial = [padded.shape[a + 1] // k for a, k in enumerate(block)]
        rest = list(padded.shape[m + 1 :])
        split = [padded.shape[0], *[d for pair in zip(spatial, block) for d in pair], *rest]
        perm = [*range(2, 2 * m + 1, 2), 0, *range(1, 2 * m, 2), *range(2 * m + 1, len(split))]
        moved = padded.reshape(split).transpose(perm)
        return moved.reshape(padded.shape[0] * int(np.prod(block)), *spatial, *rest)

    return space_to_batch


def _batch_to_space_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """SpaceToBatchND's inverse: offsets back between each blocked axis's rows, then cropped."""
    read = shape_ops.run_derived(
        lambda block, crops: (block, [crops[i : i + 2] for i in range(0, len(crops), 2)])
    )

    def batch_to_space(x: Any, block_shape: Any, crops: Any) -> Any:
        block, cuts = read(block_shape, crops)
        m = len(block)
        batch = x.shape[0] // int(np.prod(block))
        spatial = list(x.shape[1 : m + 1])
        rest = list(x.shape[m + 1 :])
        split = x.reshape(*block, batch, *spatial, *rest)
        perm = [m, *[a for i in range(m) for a in (m + 1 + i, i)], *range(2 * m + 1, split.ndim)]
        whole = split.transpose(perm).reshape(
            batch, *[s * k for s, k in zip(spatial, block)], *rest
        )
        window = tuple(
            slice(before, size - after) for (before, after), size in zip(cuts, whole.shape[1:])
        )
        return whole[(slice(None), *window)]

    return batch_to_space


for _type, _to_batch, _kernel in (
    ("SpaceToBatchND", True, _space_to_batch_kernel),
    ("BatchToSpaceND", False, _batch_to_space_kernel),
):
    registry.register(
        OpDef(
            type=_type, infer=_infer_block_op(_to_batch), kernel=_kernel, cost=registry.memory_cost
        )
    )


def space_to_batch_nd(
    input: Any, block_shape: Any, paddings: Any, name: str | None = None
) -> Tensor:
    """Blocks of each spatial axis moved into the batch (TF's ``space_to_batch_nd``)."""
    return _block_op("SpaceToBatchND", input, block_shape, paddings, "paddings", name)


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:
    """``space_to_batch_nd``'s inverse, cropped (TF's ``batch_to_space_nd``)."""
    return _block_op("BatchToSpaceND", input, block_shape, crops, "crops", name)


def _block_op(
    op_type: str, input: Any, block: Any, pads: Any, arg: str, name: str | None
) -> Tensor:
    with op_scope(name or op_type, (input, block, pads)) as scope:
        x = convert_to_tensor(input, name="input")
        block_t = convert_to_tensor(block, dtype=None, name="block_shape")
        pads_t = convert_to_tensor(pads, dtype=None, name=arg)
        return make_op(op_type, [x, block_t, pads_t], scope).outputs[0]


def _with_space_to_batch(
    x: Tensor,
    filter_shape: Any,
    rates: Sequence[int],
    padding: Any,
    data_format: str,
    build: Callable[[Tensor, Any], Tensor],
) -> Tensor:
    """TF's ``_WithSpaceToBatch`` for constant rates, built in the caller's scope: with rates of
    1, ``build(x, padding)``; otherwise ``build`` (VALID) runs on the input's space-to-batch
    form, padded so every output has its full window, and its result is moved back and cropped.
    The input's height and width must be known. ``filter_shape`` is the filter's Shape tensor,
    or its dims."""
    convert_to_tensor(list(rates), dtype=dtypes.int32, name="dilation_rate")
    if any(r < 1 for r in rates):
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={list(rates)}")
    if all(r == 1 for r in rates):
        return build(x, padding)
    padding, explicit = convert_padding(padding)
    channels_first = data_format == "NCHW"
    if padding == "SAME":
        if not isinstance(filter_shape, Tensor):
            filter_shape = convert_to_tensor(
                list(filter_shape), dtype=dtypes.int32, name="filter_shape"
            )
        sizes = shape_ops.constant_value(filter_shape)
        extra = [(int(k) - 1) * r for k, r in zip(sizes[:2], rates)]  # type: ignore[index]
        base: Any = convert_to_tensor(
            [[e // 2, e - e // 2] for e in extra], dtype=dtypes.int32, name="stack"
        )
    elif padding == "VALID":
        base = [[0, 0], [0, 0]]
    elif padding == "EXPLICIT":
        rows = [list(explicit[i : i + 2]) for i in range(0, 8, 2)]
        base = rows[2:] if channels_first else rows[1:3]
    else:
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: padding={padding}")
    dims = x.shape.dims
    spatial = None if dims is None else (dims[2:] if channels_first else dims[1:3])
    if spatial is None or None in spatial:
        raise ValueError(
            f"placeviz builds a dilated convolution for inputs of known height and width; got "
            f"an input of shape {x.shape}"
        )
    with op_scope("required_space_to_batch_paddings", (x,)):
        convert_to_tensor(list(spatial), dtype=dtypes.int32, name="input_shape")
        if not isinstance(base, Tensor):
            base = convert_to_tensor(base, dtype=dtypes.int32, name="base_paddings")
        starts, ends = shape_ops.constant_value(base).T.tolist()  # type: ignore[union-attr]
        extra_end = [(-(s + a + b)) % r for s, a, b, r in zip(spatial, starts, ends, rates)]
        paddings = [[a, b + e] for a, b, e in zip(starts, ends, extra_end)]
        crops = [[0, e] for e in extra_end]
        convert_to_tensor(paddings, dtype=dtypes.int32, name="paddings")
        convert_to_tensor(crops, dtype=dtypes.int32, name="crops")
    lead_block, lead_pad = ([1], [[0, 0]]) if channels_first else ([], [])
    block = np.array([*lead_block, *rates], np.int32)
    inner = space_to_batch_nd(x, block, np.array([*lead_pad, *paddings], np.int32))
    return batch_to_space_nd(build(inner, "VALID"), block, np.array([*lead_pad, *crops], np.int32))


# -- the Python API (TF's nn_ops.py) -----------------------------------------------------------
def get_sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """TF's ``_get_sequence``: one value, one per spatial dimension, or one per dimension."""
    if value is None:
        return [1] * (n + 2)
    values = list(value) if isinstance(value, list | tuple | np.ndarray) else [value]
    if len(values) == n + 2:
        return [int(v) for v in values]
    if len(values) == 1:
        values = values * n
    elif len(values) != n:
        raise ValueError(
            f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={value} of length "
            f"{len(values)}"
        )
    spatial = [int(v) for v in values]
    return [1, 1, *spatial] if channel_index == 1 else [1, *spatial, 1]


def convert_padding(padding: Any, expected_length: int = 4) -> tuple[Any, list[int]]:
    """TF's ``convert_padding``: a list of (before, after) pairs is EXPLICIT padding."""
    if padding == "EXPLICIT":
        raise ValueError(
            "'EXPLICIT' is not a valid value for `padding`. To use explicit padding, `padding` "
            "must be a list."
        )
    if not isinstance(padding, list | tuple):
        return padding, []
    explicit: list[int] = []
    for i, pair in enumerate(padding):
        if not isinstance(pair, list | tuple):
            raise ValueError(
                f"When padding is a list, each element of padding must be a list/tuple of size "
                f"2. Received: padding={padding} with element at index {i} of type "
                f"{type(pair)}"
            )
        if len(pair) != 2:
            raise ValueError(
                f"When padding is a list, each element of padding must be a list/tuple of size "
                f"2. Received: padding={padding} with element at index {i} of size {len(pair)}"
            )
        explicit.extend(int(p) for p in pair)
    if len(padding) != expected_length:
        raise ValueError(
            f"When padding is a list, it must be of size {expected_length}. Received: "
            f"padding={padding} of size {len(padding)}"
        )
    return "EXPLICIT", explicit


def _choice(op_type: str, attr: str, value: Any, allowed: Sequence[str]) -> str:
    """TF's op-definition check of a string attr against its allowed values."""
    if value not in allowed:
        names = ", ".join(f'"{a}"' for a in allowed)
        raise ValueError(
            f"Attr '{attr}' of '{op_type}' Op passed string '{value}' not in: {names}."
        )
    return str(value)


def _window_attrs(
    op_type: str,
    padding: Any,
    data_format: Any,
    explicit: Sequence[int] | None,
    paddings: Sequence[str] = PADDINGS,
    **lists: Sequence[int],
) -> dict[str, Any]:
    """An op's window attrs after TF's checks: padding and data format among the allowed
    strings, list attrs of four ints, and explicit paddings only with EXPLICIT padding."""
    attrs: dict[str, Any] = {
        "padding": _choice(op_type, "padding", padding, paddings),
        "data_format": _choice(op_type, "data_format", data_format or "NHWC", DATA_FORMATS),
    }
    for attr, values in lists.items():
        if len(values) != 4:
            raise ValueError(
                f"{op_type} requires the {attr} attribute to contain 4 values, but got: "
                f"{len(values)}"
            )
        attrs[attr] = [int(v) for v in values]
    if explicit is not None:
        if attrs["padding"] == "EXPLICIT" and len(explicit) != 8:
            raise ValueError(
                f"explicit_paddings attribute must contain 8 values, but got: {len(explicit)}"
            )
        if attrs["padding"] != "EXPLICIT" and explicit:
            raise ValueError(
                "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"
            )
        attrs["explicit_paddings"] = list(explicit)
    return attrs


def _channel_index(data_format: Any) -> int:
    return 1 if (data_format or "NHWC").startswith("NC") else 3


def conv2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str | None = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.conv2d``: a 2-D convolution of an NHWC (or NCHW) batch with an HWIO filter."""
    filter = deprecated_argument("filters", filters, "filter", filter)
    padding, explicit = convert_padding(padding)
    channel = _channel_index(data_format)
    strides = get_sequence(strides, 2, channel, "strides")
    dilations = get_sequence(dilations, 2, channel, "dilations")
    with op_scope(name or "Conv2D", (input, filter)) as scope:
        x, w = convert_pair(input, filter, ("input", "filter"))
        attrs = _window_attrs(
            "Conv2D", padding, data_format, explicit, strides=strides, dilations=dilations
        )
        attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
        return make_op("Conv2D", [x, w], scope, attrs).outputs[0]


def conv2d_backprop_input(
    input_sizes: Any,
    filter: Any = None,
    out_backprop: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.conv2d_backprop_input``: the op itself, its strides given in full."""
    filter = deprecated_argument("filters", filters, "filter", filter)
    padding, explicit = convert_padding(padding)
    with op_scope(name or "Conv2DBackpropInput", (input_sizes, filter, out_backprop)) as scope:
        sizes = convert_to_tensor(input_sizes, name="input_sizes")
        w, dy = convert_pair(filter, out_backprop, ("filter", "out_backprop"))
        attrs = _window_attrs(
            "Conv2DBackpropInput",
            padding,
            data_format,
            explicit,
            strides=list(strides),
            dilations=list(dilations),
        )
        attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
        return make_op("Conv2DBackpropInput", [sizes, w, dy], scope, attrs).outputs[0]


def conv2d_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.nn.conv2d_backprop_filter``: the op itself, its strides given in full."""
    padding, explicit = convert_padding(padding)
    with op_scope(name or "Conv2DBackpropFilter", (input, filter_sizes, out_backprop)) as scope:
        x = convert_to_tensor(input, name="input")
        sizes = convert_to_tensor(filter_sizes, name="filter_sizes")
        dy = convert_to_tensor(out_backprop, dtype=x.dtype, name="out_backprop")
        attrs = _window_attrs(
            "Conv2DBackpropFilter",
            padding,
            data_format,
            explicit,
            strides=list(strides),
            dilations=list(dilations),
        )
        attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
        return make_op("Conv2DBackpropFilter", [x, sizes, dy], scope, attrs).outputs[0]


def conv2d_transpose(
    value: Any = None,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: Any = "SAME",
    data_format: str | None = "NHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.conv2d_transpose``: the gradient of conv2d with respect to its input, as
    one Conv2DBackpropInput op."""
    value = deprecated_argument("input", input, "value", value)
    filter = deprecated_argument("filters", filters, "filter", filter)
    with op_scope(name or "conv2d_transpose", (value, filter, output_shape)) as scope:
        channel = _channel_index(data_format)
        strides = get_sequence(strides, 2, channel, "strides")
        dilations = get_sequence(dilations, 2, channel, "dilations")
        padding, explicit = convert_padding(padding)
        sizes = convert_to_tensor(output_shape, dtype=None, name="input_sizes")
        w, dy = convert_pair(filter, value, ("filter", "out_backprop"))
        attrs = _window_attrs(
            "Conv2DBackpropInput",
            padding,
            data_format,
            explicit,
            strides=strides,
            dilations=dilations,
        )
        attrs["use_cudnn_on_gpu"] = True
        return make_op("Conv2DBackpropInput", [sizes, w, dy], scope, attrs).outputs[0]


def depthwise_conv2d_native(
    input: Any,
    filter: Any,
    strides: Any,
    padding: Any,
    data_format: str | None = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """One filter of ``channel_multiplier`` outputs per input channel, as one op."""
    padding, explicit = convert_padding(padding)
    with op_scope(name or "DepthwiseConv2dNative", (input, filter)) as scope:
        x, w = convert_pair(input, filter, ("input", "filter"))
        attrs = _window_attrs(
            "DepthwiseConv2dNative",
            padding,
            data_format,
            explicit,
            strides=list(strides),
            dilations=list(dilations),
        )
        return make_op("DepthwiseConv2dNative", [x, w], scope, attrs).outputs[0]


def depthwise_conv2d(
    input: Any,
    filter: Any,
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.depthwise_conv2d``: the native op named after the scope, behind TF's
    space-to-batch wrapping (the filter's Shape, the rate, and for a rate above 1 the
    SpaceToBatchND/BatchToSpaceND pair)."""
    rate = deprecated_argument("dilations", dilations, "rate", rate)
    with op_scope(name or "depthwise", (input, filter)) as scope:
        x = convert_to_tensor(input, name="tensor_in")
        w = convert_to_tensor(filter, name="filter_in")
        rates = [1, 1] if rate is None else [int(r) for r in rate]
        fmt = data_format or "NHWC"

        def native(inner: Tensor, inner_padding: Any) -> Tensor:
            return depthwise_conv2d_native(
                inner, w, strides, inner_padding, data_format=fmt, name=scope
            )

        return _with_space_to_batch(
            x, shape_ops.shape(w, optimize=True), rates, padding, fmt, native
        )


def convolution(
    input: Any,
    filter: Any = None,
    padding: Any = None,
    strides: Any = None,
    dilation_rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.convolution`` for 2-D windows: one Conv2D, or for dilations above 1 a
    Conv2D between SpaceToBatchND and BatchToSpaceND (as TF builds it off TPUs)."""
    filter = deprecated_argument("filters", filters, "filter", filter)
    dilation_rate = deprecated_argument("dilations", dilations, "dilation_rate", dilation_rate)
    w = _converted(filter, "filters", (filter, input))
    x = _converted(input, "input", (w, input))
    with op_scope(name or "convolution", (x, w)) as scope:
        fmt = data_format or "NHWC"
        channel = _channel_index(fmt)
        rates = get_sequence(dilation_rate, 2, channel, "dilations")
        steps = get_sequence(strides, 2, channel, "strides")
        if all(r == 1 for r in rates):
            return conv2d(x, w, steps, padding, data_format=fmt, dilations=rates, name=scope)
        spatial = slice(2, 4) if channel == 1 else slice(1, 3)
        if any(v > 1 for v in steps[spatial]):
            raise ValueError(
                "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                f"strides={np.array(steps[spatial])} and dilation_rate={np.array(rates[spatial])}"
            )

        def inner(t: Tensor, inner_padding: Any) -> Tensor:
            return conv2d(t, w, steps, inner_padding, data_format=fmt, name=scope)

        dims = w.shape.dims
        return _with_space_to_batch(x, dims, rates[spatial], padding, fmt, inner)


def _converted(value: Any, arg: str, values: Sequence[Any]) -> Tensor:
    """TF's ``convolution_internal``: an operand that is not a tensor becomes a Const in a
    ``convolution_internal`` scope of its own."""
    if is_tensor_like(value):
        return convert_to_tensor(value)
    with op_scope("convolution_internal", values):
        return convert_to_tensor(value, name=arg)


def atrous_conv2d(
    value: Any, filters: Any, rate: int, padding: str, name: str | None = None
) -> Tensor:
    """``tf.nn.atrous_conv2d``: ``convolution`` with the same dilation on both axes."""
    return convolution(value, filters, padding, dilation_rate=[rate, rate], name=name)


def _pool(
    op_type: str,
    arg: str,
    value: Any,
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: Any,
    scope_name: str,
    convert: bool,
) -> Tensor:
    explicit: list[int] | None = None
    if convert:
        padding, explicit = convert_padding(padding)
    with op_scope(scope_name, (value,)) as scope:
        channel = _channel_index(data_format)
        ksize = get_sequence(ksize, 2, channel, "ksize")
        if any(k == 0 for k in ksize):
            raise ValueError(f"`ksize` cannot be zero. Received: ksize={ksize}")
        strides = get_sequence(strides, 2, channel, "strides")
        x = convert_to_tensor(value, name=arg)
        paddings = PADDINGS if op_type == "MaxPool" else PADDINGS[:2]
        attrs = _window_attrs(
            op_type, padding, data_format, explicit, paddings, ksize=ksize, strides=strides
        )
        return make_op(op_type, [x], scope, attrs).outputs[0]


def max_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.max_pool``: each window's maximum."""
    value = deprecated_argument("input", input, "value", value)
    return _pool(
        "MaxPool", "input", value, ksize, strides, padding, data_format, name or "MaxPool", True
    )


def max_pool2d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    name: str | None = None,
) -> Tensor:
    """``tf.nn.max_pool2d``: max_pool under its own default name."""
    return _pool(
        "MaxPool", "input", input, ksize, strides, padding, data_format, name or "MaxPool2d", True
    )


def avg_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.avg_pool``: each window's mean over its input (not padding) elements."""
    value = deprecated_argument("input", input, "value", value)
    return _pool(
        "AvgPool", "value", value, ksize, strides, padding, data_format, name or "AvgPool", False
    )


def lrn(
    input: Any,
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """Local response normalization: ``input / (bias + alpha * sum(input**2)) ** beta``, the
    sum over the channels within ``depth_radius``."""
    with op_scope(name or "LRN", (input,)) as scope:
        x = convert_to_tensor(input, name="input")
        attrs = {
            "depth_radius": int(depth_radius),
            "bias": float(bias),
            "alpha": float(alpha),
            "beta": float(beta),
        }
        return make_op("LRN", [x], scope, attrs).outputs[0]


local_response_normalization = lrn
avg_pool2d = avg_pool  # TF1 exports avg_pool under both names


def backprop(op_type: str, inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> Tensor:
    """An op of a gradient (Conv2DBackpropInput, MaxPoolGrad, LRNGrad, or a Conv2D in a
    backprop's gradient) named after its type, with the differentiated op's attrs."""
    return make_op(op_type, list(inputs), op_type, dict(attrs)).outputs[0]


__all__ = [
    "atrous_conv2d",
    "avg_pool",
    "avg_pool2d",
    "batch_to_space_nd",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "convolution",
    "depthwise_conv2d",
    "depthwise_conv2d_native",
    "local_response_normalization",
    "lrn",
    "max_pool",
    "max_pool2d",
    "shape_n",
    "space_to_batch_nd",
]
