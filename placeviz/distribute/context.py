"""Which strategy is in scope and which replica is being built (TensorFlow's two contexts).

Inside ``strategy.scope()`` the code is in the *cross-replica* context: a mirrored variable means
its primary copy. Inside ``strategy.run(fn)`` each call of ``fn`` is in a *replica* context: a
mirrored variable means that replica's copy, and ``merge_call`` hands values from every replica
to one function (how an optimizer sums gradients over replicas).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from placeviz.graph.core import Operation, Tensor, get_default_graph

if TYPE_CHECKING:
    from placeviz.distribute.mirrored_strategy import MirroredStrategy

_state = threading.local()


def _strategies() -> list[Any]:
    stack = getattr(_state, "strategies", None)
    if stack is None:
        stack = _state.strategies = []
    return stack


def push_strategy(strategy: Any) -> None:
    _strategies().append(strategy)


def pop_strategy(strategy: Any) -> None:
    _strategies().remove(strategy)


def has_strategy() -> bool:
    return bool(_strategies())


_default: list[Callable[[], Any]] = []  # what makes the default strategy (mirrored_strategy's)


def set_default_strategy(make: Callable[[], Any]) -> None:
    """The default strategy's maker; ``mirrored_strategy`` gives it when the package loads."""
    _default[:] = [make]


def get_strategy() -> Any:
    """The strategy in scope, else the default strategy (one replica, no device requested)."""
    stack = _strategies()
    if stack:
        return stack[-1]
    return _default[0]()


class ReplicaContext:
    """One replica of ``strategy.run``: its index and the merge calls it made."""

    def __init__(self, strategy: MirroredStrategy, replica_id: int) -> None:
        self.strategy = strategy
        self.replica_id_in_sync_group = replica_id
        # (merge_fn, args, the NoOp handed back), in call order
        self.merges: list[tuple[Callable[..., Any], tuple[Any, ...], Operation]] = []

    @property
    def num_replicas_in_sync(self) -> int:
        return self.strategy.num_replicas_in_sync

    def merge_call(self, merge_fn: Callable[..., Operation], args: tuple[Any, ...] = ()) -> Any:
        """Run ``merge_fn(strategy, *per_replica_args)`` once for all replicas.

        Replicas are built one after another, so the merge happens when the last one is built;
        until then each replica gets a NoOp that will wait for the merged op (its result must
        be an op, as the optimizers' is). The NoOp also waits for the tensors in ``args``, so
        in eager mode it is as symbolic as they are.
        """
        graph = get_default_graph()
        with graph.control_dependencies(_graph_elements(args)):
            waiter = graph.create_op("NoOp", [], name="merge_wait")
        self.merges.append((merge_fn, args, waiter))
        return waiter


def _graph_elements(value: Any) -> list[Tensor | Operation]:
    if isinstance(value, Tensor | Operation):
        return [value]
    if isinstance(value, list | tuple):
        return [e for item in value for e in _graph_elements(item)]
    return []


def get_replica_context() -> ReplicaContext | None:
    """The replica being built inside ``strategy.run``; None in the cross-replica context."""
    return getattr(_state, "replica", None)


def set_replica_context(replica: ReplicaContext | None) -> None:
    _state.replica = replica


def in_cross_replica_context() -> bool:
    return has_strategy() and get_replica_context() is None
