"""Neural-network activations, so the package can present them as ``pv.nn``, and their fused
gradient ops (``ReluGrad``, ``EluGrad``...), which take the forward op's input or output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import array_ops
from placeviz.graph.ops._build import make_op, op_scope, require_dtype, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.math_ops import infer_same_shape, relu, sigmoid, tanh, unary
from placeviz.graph.registry import OpDef, OutputSpec, per_element
from placeviz.graph.shapes import ShapeError, normalize_axis

__all__ = [
    "elu",
    "leaky_relu",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "softmax",
    "softplus",
    "tanh",
]


def _infer_softmax(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    logits = inputs[0]
    require_dtype("Softmax", logits.dtype, dtypes.FLOATS)
    rank = logits.shape.ndims
    if rank == 0:
        raise ShapeError("logits must have rank at least 1, but has rank 0")
    normalize_axis(attrs["axis"], rank)
    return single(logits.shape, logits.dtype)


def _softmax_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis = normalize_axis(op.attrs["axis"], op.inputs[0].shape.ndims)

    def softmax(x: Any) -> Any:
        # Subtracting the max keeps exp from overflowing; the new array is safe to reuse in place.
        shifted = x - x.max(axis=axis, keepdims=True)
        xp.exp(shifted, out=shifted)
        shifted /= shifted.sum(axis=axis, keepdims=True)
        return shifted

    return softmax


registry.register(
    OpDef(
        type="Softmax",
        infer=_infer_softmax,
        kernel=_softmax_kernel,
        # max, subtract, exp (8), sum and divide per element
        cost=per_element(12.0),
        supported={t: frozenset(dtypes.FLOATS) for t in registry.DEVICE_TYPES},
    )
)


def softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    """Normalizes along ``axis`` (the last by default) so each slice sums to 1."""
    attrs = {"axis": int(axis)}
    return make_op("Softmax", [convert_to_tensor(logits)], name or "Softmax", attrs).outputs[0]


# -- ReluGrad: the gradient where the features were positive -----------------------------------
def _relu_grad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """TF's functor: ``gradients * (features > 0)``, a product with the mask (a select over a
    mask that flips at random is an order of magnitude slower in NumPy)."""
    zero = xp.asarray(0, dtype=op.outputs[0].dtype.np)
    return lambda gradients, features: xp.multiply(gradients, features > zero)


registry.register(
    OpDef(
        type="ReluGrad",
        infer=infer_same_shape("ReluGrad", ("gradients", "features")),
        kernel=_relu_grad_kernel,
    )
)


def relu_grad(gradients: Tensor, features: Tensor, name: str | None = None) -> Tensor:
    """TF's ``ReluGrad``: ``gradients`` where ``features > 0``, else 0."""
    return make_op("ReluGrad", [gradients, features], name or "ReluGrad").outputs[0]


# -- activations: one features input, one output of its shape ----------------------------------
# SELU's constants (Klambauer et al. 2017), as TensorFlow's kernel has them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _constants(xp: Any, op: Operation, *values: float) -> list[Any]:
    dtype = op.outputs[0].dtype.np
    return [xp.asarray(v, dtype=dtype) for v in values]


def _softplus(xp: Any, op: Operation, state: Any) -> Any:
    (zero,) = _constants(xp, op, 0)
    return lambda x: xp.logaddexp(x, zero)  # log(1 + e^x) without overflowing e^x


def _elu(xp: Any, op: Operation, state: Any) -> Any:
    (zero,) = _constants(xp, op, 0)
    return lambda x: xp.where(x < zero, xp.expm1(xp.minimum(x, zero)), x)


def _selu(xp: Any, op: Operation, state: Any) -> Any:
    zero, scale, scaled_alpha = _constants(xp, op, 0, SELU_SCALE, SELU_SCALE * SELU_ALPHA)
    return lambda x: xp.where(x < zero, scaled_alpha * xp.expm1(xp.minimum(x, zero)), scale * x)


def _relu6(xp: Any, op: Operation, state: Any) -> Any:
    zero, six = _constants(xp, op, 0, 6)
    return lambda x: xp.minimum(xp.maximum(x, zero), six)


def _leaky_relu(xp: Any, op: Operation, state: Any) -> Any:
    zero, alpha = _constants(xp, op, 0, op.attrs["alpha"])
    return lambda x: xp.where(x > zero, x, x * alpha)


_FLOAT_KERNELS = {t: frozenset(dtypes.FLOATS) for t in registry.DEVICE_TYPES}
# Relu6 has integer kernels on the CPU only (TF_CALL_REAL_NUMBER_TYPES there, float types on GPUs).
_RELU6_KERNELS = {"CPU": frozenset(dtypes.NUMBERS), "GPU": frozenset(dtypes.FLOATS)}

