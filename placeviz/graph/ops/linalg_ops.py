"""Rank-N linear algebra: ``BatchMatMulV2`` (``matmul`` of rank > 2), ``Einsum`` and
``tensordot``, as TensorFlow 2.21 builds them in graph mode.

``math_ops.matmul`` builds the ``BatchMatMulV2`` declared here when an operand may have batch
dimensions (rank above 2, or unknown), and ``SparseMatMul`` for float32 matrices marked sparse,
as TF's ``matmul`` does; either op keeps the name ``MatMul``. ``einsum`` of one or two
operands is one ``Einsum`` op under the ``einsum`` scope; ``tensordot`` reshapes (and
transposes) its operands into one ``MatMul`` under ``Tensordot``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import array_ops, constant_op, math_ops, shape_ops
from placeviz.graph.ops._build import check_dtype, make_op, op_scope, same_dtype, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.registry import Cost, OpDef
from placeviz.graph.shapes import Dim, ShapeError, TensorShape, broadcast

Shapes = Sequence[tuple[int, ...]]

# TF's BatchMatMulV2 types (its op def) among placeviz's dtypes; GPUs have kernels for floats.
_BATCH_MATMUL_DTYPES = dtypes.NUMBERS
_GPU_FLOATS = frozenset(dtypes.FLOATS)


def _elements(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


# -- BatchMatMulV2 -----------------------------------------------------------------------------
def _infer_batch_matmul(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    """TF's ``BatchMatMulV2Shape``: rank at least 2, equal inner dimensions, batch dimensions
    broadcast; an operand of unknown rank leaves the result unknown."""
    x, y = inputs
    dtype = same_dtype("BatchMatMulV2", inputs)
    check_dtype("x", dtype, _BATCH_MATMUL_DTYPES)
    for tensor in (x, y):
        if tensor.shape.ndims is not None and tensor.shape.ndims < 2:
            raise ShapeError(f"Shape must be at least rank 2 but is rank {tensor.shape.ndims}")
    if x.shape.dims is None or y.shape.dims is None:
        return single(TensorShape(None), dtype)
    xd, yd = x.shape.dims, y.shape.dims
    rows, x_inner = (xd[-1], xd[-2]) if attrs["adj_x"] else (xd[-2], xd[-1])
    y_inner, cols = (yd[-1], yd[-2]) if attrs["adj_y"] else (yd[-2], yd[-1])
    if x_inner is not None and y_inner is not None and x_inner != y_inner:
        raise ShapeError(f"Dimensions must be equal, but are {x_inner} and {y_inner}")
    batch = broadcast(TensorShape(xd[:-2]), TensorShape(yd[:-2]))
    return single(TensorShape([*batch.dims, rows, cols]), dtype)  # type: ignore[misc]


def _batch_matmul_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """The adjoint of a real matrix is its transpose: a view, which ``matmul`` reads as is."""
    adj_x, adj_y = op.attrs["adj_x"], op.attrs["adj_y"]
    if not adj_x and not adj_y:
        return xp.matmul
    return lambda x, y: xp.matmul(
        xp.swapaxes(x, -1, -2) if adj_x else x, xp.swapaxes(y, -1, -2) if adj_y else y
    )


def _batch_matmul_cost(op: Operation, ins: Shapes, outs: Shapes) -> Cost:
    """2·batch·m·n·k FLOPs; both operands read once and the product written once."""
    out = outs[0]
    x = ins[0]
    k = x[-2] if op.attrs["adj_x"] else x[-1]
    size = op.outputs[0].dtype.size
    moved = _elements(ins[0]) + _elements(ins[1]) + _elements(out)
    return Cost(2.0 * _elements(out) * k, float(moved * size))


registry.register(
    OpDef(
        type="BatchMatMulV2",
        infer=_infer_batch_matmul,
        kernel=_batch_matmul_kernel,
        cost=_batch_matmul_cost,
        supported={"CPU": frozenset(_BATCH_MATMUL_DTYPES), "GPU": _GPU_FLOATS},
    )
)


def batch_matmul(
    x: Tensor,
    y: Tensor,
    adj_x: bool = False,
    adj_y: bool = False,
    grad_x: bool = False,
    grad_y: bool = False,
    name: str | None = None,
) -> Tensor:
    """One ``BatchMatMulV2`` of two tensors (``gen_math_ops.batch_mat_mul_v2``); ``grad_x`` and
    ``grad_y`` mark the products gradients make, as TF's attrs do."""
    attrs = {"adj_x": bool(adj_x), "adj_y": bool(adj_y), "grad_x": grad_x, "grad_y": grad_y}
    return make_op("BatchMatMulV2", [x, y], name or "BatchMatMulV2", attrs).outputs[0]


