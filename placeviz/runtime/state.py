"""What a session keeps between runs: variable values and random generators."""

from __future__ import annotations

from typing import Any

import numpy as np

from placeviz.errors import FailedPreconditionError
from placeviz.graph.core import Operation

# TensorFlow's graph seed when only an op seed is given.
DEFAULT_GRAPH_SEED = 87654321


class VariableSlot:
    """The value of one variable in one session; None until an initializer assigns it."""

    __slots__ = ("op", "value")

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.value: Any = None

    def read(self) -> Any:
        value = self.value
        if value is None:
            raise FailedPreconditionError(
                f"Attempting to use uninitialized value {self.op.name} (Variable '{self.op.name}' "
                f"created at {self.op.source}). Run its initializer first, e.g. "
                "sess.run(pv.global_variables_initializer())",
                op=self.op,
            )
        return value

    def assign(self, value: Any) -> Any:
        self.value = value
        return value


class SessionState:
    """Per-session state shared by every plan the session compiles."""

    def __init__(self) -> None:
        self._variables: dict[int, VariableSlot] = {}
        self._generators: dict[tuple[int, str], Any] = {}

    def variable_slot(self, op: Operation) -> VariableSlot:
        slot = self._variables.get(op._id)
        if slot is None:
            slot = self._variables[op._id] = VariableSlot(op)
        return slot

    def generator(self, op: Operation, xp: Any) -> Any:
        """One generator per random op and backend: each run draws new numbers, seedably."""
        key = (op._id, xp.__name__)
        gen = self._generators.get(key)
        if gen is None:
            graph_seed, op_seed = op.graph.seed, op.attrs.get("seed")
            seed = None
            if graph_seed is not None or op_seed is not None:
                pair = [
                    DEFAULT_GRAPH_SEED if graph_seed is None else int(graph_seed),
                    op._id if op_seed is None else int(op_seed),
                ]
                # One integer, which both NumPy's and CuPy's default_rng accept.
                seed = int(np.random.SeedSequence(pair).generate_state(1)[0])
            gen = self._generators[key] = xp.random.default_rng(seed)
        return gen


class KernelContext:
    """What a kernel builder sees as ``state``: the session's state on one backend."""

    __slots__ = ("_session", "_xp")

    def __init__(self, session: SessionState, xp: Any) -> None:
        self._session = session
        self._xp = xp

    def variable_slot(self, op: Operation) -> VariableSlot:
        return self._session.variable_slot(op)

    def rng(self, op: Operation) -> Any:
        return self._session.generator(op, self._xp)


def host_copy(value: Any) -> Any:
    """A fetched value the caller may own: 0-d arrays become NumPy scalars, shared arrays copies."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        if not value.flags.writeable:
            return value.copy()
    return value