_ACTIVATIONS: dict[str, tuple[Any, Mapping[str, frozenset[dtypes.DType]], float]] = {
    # op type: (kernel builder, device type -> dtypes with a kernel, FLOPs per element)
    "Softplus": (_softplus, _FLOAT_KERNELS, 12.0),
    "Elu": (_elu, _FLOAT_KERNELS, 10.0),
    "Selu": (_selu, _FLOAT_KERNELS, 11.0),
    "Relu6": (_relu6, _RELU6_KERNELS, 2.0),
    "LeakyRelu": (_leaky_relu, _FLOAT_KERNELS, 2.0),
}


def _infer_activation(op_type: str, allowed: Sequence[dtypes.DType]) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        require_dtype(op_type, inputs[0].dtype, allowed)
        return single(inputs[0].shape, inputs[0].dtype.base_dtype)

    return infer


for _type, (_kernel, _supported, _flops) in _ACTIVATIONS.items():
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_activation(_type, sorted(_supported["CPU"], key=dtypes.ALL.index)),
            kernel=_kernel,
            cost=per_element(_flops),
            supported=_supported,
        )
    )


def softplus(features: Any, name: str | None = None) -> Tensor:
    """log(1 + e^x): a smooth relu."""
    return unary("Softplus", features, name, arg="features")


def elu(features: Any, name: str | None = None) -> Tensor:
    """x where x > 0, else e^x - 1."""
    return unary("Elu", features, name, arg="features")


def selu(features: Any, name: str | None = None) -> Tensor:
    """ELU scaled so that activations keep zero mean and unit variance (self-normalizing)."""
    return unary("Selu", features, name, arg="features")


def relu6(features: Any, name: str | None = None) -> Tensor:
    """min(max(x, 0), 6)."""
    return unary("Relu6", features, name, arg="features")


def leaky_relu(features: Any, alpha: Any = 0.2, name: str | None = None) -> Tensor:
    """x where x > 0, else alpha x. Integer features are cast to float32 first (TF's
    ``LeakyRelu/Cast``); ``alpha`` is an attr, a float32 as TensorFlow stores it."""
    with op_scope(name or "LeakyRelu", (features,)) as scope:
        tensor = convert_to_tensor(features, name="features")
        if tensor.dtype.base_dtype.is_integer:
            tensor = array_ops.cast(tensor, dtypes.float32)
        attrs = {"alpha": float(np.float32(np.asarray(alpha).item()))}
        return make_op("LeakyRelu", [tensor], scope, attrs).outputs[0]


# -- their fused gradients: (gradients, the forward input or output) -> backprops --------------
def _elu_grad(xp: Any, op: Operation, state: Any) -> Any:
    zero, one = _constants(xp, op, 0, 1)
    return lambda gradients, outputs: xp.where(
        outputs < zero, gradients * (outputs + one), gradients
    )


def _selu_grad(xp: Any, op: Operation, state: Any) -> Any:
    zero, scale, scaled_alpha = _constants(xp, op, 0, SELU_SCALE, SELU_SCALE * SELU_ALPHA)
    return lambda gradients, outputs: xp.where(
        outputs < zero, gradients * (outputs + scaled_alpha), gradients * scale
    )


def _relu6_grad(xp: Any, op: Operation, state: Any) -> Any:
    zero, six = _constants(xp, op, 0, 6)
    return lambda gradients, features: xp.where(
        (features > zero) & (features < six), gradients, zero
    )


def _leaky_relu_grad(xp: Any, op: Operation, state: Any) -> Any:
    zero, alpha = _constants(xp, op, 0, op.attrs["alpha"])
    return lambda gradients, features: xp.where(features > zero, gradients, gradients * alpha)


_ACTIVATION_GRADS: dict[str, tuple[Any, str]] = {
    # op type: (kernel builder, what the second input is)
    "EluGrad": (_elu_grad, "outputs"),
    "SeluGrad": (_selu_grad, "outputs"),
    "Relu6Grad": (_relu6_grad, "features"),
    "LeakyReluGrad": (_leaky_relu_grad, "features"),
}

for _type, (_kernel, _second) in _ACTIVATION_GRADS.items():
    registry.register(
        OpDef(
            type=_type,
            infer=infer_same_shape(_type, ("gradients", _second)),
            kernel=_kernel,
            cost=per_element(3.0),
        )
    )


def activation_grad(
    op_type: str, gradients: Tensor, second: Tensor, name: str | None = None, **attrs: Any
) -> Tensor:
    """One of the fused gradient ops above, of the forward op's input or output ``second``."""
    if op_type not in _ACTIVATION_GRADS:
        raise ValueError(f"{op_type} is not one of {sorted(_ACTIVATION_GRADS)}")
    return make_op(op_type, [gradients, second], name or op_type, attrs or None).outputs[0]
