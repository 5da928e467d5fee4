"""Fused batch normalization: ``FusedBatchNormV3`` and its gradient ``FusedBatchNormGradV3``.

One op normalizes each channel of a 4-D (or 5-D) batch with the batch's statistics (training)
or with given ones (inference), as TensorFlow's CPU and cuDNN kernels do. Statistics, scale and
offset are float32 also for a float16 batch (TF's ``U`` attr); the kernels compute in float32.
In training the op's ``batch_variance`` output is the unbiased (Bessel-corrected) variance that
the running averages take, while the output is normalized with the biased one, which the op
also hands its gradient through ``reserve_space_2``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, is_tensor_like
from placeviz.graph.ops._build import make_op, op_scope
from placeviz.graph.ops.constant_op import constant, convert_to_tensor
from placeviz.graph.registry import OpDef, OutputSpec, per_element
from placeviz.graph.shapes import ShapeError, TensorShape, format_dims


class _Layout(NamedTuple):
    rank: int
    channel: int  # the channel axis


# data_format -> layout; TF's attr allows exactly these.
_LAYOUTS: dict[str, _Layout] = {
    "NHWC": _Layout(4, 3),
    "NCHW": _Layout(4, 1),
    "NDHWC": _Layout(5, 4),
    "NCDHW": _Layout(5, 1),
}


class _TypeAttr(NamedTuple):
    dtypes: tuple[dtypes.DType, ...]
    words: str  # TF's op def lists bfloat16 too; placeviz has none, the words list TF's


# TF registers both kernels for T in {half, float} with U = float, on CPU and GPU.
BATCH_DTYPES = (dtypes.float16, dtypes.float32)
_T = _TypeAttr(BATCH_DTYPES, "float16, bfloat16, float32")
_U = _TypeAttr((dtypes.float32,), "bfloat16, float32")
_STAT_DTYPE = _U.dtypes[0]  # of the statistics, scale and offset
_KERNELS = {t: frozenset(_T.dtypes) for t in registry.DEVICE_TYPES}


def _layout(attrs: Mapping[str, Any], op_type: str) -> _Layout:
    data_format = attrs["data_format"]
    if data_format not in _LAYOUTS:
        allowed = ", ".join(f'"{name}"' for name in _LAYOUTS)
        raise ValueError(
            f"Attr 'data_format' of '{op_type}' Op passed string '{data_format}' not in: {allowed}."
        )
    return _LAYOUTS[data_format]


def _check_types(op_type: str, attr: _TypeAttr, args: Sequence[tuple[str, Tensor]]) -> None:
    """The first argument sets the type attr, which must be allowed; the rest must match it."""
    (first, reference), *rest = args
    dtype = reference.dtype.base_dtype
    if dtype not in attr.dtypes:
        raise TypeError(
            f"Value passed to parameter '{first}' has DataType {dtype.name} not in list of "
            f"allowed values: {attr.words}"
        )
    for arg, tensor in rest:
        if tensor.dtype.base_dtype is not dtype:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {tensor.dtype.base_dtype.name} that "
                f"does not match type {dtype.name} of argument '{first}'."
            )


def _with_rank(shape: TensorShape, rank: int) -> tuple[int | None, ...]:
    if shape.dims is None:
        return (None,) * rank
    if len(shape.dims) != rank:
        raise ShapeError(f"Shape must be rank {rank} but is rank {len(shape.dims)}")
    return shape.dims


def _merge(channels: int | None, vectors: Sequence[Tensor]) -> int | None:
    """TF's shape rule: each vector is rank 1 and has the batch's number of channels."""
    for vector in vectors:
        (size,) = _with_rank(vector.shape, 1)
        channels = _merge_dim(channels, size)
    return channels


def _merge_dim(a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ShapeError(f"Dimensions must be equal, but are {a} and {b}")
    return b if a is None else a


def _replace(dims: tuple[int | None, ...], axis: int, dim: int | None) -> TensorShape:
    return TensorShape((*dims[:axis], dim, *dims[axis + 1 :]))


# -- FusedBatchNormV3 --------------------------------------------------------------------------
def _infer_forward(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, scale, offset, mean, variance = inputs
    layout = _layout(attrs, "FusedBatchNormV3")
    _check_types("FusedBatchNormV3", _T, [("x", x)])
    named = [("scale", scale), ("offset", offset), ("mean", mean), ("variance", variance)]
    _check_types("FusedBatchNormV3", _U, named)
    # mean and variance are read only in inference or when averaging into them (TF's rule)
    checked = [scale, offset] if _batch_statistics_only(attrs) else [scale, offset, mean, variance]
    dims = _with_rank(x.shape, layout.rank)
    channels = _merge(dims[layout.channel], checked)
    shape = _replace(dims, layout.channel, channels)
    vector = TensorShape([channels])
    stat = _STAT_DTYPE
    return [
        (shape, x.dtype.base_dtype),
        (vector, stat),
        (vector, stat),
        (vector, stat),
        (vector, stat),
        (TensorShape(None), stat),
    ]


def _infer_forward_run(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    """As the kernel makes them: ``reserve_space_3`` is empty (TF leaves its shape unknown)."""
    *specs, (_, stat) = _infer_forward(inputs, attrs)
    return [*specs, (TensorShape([0]), stat)]


def _batch_statistics_only(attrs: Mapping[str, Any]) -> bool:
    return bool(attrs["is_training"]) and attrs["exponential_avg_factor"] == 1.0


def _channel_axis(op: Operation) -> int:
    """The axis statistics are per (they are over every other axis)."""
    return _LAYOUTS[op.attrs["data_format"]].channel


# NumPy's elementwise loops run along the last axis, so with 16 channels last every
# per-channel broadcast goes 16 elements at a time (2x slower than along long rows).
# Channels-last batches are seen as rows of up to this many elements, the channel vectors
# repeated along them.
FOLDED_ROW = 1024


class _Frame:
    """A batch as the kernels compute on it: channels last, (rows, repeats * C) views of it;
    otherwise its own shape, vectors broadcast along the channel axis."""

    def __init__(self, xp: Any, x: Any, channel: int) -> None:
        self.xp = xp
        self.shape = x.shape
        self.channels = x.shape[channel]
        if channel == x.ndim - 1:
            rows = x.size // self.channels
            self.repeats = math.gcd(rows, max(1, FOLDED_ROW // self.channels))
            self._folded: tuple[int, ...] = (-1, self.repeats * self.channels)
            self._vector: tuple[int, ...] = (-1,)
        else:
            self.repeats = 1
            self._folded = x.shape
            self._vector = tuple(-1 if axis == channel else 1 for axis in range(x.ndim))

    def fold(self, values: Any) -> Any:
        return values.reshape(self._folded)

    def unfold(self, values: Any) -> Any:
        return values.reshape(self.shape)

    def per_channel(self, vector: Any) -> Any:
        """``vector`` as it broadcasts over folded values."""
        return self.xp.tile(vector, self.repeats).reshape(self._vector)

    def sums(self, values: Any) -> Any:
        """Per-channel sums of folded values as products with a ones vector: NumPy's reduction
        over every axis but a short channel axis goes a row at a time (15x slower for 16
        channels) and accumulates less accurately than BLAS."""
        xp = self.xp
        if len(self._folded) == 2:
            row_sums = xp.matmul(xp.ones(values.shape[0], values.dtype), values)
            return row_sums.reshape(self.repeats, self.channels).sum(axis=0)
        blocks = values.reshape(values.shape[0], self.channels, -1)
        return xp.matmul(blocks, xp.ones(blocks.shape[2], values.dtype)).sum(axis=0)


def _require_channels(op: Operation, what: str, vector: Any, channels: int) -> None:
    if vector.size != channels:
        raise InvalidArgumentError(
            f"{what} must have the same number of elements as the channels of x, got "
            f"{vector.size} and {channels}",
            op=op,
        )


def _forward_kernel(xp: Any, op: Operation, state: Any) -> Any:
    channel = _channel_axis(op)
    epsilon = xp.float32(op.attrs["epsilon"])
    factor = xp.float32(op.attrs["exponential_avg_factor"])
    training = bool(op.attrs["is_training"])
    averaged = not _batch_statistics_only(op.attrs)
    prefix = "When exponential_avg_factor != 1" if training else "When is_training=false"
    stat = _STAT_DTYPE.np

    def forward(x: Any, scale: Any, offset: Any, mean: Any, variance: Any) -> tuple[Any, ...]:
        channels = x.shape[channel]
        _require_channels(op, "scale", scale, channels)
        _require_channels(op, "offset", offset, channels)
        if averaged:
            _require_channels(op, f"{prefix}, mean", mean, channels)
            _require_channels(op, f"{prefix}, variance", variance, channels)
        reserve = xp.zeros((0,), stat)
        if x.size == 0:  # TF's kernels: the statistics of an empty batch are NaN
            nan = xp.full((channels,), xp.nan, stat)
            return x.copy(), nan, nan.copy(), nan.copy(), nan.copy(), reserve
        frame = _Frame(xp, x, channel)
        values = frame.fold(x.astype(stat, copy=False))
        # Two arrays of x's size in all (the centered values, then the squares, whose buffer
        # becomes y): each further temporary costs a pass over memory.
        if training:
            count = x.size // channels
            batch_mean = frame.sums(values) / count
            centered = values - frame.per_channel(batch_mean)
            work = xp.multiply(centered, centered)
            batch_variance = frame.sums(work) / count
        else:
            batch_mean, batch_variance = mean, variance
            centered = values - frame.per_channel(mean)
            work = xp.empty_like(centered)
        multiplier = scale / xp.sqrt(batch_variance + epsilon)
        y = xp.multiply(centered, frame.per_channel(multiplier), out=work)
        y += frame.per_channel(offset)
        y = frame.unfold(y)
        if not training:
            statistics = (mean.copy(), variance.copy(), mean.copy(), variance.copy())
            return (y.astype(x.dtype, copy=False), *statistics, reserve)
        unbiased = batch_variance * (count / max(count - 1, 1))  # Bessel's correction
        if factor != 1:
            running_mean = (1 - factor) * mean + factor * batch_mean
            running_variance = (1 - factor) * variance + factor * unbiased
        else:
            running_mean, running_variance = batch_mean.copy(), unbiased
        statistics = (running_mean, running_variance, batch_mean, batch_variance)
        return (y.astype(x.dtype, copy=False), *statistics, reserve)

    return forward


registry.register(
    OpDef(
        type="FusedBatchNormV3",
        infer=_infer_forward,
        run_infer=_infer_forward_run,
        kernel=_forward_kernel,
        # two reductions over the batch, then center, scale and shift each element
        cost=per_element(8.0),
        supported=_KERNELS,
        multi_output=True,
    )
)


def _input(value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    """As TF's op builder converts an argument: a Python value takes the op's dtype; a tensor is
    kept as it is, so the shape rule names a mismatch."""
    return convert_to_tensor(value, dtype=None if is_tensor_like(value) else dtype, name=name)


def fused_batch_norm_v3(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any,
    variance: Any,
    epsilon: float = 0.0001,
    exponential_avg_factor: float | None = 1.0,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
) -> Operation:
    """The ``FusedBatchNormV3`` op itself (TF's ``gen_nn_ops.fused_batch_norm_v3``)."""
    attrs = {
        "epsilon": float(epsilon),
        "exponential_avg_factor": 1.0 if exponential_avg_factor is None else exponential_avg_factor,
        "data_format": data_format,
        "is_training": bool(is_training),
    }
    with op_scope(name or "FusedBatchNormV3", (x, scale, offset, mean, variance)) as scope:
        x_t = convert_to_tensor(x, name="x")
        scale_t = convert_to_tensor(scale, name="scale")
        stat = scale_t.dtype.base_dtype
        inputs = [x_t, scale_t] + [
            _input(v, stat, arg)
            for v, arg in ((offset, "offset"), (mean, "mean"), (variance, "variance"))
        ]
        return make_op("FusedBatchNormV3", inputs, scope, attrs)


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
    exponential_avg_factor: float | None = 1.0,
) -> tuple[Tensor, Tensor, Tensor]:
    """TF1's ``tf.nn.fused_batch_norm``: ``(y, running_mean, running_variance)``.

    In training the mean and variance are the batch's (the variance unbiased), or averaged into
    the given ``mean``/``variance`` with ``exponential_avg_factor``; in inference ``mean`` and
    ``variance`` normalize the batch."""
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(
            "Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
            f"`exponential_avg_factor` != 1.0. Received: `mean` {mean!r} and `variance` "
            f"{variance!r}"
        )
    x_t = convert_to_tensor(x, name="input")
    scale_t = convert_to_tensor(scale, name="scale")
    offset_t = convert_to_tensor(offset, name="offset")
    # an empty vector stands for statistics the op does not read (TF's)
    mean_v = constant([]) if mean is None else mean
    variance_v = constant([]) if variance is None else variance
    op = fused_batch_norm_v3(
        x_t,
        scale_t,
        offset_t,
        mean_v,
        variance_v,
        epsilon=epsilon,
        exponential_avg_factor=exponential_avg_factor,
        data_format=data_format,
        is_training=is_training,
        name=name,
    )
    return op.outputs[0], op.outputs[1], op.outputs[2]


