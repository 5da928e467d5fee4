"""Checkpoint ops (SaveV2, RestoreV2) and PlaceholderWithDefault, which a Saver's file name is.

As in TensorFlow, SaveV2 and RestoreV2 have CPU kernels only (they take string tensors and touch
the file system); the files they write are placeviz's own (``placeviz.graph.checkpoint_io``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError, OpError
from placeviz.graph import checkpoint_io, registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops._build import make_op, op_scope, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.registry import OpDef, free_cost, memory_cost
from placeviz.graph.shapes import ShapeError, as_shape, unknown

CPU_ONLY = {"CPU": frozenset(dtypes.ALL)}


# -- PlaceholderWithDefault --------------------------------------------------------------------
def _infer_placeholder_with_default(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    (default,) = inputs
    shape = attrs["shape"]
    if not shape.is_compatible_with(default.shape):
        raise ShapeError(
            f"Shapes must be equal rank, but are {default.shape.ndims} and {shape.ndims}"
            if default.shape.ndims != shape.ndims
            else f"Dimensions of the default {default.shape} and the shape {shape} differ"
        )
    return single(shape, default.dtype.base_dtype)


registry.register(
    OpDef(
        type="PlaceholderWithDefault",
        infer=_infer_placeholder_with_default,
        kernel=lambda xp, op, state: lambda value: value,
        cost=free_cost,
    )
)


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """Its input's value unless fed (the session feeds over any tensor)."""
    with op_scope(name or "PlaceholderWithDefault", (input,)) as scope:
        tensor = convert_to_tensor(input, name="input")
        attrs = {"dtype": tensor.dtype.base_dtype, "shape": as_shape(shape)}
        return make_op("PlaceholderWithDefault", [tensor], scope, attrs).outputs[0]


# -- SaveV2, RestoreV2 -------------------------------------------------------------------------
def _string_input(op_type: str, arg: str, tensor: Tensor, rank: int) -> None:
    if tensor.dtype.base_dtype is not dtypes.string:
        raise TypeError(
            f"Input '{arg}' of '{op_type}' Op has type {tensor.dtype.name} that does not match "
            "expected type of string."
        )
    if tensor.shape.ndims is not None and tensor.shape.ndims != rank:
        raise ShapeError(f"Shape must be rank {rank} but is rank {tensor.shape.ndims}")


def _infer_save(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    prefix, names, slices = inputs[:3]
    _string_input("SaveV2", "prefix", prefix, 0)
    _string_input("SaveV2", "tensor_names", names, 1)
    _string_input("SaveV2", "shape_and_slices", slices, 1)
    return []


def _text(value: Any) -> str:
    item = value.item() if hasattr(value, "item") else value
    return item.decode() if isinstance(item, bytes) else str(item)


def _save_kernel(xp: Any, op: Operation, state: Any) -> Any:
    refs = [t.op.op_def.ref_output for t in op.inputs[3:]]

    def save(prefix: Any, names: Any, slices: Any, *values: Any) -> None:
        if any(_text(s) for s in slices.flat):
            raise InvalidArgumentError("placeviz saves whole tensors only, not slices", op=op)
        if len(names) != len(values):
            raise InvalidArgumentError(
                f"Expected {len(names)} tensors to save, got {len(values)}", op=op
            )
        arrays = [_dereference(v) if ref else v for v, ref in zip(values, refs)]
        tensors = {_text(n): _host_array(a) for n, a in zip(names.flat, arrays)}
        checkpoint_io.write(_text(prefix), tensors)

    return save


def _dereference(value: Any) -> Any:
    """A variable's value from its reference: the slot itself, or (from a variable in another
    memory, a real GPU's) the slot wrapped in the 0-d object array the edge's copy made of it."""
    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
        value = value.item()
    return value.read()  # a VariableSlot's


def _host_array(value: Any) -> Any:
    get = getattr(value, "get", None)  # a CuPy array comes to the host
    return get() if callable(get) and type(value).__module__.startswith("cupy") else value


def _restore_kernel(xp: Any, op: Operation, state: Any) -> Any:
    expected = op.attrs["dtypes"]

    def restore(prefix: Any, names: Any, slices: Any) -> tuple[Any, ...]:
        if len(names) != len(expected):
            raise InvalidArgumentError(
                f"Expected {len(expected)} tensor names, got {len(names)}", op=op
            )
        try:
            arrays = checkpoint_io.read(_text(prefix), [_text(n) for n in names.flat], expected)
        except OpError as exc:  # raised about this op
            raise type(exc)(exc.message, op=op) from None
        return tuple(xp.asarray(a) if a.dtype != object else a for a in arrays)

    return restore


def _infer_restore(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    prefix, names, slices = inputs
    _string_input("RestoreV2", "prefix", prefix, 0)
    _string_input("RestoreV2", "tensor_names", names, 1)
    _string_input("RestoreV2", "shape_and_slices", slices, 1)
    return [(unknown(), dtype) for dtype in attrs["dtypes"]]


registry.register(
    OpDef(
        type="SaveV2",
        infer=_infer_save,
        kernel=_save_kernel,
        cost=memory_cost,
        supported=CPU_ONLY,
        stateful=True,
        value_inputs=True,
    )
)
registry.register(
    OpDef(
        type="RestoreV2",
        infer=_infer_restore,
        kernel=_restore_kernel,
        cost=memory_cost,
        supported=CPU_ONLY,
        stateful=True,
        multi_output=True,
    )
)


def save_v2(
    prefix: Tensor,
    tensor_names: Tensor,
    shape_and_slices: Tensor,
    tensors: Sequence[Any],
    name: str | None = None,
) -> Operation:
    inputs = [prefix, tensor_names, shape_and_slices, *tensors]
    attrs = {"dtypes": [t.dtype.base_dtype for t in tensors]}
    return make_op("SaveV2", inputs, name or "SaveV2", attrs)


def restore_v2(
    prefix: Tensor,
    tensor_names: Tensor,
    shape_and_slices: Tensor,
    dtypes_: Sequence[Any],
    name: str | None = None,
) -> list[Tensor]:
    attrs = {"dtypes": [dtypes.as_dtype(d) for d in dtypes_]}
    op = make_op("RestoreV2", [prefix, tensor_names, shape_and_slices], name or "RestoreV2", attrs)
    return list(op.outputs)
