"""The fused ops TF1 models train with: softmax cross-entropy (dense and sparse labels),
LogSoftmax, BiasAdd and its gradient, L2Loss and StopGradient.

Each cross-entropy op computes the loss and its gradient with respect to the logits in one
pass, as TensorFlow's kernels do, so a training step's backward pass reuses the forward work.
placeviz takes rank-2 logits directly (TensorFlow wraps the op in Reshape/Slice ops that flatten
other ranks to 2 and back).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import array_ops, math_ops, shape_ops
from placeviz.graph.ops._build import make_op, op_scope, require_dtype, same_dtype, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.registry import OpDef, OutputSpec, free_cost, per_element
from placeviz.graph.shapes import ShapeError, TensorShape

_FLOAT_KERNELS = {t: frozenset(dtypes.FLOATS) for t in registry.DEVICE_TYPES}


def _log_softmax_rows(xp: Any, logits: Any) -> Any:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


# -- SoftmaxCrossEntropyWithLogits -------------------------------------------------------------
def _infer_dense_loss(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    features, labels = inputs
    dtype = same_dtype("SoftmaxCrossEntropyWithLogits", inputs, ("features", "labels"))
    require_dtype("SoftmaxCrossEntropyWithLogits", dtype, dtypes.FLOATS)
    shape = _rank_two("logits", features.shape)
    if not shape.is_compatible_with(_rank_two("labels", labels.shape)):
        raise ShapeError(
            f"logits and labels must be broadcastable: logits_size={features.shape} "
            f"labels_size={labels.shape}"
        )
    shape = shape.merge_with(labels.shape)
    return [(TensorShape(shape.dims[:1]), dtype), (shape, dtype)]


def _rank_two(what: str, shape: TensorShape) -> TensorShape:
    if shape.ndims is None:
        return TensorShape([None, None])
    if shape.ndims != 2:
        raise ShapeError(f"{what} must be 2-dimensional, but has shape {shape}")
    return shape


def _dense_loss_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def loss(features: Any, labels: Any) -> tuple[Any, Any]:
        log_probs = _log_softmax_rows(xp, features)
        return -(labels * log_probs).sum(axis=-1), xp.exp(log_probs) - labels

    return loss


registry.register(
    OpDef(
        type="SoftmaxCrossEntropyWithLogits",
        infer=_infer_dense_loss,
        kernel=_dense_loss_kernel,
        cost=per_element(14.0),
        supported=_FLOAT_KERNELS,
        multi_output=True,
    )
)


def softmax_cross_entropy_with_logits_v2(
    labels: Any, logits: Any, axis: int = -1, name: str | None = None
) -> Tensor:
    """Per-row cross-entropy of ``softmax(logits)`` against the distributions ``labels``, built
    as TF's: both flattened to matrices (``_flatten_outer_dims``: Rank, Shape, Sub, Slice,
    concat, Reshape), the op, and its cost reshaped to the logits' shape without the last axis."""
    with op_scope(name or "softmax_cross_entropy_with_logits", (logits, labels)) as scope:
        logits_t = convert_to_tensor(logits, name="logits")
        labels_t = convert_to_tensor(labels, dtype=logits_t.dtype, name="labels")
        _last_axis_only(axis, logits_t)
        rank = shape_ops.rank(logits_t, optimize=True)
        shape = shape_ops.shape(logits_t, optimize=True)
        matrices = [_flatten_outer_dims(t) for t in (logits_t, labels_t)]
        op = make_op("SoftmaxCrossEntropyWithLogits", matrices, scope)
        leading = array_ops.slice(shape, [0], [math_ops.subtract(rank, 1)])
        cost = op.outputs[0]
        if logits_t.shape.dims is not None:
            cost.set_shape(logits_t.shape.dims[:-1])
        return array_ops.reshape(cost, leading)


def _flatten_outer_dims(x: Tensor) -> Tensor:
    """TF's: ``x`` as a matrix of its last dimension's rows."""
    rank = shape_ops.rank(x, optimize=True)
    last = array_ops.slice(shape_ops.shape(x, optimize=True), [math_ops.subtract(rank, 1)], [1])
    out = array_ops.reshape(x, array_ops.concat([[-1], last], 0))
    dims = x.shape.dims
    if dims is not None and None not in dims[:-1]:
        out.set_shape([math.prod(dims[:-1]), dims[-1]])  # type: ignore[arg-type]
    return out


