"""Gradients of arithmetic, matmul, AddN and the reductions (TF's math_grad.py).

Each function gets the forward op and the gradient of its output, and returns one gradient per
input; the caller has already opened the ``<op name>_grad`` name scope.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from placeviz import dtypes
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.graph.grads.registry import (
    first_input_only,
    not_differentiable,
    register_gradient,
)
from placeviz.graph.grads.shapes import (
    broadcast_like,
    keep_reduced_dims,
    reduce_broadcast,
    shape_of,
)
from placeviz.graph.ops import array_ops, constant_op, math_ops, shape_ops
from placeviz.graph.shapes import normalize_axis

Grads = list[Tensor | None]

not_differentiable(
    "Equal",
    "Greater",
    "GreaterEqual",
    "Less",
    "LessEqual",
    "NotEqual",
    "Sign",
    "BroadcastGradientArgs",
    "FloorDiv",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "Range",
)


# -- elementwise binary ------------------------------------------------------------------------
def _same_known_shape(x: Tensor, y: Tensor, grad: Tensor) -> bool:
    """TF's ``_ShapesFullySpecifiedAndEqual``: no broadcasting to undo, so no shape ops."""
    return x.shape.is_fully_defined and x.shape == y.shape == grad.shape


@register_gradient("AddV2")
def _add_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs
    if _same_known_shape(x, y, grad):
        return [grad, grad]
    return list(reduce_broadcast(x, y, grad, grad))


@register_gradient("Sub")
def _sub_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs
    if _same_known_shape(x, y, grad):
        return [grad, math_ops.negative(grad)]
    return list(reduce_broadcast(x, y, grad, math_ops.negative(grad)))


@register_gradient("FloorMod")
def _floor_mod_grad(op: Operation, grad: Tensor) -> Grads:
    """x mod y = x - floor(x / y) * y: dx = grad, dy = -grad * floor(x / y) (TF's)."""
    x, y = op.inputs
    quotient = math_ops.floordiv(x, y)
    return list(reduce_broadcast(x, y, grad, math_ops.multiply(grad, math_ops.negative(quotient))))


@register_gradient("Mul")
def _mul_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs
    if _same_known_shape(x, y, grad) and grad.dtype in (dtypes.float32, dtypes.int32):
        return [math_ops.multiply(grad, y), math_ops.multiply(grad, x)]  # TF's operand order
    return list(reduce_broadcast(x, y, math_ops.multiply(grad, y), math_ops.multiply(x, grad)))


@register_gradient("RealDiv")
def _real_div_grad(op: Operation, grad: Tensor) -> Grads:
    """d(x/y) = dx / y - dy * x / y²."""
    x, y = op.inputs
    gx = math_ops.realdiv(grad, y)
    gy = math_ops.multiply(
        grad, math_ops.realdiv(math_ops.realdiv(-x, y), y), name="mul"
    )  # TF's grad * ... (the operator's name)
    return list(reduce_broadcast(x, y, gx, gy))


@register_gradient("Pow")
def _pow_grad(op: Operation, grad: Tensor) -> Grads:
    """d(x**y) = y x**(y-1) dx + x**y log(x) dy, with log(x) taken as 0 where x <= 0 (TF's
    choice: it keeps x = 0 from making the y gradient NaN)."""
    x, y = op.inputs
    z = op.outputs[0]
    gx = grad * y * math_ops.pow(x, y - 1)  # TF's operators: mul, sub, mul_1
    mask = x > 0
    safe_x = math_ops.select(mask, x, array_ops.ones_like(x))
    log_x = math_ops.select(mask, math_ops.log(safe_x), array_ops.zeros_like(x))
    gy = grad * z * log_x
    return list(reduce_broadcast(x, y, gx, gy))


def _select_grad(op: Operation, grad: Tensor, selector: Callable[..., Tensor]) -> Grads:
    """Maximum/Minimum: the gradient goes to x where x was selected (ties go to x), else to y."""
    x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    x_mask = selector(x, y)
    gx = math_ops.where_v2(x_mask, grad, zeros)
    gy = math_ops.where_v2(x_mask, zeros, grad)
    return list(reduce_broadcast(x, y, gx, gy))


