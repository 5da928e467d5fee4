"""Gradient clipping as TensorFlow 2.21 builds it in a graph (``clip_ops.py``): by value, by
norm, and by the global norm of a list (each tensor's half squared norm an ``L2Loss`` beside
it, each clipped tensor scaled where it lives).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placeviz.graph.core import Tensor, get_default_graph
from placeviz.graph.ops import array_ops, loss_ops, math_ops, state_ops
from placeviz.graph.ops._build import op_scope
from placeviz.graph.ops.constant_op import constant, convert_to_tensor
from placeviz.graph.shapes import ShapeError


def clip_by_value(
    t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None
) -> Tensor:
    """``max(min(t, clip_value_max), clip_value_min)``; bounds that would broadcast ``t`` to a
    larger shape are refused."""
    with op_scope(name or "clip_by_value", (t, clip_value_min, clip_value_max)) as scope:
        values = convert_to_tensor(t, name="t")
        upper = math_ops.minimum(values, clip_value_max)
        _same_shape(values, upper)
        clipped = math_ops.maximum(upper, clip_value_min, name=scope)
        _same_shape(values, clipped)
        return clipped


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t), clip_norm)`` over ``axes`` (all by default); TF's two
    Selects keep the gradient finite where the norm is zero."""
    with op_scope(name or "clip_by_norm", (t, clip_norm)) as scope:
        values = convert_to_tensor(t, name="t")
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        positive = l2sum > 0
        safe = math_ops.select(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = math_ops.select(positive, math_ops.sqrt(safe), l2sum)
        scaled = values * clip_norm
        _same_shape(values, scaled)
        return state_ops.identity(scaled / math_ops.maximum(l2norm, clip_norm), name=scope)


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """``sqrt(sum(l2norm(t) ** 2))`` over the tensors of ``t_list`` (Nones skipped)."""
    tensors = _tensor_list(t_list)
    graph = get_default_graph()
    with op_scope(name or "global_norm", [t for t in tensors if t is not None]):
        values = [_converted(t, i) for i, t in enumerate(tensors)]
        halves = []
        for value in values:
            if value is not None:
                with graph.colocate_with(value.op):
                    halves.append(loss_ops.l2_loss(value))
        half_squared = math_ops.reduce_sum(array_ops.stack(halves))
        two = constant(2.0, dtype=half_squared.dtype)
        return math_ops.sqrt(half_squared * two, name="global_norm")  # in any scope (TF's)


def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: Any, use_norm: Tensor | None = None, name: str | None = None
) -> tuple[list[Tensor | None], Tensor]:
    """Every tensor scaled by ``clip_norm / max(global_norm, clip_norm)`` (NaN for a norm that
    is not finite), and the global norm."""
    tensors = _tensor_list(t_list)
    norm = global_norm(tensors, name) if use_norm is None else use_norm
    graph = get_default_graph()
    present = [t for t in tensors if t is not None]
    with op_scope(name or "clip_by_global_norm", [*present, clip_norm]) as scope:
        scale_for_finite = clip_norm * math_ops.minimum(
            1.0 / norm, constant(1.0, dtype=norm.dtype) / clip_norm
        )
        scale = scale_for_finite + (norm - norm)  # NaN unless the norm is finite
        values = [_converted(t, i) for i, t in enumerate(tensors)]
        clipped: list[Tensor | None] = []
        for i, value in enumerate(values):
            if value is None:
                clipped.append(None)
                continue
            with graph.colocate_with(value.op):
                clipped.append(state_ops.identity(value * scale, name=f"{scope}_{i}"))
        return clipped, norm


def _tensor_list(t_list: Any) -> list[Any]:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def _converted(t: Any, index: int) -> Tensor | None:
    return None if t is None else convert_to_tensor(t, name=f"t_{index}")


def _same_shape(values: Tensor, result: Tensor) -> None:
    if not values.shape.is_compatible_with(result.shape):
        raise ShapeError(f"Shapes {values.shape} and {result.shape} are incompatible")
