"""The ``tf.nn`` functions TensorFlow builds from smaller ops rather than one kernel (its
nn_impl.py): moments, batch normalization, L2 normalization, xw_plus_b, the logistic loss and
GELU. Each
builds TensorFlow's ops in TensorFlow's order, so names, gradients and placement match."""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, constant_op, loss_ops, math_ops
from placeviz.graph.ops._build import deprecated_argument, op_scope
from placeviz.graph.ops.constant_op import convert_to_tensor


def moments(
    x: Any,
    axes: Any,
    shift: Any = None,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean and (biased) variance of ``x`` over ``axes``. float16 inputs are reduced in
    float32 and cast back, as TF does (float16's range is too small for sums of squares);
    ``shift`` is accepted and unused, as in TF."""
    keep = bool(deprecated_argument("keepdims", keepdims, "keep_dims", keep_dims))
    with op_scope(name or "moments", (x,)):
        tensor = convert_to_tensor(x)
        half = tensor.dtype.base_dtype is dtypes.float16
        y = array_ops.cast(tensor, dtypes.float32) if half else tensor
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # stop_gradient changes no gradient: the variance's gradient through the mean is 0
        deviation = math_ops.squared_difference(y, loss_ops.stop_gradient(mean))
        variance = math_ops.reduce_mean(deviation, axes, keepdims=True, name="variance")
        if not keep:
            mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
        if half:
            return array_ops.cast(mean, dtypes.float16), array_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """``(x - mean) * scale / sqrt(variance + epsilon) + offset``, built as TF's
    ``x * inv + (offset - mean * inv)`` with ``inv = rsqrt(variance + epsilon) * scale``, so
    that the per-channel terms are computed once; ``offset`` and ``scale`` may be None."""
    with op_scope(name or "batchnorm", (x, mean, variance, scale, offset)):
        tensor = convert_to_tensor(x)
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        dtype = tensor.dtype.base_dtype
        scaled = tensor * array_ops.cast(inv, dtype)  # TF's order: before the shift
        shift = offset - mean * inv if offset is not None else -mean * inv
        return scaled + array_ops.cast(shift, dtype)


def l2_normalize(
    x: Any,
    axis: Any = None,
    epsilon: float = 1e-12,
    name: str | None = None,
    dim: Any = None,
) -> Tensor:
    """``x / sqrt(max(sum(x²), epsilon))`` over ``axis`` (every axis when None)."""
    axis = deprecated_argument("axis", axis, "dim", dim)
    with op_scope(name or "l2_normalize", (x,)) as scope:
        tensor = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(tensor), axis, keepdims=True)
        inverse_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(tensor, inverse_norm, name=scope)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``matmul(x, weights) + biases``: a MatMul and a BiasAdd named by the scope, as TF's."""
    with op_scope(name or "xw_plus_b", (x, weights, biases)) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return loss_ops.bias_add(math_ops.matmul(x, weights), biases, name=scope)


def sigmoid_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """The logistic loss of each logit against its label (a probability), in TF's stable form
    ``max(x, 0) - x z + log(1 + exp(-|x|))``, with |x| picked by Select rather than Abs."""
    if labels is None or logits is None:
        raise ValueError(
            "Both `labels` and `logits` must be provided for sigmoid_cross_entropy_with_logits"
            f"Received: labels={labels} and logits={logits}"
        )
    with op_scope(name or "logistic_loss", (logits, labels)) as scope:
        logits_t = convert_to_tensor(logits, name="logits")
        labels_t = convert_to_tensor(labels, name="labels")
        if not labels_t.shape.is_compatible_with(logits_t.shape):
            raise ValueError(
                "`logits` and `labels` must have the same shape, received "
                f"({logits_t.shape} vs {labels_t.shape})."
            )
        zeros = array_ops.zeros_like(logits_t, dtype=logits_t.dtype)
        positive = logits_t >= zeros
        relu_logits = math_ops.select(positive, logits_t, zeros)
        neg_abs_logits = math_ops.select(positive, -logits_t, logits_t)
        return math_ops.add(
            relu_logits - logits_t * labels_t,
            math_ops.log1p(math_ops.exp(neg_abs_logits)),
            name=scope,
        )


def _cast_constant(value: float, dtype: dtypes.DType) -> Tensor:
    """TF's ``math_ops.cast`` of a Python float: a float32 ``Cast/x``, and a ``Cast`` op when
    ``dtype`` is another (so float64 sees float32's rounding of ``value``, as in TF)."""
    with op_scope("Cast") as scope:
        constant = constant_op.constant(value, dtype=dtypes.float32, name="x")
        if dtype is dtypes.float32:
            return constant
        return array_ops.cast(constant, dtype, name=scope)


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    """The Gaussian error linear unit ``x Φ(x)``: exactly with Erfc, or with TF's tanh
    approximation when ``approximate``."""
    with op_scope(name or "Gelu", (features,)):
        x = convert_to_tensor(features, name="features")
        dtype = x.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError(
                "`features.dtype` must be a floating point tensor."
                f"Received:features.dtype=<dtype: '{dtype.name}'>"
            )
        if approximate:
            coefficient = _cast_constant(0.044715, dtype)
            half_x = 0.5 * x  # TF's order: 0.5 * x before the rest of the expression
            cubic = x + coefficient * math_ops.pow(x, 3)
            return half_x * (1.0 + math_ops.tanh(0.7978845608028654 * cubic))
        return 0.5 * x * math_ops.erfc(-x * _cast_constant(0.7071067811865476, dtype))