@register_gradient("Maximum")
def _maximum_grad(op: Operation, grad: Tensor) -> Grads:
    return _select_grad(op, grad, math_ops.greater_equal)


@register_gradient("Minimum")
def _minimum_grad(op: Operation, grad: Tensor) -> Grads:
    return _select_grad(op, grad, math_ops.less_equal)


# -- elementwise unary -------------------------------------------------------------------------
@register_gradient("Neg")
def _neg_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.negative(grad)]


@register_gradient("Abs")
def _abs_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad * math_ops.sign(op.inputs[0])]  # TF's operator: mul


@register_gradient("Square")
def _square_grad(op: Operation, grad: Tensor) -> Grads:
    x = op.inputs[0]
    with op.graph.control_dependencies([grad]):  # TF's: keeps 2x from being computed early
        two = constant_op.constant(2, dtype=x.dtype)
        return [math_ops.multiply(grad, math_ops.multiply(x, two))]


@register_gradient("Sqrt")
def _sqrt_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.unary_grad("SqrtGrad", op.outputs[0], grad)]


@register_gradient("Exp")
def _exp_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.multiply(grad, op.outputs[0], name="mul")]  # TF's grad * y


@register_gradient("Log")
def _log_grad(op: Operation, grad: Tensor) -> Grads:
    with op.graph.control_dependencies([grad]):  # TF's
        return [grad * math_ops.reciprocal(op.inputs[0])]


@register_gradient("Reciprocal")
def _reciprocal_grad(op: Operation, grad: Tensor) -> Grads:
    """d(1/x) = -dx / x² = -dx y²."""
    y = op.outputs[0]
    return [math_ops.negative(math_ops.multiply(grad, math_ops.square(y)))]


@register_gradient("Tanh")
def _tanh_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.unary_grad("TanhGrad", op.outputs[0], grad)]


@register_gradient("Sigmoid")
def _sigmoid_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.unary_grad("SigmoidGrad", op.outputs[0], grad)]


# -- MatMul, AddN ------------------------------------------------------------------------------
@register_gradient("MatMul")
def _matmul_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's four cases: each product reads the operands as stored, with transposes as attrs."""
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    mm = math_ops.matmul
    if not ta and not tb:
        return [mm(grad, b, transpose_b=True), mm(a, grad, transpose_a=True)]
    if not ta and tb:
        return [mm(grad, b), mm(grad, a, transpose_a=True)]
    if ta and not tb:
        return [mm(b, grad, transpose_b=True), mm(a, grad)]
    return [
        mm(b, grad, transpose_a=True, transpose_b=True),
        mm(grad, a, transpose_a=True, transpose_b=True),
    ]


@register_gradient("AddN")
def _add_n_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad] * len(op.inputs)


# -- reductions --------------------------------------------------------------------------------
# The (input shape, axes) pairs whose tile multiples a graph's gradients have computed.
_REDUCED_SHAPES_SEEN: weakref.WeakKeyDictionary[Graph, set[tuple]] = weakref.WeakKeyDictionary()


def _runtime_axes(op: Operation) -> bool:
    """A reduction whose axes only the run knows (gradients' own Sums); others keep the axes
    construction knew in their ``axis`` attr."""
    return "axis" not in op.attrs


