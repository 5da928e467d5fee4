"""Values with one component per replica: ``PerReplica`` results and ``MirroredVariable``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placeviz.distribute import context
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.graph.ops import math_ops, state_ops
from placeviz.graph.variables import Variable


class PerReplica:
    """What ``strategy.run`` returns: one value per replica, in replica order."""

    def __init__(self, values: Sequence[Any]) -> None:
        self.values = tuple(values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{i}: {v!r}" for i, v in enumerate(self.values))
        return f"PerReplica:{{{inner}}}"


class MirroredVariable:
    """One variable copy per replica device, all updated together so they stay equal.

    In a replica context it stands for that replica's copy, elsewhere for the primary (first)
    copy, as TensorFlow's MirroredVariable does.
    """

    def __init__(self, values: Sequence[Variable]) -> None:
        self.values = tuple(values)
        self.primary = self.values[0]
        self._initializer: Operation | None = None

    def _get(self) -> Variable:
        replica = context.get_replica_context()
        if replica is None:
            return self.primary
        return self.values[replica.replica_id_in_sync_group]

    # -- what a Variable exposes -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.primary.name

    @property
    def op(self) -> Operation:
        return self._get().op

    @property
    def dtype(self) -> Any:
        return self.primary.dtype

    @property
    def shape(self) -> Any:
        return self.primary.shape

    def get_shape(self) -> Any:
        return self.primary.shape

    @property
    def graph(self) -> Graph:
        return self.primary.graph

    @property
    def trainable(self) -> bool:
        return self.primary.trainable

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(v.device for v in self.values)

    @property
    def initializer(self) -> Operation:
        """One op that initializes every copy (made once, on first use)."""
        if self._initializer is None:
            self._initializer = state_ops.group(*[v.initializer for v in self.values])
        return self._initializer

    @property
    def initial_value(self) -> Tensor:
        return self.primary.initial_value

    def value(self) -> Tensor:
        return self._get().value()

    def read_value(self) -> Tensor:
        return self._get().read_value()

    def numpy(self) -> Any:
        return self.primary.numpy()

    def eval(self, session: Any = None) -> Any:
        return self.primary.eval(session=session)

    def _as_graph_element(self) -> Tensor:
        return self._get()._as_graph_element()

    def _as_tensor(self) -> Tensor:
        return self._get()._as_tensor()

    # -- updates keep every copy equal -----------------------------------------------------------
    def _update_all(self, method: str, value: Any, name: str | None) -> Operation:
        if context.get_replica_context() is not None:
            raise ValueError(
                f"You must specify an aggregation method to update a MirroredVariable in Replica "
                f"Context ({self.name}); update it in the cross-replica context (outside "
                "strategy.run), where every copy gets the same value."
            )
        updates = [getattr(v, method)(value) for v in self.values]
        return state_ops.group(*updates, name=name or f"{method}_all")

    def assign(self, value: Any, name: str | None = None) -> Operation:
        return self._update_all("assign", value, name)

    def assign_add(self, delta: Any, name: str | None = None) -> Operation:
        return self._update_all("assign_add", delta, name)

    def __repr__(self) -> str:
        inner = ", ".join(f"{i}: {v!r}" for i, v in enumerate(self.values))
        return f"MirroredVariable:{{{inner}}}"

    __hash__ = object.__hash__


def _delegate(method: str) -> Any:
    def call(self: MirroredVariable, *args: Any) -> Any:
        return getattr(self._get(), method)(*args)

    call.__name__ = method
    return call


for _method in math_ops.OPERATOR_METHODS:
    setattr(MirroredVariable, _method, _delegate(_method))


def local_variable(variable: Any) -> Variable:
    """The Variable a replica works on: its copy of a mirrored variable, or the variable itself."""
    return variable._get() if isinstance(variable, MirroredVariable) else variable