def softmax_cross_entropy_with_logits(
    labels: Any, logits: Any, axis: int = -1, name: str | None = None
) -> Tensor:
    """TF1's older form: no gradient flows into ``labels``."""
    logits_t = convert_to_tensor(logits)
    graph = logits_t.graph
    with (
        graph.as_default(),
        graph.name_scope(name or "softmax_cross_entropy_with_logits_sg") as scope,
    ):
        held = stop_gradient(labels, name="labels_stop_gradient")
        # a name ending in "/" is the scope's own name, as in TensorFlow
        return softmax_cross_entropy_with_logits_v2(held, logits_t, axis=axis, name=scope)


def _last_axis_only(axis: int, logits: Tensor) -> None:
    rank = logits.shape.ndims
    if axis not in (-1, 1) and not (rank is not None and axis == rank - 1):
        raise ValueError(
            f"placeviz computes softmax cross-entropy along the last axis of rank-2 logits; "
            f"got axis={axis} for logits of shape {logits.shape}"
        )


# -- SparseSoftmaxCrossEntropyWithLogits -------------------------------------------------------
def _infer_sparse_loss(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    features, labels = inputs
    require_dtype("SparseSoftmaxCrossEntropyWithLogits", features.dtype, dtypes.FLOATS)
    require_dtype("SparseSoftmaxCrossEntropyWithLogits", labels.dtype, (dtypes.int32, dtypes.int64))
    shape = _rank_two("logits", features.shape)
    if labels.shape.ndims not in (None, 1):
        raise ShapeError(f"labels must be 1-D, but got shape {labels.shape}")
    rows = TensorShape(shape.dims[:1])
    if not rows.is_compatible_with(labels.shape):
        raise ShapeError(
            f"logits and labels must have the same first dimension, got logits shape "
            f"{features.shape} and labels shape {labels.shape}"
        )
    return [(rows.merge_with(labels.shape), features.dtype), (shape, features.dtype)]


def _sparse_loss_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def loss(features: Any, labels: Any) -> tuple[Any, Any]:
        classes = features.shape[-1]
        if labels.size and (labels.min() < 0 or labels.max() >= classes):
            bad = int(labels.min() if labels.min() < 0 else labels.max())
            raise InvalidArgumentError(
                f"Received a label value of {bad} which is outside the valid range of "
                f"[0, {classes}).  Label values: {' '.join(str(int(v)) for v in labels)}",
                op=op,
            )
        rows = xp.arange(features.shape[0])
        log_probs = _log_softmax_rows(xp, features)
        backprop = xp.exp(log_probs)
        backprop[rows, labels] -= 1
        return -log_probs[rows, labels], backprop

    return loss


registry.register(
    OpDef(
        type="SparseSoftmaxCrossEntropyWithLogits",
        infer=_infer_sparse_loss,
        kernel=_sparse_loss_kernel,
        cost=per_element(14.0),
        supported=_FLOAT_KERNELS,
        multi_output=True,
    )
)


def sparse_softmax_cross_entropy_with_logits(
    labels: Any, logits: Any, name: str | None = None
) -> Tensor:
    """Per-row cross-entropy of ``softmax(logits)`` against class indices ``labels``."""
    logits_t = convert_to_tensor(logits)
    graph = logits_t.graph
    with graph.as_default(), graph.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits"):
        labels_t = convert_to_tensor(labels)
        shape_ops.shape(labels_t, optimize=True)  # TF's labels_shape, for its checks
        op = make_op(
            "SparseSoftmaxCrossEntropyWithLogits",
            [logits_t, labels_t],
            name or "SparseSoftmaxCrossEntropyWithLogits",  # TF's op takes the scope's name
        )
    return op.outputs[0]


# -- LogSoftmax --------------------------------------------------------------------------------
def _infer_log_softmax(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    logits = inputs[0]
    require_dtype("LogSoftmax", logits.dtype, dtypes.FLOATS)
    if logits.shape.ndims == 0:
        raise ShapeError("logits must have rank at least 1, but has rank 0")
    return single(logits.shape, logits.dtype)


registry.register(
    OpDef(
        type="LogSoftmax",
        infer=_infer_log_softmax,
        kernel=lambda xp, op, state: lambda x: _log_softmax_rows(xp, x),
        cost=per_element(12.0),
        supported=_FLOAT_KERNELS,
    )
)


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """``logits - log(sum(exp(logits)))`` along the last axis, computed stably."""
    tensor = convert_to_tensor(logits)
    if axis is not None and axis != -1 and axis != (tensor.shape.ndims or 0) - 1:
        raise ValueError(f"placeviz computes log_softmax along the last axis; got axis={axis}")
    return make_op("LogSoftmax", [tensor], name or "LogSoftmax").outputs[0]


# -- BiasAdd, BiasAddGrad ----------------------------------------------------------------------
def _infer_bias_add(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    value, bias = inputs
    dtype = same_dtype("BiasAdd", inputs, ("value", "bias"))
    channels_first = attrs.get("data_format") == "NCHW"
    least = 3 if channels_first else 2
    if value.shape.ndims is not None and value.shape.ndims < least:
        raise ShapeError(f"Shape must be at least rank {least} but is rank {value.shape.ndims}")
    if bias.shape.ndims not in (None, 1):
        raise ShapeError(f"Shape must be rank 1 but is rank {bias.shape.ndims}")
    channels = value.shape.dims[1 if channels_first else -1] if value.shape.ndims else None
    size = bias.shape.dims[0] if bias.shape.ndims else None
    if channels is not None and size is not None and channels != size:
        raise ShapeError(
            f"Dimensions must be equal, but are {channels} and {size} (the channel dimension "
            "of value and the size of bias)"
        )
    return single(value.shape, dtype)


def _bias_add_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """NHWC adds the bias as it broadcasts; NCHW adds it along axis 1 (a view of it as a column
    per channel), still writing into ``out`` as a ufunc."""
    if op.attrs.get("data_format") != "NCHW":
        return xp.add
    spatial = (1,) * (op.inputs[0].shape.ndims - 2)
    return lambda x, bias, out=None: xp.add(x, bias.reshape(-1, *spatial), out=out)


registry.register(
    OpDef(
        type="BiasAdd",
        infer=_infer_bias_add,
        kernel=_bias_add_kernel,
        ufunc=True,
    )
)


def bias_add(
    value: Any, bias: Any, data_format: str | None = None, name: str | None = None
) -> Tensor:
    """``value + bias`` with ``bias`` added along the channel dimension: the last (``N...C``,
    NHWC, the default) or the second (``NC...``, NCHW)."""
    attrs = {"data_format": _bias_data_format(data_format)}
    value_t = convert_to_tensor(value)
    with value_t.graph.as_default():
        bias_t = convert_to_tensor(bias, dtype=value_t.dtype)
    return make_op("BiasAdd", [value_t, bias_t], name or "BiasAdd", attrs).outputs[0]


def _bias_data_format(data_format: str | None) -> str:
    """TF's reading of a data format's letters: channels second (NC...) or last (N...C)."""
    if data_format is None or (data_format.startswith("N") and data_format.endswith("C")):
        return "NHWC"
    if data_format.startswith("NC"):
        return "NCHW"
    raise ValueError(
        f"`data_format` must be of the form `N...C` or `NC...`. Received: data_format={data_format}"
    )


def _infer_bias_add_grad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    grad = inputs[0]
    axis = 1 if attrs.get("data_format") == "NCHW" else -1
    channels = grad.shape.dims[axis] if grad.shape.ndims else None
    return single(TensorShape([channels]), grad.dtype)


def _bias_add_grad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    keep = 1 if op.attrs.get("data_format") == "NCHW" else op.inputs[0].shape.ndims - 1
    return lambda g: g.sum(axis=tuple(a for a in range(g.ndim) if a != keep))


registry.register(
    OpDef(type="BiasAddGrad", infer=_infer_bias_add_grad, kernel=_bias_add_grad_kernel)
)


def bias_add_grad(grad: Tensor, data_format: str = "NHWC", name: str | None = None) -> Tensor:
    attrs = {"data_format": data_format}
    return make_op("BiasAddGrad", [grad], name or "BiasAddGrad", attrs).outputs[0]


# -- L2Loss ------------------------------------------------------------------------------------
def _infer_l2_loss(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    require_dtype("L2Loss", inputs[0].dtype, dtypes.FLOATS)
    return single(TensorShape([]), inputs[0].dtype.base_dtype)


registry.register(
    OpDef(
        type="L2Loss",
        infer=_infer_l2_loss,
        kernel=lambda xp, op, state: lambda t: (t * t).sum() / 2,
        cost=per_element(2.0),
        supported=_FLOAT_KERNELS,
    )
)


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """``sum(t ** 2) / 2``: weight decay's penalty, and ``global_norm``'s half squared norms."""
    tensor = convert_to_tensor(t)
    return make_op("L2Loss", [tensor], name or "L2Loss").outputs[0]


# -- StopGradient ------------------------------------------------------------------------------
registry.register(
    OpDef(
        type="StopGradient",
        infer=lambda inputs, attrs: single(inputs[0].shape, inputs[0].dtype),
        kernel=lambda xp, op, state: lambda x: x,
        cost=free_cost,
        forwards_input=0,
    )
)


def stop_gradient(input: Any, name: str | None = None) -> Tensor:
    """The value of ``input``; gradients do not flow through it."""
    tensor = convert_to_tensor(input)
    return make_op("StopGradient", [tensor], name or "StopGradient").outputs[0]