def check_matmul_flags(
    transpose_a: bool, adjoint_a: bool, transpose_b: bool, adjoint_b: bool
) -> None:
    """TF's ``matmul`` argument checks, made before it converts its operands."""
    for arg, transpose, adjoint in (("a", transpose_a, adjoint_a), ("b", transpose_b, adjoint_b)):
        if transpose and adjoint:
            raise ValueError(
                f"Only one of `transpose_{arg}` and `adjoint_{arg}` can be True. Received "
                f"`transpose_{arg}`={transpose}, `adjoint_{arg}`={adjoint}."
            )


def other_matmul(
    a: Tensor,
    b: Tensor,
    adj_a: bool,
    adj_b: bool,
    sparse: tuple[bool, bool],
    grads: tuple[bool, bool],
    output_type: Any,
    name: str,
) -> Tensor | None:
    """The op TF's ``matmul`` builds when it is not a ``MatMul`` (None when it is): a
    ``BatchMatMulV2`` where an operand may have batch dimensions (rank unknown or above 2) and
    neither is marked sparse, a ``SparseMatMul`` of float32 operands marked sparse."""
    if output_type is not None and {a.dtype.base_dtype, b.dtype.base_dtype} != {
        dtypes.as_dtype(output_type)
    }:
        raise NotImplementedError("matmul to another output_type (TensorFlow's BatchMatMulV3)")
    if any(sparse) and a.dtype.base_dtype is b.dtype.base_dtype is dtypes.float32:
        attrs = {
            "transpose_a": adj_a,
            "transpose_b": adj_b,
            "a_is_sparse": sparse[0],
            "b_is_sparse": sparse[1],
        }
        return make_op("SparseMatMul", [a, b], name, attrs).outputs[0]
    if any(sparse) or all(t.shape.ndims is not None and t.shape.ndims <= 2 for t in (a, b)):
        return None
    return batch_matmul(a, b, adj_a, adj_b, grads[0], grads[1], name=name)


# SparseMatMul only hints which operand has many zeros: MatMul's rules (math_ops) compute it.
registry.register(
    OpDef(
        type="SparseMatMul",
        infer=lambda inputs, attrs: registry.get("MatMul").infer(inputs, attrs),
        kernel=lambda xp, op, state: registry.get("MatMul").kernel(xp, op, state),
        cost=lambda op, ins, outs: registry.get("MatMul").cost(op, ins, outs),
        supported={"CPU": frozenset({dtypes.float32})},
    )
)


# -- Einsum ------------------------------------------------------------------------------------
ELLIPSIS = "..."
_LABELS = "a-zA-Z"


def split_equation(equation: str) -> tuple[list[str], str]:
    """An explicit equation's input subscripts and output subscript."""
    inputs, output = equation.split("->")
    return inputs.split(","), output


def _label_positions(subs: str, rank: int) -> tuple[dict[str, list[int]], tuple[int, int]]:
    """Each label's axes in an operand of ``rank`` dimensions, and the axes ``...`` covers."""
    before, _, after = subs.partition(ELLIPSIS)
    start, end = len(before), rank - len(after)
    axes: dict[str, list[int]] = {}
    for i, label in enumerate(before):
        axes.setdefault(label, []).append(i)
    for i, label in enumerate(after):
        axes.setdefault(label, []).append(end + i)
    return axes, (start, end)


