"""TensorFlow 1's control-flow ops: Switch, RefSwitch and Merge (``tf.cond`` builds on them).

A Switch forwards its data to one of two outputs; the other output carries ``DEAD``, which the
executor propagates: an op with a dead input (data or control) does not run and its outputs are
dead too, until a Merge, which forwards the one input that is alive. That is how the branch a
cond does not take stays unexecuted (TensorFlow's dead tensors).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops._build import require_bool
from placeviz.graph.registry import ANY_INPUT, OpDef, OutputSpec, free_cost
from placeviz.graph.shapes import TensorShape


class _Dead:
    """The value of a tensor that a Switch did not forward (its ``nbytes`` is what a trace
    measures of it: nothing)."""

    __slots__ = ()
    nbytes = 0

    def __repr__(self) -> str:
        return "DEAD"


DEAD = _Dead()

SWITCH_TYPES = frozenset({"Switch", "RefSwitch"})
MERGE_TYPES = frozenset({"Merge", "RefMerge"})


def _infer_switch(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    data, pred = inputs
    require_bool("Switch", "pred", pred)
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.ndims}")
    return [(data.shape, data.dtype), (data.shape, data.dtype)]


def _switch_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def switch(data: Any, pred: Any) -> tuple[Any, Any]:
        return (DEAD, data) if bool(pred) else (data, DEAD)

    return switch


def _infer_merge(
    inputs: Sequence[Tensor], attrs: Mapping[str, Any], ref: bool = False
) -> list[OutputSpec]:
    """The shape every input shares: dimensions where they differ unknown, rank too (of
    references, a RefMerge's: a reference)."""
    first = inputs[0]
    for tensor in inputs[1:]:
        if tensor.dtype.base_dtype is not first.dtype.base_dtype:
            names = ", ".join(t.dtype.name for t in inputs)
            raise TypeError(
                f"Input 'inputs' of 'Merge' Op has types [{names}] that are not all the same"
            )
    dims = first.shape.dims
    for tensor in inputs[1:]:
        other = tensor.shape.dims
        if dims is None or other is None or len(dims) != len(other):
            dims = None
            break
        dims = tuple(a if a == b else None for a, b in zip(dims, other))
    dtype = first.dtype if ref else first.dtype.base_dtype
    return [(TensorShape(dims), dtype), (TensorShape(()), dtypes.int32)]


def _merge_kernel(xp: Any, op: Operation, state: Any) -> Any:
    indices = [np.int32(i) for i in range(len(op.inputs))]

    def merge(*values: Any) -> tuple[Any, Any]:
        for value, index in zip(values, indices):
            if value is not DEAD:
                return value, index
        return DEAD, DEAD

    return merge


# TF's control-flow kernels forward their input's buffer: a Switch's data, a Merge's live input.
for _type, _infer, _kernel, _ref, _forwards in (
    ("Switch", _infer_switch, _switch_kernel, False, 0),
    ("RefSwitch", _infer_switch, _switch_kernel, True, 0),
    ("Merge", _infer_merge, _merge_kernel, False, ANY_INPUT),
    ("RefMerge", functools.partial(_infer_merge, ref=True), _merge_kernel, True, ANY_INPUT),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer,
            kernel=_kernel,
            cost=free_cost,
            multi_output=True,
            ref_output=_ref,
            forwards_input=_forwards,
        )
    )


# -- while loops: a frame's Enter, NextIteration, LoopCond and Exit ----------------------------
ENTER_TYPES = frozenset({"Enter", "RefEnter"})
LOOP_TYPES = ENTER_TYPES | {"Exit", "NextIteration", "LoopCond"}


def _infer_forward(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return [(inputs[0].shape, inputs[0].dtype.base_dtype)]


def _infer_loop_cond(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    pred = inputs[0]
    require_bool("LoopCond", "input", pred)
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.ndims}")
    return [(TensorShape(()), dtypes.bool)]


def _forward_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda x: x


for _type, _infer, _forwards in (
    ("Enter", _infer_forward, 0),
    ("Exit", _infer_forward, 0),
    ("NextIteration", _infer_forward, 0),
    ("LoopCond", _infer_loop_cond, None),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer,
            kernel=_forward_kernel,
            cost=free_cost,
            forwards_input=_forwards,
        )
    )


def _infer_ref_forward(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    if not inputs[0].dtype.is_ref_dtype:
        raise TypeError(f"RefEnter needs a reference input, got {inputs[0].dtype.name}")
    return [(inputs[0].shape, inputs[0].dtype)]


# A variable's reference entering a loop (TF's RefEnter), so the body can assign to it.
registry.register(
    OpDef(
        type="RefEnter",
        infer=_infer_ref_forward,
        kernel=_forward_kernel,
        cost=free_cost,
        ref_output=True,
        forwards_input=0,
    )
)
