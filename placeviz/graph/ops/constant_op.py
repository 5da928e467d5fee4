"""Constants and the conversion of Python and NumPy values into tensors."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.dtypes import DType
from placeviz.graph import registry
from placeviz.graph.core import Tensor, as_value_element, get_default_graph, is_tensor_like
from placeviz.graph.ops._build import constant_kernel, make_op, single
from placeviz.graph.shapes import TensorShape


def _infer_const(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    value: np.ndarray = attrs["value"]
    return single(TensorShape(value.shape), dtypes.as_dtype(value.dtype))


def _const_kernel(xp: Any, op: Any, state: Any) -> Any:
    return constant_kernel(op.attrs["value"])(xp, op, state)


registry.register(
    registry.OpDef(
        type="Const",
        infer=_infer_const,
        kernel=_const_kernel,
        cost=registry.free_cost,
        fixed_output=True,
    )
)


def _to_array(value: Any, dtype: DType | None) -> np.ndarray:
    target = dtype if dtype is not None else dtypes.infer_dtype(value)
    array = np.asarray(value)
    if target is dtypes.string or array.dtype.kind in "SU":
        return _to_strings(value, array, target)
    if array.dtype == object:
        raise TypeError(f"Cannot convert {value!r} to a tensor: ragged or non-numeric value")
    if target.is_integer and array.dtype.kind == "f":
        # TF's words, naming the first Python float (NumPy floats are cast, but not a fraction)
        first = _first_python_float(value)
        if first is None:
            fractional = np.mod(array, 1) != 0
            first = float(array.flat[int(np.argmax(fractional))]) if fractional.any() else None
        if first is not None:
            raise TypeError(f"Expected {target.name}, but got {first!r} of type 'float'.")
    if target.is_integer or target.is_bool:
        if array.dtype.kind in "fc" and target.is_bool:
            raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {target.name}")
        info = np.iinfo(target.np) if target.is_integer else None
        if info is not None and array.size and (array.min() < info.min or array.max() > info.max):
            raise TypeError(f"Cannot convert {value!r} to {target.name}: out of range")
    return np.array(array, dtype=target.np)


def _first_python_float(value: Any) -> float | None:
    """The first Python float in a (nested) list, which TF never converts to an integer."""
    if isinstance(value, float):
        return value
    if isinstance(value, list | tuple):
        for item in value:
            found = _first_python_float(item)
            if found is not None:
                return found
    return None


def _to_strings(value: Any, array: np.ndarray, target: DType) -> np.ndarray:
    """Text as TF keeps it: an object array of bytes (str encoded as UTF-8)."""
    empty = array.size == 0  # [] holds no number: TF makes an empty string tensor of it
    if target is not dtypes.string or (array.dtype.kind not in "SUO" and not empty):
        raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {target.name}")
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        if not isinstance(item, str | bytes):
            raise TypeError(f"Cannot convert {value!r} to a tensor of dtype string")
        out[index] = item.encode() if isinstance(item, str) else item
    return out


def constant(
    value: Any,
    dtype: Any = None,
    shape: Any = None,
    name: str = "Const",
) -> Tensor:
    """A tensor with a fixed value; ``shape`` reshapes a flat list or fills from a scalar."""
    target = dtypes.as_dtype(dtype) if dtype is not None else None
    array = _to_array(value, target)
    if shape is not None:
        dims = tuple(int(d) for d in (shape if isinstance(shape, list | tuple) else [shape]))
        count = int(np.prod(dims, dtype=np.int64))
        if array.size == 1:
            array = np.full(dims, array.reshape(()), dtype=array.dtype)
        elif array.size == count:
            array = array.reshape(dims)
        else:
            raise TypeError(
                f"Expected a value with {count} elements for shape {list(dims)}, "
                f"got {array.size} elements"
            )
    array.flags.writeable = False
    return make_op("Const", [], name, {"value": array}).outputs[0]


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A Tensor for ``value``: tensors and variables pass through, anything else becomes a Const."""
    target = dtypes.as_dtype(dtype) if dtype is not None else None
    if is_tensor_like(value):
        element = as_value_element(value)
        if not isinstance(element, Tensor):
            raise TypeError(f"Cannot convert Operation '{element.name}' to a Tensor.")
        if target is not None and element.dtype.base_dtype is not target.base_dtype:
            raise TypeError(
                f"Tensor conversion requested dtype {target.name} for Tensor "
                f"'{element.name}' with dtype {element.dtype.name}"
            )
        return element
    if isinstance(value, list | tuple) and any(is_tensor_like(v) for v in value):
        from placeviz.graph.ops.array_ops import stack

        return stack([convert_to_tensor(v, dtype) for v in value], name=name or "packed")
    return constant(value, dtype=target, name=name or "Const")


def convert_pair(x: Any, y: Any, names: tuple[str, str] = ("x", "y")) -> tuple[Tensor, Tensor]:
    """Convert two operands; a Python number takes the dtype of the tensor it meets and is named
    after its argument (``add/y`` under an op's scope), as in TF."""
    x_is_tensor = is_tensor_like(x)
    y_is_tensor = is_tensor_like(y)
    if x_is_tensor:
        tx = convert_to_tensor(x)
        with _graph_of(tx):
            if y_is_tensor:
                return tx, convert_to_tensor(y, name=names[1])
            return tx, _convert_hinted(y, tx.dtype.base_dtype, names[1])
    if y_is_tensor:
        ty = convert_to_tensor(y)
        with _graph_of(ty):
            return _convert_hinted(x, ty.dtype.base_dtype, names[0]), ty
    return convert_to_tensor(x, name=names[0]), convert_to_tensor(y, name=names[1])


def _convert_hinted(value: Any, hint: DType, name: str) -> Tensor:
    """TF's ``dtype_hint``: the other operand's dtype where the value converts to it, else the
    value's own (``int_tensor + 2.5`` then fails at the op, naming both dtypes)."""
    try:
        return convert_to_tensor(value, dtype=hint, name=name)
    except TypeError:
        return convert_to_tensor(value, name=name)


def _graph_of(tensor: Tensor) -> Any:
    """Build constants in the operand's graph, even when it is not the default one."""
    graph = tensor.graph
    if graph is get_default_graph():
        return contextlib.nullcontext()
    return graph.as_default()