def _infer_einsum(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    """TF's ``EinsumShape``: each operand's rank fits its subscripts, a label has one size
    everywhere, and the operands' ``...`` dimensions broadcast."""
    equation = attrs["equation"]
    dtype = inputs[0].dtype.base_dtype
    if any(t.dtype.base_dtype is not dtype for t in inputs):
        names = ", ".join(t.dtype.base_dtype.name for t in inputs)
        raise TypeError(
            f"Tensors in list passed to 'inputs' of 'Einsum' Op have types [{names}] that don't "
            "all match."
        )
    input_subs, output_subs = split_equation(equation)
    if len(input_subs) != len(inputs):
        raise ShapeError(f"Expecting {len(input_subs)} inputs for equation {equation}")
    sizes: dict[str, Dim] = {}
    batch: TensorShape | None = TensorShape([])
    for index, (subs, tensor) in enumerate(zip(input_subs, inputs)):
        named = len(subs.replace(ELLIPSIS, ""))
        dims = tensor.shape.dims
        if dims is None:
            batch = None if ELLIPSIS in subs else batch
            continue
        if ELLIPSIS in subs and len(dims) < named:
            raise ShapeError(
                f"Shape must be at least rank {named} but is rank {len(dims)}\n\t for {index}th "
                f"input and equation: {equation}"
            )
        if ELLIPSIS not in subs and len(dims) != named:
            raise ShapeError(
                f"Shape must be rank {named} but is rank {len(dims)}\n\t for {index}th input and "
                f"equation: {equation}"
            )
        axes, (start, end) = _label_positions(subs, len(dims))
        for label, where in axes.items():
            for axis in where:
                known, size = sizes.get(label), dims[axis]
                if known is not None and size is not None and known != size:
                    raise ShapeError(f"Dimensions must be equal, but are {known} and {size}")
                sizes[label] = size if known is None else known
        if batch is not None and ELLIPSIS in subs:
            batch = broadcast(batch, TensorShape(dims[start:end]))
    if ELLIPSIS in output_subs and batch is None:
        return single(TensorShape(None), dtype)
    before, _, after = output_subs.partition(ELLIPSIS)
    middle = list(batch.dims) if ELLIPSIS in output_subs and batch is not None else []  # type: ignore[arg-type]
    out = [sizes.get(c) for c in before] + middle + [sizes.get(c) for c in after]
    return single(TensorShape(out), dtype)


def _einsum_kernel(xp: Any, op: Operation, state: Any) -> Any:
    """``xp.einsum``; an output that repeats a label (``i->ii``, the gradient of a trace) is
    the einsum over its distinct labels written onto the diagonal of zeros."""
    equation = op.attrs["equation"]
    input_subs, output_subs = split_equation(equation)
    if len(set(output_subs.replace(ELLIPSIS, ""))) == len(output_subs.replace(ELLIPSIS, "")):
        # optimize: a contraction of two operands goes to BLAS (tensordot), ~8x faster
        return lambda *arrays: xp.einsum(equation, *arrays, optimize=len(arrays) > 1)
    tokens = re.findall(r"\.\.\.|[a-zA-Z]", output_subs)
    distinct = list(dict.fromkeys(tokens))
    reduced = f"{','.join(input_subs)}->{''.join(distinct)}"

    def einsum(*arrays: Any) -> Any:
        values = xp.einsum(reduced, *arrays)
        grids = xp.meshgrid(*(xp.arange(d) for d in values.shape), indexing="ij", sparse=True)
        # each distinct token's axes of ``values``: one per label, the rest for ``...``
        batch = values.ndim - len(distinct) + (ELLIPSIS in distinct)
        axes: dict[str, list[int]] = {}
        for token in distinct:
            start = sum(len(a) for a in axes.values())
            axes[token] = list(range(start, start + (batch if token == ELLIPSIS else 1)))
        picked = [axis for token in tokens for axis in axes[token]]
        out = xp.zeros(tuple(values.shape[a] for a in picked), dtype=values.dtype)
        out[tuple(grids[a] for a in picked)] = values  # every index an array: values' order
        return out

    return einsum


def _einsum_cost(op: Operation, ins: Shapes, outs: Shapes) -> Cost:
    """A multiply and an add for every combination of the labels' indices (the output's
    elements times the sizes of the contracted labels); every element read or written once."""
    input_subs, output_subs = split_equation(op.attrs["equation"])
    sizes: dict[str, int] = {}
    for subs, shape in zip(input_subs, ins):
        axes, _ = _label_positions(subs, len(shape))
        sizes.update({label: shape[where[0]] for label, where in axes.items()})
    contracted = _elements([n for c, n in sizes.items() if c not in output_subs])
    size = op.outputs[0].dtype.size
    moved = sum(_elements(s) for s in ins) + _elements(outs[0])
    flops = (2.0 if len(ins) > 1 else 1.0) * _elements(outs[0]) * contracted
    return Cost(flops, float(moved * size))


registry.register(
    OpDef(
        type="Einsum",
        infer=_infer_einsum,
        kernel=_einsum_kernel,
        cost=_einsum_cost,
        supported={"CPU": frozenset(dtypes.NUMBERS), "GPU": _GPU_FLOATS},
    )
)


def einsum_op(inputs: Sequence[Tensor], equation: str, name: str | None = None) -> Tensor:
    """One ``Einsum`` of an explicit equation (``gen_linalg_ops.einsum``)."""
    return make_op("Einsum", list(inputs), name or "Einsum", {"equation": equation}).outputs[0]


def _resolve_equation(equation: str, count: int) -> str:
    """TF's ``_einsum_v2_parse_and_resolve_equation``: checks the subscripts and makes the
    output explicit (the labels appearing once, sorted) when the equation has no ``->``."""
    resolved = equation.replace(" ", "")
    allowed = _LABELS + ("0" if ELLIPSIS in resolved else "")
    if ELLIPSIS in resolved:
        if "0" in resolved:
            raise ValueError(f'Invalid character "0" in equation: {equation}.')
        resolved = resolved.replace(ELLIPSIS, "0")
    match = re.match(f"^([{allowed},]*)(->[{allowed}]*)?$", resolved)
    if not match:
        raise ValueError(f"Subscripts have incorrect format: {resolved}")
    input_labels = match.group(1).split(",")
    if count != len(input_labels):
        raise ValueError(
            f'Got {count} inputs for equation "{equation}", expecting {len(input_labels)}'
        )
    if match.group(2):
        output = match.group(2)[2:]
    else:
        counts = {c: match.group(1).count(c) for c in set(match.group(1)) - {","}}
        output = "".join(c for c in sorted(counts) if counts[c] == 1)
        resolved += "->" + output
    if len(set(output)) != len(output):
        raise ValueError(f"Output subscripts contain a label appearing more than once: {equation}")
    for label in output:
        if label != "0" and label not in match.group(1):
            raise ValueError(
                f"Output subscripts contain the label {label} not present in the input subscripts."
            )
    return resolved.replace("0", ELLIPSIS)


def einsum(equation: str, *inputs: Any, name: str | None = None) -> Tensor:
    """TF's ``einsum``: one ``einsum/Einsum`` op for one or two operands; an operand that is
    not a tensor becomes the Const ``einsum/Einsum/inputs_<i>``, as TF's op helper names it."""
    with op_scope(name or "einsum", inputs):
        resolved = _resolve_equation(equation, len(inputs))
        if len(inputs) > 2:
            raise NotImplementedError(
                "einsum of more than two operands (TensorFlow splits it into pairs along "
                "opt_einsum's contraction path): write it as einsums of two operands"
            )
        with op_scope("Einsum", inputs) as scope:
            tensors = [convert_to_tensor(x, name=f"inputs_{i}") for i, x in enumerate(inputs)]
            return einsum_op(tensors, resolved, name=scope)


# -- tensordot ---------------------------------------------------------------------------------
def _tensordot_axes(a: Tensor, axes: Any) -> tuple[list[int], list[int]]:
    """TF's ``_tensordot_axes`` for static axes: an int N is a's last N axes and b's first N."""
    if isinstance(axes, int | np.integer):
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: {axes}.")
        rank = a.shape.ndims
        if rank is None:
            raise NotImplementedError("tensordot with int axes needs the rank of `a`")
        if axes > rank:
            raise ValueError(
                "`axes` must not be larger than the number of dimensions of tensor "
                f"{a!r}.  Received {axes}, vs tensor dimensions {rank}."
            )
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, list | tuple):
        if len(axes) != 2:
            raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
        a_axes, b_axes = axes
        if isinstance(a_axes, int | np.integer) and isinstance(b_axes, int | np.integer):
            a_axes, b_axes = [a_axes], [b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError(
                f"Different number of contraction axes `a` and `b`, {len(a_axes)} != {len(b_axes)}."
            )
        return [int(i) for i in a_axes], [int(i) for i in b_axes]
    raise NotImplementedError("tensordot axes given as a tensor")


def _tensordot_reshape(
    a: Tensor, axes: list[int], flipped: bool = False
) -> tuple[Tensor, Any, list[Dim]]:
    """TF's ``_tensordot_reshape``: ``a`` transposed and reshaped to the matrix whose rows (or
    columns, when ``flipped``) are its free dimensions; with a fully known shape only the steps
    that change something, else run-time ``Shape``, ``GatherV2`` and ``Prod`` ops."""
    if a.shape.ndims is None:
        raise NotImplementedError("tensordot of an operand of unknown rank")
    dims = a.shape.as_list()
    rank = len(dims)
    axes = [i if i >= 0 else i + rank for i in axes]
    free = [i for i in range(rank) if i not in axes]
    free_dims = [dims[i] for i in free]
    perm = axes + free if flipped else free + axes
    if a.shape.is_fully_defined:
        prod_free = _elements(free_dims)  # type: ignore[arg-type]
        prod_axes = _elements([dims[i] for i in axes])  # type: ignore[misc]
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        if perm != list(range(rank)):
            a = array_ops.transpose(a, perm)
        if a.shape.as_list() != new_shape:
            a = array_ops.reshape(a, new_shape)
        return a, free_dims, free_dims
    axes_t = constant_op.constant(axes, dtypes.int32, name="axes")
    free_t = constant_op.constant(free, dtypes.int32, name="free")
    shape_a = shape_ops.shape(a)
    free_dims_t = array_ops.gather(shape_a, free_t)
    axes_dims_t = array_ops.gather(shape_a, axes_t)
    prod_free_t = math_ops.reduce_prod(free_dims_t)
    prod_axes_t = math_ops.reduce_prod(axes_dims_t)
    if flipped:
        perm_t = array_ops.concat([axes_t, free_t], 0)
        new_shape_t = array_ops.stack([prod_axes_t, prod_free_t])
    else:
        perm_t = array_ops.concat([free_t, axes_t], 0)
        new_shape_t = array_ops.stack([prod_free_t, prod_axes_t])
    reshaped = array_ops.reshape(array_ops.transpose(a, perm_t), new_shape_t)
    return reshaped, free_dims_t, free_dims


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """TF's ``tensordot``: contract ``a``'s ``axes[0]`` with ``b``'s ``axes[1]`` (or a's last
    N axes with b's first N) by one ``MatMul`` of reshaped operands, under ``Tensordot``."""
    with op_scope(name or "Tensordot", (a, b)) as scope:
        ta = convert_to_tensor(a, name="a")
        tb = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(ta, axes)
        a_matrix, a_free, a_static = _tensordot_reshape(ta, a_axes)
        b_matrix, b_free, b_static = _tensordot_reshape(tb, b_axes, flipped=True)
        product = math_ops.matmul(a_matrix, b_matrix)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if product.shape.is_fully_defined and product.shape.as_list() == a_free + b_free:
                return product
            return array_ops.reshape(product, a_free + b_free, name=scope)
        a_free_t = convert_to_tensor(a_free, dtype=dtypes.int32)
        b_free_t = convert_to_tensor(b_free, dtype=dtypes.int32)
        result = array_ops.reshape(product, array_ops.concat([a_free_t, b_free_t], 0), name=scope)
        result.set_shape(a_static + b_static)
        return result


# -- QR decomposition (Keras's Orthogonal initializer) -------------------------------------------
def _infer_qr(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    x = inputs[0]
    check_dtype("input", x.dtype, dtypes.FLOATS)
    dims = x.shape.dims
    if dims is None:
        return [(TensorShape(None), x.dtype.base_dtype)] * 2
    if len(dims) < 2:
        raise ShapeError(f"Shape must be at least rank 2 but is rank {len(dims)}")
    *batch, m, n = dims
    k = None if m is None or n is None else min(m, n)
    q_cols, r_rows = (m, m) if attrs["full_matrices"] else (k, k)
    return [
        (TensorShape([*batch, m, q_cols]), x.dtype.base_dtype),
        (TensorShape([*batch, r_rows, n]), x.dtype.base_dtype),
    ]


def _qr_kernel(xp: Any, op: Operation, state: Any) -> Any:
    mode = "complete" if op.attrs["full_matrices"] else "reduced"
    return lambda x: tuple(xp.linalg.qr(x, mode=mode))


registry.register(OpDef(type="Qr", infer=_infer_qr, kernel=_qr_kernel, multi_output=True))


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(q, r)`` with ``input = q @ r``, ``q`` orthonormal columns, ``r`` upper triangular."""
    with op_scope(name or "Qr", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        q, r = make_op("Qr", [x], scope, {"full_matrices": bool(full_matrices)}).outputs
        return q, r
