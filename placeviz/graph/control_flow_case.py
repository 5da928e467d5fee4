"""``pv.case``: nested conds, the first pair's outermost, as TensorFlow's control_flow_case.py.

Without a default, the last pair's branch is the default, guarded by Asserts that no other
predicate is true and that its own is (``Input error: None of conditions evaluated as True``);
``exclusive=True`` guards the whole case with an Assert that at most one predicate is true.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.graph.control_flow import cond
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops import array_ops, constant_op, math_ops
from placeviz.graph.ops.logging_ops import Assert


def _assert_at_most_n_true(predicates: Sequence[Tensor], n: int, msg: str) -> Operation:
    """An Assert that at most ``n`` of ``predicates`` are true, naming them all."""
    preds_c = array_ops.stack(predicates, name="preds_c")
    num_true = math_ops.reduce_sum(array_ops.cast(preds_c, dtypes.int32), name="num_true_conds")
    condition = math_ops.less_equal(num_true, constant_op.constant(n, name="n_true_conds"))
    names = ", ".join(p.name for p in predicates)
    message = f"{msg}: more than {n} conditions ({names}) evaluated as True:"
    return Assert(condition, data=[message, preds_c], summarize=len(predicates))


def _default_from_last(
    predicates: list[Tensor], actions: list[Callable[[], Any]]
) -> tuple[Callable[[], Any], list[Tensor], list[Callable[[], Any]]]:
    """The last pair as the default, run only after asserting that it is the one true."""
    k = len(predicates) - 1
    predicate, action = predicates[k], actions[k]
    others = predicates[:k]

    def default_action() -> Any:
        others_msg = (
            f"Implementation error: selected default action #{k} was called, but some of other "
            "predicates are True: "
        )
        default_msg = (
            "Input error: None of conditions evaluated as True:",
            array_ops.stack(predicates, name="preds_c"),
        )
        checks = [_assert_at_most_n_true(others, 0, others_msg), Assert(predicate, default_msg)]
        with get_default_graph().control_dependencies(checks):
            return action()

    return default_action, others, actions[:k]


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """The result of the first pair whose predicate is true, else ``default()``."""
    if not isinstance(pred_fn_pairs, list | tuple | dict):
        raise TypeError(
            f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}"
        )
    pairs = (
        sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
        if isinstance(pred_fn_pairs, dict)
        else list(pred_fn_pairs)
    )
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if isinstance(pred, Tensor):
            if pred.dtype.base_dtype.name != "bool":
                raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        else:
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    predicates = [p for p, _ in pairs]
    actions = [a for _, a in pairs]
    graph = predicates[0].graph if predicates else get_default_graph()
    with graph.name_scope(name):
        if default is None:
            default, predicates, actions = _default_from_last(predicates, actions)
        fn: Callable[[], Any] = default
        for pred, action in reversed(list(zip(predicates, actions))):
            fn = functools.partial(cond, pred, true_fn=action, false_fn=fn, strict=strict)
        if not exclusive:
            return fn()
        check = _assert_at_most_n_true(predicates, 1, "Input error: exclusive=True")
        with graph.control_dependencies([check]):
            return fn()
