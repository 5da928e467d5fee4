"""Arithmetic, comparisons, matmul, reductions and the Tensor operators (+ - * / @ ** and -).

Also the ops only gradients build: TF's fused ``TanhGrad``/``SigmoidGrad``/``SqrtGrad``/
``RsqrtGrad``, ``Sign``, ``Reciprocal``, ``SelectV2`` and ``UnsortedSegmentSum`` (GatherV2's
gradient, made dense). Erf and Erfc compute with ``special_math`` (NumPy has neither).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, is_tensor_like
from placeviz.graph.ops import constant_op, linalg_ops, shape_ops, slicing, special_math, state_ops
from placeviz.graph.ops._build import make_op, op_scope, require_dtype, same_dtype, single
from placeviz.graph.ops.constant_op import convert_pair, convert_to_tensor
from placeviz.graph.ops.shape_ops import (
    INDEX_DTYPES,
    check_shape_tensor,
    constant_value,
    host_ints,
    int_const,
    run_ints,
)
from placeviz.graph.registry import Cost, OpDef, memory_cost, per_element
from placeviz.graph.shapes import ShapeError, TensorShape, broadcast, normalize_axis


# -- elementwise binary ------------------------------------------------------------------------
def _squared_difference(xp: Any, op: Operation, state: Any) -> Any:
    return lambda x, y: xp.square(xp.subtract(x, y))


def _power(xp: Any, op: Operation, state: Any) -> Any:
    """``x ** y``; a float raised to a scalar 2, 3 or 4 by multiplication, as accurate and
    (for 3 and 4, where libm's powf takes its slow path) up to 300x faster."""

    def power(x: Any, y: Any) -> Any:
        exponent = float(y) if y.ndim == 0 and x.dtype.kind == "f" else None
        if exponent == 2.0:
            return x * x
        if exponent == 3.0:
            return x * x * x
        if exponent == 4.0:
            square = x * x
            return square * square
        return xp.power(x, y)

    return power


_BINARY: dict[str, tuple[Any, Sequence[dtypes.DType]]] = {
    # op type: (array-module ufunc name or kernel builder, dtypes allowed)
    "AddV2": ("add", dtypes.NUMBERS),
    "Sub": ("subtract", dtypes.NUMBERS),
    "Mul": ("multiply", dtypes.NUMBERS),
    "RealDiv": ("true_divide", dtypes.FLOATS),  # truediv casts integers first
    "Pow": (_power, dtypes.NUMBERS),
    "Maximum": ("maximum", dtypes.NUMBERS),
    "Minimum": ("minimum", dtypes.NUMBERS),
    "FloorDiv": ("floor_divide", dtypes.NUMBERS),
    "FloorMod": ("remainder", dtypes.NUMBERS),  # Python's sign rule, as TF's FloorMod
    "LogicalAnd": ("logical_and", (dtypes.bool,)),
    "LogicalOr": ("logical_or", (dtypes.bool,)),
    "SquaredDifference": (_squared_difference, dtypes.NUMBERS),
}


def _infer_binary(op_type: str) -> Any:
    allowed = _BINARY[op_type][1]

    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        dtype = same_dtype(op_type, inputs)
        require_dtype(op_type, dtype, allowed)
        return single(broadcast(inputs[0].shape, inputs[1].shape), dtype)

    return infer


def _xp_function(name: str) -> Any:
    return lambda xp, op, state: getattr(xp, name)


for _type, (_fn, _allowed) in _BINARY.items():
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_binary(_type),
            kernel=_xp_function(_fn) if isinstance(_fn, str) else _fn,
            ufunc=isinstance(_fn, str),
        )
    )


def _binary(op_type: str, x: Any, y: Any, name: str) -> Tensor:
    with op_scope(name, (x, y)) as scope:
        tx, ty = convert_pair(x, y)
        return make_op(op_type, [tx, ty], scope).outputs[0]


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("AddV2", x, y, name or "Add")


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Sub", x, y, name or "Sub")


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Mul", x, y, name or "Mul")