def _spread(op: Operation, grad: Tensor) -> Tensor:
    """The gradient of a Sum (or Mean) ``op`` spread back over its input, built as TF's
    ``_SumGrad`` builds it where the input's rank and the axes are known: a reduction of every
    axis in order reshapes to all ones and tiles by the input's shape (a ``Const``, or a
    ``Shape`` while it is partly unknown); over some axes of a fully known shape it reshapes to
    the kept dimensions and tiles by the input's shape over them, made with the ``Maximum`` and
    ``floordiv`` ops TF's ``_safe_shape_div`` leaves in the graph. Otherwise the run's shapes
    broadcast it (``Shape``, ``BroadcastTo``)."""
    if _runtime_axes(op):
        raise LookupError(f"No gradient for '{op.name}': a {op.type} over run-time axes")
    x = op.inputs[0]
    dims = x.shape.dims
    axes = shape_ops.constant_value(op.inputs[1]) if len(op.inputs) == 2 else None
    if dims is None or axes is None:
        return broadcast_like(keep_reduced_dims(op, grad), x)
    rank = len(dims)
    if np.array_equal(axes, np.arange(rank)):
        grad = array_ops.reshape(grad, [1] * rank)
        if x.shape.is_fully_defined:
            multiples = constant_op.constant(dims, dtype=dtypes.int32)
        else:
            multiples = shape_ops.shape(x)
        return array_ops.tile(grad, multiples)
    if not x.shape.is_fully_defined:
        return broadcast_like(keep_reduced_dims(op, grad), x)
    reduced = {normalize_axis(int(a), rank) for a in axes.reshape(-1)}
    kept = [1 if i in reduced else d for i, d in enumerate(dims)]
    seen = _REDUCED_SHAPES_SEEN.setdefault(op.graph, set())
    key = (tuple(dims), tuple(axes.reshape(-1).tolist()))
    if key not in seen:  # TF's graph._reduced_shape_cache: built once per shape and axes
        seen.add(key)
        math_ops.floordiv(list(dims), math_ops.maximum(kept, 1))  # TF's, constant-folded there
    scaling = [d // max(k, 1) for d, k in zip(dims, kept)]  # type: ignore[operator]
    return array_ops.tile(array_ops.reshape(grad, kept), scaling)


@register_gradient("Sum")
def _sum_grad(op: Operation, grad: Tensor) -> Grads:
    return first_input_only(op, _spread(op, grad))


@register_gradient("Mean")
def _mean_grad(op: Operation, grad: Tensor) -> Grads:
    """Sum's gradient divided by how many elements each output averaged."""
    x, y = op.inputs[0], op.outputs[0]
    sum_grad = _spread(op, grad)
    x_count, y_count = x.shape.num_elements(), y.shape.num_elements()
    dtype = sum_grad.dtype
    if x_count is not None and y_count is not None:
        factor = constant_op.constant(x_count // max(y_count, 1), dtype=dtype)
    elif len(op.inputs) == 2:
        # TF's: the product of the reduced dimensions, gathered from the run's shape by the
        # axes made non-negative (Shape, Size, add, mod, GatherV2, Prod)
        shape = shape_ops.shape(x)
        rank = shape_ops.size(shape, optimize=True)
        axes = math_ops.mod(math_ops.add(op.inputs[1], rank, name="add"), rank, name="mod")
        factor = array_ops.cast(math_ops.reduce_prod(array_ops.gather(shape, axes)), dtype)
    else:  # a whole reduction of unknown rank: every element, however many there are
        factor = math_ops.divide(
            array_ops.cast(shape_ops.size(x), dtype), array_ops.cast(shape_ops.size(y), dtype)
        )
    return first_input_only(op, math_ops.divide(sum_grad, factor))


def _min_or_max_grad(op: Operation, grad: Tensor) -> Grads:
    """The gradient is shared equally by every element equal to the extremum (TF's
    ``_MinOrMaxGrad``: ``Shape``, the output and gradient reshaped to the kept dimensions,
    ``Equal``, ``Cast``, a ``Sum`` over the op's own axes input, ``truediv`` and ``mul``)."""
    if _runtime_axes(op):
        raise LookupError(f"No gradient for '{op.name}': a {op.type} over run-time axes")
    x = op.inputs[0]
    shape_of(x)  # TF's input shape, which its reduced_shape folds away when it is known
    y = keep_reduced_dims(op, op.outputs[0])
    grad = keep_reduced_dims(op, grad)
    indicators = array_ops.cast(math_ops.equal(y, x), grad.dtype)
    if len(op.inputs) == 2:
        counted = shape_ops.reduce_sum(indicators, op.inputs[1])
    else:  # a whole reduction of unknown rank
        counted = math_ops.reduce_sum(indicators)
    if op.attrs["keepdims"]:  # TF's: to the output's Shape
        num_selected = array_ops.reshape(counted, shape_of(op.outputs[0], name="Shape_1"))
    else:
        num_selected = keep_reduced_dims(op, counted)
    share = math_ops.divide(indicators, num_selected)
    return first_input_only(op, math_ops.multiply(share, grad, name="mul"))


register_gradient("Max")(_min_or_max_grad)
register_gradient("Min")(_min_or_max_grad)
