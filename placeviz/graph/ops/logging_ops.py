"""``pv.Assert``: TF1's graph-mode assertion, an ``Assert`` op that fails the run when its
condition is false, its message made of the data tensors (at most ``summarize`` entries each).

As TF's: when every data tensor is a string or an int32 (kept on the host), the op reads them
directly; otherwise it runs only when the condition fails, behind a cond (``AssertGuard``), so
its data need not reach the host in a run that passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.control_flow import cond
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops._build import make_op, require_bool
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.state_ops import no_op
from placeviz.graph.registry import OpDef, OutputSpec, free_cost


def _infer_assert(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    require_bool("Assert", "condition", inputs[0])
    return []


def _scalar(item: Any) -> str:
    if isinstance(item, bytes):
        return item.decode()
    if isinstance(item, np.floating):
        return np.format_float_positional(item, trim="-")
    if isinstance(item, np.bool_):
        return str(int(item))
    return str(item)


def _entry(value: Any, summarize: int) -> str:
    """One data tensor as TF's ``SummarizeValue`` shows it: its first ``summarize`` entries,
    nested as the array is, ``...`` after the last one shown."""
    array = value.get() if hasattr(value, "get") else np.asarray(value)  # from a GPU
    if array.ndim == 0:
        return _scalar(array[()])
    flat = [_scalar(v) for v in array.reshape(-1)]
    shown = flat[:summarize]
    dims = array.shape

    def nest(level: int, start: int) -> str:
        if start >= len(shown):
            return ""
        if level == len(dims) - 1:
            part = shown[start : start + dims[level]]
            more = "..." if start + dims[level] > len(shown) else ""
            return "[" + " ".join(part) + more + "]"
        stride = int(np.prod(dims[level + 1 :]))
        parts = [nest(level + 1, start + k * stride) for k in range(dims[level])]
        return "[" + "".join(p for p in parts if p) + "]"

    text = nest(0, 0)
    return text[1:-1] if array.ndim == 1 else text


def _assert_kernel(xp: Any, op: Operation, state: Any) -> Any:
    summarize = op.attrs["summarize"]

    def check(condition: Any, *data: Any) -> None:
        if not bool(condition.all()):
            shown = " ".join(f"[{_entry(d, summarize)}]" for d in data)  # TF's brackets
            raise InvalidArgumentError(f"assertion failed: {shown}", op=op)

    return check


registry.register(
    OpDef(type="Assert", infer=_infer_assert, kernel=_assert_kernel, cost=free_cost, stateful=True)
)


def _assert_op(condition: Tensor, data: Sequence[Any], summarize: int, name: str) -> Operation:
    with get_default_graph().name_scope(name) as scope:
        tensors = [convert_to_tensor(x, name=f"data_{i}") for i, x in enumerate(data)]
        return make_op("Assert", [condition, *tensors], scope, {"summarize": summarize})


def Assert(
    condition: Any, data: Sequence[Any], summarize: int | None = None, name: str | None = None
) -> Operation:
    """An op that fails the run with ``data`` in its message when ``condition`` is false."""
    summarize = 3 if summarize is None else summarize
    with get_default_graph().name_scope(name or "Assert"):
        shown = [convert_to_tensor(x) for x in data]
        if all(x.dtype.base_dtype in (dtypes.string, dtypes.int32) for x in shown):
            return _assert_op(convert_to_tensor(condition), data, summarize, "Assert")
        condition = convert_to_tensor(condition, name="Condition")
        guarded = cond(
            condition,
            no_op,
            lambda: _assert_op(condition, data, summarize, "Assert"),
            name="AssertGuard",
        )
        return guarded.op