# TF's _TRUEDIV_TABLE: integers divide as floats wide enough to hold them exactly.
_TRUEDIV_CASTS = {dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF's ``truediv`` (``/``): integer operands are cast to float64 first, as the ops
    ``truediv/Cast`` and ``truediv/Cast_1`` feeding the RealDiv."""
    with op_scope(name or "truediv", (x, y)) as scope:
        tx, ty = convert_pair(x, y)
        dtype = same_dtype("RealDiv", [tx, ty])
        target = _TRUEDIV_CASTS.get(dtype)
        if target is not None:
            tx, ty = (make_op("Cast", [t], "Cast", {"dtype": target}).outputs[0] for t in (tx, ty))
        return make_op("RealDiv", [tx, ty], scope).outputs[0]


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF's ``realdiv``: the RealDiv op itself, for floats (gradients use it)."""
    return _binary("RealDiv", x, y, name or "RealDiv")


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's ``div``: Python 2's division, so floor division for integers (7 / 2 is 3)."""
    with op_scope(name or "div", (x, y)) as scope:
        tx, ty = convert_pair(x, y)
        op_type = "FloorDiv" if tx.dtype.base_dtype.is_integer else "RealDiv"
        return make_op(op_type, [tx, ty], scope).outputs[0]


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("FloorDiv", x, y, name or "floordiv")


def mod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The remainder with the divisor's sign (TF's FloorMod, Python's %)."""
    return _binary("FloorMod", x, y, name or "FloorMod")


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Pow", x, y, name or "Pow")


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Maximum", x, y, name or "Maximum")


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Minimum", x, y, name or "Minimum")


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    """(x - y)² in one op (TF's SquaredDifference), as ``nn.moments`` builds its variance."""
    return _binary("SquaredDifference", x, y, name or "SquaredDifference")


# -- comparisons and SelectV2 ------------------------------------------------------------------
_COMPARISONS = {
    # op type: (array-module ufunc name, dtypes allowed: any for equality, numbers to order)
    "Equal": ("equal", dtypes.ALL),
    "NotEqual": ("not_equal", dtypes.ALL),
    "Greater": ("greater", dtypes.NUMBERS),
    "GreaterEqual": ("greater_equal", dtypes.NUMBERS),
    "Less": ("less", dtypes.NUMBERS),
    "LessEqual": ("less_equal", dtypes.NUMBERS),
}


def _infer_comparison(op_type: str) -> Any:
    allowed = _COMPARISONS[op_type][1]

    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        require_dtype(op_type, same_dtype(op_type, inputs), allowed)
        return single(broadcast(inputs[0].shape, inputs[1].shape), dtypes.bool)

    return infer


for _type, (_fn, _allowed) in _COMPARISONS.items():
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_comparison(_type),
            kernel=_xp_function(_fn),
            ufunc=True,
            kernel_dtype_from_input=True,
        )
    )


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Equal", x, y, name or "Equal")


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("NotEqual", x, y, name or "NotEqual")


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Greater", x, y, name or "Greater")


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("GreaterEqual", x, y, name or "GreaterEqual")


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("Less", x, y, name or "Less")


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("LessEqual", x, y, name or "LessEqual")


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("LogicalAnd", x, y, name or "LogicalAnd")


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary("LogicalOr", x, y, name or "LogicalOr")


