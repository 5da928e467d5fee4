"""Small helpers every op family uses to declare ops and to build them into the default graph."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from placeviz.dtypes import DType
from placeviz.graph.core import (
    Operation,
    Tensor,
    as_graph_element,
    get_default_graph,
    is_tensor_like,
)
from placeviz.graph.shapes import TensorShape


def make_op(
    op_type: str,
    inputs: Sequence[Tensor],
    name: str | None,
    attrs: dict[str, Any] | None = None,
) -> Operation:
    """Create an op in the graph its inputs live in (the default graph when it has none)."""
    graph = inputs[0].graph if inputs else get_default_graph()
    return graph.create_op(op_type, inputs, name=name, attrs=attrs)


@contextlib.contextmanager
def op_scope(name: str, values: Sequence[Any] = ()) -> Iterator[str]:
    """TF's ``name_scope(name)`` around one op, in its inputs' graph: the Python values it
    converts are named ``<op>/<arg>`` (``add/y``), and the op takes the scope's name (pass the
    yielded ``add/`` as the op's name)."""
    graph = next(
        (as_graph_element(v).graph for v in values if is_tensor_like(v)), get_default_graph()
    )
    entered = contextlib.nullcontext() if graph is get_default_graph() else graph.as_default()
    with entered, graph.name_scope(name) as scope:
        yield scope


def same_dtype(op_type: str, inputs: Sequence[Tensor], names: Sequence[str] = ("x", "y")) -> DType:
    """TensorFlow's rule for ops with one type attr T: every input has the same dtype."""
    first = inputs[0].dtype.base_dtype  # a variable's reference holds values of its base dtype
    for arg, tensor in zip(names[1:], inputs[1:]):
        if tensor.dtype.base_dtype is not first:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {tensor.dtype.name} that does not match "
                f"type {first.name} of argument '{names[0]}'"
            )
    return first


def require_dtype(op_type: str, dtype: DType, allowed: Sequence[DType]) -> None:
    if dtype.base_dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{op_type} does not support {dtype.name}; allowed dtypes: {names}")


def deprecated_argument(new_name: str, new: Any, old_name: str, old: Any) -> Any:
    """TF's ``deprecated_argument_lookup``: the value of whichever spelling was given."""
    if old is None:
        return new
    if new is not None:
        raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
    return old


def check_dtype(arg: str, dtype: DType, allowed: Sequence[Any], names: str | None = None) -> None:
    """TF's op-definition words for an input of a dtype the op does not take; ``names`` is TF's
    own list where it names dtypes placeviz lacks (bfloat16, quantized)."""
    if dtype.base_dtype not in allowed:
        listed = names or ", ".join(d.name for d in allowed)
        raise TypeError(
            f"Value passed to parameter '{arg}' has DataType {dtype.base_dtype.name} not in list "
            f"of allowed values: {listed}"
        )


def require_bool(op_type: str, arg: str, tensor: Tensor) -> None:
    """TF's op-definition words for a bool input (a predicate, a condition) of another dtype."""
    if tensor.dtype.base_dtype.name != "bool":
        raise TypeError(
            f"Input '{arg}' of '{op_type}' Op has type {tensor.dtype.name} that does not match "
            "expected type of bool."
        )


def single(shape: TensorShape, dtype: DType) -> list[tuple[TensorShape, DType]]:
    return [(shape, dtype)]


def constant_kernel(value: Any) -> Any:
    """A kernel builder that returns the same array on every run, made once on the device."""

    def build(xp: Any, op: Operation, state: Any) -> Any:
        array = xp.asarray(value)
        return lambda: array

    return build