# -- FusedBatchNormGradV3 ----------------------------------------------------------------------
def _infer_backward(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    y_backprop, x, scale, reserve_1, reserve_2, _ = inputs
    layout = _layout(attrs, "FusedBatchNormGradV3")
    _check_types("FusedBatchNormGradV3", _T, [("y_backprop", y_backprop), ("x", x)])
    named = [("scale", scale), ("reserve_space_1", reserve_1), ("reserve_space_2", reserve_2)]
    _check_types("FusedBatchNormGradV3", _U, named)
    dims = _with_rank(y_backprop.shape, layout.rank)
    x_dims = _with_rank(x.shape, layout.rank)
    channels = _merge_dim(dims[layout.channel], x_dims[layout.channel])
    channels = _merge(channels, [scale, reserve_1, reserve_2])
    vector = TensorShape([channels])
    stat = _STAT_DTYPE
    empty = TensorShape([0])
    return [
        (_replace(dims, layout.channel, channels), y_backprop.dtype.base_dtype),
        (vector, stat),
        (vector, stat),
        (empty, stat),
        (empty, stat),
    ]


def _backward_kernel(xp: Any, op: Operation, state: Any) -> Any:
    channel = _channel_axis(op)
    epsilon = xp.float32(op.attrs["epsilon"])
    training = bool(op.attrs["is_training"])
    stat = _STAT_DTYPE.np

    def backward(
        y_backprop: Any, x: Any, scale: Any, mean: Any, variance: Any, reserve: Any
    ) -> tuple[Any, ...]:
        if x.shape != y_backprop.shape:
            raise InvalidArgumentError(
                f"x and y_backprop must have same shape, but x has shape "
                f"{format_dims(x.shape)} and y_backprop has shape {format_dims(y_backprop.shape)}",
                op=op,
            )
        channels = x.shape[channel]
        _require_channels(op, "scale", scale, channels)
        _require_channels(op, "reserve_space_1", mean, channels)
        _require_channels(op, "reserve_space_2", variance, channels)
        if not training and channel != x.ndim - 1:
            raise InvalidArgumentError(
                "The implementation of FusedBatchNormGrad with is_training=False only support "
                "NHWC tensor format for now.",
                op=op,
            )
        empty = xp.zeros((0,), stat)
        if x.size == 0:
            zeros = xp.zeros((channels,), stat)
            return xp.zeros(x.shape, x.dtype), zeros, zeros.copy(), empty, empty.copy()
        frame = _Frame(xp, x, channel)
        grad = frame.fold(y_backprop.astype(stat, copy=False))
        # Two arrays of x's size in all, as the forward kernel.
        centered = frame.fold(x.astype(stat, copy=False)) - frame.per_channel(mean)
        inverse_std = 1 / xp.sqrt(variance + epsilon)
        offset_backprop = frame.sums(grad)
        work = xp.multiply(grad, centered)
        projected = frame.sums(work)
        scale_backprop = projected * inverse_std
        multiplier = scale * inverse_std
        x_backprop = xp.multiply(grad, frame.per_channel(multiplier), out=work)
        if training:
            # the batch statistics depend on x too: subtract their share of the gradient,
            # (offset_backprop + centered * projected * inverse_std**2) / count, scaled
            count = x.size // channels
            coefficient = xp.square(inverse_std) * projected / count * multiplier
            centered *= frame.per_channel(coefficient)
            x_backprop -= centered
            x_backprop -= frame.per_channel(offset_backprop / count * multiplier)
        x_backprop = frame.unfold(x_backprop).astype(x.dtype, copy=False)
        return x_backprop, scale_backprop, offset_backprop, empty, empty.copy()

    return backward


registry.register(
    OpDef(
        type="FusedBatchNormGradV3",
        infer=_infer_backward,
        kernel=_backward_kernel,
        cost=per_element(12.0),
        supported=_KERNELS,
        multi_output=True,
    )
)


def fused_batch_norm_grad_v3(
    y_backprop: Tensor,
    x: Tensor,
    scale: Tensor,
    reserve_space_1: Tensor,
    reserve_space_2: Tensor,
    reserve_space_3: Tensor,
    epsilon: float,
    data_format: str,
    is_training: bool,
    name: str | None = None,
) -> Operation:
    """The ``FusedBatchNormGradV3`` op: gradients for x, scale and offset. In training the
    reserve spaces hold the batch mean and biased variance; in inference the population's."""
    attrs = {"epsilon": float(epsilon), "data_format": data_format, "is_training": is_training}
    inputs = [y_backprop, x, scale, reserve_space_1, reserve_space_2, reserve_space_3]
    return make_op("FusedBatchNormGradV3", inputs, name or "FusedBatchNormGradV3", attrs)