def logical_not(x: Any, name: str | None = None) -> Tensor:
    return unary("LogicalNot", x, name)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """TF's: (x or y) and not (x and y), the last op named ``name``."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def _infer_select(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    condition, x, y = inputs
    if condition.dtype is not dtypes.bool:
        raise TypeError(f"condition must be bool, not {condition.dtype.name}")
    dtype = same_dtype("SelectV2", [x, y], ("t", "e"))
    return single(broadcast(broadcast(condition.shape, x.shape), y.shape), dtype)


# The unsigned word each itemsize blends as in ``_select``.
_BLEND_WORDS = {4: np.uint32, 8: np.uint64}


def _select(xp: Any, op: Operation, state: Any) -> Any:
    """``where(condition, x, y)``; numbers of 4 or 8 bytes blended bitwise through a mask of
    all-ones words where the condition holds (the same bits, 6x faster than NumPy's where)."""

    def select(condition: Any, x: Any, y: Any) -> Any:
        word = _BLEND_WORDS.get(x.dtype.itemsize)
        if word is None or x.dtype.kind not in "fiu":
            return xp.where(condition, x, y)
        mask = -condition.astype(word)  # unsigned: true becomes all ones
        return ((x.view(word) & mask) | (y.view(word) & ~mask)).view(x.dtype)

    return select


_SELECT_CUPY = {"cupy": _xp_function("where")}  # one fused kernel there
registry.register(
    OpDef(type="SelectV2", infer=_infer_select, kernel=_select, kernel_overrides=_SELECT_CUPY)
)


def _infer_select_v1(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    """TF1's Select: x and y of one shape, the condition of that shape (no broadcasting), a
    scalar, or a vector that picks whole rows of x and y (static_rnn's sequence lengths)."""
    condition, x, y = inputs
    if _picks_rows(condition, x):
        if not TensorShape(condition.shape.dims).is_compatible_with(x.shape[:1]):
            raise ShapeError(f"condition has shape {condition.shape}, but x has {x.shape[0]} rows")
        if not x.shape.is_compatible_with(y.shape):
            raise ShapeError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
        return single(x.shape.merge_with(y.shape), same_dtype("Select", [x, y], ("t", "e")))
    if condition.shape.ndims == 0:
        if not x.shape.is_compatible_with(y.shape):
            raise ShapeError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
        return single(x.shape.merge_with(y.shape), same_dtype("Select", [x, y], ("t", "e")))
    if not condition.shape.is_compatible_with(x.shape):
        raise ShapeError(f"condition has shape {condition.shape}, but x has shape {x.shape}")
    if not x.shape.is_compatible_with(y.shape):
        raise ShapeError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    return _infer_select(inputs, attrs)


def _picks_rows(condition: Tensor, x: Tensor) -> bool:
    return condition.shape.ndims == 1 and (x.shape.ndims or 0) > 1


def _select_v1(xp: Any, op: Operation, state: Any) -> Any:
    """A vector condition stands for whole rows: shaped to broadcast along them."""
    base = _SELECT_CUPY["cupy"] if xp.__name__ == "cupy" else _select
    kernel = base(xp, op, state)
    condition, x = op.inputs[0], op.inputs[1]
    if not _picks_rows(condition, x):
        return kernel
    trailing = (1,) * ((x.shape.ndims or 1) - 1)
    return lambda c, a, b: kernel(c.reshape((-1, *trailing)), a, b)


registry.register(
    OpDef(
        type="Select",
        infer=_infer_select_v1,
        kernel=_select_v1,
        kernel_overrides={"cupy": _select_v1},
    )
)


def select(condition: Tensor, x: Tensor, y: Tensor, name: str | None = None) -> Tensor:
    """TF1's ``where(condition, x, y)``: Select, shapes equal (gradients use it as TF's do)."""
    return make_op("Select", [condition, x, y], name or "Select").outputs[0]


def where_v2(condition: Any, x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF2's ``where``: elements of ``x`` where ``condition`` holds, else of ``y`` (broadcast);
    Python values become ``SelectV2/t`` and ``SelectV2/e`` as TF's op function names them."""
    with op_scope(name or "SelectV2", (condition, x, y)) as scope:
        cond = convert_to_tensor(condition, name="condition")
        tx, ty = convert_pair(x, y, names=("t", "e"))
        return make_op("SelectV2", [cond, tx, ty], scope).outputs[0]


# -- elementwise unary -------------------------------------------------------------------------
def _sigmoid(xp: Any, op: Operation, state: Any) -> Any:
    one = xp.asarray(1, dtype=op.outputs[0].dtype.np)
    return lambda x: one / (one + xp.exp(-x))


def _relu(xp: Any, op: Operation, state: Any) -> Any:
    zero = xp.asarray(0, dtype=op.outputs[0].dtype.np)
    return lambda x: xp.maximum(x, zero)


def _reciprocal(xp: Any, op: Operation, state: Any) -> Any:
    one = xp.asarray(1, dtype=op.outputs[0].dtype.np)
    return lambda x: one / x


def _rsqrt(xp: Any, op: Operation, state: Any) -> Any:
    one = xp.asarray(1, dtype=op.outputs[0].dtype.np)
    return lambda x: one / xp.sqrt(x)


def _special(function: Any) -> Any:
    """A kernel of a special_math function: computed in float64, given the op's dtype."""

    def build(xp: Any, op: Operation, state: Any) -> Any:
        dtype = op.outputs[0].dtype.np
        return lambda x: function(xp, x).astype(dtype, copy=False)

    return build


_UNARY: dict[str, tuple[Any, Sequence[dtypes.DType], float]] = {
    # op type: (array-module ufunc name or kernel builder, dtypes allowed, FLOPs per element)
    "Neg": ("negative", dtypes.NUMBERS, 1.0),
    "Abs": ("abs", dtypes.NUMBERS, 1.0),
    "Square": ("square", dtypes.NUMBERS, 1.0),
    "Sqrt": ("sqrt", dtypes.FLOATS, 4.0),
    "Exp": ("exp", dtypes.FLOATS, 8.0),
    "Log": ("log", dtypes.FLOATS, 8.0),
    "Tanh": ("tanh", dtypes.FLOATS, 8.0),
    "Sigmoid": (_sigmoid, dtypes.FLOATS, 10.0),
    "Relu": (_relu, dtypes.NUMBERS, 1.0),
    "Sign": ("sign", dtypes.NUMBERS, 1.0),
    "Reciprocal": (_reciprocal, dtypes.FLOATS, 4.0),
    "Rsqrt": (_rsqrt, dtypes.FLOATS, 5.0),
    "Log1p": ("log1p", dtypes.FLOATS, 8.0),
    "Erf": (_special(special_math.erf), dtypes.FLOATS, 20.0),
    "Erfc": (_special(special_math.erfc), dtypes.FLOATS, 20.0),
    "LogicalNot": ("logical_not", (dtypes.bool,), 1.0),
    "Floor": ("floor", dtypes.FLOATS, 1.0),
    "Ceil": ("ceil", dtypes.FLOATS, 1.0),
}


def _infer_unary(op_type: str, allowed: Sequence[dtypes.DType]) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        require_dtype(op_type, inputs[0].dtype, allowed)
        return single(inputs[0].shape, inputs[0].dtype)

    return infer


for _type, (_kernel, _allowed, _flops) in _UNARY.items():
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_unary(_type, _allowed),
            kernel=_xp_function(_kernel) if isinstance(_kernel, str) else _kernel,
            cost=per_element(_flops),
            ufunc=isinstance(_kernel, str),
        )
    )


def unary(op_type: str, x: Any, name: str | None, arg: str = "x") -> Tensor:
    """TF's generated op function: a Python value becomes ``<op>/<arg>`` (``Rsqrt/x``)."""
    with op_scope(name or op_type, (x,)) as scope:
        return make_op(op_type, [convert_to_tensor(x, name=arg)], scope).outputs[0]


def negative(x: Any, name: str | None = None) -> Tensor:
    return unary("Neg", x, name)


def abs(x: Any, name: str | None = None) -> Tensor:
    return unary("Abs", x, name)


def square(x: Any, name: str | None = None) -> Tensor:
    return unary("Square", x, name)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    return unary("Sqrt", x, name)


def exp(x: Any, name: str | None = None) -> Tensor:
    return unary("Exp", x, name)


def log(x: Any, name: str | None = None) -> Tensor:
    return unary("Log", x, name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    return unary("Tanh", x, name)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    return unary("Sigmoid", x, name)


def relu(features: Any, name: str | None = None) -> Tensor:
    return unary("Relu", features, name, arg="features")


def sign(x: Any, name: str | None = None) -> Tensor:
    return unary("Sign", x, name)


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    return unary("Reciprocal", x, name)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    return unary("Rsqrt", x, name)


def log1p(x: Any, name: str | None = None) -> Tensor:
    """log(1 + x), accurate where x is small."""
    return unary("Log1p", x, name)


def erf(x: Any, name: str | None = None) -> Tensor:
    return unary("Erf", x, name)


def erfc(x: Any, name: str | None = None) -> Tensor:
    """1 - erf(x), accurate where erf(x) is near 1 (``nn.gelu`` builds it)."""
    return unary("Erfc", x, name)


def floor(x: Any, name: str | None = None) -> Tensor:
    return unary("Floor", x, name)


def ceil(x: Any, name: str | None = None) -> Tensor:
    return unary("Ceil", x, name)


# -- fused gradients of unary ops: (y, dy) -> dx, from the op's output y -----------------------
def _tanh_grad(xp: Any, op: Operation, state: Any) -> Any:
    one = xp.asarray(1, dtype=op.outputs[0].dtype.np)
    return lambda y, dy: dy * (one - y * y)


def _sigmoid_grad(xp: Any, op: Operation, state: Any) -> Any:
    one = xp.asarray(1, dtype=op.outputs[0].dtype.np)
    return lambda y, dy: dy * y * (one - y)


def _sqrt_grad(xp: Any, op: Operation, state: Any) -> Any:
    half = xp.asarray(0.5, dtype=op.outputs[0].dtype.np)
    return lambda y, dy: dy * half / y


def _rsqrt_grad(xp: Any, op: Operation, state: Any) -> Any:
    """d(x^-1/2) = -x^-3/2 / 2 = -y³ / 2."""
    minus_half = xp.asarray(-0.5, dtype=op.outputs[0].dtype.np)
    return lambda y, dy: dy * minus_half * y * y * y


_UNARY_GRADS = {
    "TanhGrad": _tanh_grad,
    "SigmoidGrad": _sigmoid_grad,
    "SqrtGrad": _sqrt_grad,
    "RsqrtGrad": _rsqrt_grad,
}


def infer_same_shape(op_type: str, names: Sequence[str]) -> Any:
    """Two same-dtype inputs of one shape (TF's fused gradient ops); the output is that shape."""

    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        dtype = same_dtype(op_type, inputs, names)
        require_dtype(op_type, dtype, dtypes.FLOATS)
        a, b = inputs[0].shape, inputs[1].shape
        if not a.is_compatible_with(b):
            raise ShapeError(f"Shapes must be equal, but are {a} and {b}")
        return single(a.merge_with(b), dtype)

    return infer


for _type, _kernel in _UNARY_GRADS.items():
    registry.register(
        OpDef(
            type=_type,
            infer=infer_same_shape(_type, ("y", "dy")),
            kernel=_kernel,
            cost=per_element(3.0),
        )
    )


def unary_grad(op_type: str, y: Tensor, dy: Tensor, name: str | None = None) -> Tensor:
    """``TanhGrad``, ``SigmoidGrad``, ``SqrtGrad`` or ``RsqrtGrad`` of the forward output ``y``."""
    if op_type not in _UNARY_GRADS:
        raise ValueError(f"{op_type} is not one of {sorted(_UNARY_GRADS)}")
    return make_op(op_type, [y, dy], name or op_type).outputs[0]


# -- matmul ------------------------------------------------------------------------------------
def _infer_matmul(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    a, b = inputs
    dtype = same_dtype("MatMul", inputs, ("a", "b"))
    require_dtype("MatMul", dtype, dtypes.NUMBERS)
    for arg, tensor in (("a", a), ("b", b)):
        if tensor.shape.ndims is not None and tensor.shape.ndims != 2:
            raise ShapeError(f"Shape must be rank 2 but is rank {tensor.shape.ndims} for '{arg}'")
    a_dims = a.shape.dims or (None, None)
    b_dims = b.shape.dims or (None, None)
    m, k = (a_dims[1], a_dims[0]) if attrs["transpose_a"] else a_dims
    k2, n = (b_dims[1], b_dims[0]) if attrs["transpose_b"] else b_dims
    if k is not None and k2 is not None and k != k2:
        raise ShapeError(f"Dimensions must be equal, but are {k} and {k2}")
    return single(TensorShape([m, n]), dtype)


# Up to this many rows of ``a``, OpenBLAS multiplies by a transposed ``b`` up to 2x faster as
# the transpose of ``b @ a.T`` (measured: 16 rows 2x, 64 rows 1.1x, 256 rows 0.9x).
NARROW_ROWS = 64


def _matmul_kernel(xp: Any, op: Operation, state: Any) -> Any:
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return xp.matmul
    if tb and not ta and xp is np:

        def by_transposed_b(a: Any, b: Any) -> Any:
            if a.shape[0] <= NARROW_ROWS:
                return np.ascontiguousarray(np.matmul(b, a.T).T)
            return np.matmul(a, b.T)

        return by_transposed_b
    return lambda a, b: xp.matmul(a.T if ta else a, b.T if tb else b)


def _matmul_cost(op: Operation, ins: Sequence[tuple[int, ...]], outs: Sequence[tuple[int, ...]]):
    m, n = outs[0]
    a = ins[0]
    k = a[0] if op.attrs["transpose_a"] else a[1]
    size = op.outputs[0].dtype.size
    return Cost(2.0 * m * n * k, float((m * k + k * n + m * n) * size))


registry.register(
    OpDef(type="MatMul", infer=_infer_matmul, kernel=_matmul_kernel, cost=_matmul_cost)
)


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type: Any = None,
    grad_a: bool = False,
    grad_b: bool = False,
    name: str | None = None,
) -> Tensor:
    """TF's ``matmul``: a ``MatMul`` of matrices, or linalg_ops' ``BatchMatMulV2`` where an
    operand may have batch dimensions and ``SparseMatMul`` for float32 operands marked sparse
    (named ``MatMul`` too). A real matrix's adjoint is its transpose."""
    with op_scope(name or "MatMul", (a, b)) as scope:
        linalg_ops.check_matmul_flags(transpose_a, adjoint_a, transpose_b, adjoint_b)
        ta, tb = convert_pair(a, b, names=("a", "b"))
        adj_a, adj_b = bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b)
        sparse, grads = (bool(a_is_sparse), bool(b_is_sparse)), (grad_a, grad_b)
        other = linalg_ops.other_matmul(ta, tb, adj_a, adj_b, sparse, grads, output_type, scope)
        if other is not None:
            return other
        attrs = {"transpose_a": adj_a, "transpose_b": adj_b}
        return make_op("MatMul", [ta, tb], scope, attrs).outputs[0]


# -- add_n -------------------------------------------------------------------------------------
def _infer_add_n(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    if not inputs:
        raise ShapeError("AddN needs at least one input")
    dtype = same_dtype("AddN", inputs, [f"inputs[{i}]" for i in range(len(inputs))])
    require_dtype("AddN", dtype, dtypes.NUMBERS)
    shape = inputs[0].shape
    for tensor in inputs[1:]:
        if not shape.is_compatible_with(tensor.shape):
            raise ShapeError(f"Shapes must be equal, but are {shape} and {tensor.shape}")
        shape = shape.merge_with(tensor.shape)
    return single(shape, dtype)


def _add_n_kernel(xp: Any, op: Operation, state: Any) -> Any:
    if len(op.inputs) == 1:
        return lambda x: x
    if len(op.inputs) == 2:
        return xp.add

    def add_all(*values: Any) -> Any:
        total = xp.add(values[0], values[1])
        if getattr(total, "ndim", 0) == 0:  # 0-d: NumPy returns a scalar, which has no out=
            for value in values[2:]:
                total = xp.add(total, value)
            return total
        for value in values[2:]:
            xp.add(total, value, out=total)  # one allocation for the whole sum
        return total

    return add_all


registry.register(OpDef(type="AddN", infer=_infer_add_n, kernel=_add_n_kernel))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    tensors = [convert_to_tensor(x) for x in inputs]
    if len(tensors) == 1:  # as TF: nothing to add, x itself, or an Identity when named
        return tensors[0] if name is None else state_ops.identity(tensors[0], name=name)
    return make_op("AddN", tensors, name or "AddN").outputs[0]


# -- reductions --------------------------------------------------------------------------------
_REDUCTIONS = {
    "Sum": "sum",
    "Mean": "mean",
    "Max": "max",
    "Min": "min",
    "Prod": "prod",
    "All": "all",
    "Any": "any",
}
_LOGICAL_REDUCTIONS = ("All", "Any")


def _axes(attrs: Mapping[str, Any], rank: int | None) -> tuple[int, ...] | None:
    axis = attrs["axis"]
    if axis is None:
        return None
    return tuple(sorted({normalize_axis(a, rank) for a in axis}))


def _run_axes(op: Operation, axis: Sequence[int] | None, rank: int) -> tuple[int, ...] | None:
    """The axes a run reduces. As TF's kernel (not its shape function), axes naming one
    dimension twice ([1, -1]) are an error of the run."""
    if axis is None:
        return None
    seen: list[int] = []
    for a in axis:
        index = normalize_axis(a, rank)
        if index in seen:
            raise InvalidArgumentError(
                f"Invalid reduction arguments: Axes contains duplicate dimension: {index}", op=op
            )
        seen.append(index)
    return tuple(sorted(seen))


def _infer_reduction(op_type: str) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        x = inputs[0]
        allowed = (dtypes.bool,) if op_type in _LOGICAL_REDUCTIONS else dtypes.NUMBERS
        require_dtype(op_type, x.dtype, allowed)
        rank = x.shape.ndims
        if len(inputs) == 2:  # the axes, an int scalar or vector (reduction_indices)
            check_shape_tensor(inputs[1], "axis", rank=0 if inputs[1].shape.ndims == 0 else 1)
            value = constant_value(inputs[1])
            if value is None:
                unknown_dims = None if rank is None else [None] * rank
                return single(TensorShape(unknown_dims if attrs["keepdims"] else None), x.dtype)
            attrs = {**attrs, "axis": host_ints(value)}
        if rank is None:
            return single(TensorShape(None), x.dtype)
        for a in attrs["axis"] or ():
            if not -rank <= a < rank:
                raise ShapeError(
                    f"Invalid reduction dimension {a} for input with {rank} dimensions."
                )
        axes = _axes(attrs, rank)
        axes = tuple(range(rank)) if axes is None else axes
        dims = x.shape.dims or ()
        if attrs["keepdims"]:
            out = [1 if i in axes else d for i, d in enumerate(dims)]
        else:
            out = [d for i, d in enumerate(dims) if i not in axes]
        return single(TensorShape(out), x.dtype)

    return infer


def _reduction_kernel(fn: str) -> Any:
    def build(xp: Any, op: Operation, state: Any) -> Any:
        reduce = getattr(xp, fn)
        if fn == "mean" and op.outputs[0].dtype.is_integer:
            # TensorFlow's integer mean truncates toward zero and stays integer.
            def reduce(x: Any, axis: Any, keepdims: bool) -> Any:
                return xp.trunc(xp.mean(x, axis=axis, keepdims=keepdims))

        keepdims = op.attrs["keepdims"]
        out_dtype = op.outputs[0].dtype.np
        rank = op.inputs[0].shape.ndims

        def run(x: Any, axes: tuple[int, ...] | None) -> Any:
            reduced = range(x.ndim) if axes is None else axes
            for axis in reduced:  # a loop that stops at the first real axis: the common case
                if x.shape[axis] != 1:
                    return xp.asarray(reduce(x, axis=axes, keepdims=keepdims), dtype=out_dtype)
            # Each output element is one input element, itself under every reduction: the input
            # reshaped, no arithmetic (TF's ReductionOp forwards the buffer too).
            if keepdims:
                return x
            return x.reshape([d for a, d in enumerate(x.shape) if a not in reduced])

        if len(op.inputs) == 2:
            ints = run_ints()
            return lambda x, axes: run(x, _run_axes(op, ints(axes), x.ndim))
        axis = op.attrs["axis"]
        if axis is not None and (rank is None or len(_axes(op.attrs, rank) or ()) < len(axis)):
            # Axes like [1, -1] may name one dimension twice, an error of the run; without a
            # static rank only the value's rank tells.
            return lambda x: run(x, _run_axes(op, axis, x.ndim))
        axes = _axes(op.attrs, rank)
        return lambda x: run(x, axes)

    return build


for _type, _fn in _REDUCTIONS.items():
    registry.register(
        OpDef(type=_type, infer=_infer_reduction(_type), kernel=_reduction_kernel(_fn))
    )


def _reduce(
    op_type: str, x: Any, axis: Any, keepdims: bool | None, name: str | None, keep_dims: Any
) -> Tensor:
    """The reduction as TensorFlow builds it: its axes are an int32 input, ``<op>/
    reduction_indices``, or for a whole-tensor reduction a ``Const`` of every axis made before
    the op's scope. The ``axis`` attr keeps what construction knows of them (for shapes and
    gradients); only an input of unknown rank reduced whole has no axes input."""
    if keep_dims is not None:
        keepdims = keep_dims
    tensor = convert_to_tensor(x)
    rank = tensor.shape.ndims
    inputs = [tensor]
    with tensor.graph.as_default():
        if axis is None and rank == 0:  # TF's _ReductionDims: no fast path for a scalar
            inputs.append(arange(0, shape_ops.rank(tensor, optimize=True)))
        elif axis is None and rank is not None:
            inputs.append(constant_op.constant(np.arange(rank, dtype=np.int32)))
        with op_scope(name or op_type, (tensor,)) as scope:
            if axis is not None:
                scalar = not isinstance(axis, list | tuple)
                axis = [int(axis)] if scalar else [int(a) for a in axis]
                if scalar:  # a scalar Const for one int, as TF
                    indices = constant_op.constant(axis[0], dtypes.int32, name="reduction_indices")
                else:
                    indices = int_const(axis, "reduction_indices")
                inputs.append(indices)
            attrs = {"axis": None if axis is None else tuple(axis), "keepdims": bool(keepdims)}
            return make_op(op_type, inputs, scope, attrs).outputs[0]


# -- Range -------------------------------------------------------------------------------------
_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64)


def _infer_range(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    dtype = same_dtype("Range", inputs, ("start", "limit", "delta"))
    require_dtype("Range", dtype, _RANGE_DTYPES)
    for tensor, arg in zip(inputs, ("start", "limit", "delta")):
        if tensor.shape.ndims not in (None, 0):
            raise ShapeError(f"{arg} must be a scalar, not shape {tensor.shape}")
    values = [constant_value(t) for t in inputs]
    if any(v is None for v in values):
        return single(TensorShape([None]), dtype)
    start, limit, delta = (v.item() for v in values)  # type: ignore[union-attr]
    if delta == 0:
        raise ShapeError("Requires delta != 0")
    return single(TensorShape([len(np.arange(start, limit, delta))]), dtype)


def _range_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np

    def arange(start: Any, limit: Any, delta: Any) -> Any:
        if delta == 0:
            raise InvalidArgumentError("Requires delta != 0", op=op)
        return xp.arange(start.item(), limit.item(), delta.item(), dtype=dtype)

    return arange


registry.register(OpDef(type="Range", infer=_infer_range, kernel=_range_kernel))


def arange(
    start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range"
) -> Tensor:
    """TF's ``range`` (``pv.range``): ``range(n)`` counts from 0; Python values become
    ``range/start``, ``range/limit`` and ``range/delta``, all of the widest dtype among them
    (int32 < int64 < float16 < float32 < float64) unless ``dtype`` says."""
    if limit is None:
        start, limit = 0, start
    target = None if dtype is None else dtypes.as_dtype(dtype)
    with op_scope(name, (start, limit, delta)) as scope:
        args = [
            convert_to_tensor(v, dtype=None if is_tensor_like(v) else target, name=arg)
            for v, arg in ((start, "start"), (limit, "limit"), (delta, "delta"))
        ]
        if target is None:
            target = max((t.dtype.base_dtype for t in args), key=_RANGE_DTYPES.index)
        args = [
            t
            if t.dtype.base_dtype is target
            else make_op("Cast", [t], "Cast", {"dtype": target}).outputs[0]
            for t in args
        ]
        return make_op("Range", args, scope).outputs[0]


def reduce_sum(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
               keep_dims: Any = None) -> Tensor:  # fmt: skip
    return _reduce("Sum", x, axis, keepdims, name, keep_dims)


def reduce_mean(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
                keep_dims: Any = None) -> Tensor:  # fmt: skip
    return _reduce("Mean", x, axis, keepdims, name, keep_dims)


def reduce_max(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
               keep_dims: Any = None) -> Tensor:  # fmt: skip
    return _reduce("Max", x, axis, keepdims, name, keep_dims)


def reduce_min(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
               keep_dims: Any = None) -> Tensor:  # fmt: skip
    return _reduce("Min", x, axis, keepdims, name, keep_dims)


def reduce_prod(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
                keep_dims: Any = None) -> Tensor:  # fmt: skip
    return _reduce("Prod", x, axis, keepdims, name, keep_dims)


def reduce_all(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
               keep_dims: Any = None) -> Tensor:  # fmt: skip
    """Whether every element of a bool tensor is true (over ``axis``)."""
    return _reduce("All", x, axis, keepdims, name, keep_dims)


def reduce_any(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None,
               keep_dims: Any = None) -> Tensor:  # fmt: skip
    """Whether some element of a bool tensor is true (over ``axis``)."""
    return _reduce("Any", x, axis, keepdims, name, keep_dims)


# -- UnsortedSegmentSum ------------------------------------------------------------------------
def _infer_segment_sum(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    data, ids, num = inputs
    require_dtype("UnsortedSegmentSum", data.dtype, dtypes.NUMBERS)
    for what, tensor in (("segment_ids", ids), ("num_segments", num)):
        if tensor.dtype not in INDEX_DTYPES:
            raise TypeError(f"{what} must be int32 or int64, not {tensor.dtype.name}")
    if num.shape.ndims not in (None, 0):
        raise ShapeError(f"num_segments must be a scalar, but has shape {num.shape}")
    value = constant_value(num)
    count = None if value is None else int(value)
    if data.shape.dims is None or ids.shape.dims is None:
        return single(TensorShape(None), data.dtype)
    k = len(ids.shape.dims)
    if not TensorShape(data.shape.dims[:k]).is_compatible_with(ids.shape):
        raise ShapeError(
            f"data.shape {data.shape} does not start with segment_ids.shape {ids.shape}"
        )
    return single(TensorShape([count, *data.shape.dims[k:]]), data.dtype)


def _segment_sum_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np

    def segment_sum(data: Any, ids: Any, num: Any) -> Any:
        out = xp.zeros((int(num), *data.shape[ids.ndim :]), dtype=dtype)
        xp.add.at(out, ids, data)
        return out

    return segment_sum


def _segment_sum_cupy(xp: Any, op: Operation, state: Any) -> Any:
    import cupyx  # imported only where a session has a real GPU

    dtype = op.outputs[0].dtype.np

    def segment_sum(data: Any, ids: Any, num: Any) -> Any:
        out = xp.zeros((int(num), *data.shape[ids.ndim :]), dtype=dtype)
        cupyx.scatter_add(out, ids, data)
        return out

    return segment_sum


registry.register(
    OpDef(
        type="UnsortedSegmentSum",
        infer=_infer_segment_sum,
        kernel=_segment_sum_kernel,
        kernel_overrides={"cupy": _segment_sum_cupy},
        cost=memory_cost,
    )
)


def unsorted_segment_sum(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Sums the slices of ``data`` whose ids are equal into row id of ``num_segments`` rows."""
    tensor = convert_to_tensor(data)
    with tensor.graph.as_default():
        ids = convert_to_tensor(segment_ids)
        num = convert_to_tensor(
            num_segments, dtype=None if isinstance(num_segments, Tensor) else ids.dtype
        )
    name = name or "UnsortedSegmentSum"
    return make_op("UnsortedSegmentSum", [tensor, ids, num], name).outputs[0]


# -- operators on Tensor -----------------------------------------------------------------------
OPERATOR_METHODS: list[str] = []  # every operator Tensor has; Variable forwards the same ones


def _install_operators() -> None:
    """Attach Python operators to Tensor with TensorFlow's default op names."""
    pairs = {
        "add": ("AddV2", "add"),
        "sub": ("Sub", "sub"),
        "mul": ("Mul", "mul"),
        "pow": ("Pow", "pow"),
        "floordiv": ("FloorDiv", "floordiv"),
        "mod": ("FloorMod", "mod"),
    }
    for method, (op_type, default_name) in pairs.items():

        def forward(self: Tensor, other: Any, _t: str = op_type, _n: str = default_name) -> Tensor:
            return _binary(_t, self, other, _n)

        def reverse(self: Tensor, other: Any, _t: str = op_type, _n: str = default_name) -> Tensor:
            return _binary(_t, other, self, _n)

        setattr(Tensor, f"__{method}__", forward)
        setattr(Tensor, f"__r{method}__", reverse)
    Tensor.__getitem__ = slicing.getitem  # type: ignore[attr-defined]
    # TF's bool operators (op names 'and', 'or'; ~ is a LogicalNot).
    Tensor.__and__ = lambda self, other: logical_and(self, other, name="and")  # type: ignore[attr-defined]
    Tensor.__rand__ = lambda self, other: logical_and(other, self, name="and")  # type: ignore[attr-defined]
    Tensor.__or__ = lambda self, other: logical_or(self, other, name="or")  # type: ignore[attr-defined]
    Tensor.__ror__ = lambda self, other: logical_or(other, self, name="or")  # type: ignore[attr-defined]
    Tensor.__invert__ = lambda self: logical_not(self)  # type: ignore[attr-defined]
    Tensor.__truediv__ = lambda self, other: divide(self, other, name="truediv")  # type: ignore[attr-defined]
    Tensor.__rtruediv__ = lambda self, other: divide(other, self, name="truediv")  # type: ignore[attr-defined]
    Tensor.__matmul__ = lambda self, other: matmul(self, other, name="matmul")  # type: ignore[attr-defined]
    Tensor.__rmatmul__ = lambda self, other: matmul(other, self, name="matmul")  # type: ignore[attr-defined]
    Tensor.__neg__ = lambda self: negative(self, name="Neg")  # type: ignore[attr-defined]
    Tensor.__abs__ = lambda self: abs(self)  # type: ignore[attr-defined]
    comparisons = {"lt": "Less", "le": "LessEqual", "gt": "Greater", "ge": "GreaterEqual"}
    for method, op_type in comparisons.items():

        def compare(self: Tensor, other: Any, _t: str = op_type) -> Tensor:
            return _binary(_t, self, other, _t)

        setattr(Tensor, f"__{method}__", compare)
    OPERATOR_METHODS.extend(f"__{m}__" for m in pairs)
    OPERATOR_METHODS.extend(f"__r{m}__" for m in pairs)
    OPERATOR_METHODS.extend(["__getitem__", "__truediv__", "__rtruediv__"])
    OPERATOR_METHODS.extend(["__matmul__", "__rmatmul__"])
    OPERATOR_METHODS.extend(["__neg__", "__abs__", "__invert__"])
    OPERATOR_METHODS.extend(["__and__", "__rand__", "__or__", "__ror__"])
    OPERATOR_METHODS.extend(f"__{m}__" for m in comparisons)


_install_operators()
