"""The stack ops a while loop's gradient keeps its forward values on (StackV2, StackPushV2,
StackPopV2) and ControlTrigger, as TensorFlow's kernels.

``StackV2`` makes a ``Stack`` each run; its handle (dtype ``resource``) enters the forward loop,
whose body pushes a value per iteration, and the backward loop, whose body pops them in reverse.
TF's errors: a push past ``max_size`` (-1: no limit), a pop of an empty stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.shape_ops import host_ints
from placeviz.graph.registry import ALL_DEVICES, OpDef, OutputSpec, free_cost
from placeviz.graph.shapes import TensorShape


class Stack:
    """One run's stack: the values pushed and not popped yet, as TF's ``Stack`` resource."""

    nbytes = 0  # its elements are counted where they were made

    def __init__(self, name: str, dtype: dtypes.DType, max_size: int) -> None:
        self.name = name
        self.dtype = dtype
        self.max_size = max_size
        self.elements: list[Any] = []

    def __repr__(self) -> str:
        return f"<Stack {self.name} size={len(self.elements)}>"

    def push(self, op: Operation, value: Any) -> None:
        if 0 <= self.max_size <= len(self.elements):
            raise InvalidArgumentError(
                f"Stack[{self.name}] overflowed its max_size ({self.max_size})", op=op
            )
        self.elements.append(value)

    def pop(self, op: Operation) -> Any:
        if not self.elements:
            raise InvalidArgumentError(f"Stack[{self.name}] is empty.", op=op)
        return self.elements.pop()


def _check_handle(op_type: str, handle: Tensor) -> None:
    if handle.dtype.base_dtype is not dtypes.resource:
        raise TypeError(
            f"Input 'handle' of '{op_type}' Op has type {handle.dtype.name} that does not match "
            "expected type of resource."
        )


def _infer_stack(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    if inputs[0].dtype.base_dtype is not dtypes.int32:
        raise TypeError(
            f"Input 'max_size' of 'StackV2' Op has type {inputs[0].dtype.name} that does not "
            "match expected type of int32."
        )
    return [(TensorShape([2]), dtypes.resource)]


def _stack_kernel(xp: Any, op: Operation, state: Any) -> Any:
    name, dtype = op.attrs["stack_name"] or op.name, op.attrs["elem_type"]

    def create(max_size: Any) -> Stack:
        return Stack(name, dtype, int(host_ints(max_size)[0]))

    return create


def _infer_push(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("StackPushV2", inputs[0])
    return [(inputs[1].shape, inputs[1].dtype.base_dtype)]


def _push_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def push(stack: Stack, value: Any) -> Any:
        stack.push(op, value)
        return value

    return push


def _infer_pop(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("StackPopV2", inputs[0])
    return [(TensorShape(None), attrs["elem_type"])]


def _pop_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def pop(stack: Stack) -> Any:
        return stack.pop(op)

    return pop


def _trigger_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda: None


# TF keeps the handle in host memory on a GPU and a pushed tensor where it was made; placeviz
# places the ops where TF does and does not model host-memory arguments.
# A push's output is the value it pushed (its second input's buffer).
for _type, _infer, _kernel, _forwards in (
    ("StackV2", _infer_stack, _stack_kernel, None),
    ("StackPushV2", _infer_push, _push_kernel, 1),
    ("StackPopV2", _infer_pop, _pop_kernel, None),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer,
            kernel=_kernel,
            cost=free_cost,
            supported=ALL_DEVICES,
            stateful=True,
            forwards_input=_forwards,
        )
    )
registry.register(
    OpDef(
        type="ControlTrigger",
        infer=lambda inputs, attrs: [],
        kernel=_trigger_kernel,
        cost=free_cost,
        control_only=True,
    )
)


def stack(max_size: Tensor, elem_type: dtypes.DType, name: str) -> Tensor:
    attrs = {"elem_type": elem_type, "stack_name": ""}
    return make_op("StackV2", [max_size], name, attrs).outputs[0]


def stack_push(handle: Tensor, value: Tensor, swap_memory: bool) -> Tensor:
    attrs = {"swap_memory": swap_memory}
    return make_op("StackPushV2", [handle, value], "StackPushV2", attrs).outputs[0]


def stack_pop(handle: Tensor, elem_type: dtypes.DType) -> Tensor:
    return make_op("StackPopV2", [handle], "StackPopV2", {"elem_type": elem_type}).outputs[0]


def control_trigger(name: str) -> Operation:
    return make_op("ControlTrigger", [], name)
