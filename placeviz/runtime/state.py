"""What a session keeps between runs: variable values, random generators and resources
(queues, accumulators)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from placeviz.errors import FailedPreconditionError
from placeviz.graph.core import Operation

# TensorFlow's graph seed when only an op seed is given.
DEFAULT_GRAPH_SEED = 87654321


class VariableSlot:
    """The value of one variable in one session, as TensorFlow 1's reference variables hold it.

    ``read()`` forwards the variable's buffer (``v/read`` copies nothing) and ``assign`` writes
    into that buffer when the sizes agree, as TF's Assign kernel does; so every read ordered after
    an assign, by a data or a control edge, sees the new value. Readers get a read-only view, so
    no kernel writes into a variable by accident and a fetched value is copied for the caller.
    """

    __slots__ = ("_buffer", "op", "value")

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.value: Any = None  # the readers' view of ``_buffer``; None until initialized
        self._buffer: Any = None  # the variable's own, writeable storage

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

    def buffer(self) -> Any:
        """The variable's own storage, for kernels that update it in place (TF's Apply* ops,
        which write into the variable rather than replace it)."""
        self.read()  # uninitialized: the error every read gives
        return self._buffer

    def forget(self) -> None:
        """Uninitialized again (a cluster's ``Session.reset``)."""
        self.value = self._buffer = None

    def assign(self, value: Any) -> Any:
        buffer = self._buffer
        shape = getattr(value, "shape", ())
        if buffer is None or buffer.size != math.prod(shape):
            # First initialization or a new size: storage of its own (never the producer's
            # array, which may be a constant other ops still read).
            self._buffer = buffer = _owned_copy(value)
            self.value = _read_only(buffer)
            return self.value
        if buffer.shape != shape:  # same size, new shape: TF reshapes the buffer it keeps
            self._buffer = buffer = buffer.reshape(shape)
            self.value = _read_only(buffer)
        buffer[...] = value
        return self.value


def _owned_copy(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic):
        return np.array(value, copy=True)
    return value.copy()  # a CuPy array


def _read_only(buffer: Any) -> Any:
    if isinstance(buffer, np.ndarray):
        view = buffer.view()
        view.flags.writeable = False
        return view
    return buffer  # CuPy arrays have no write flag; their fetches are copied to the host anyway


class SessionState:
    """Per-session state shared by every plan the session compiles."""

    def __init__(self) -> None:
        self._variables: dict[int, VariableSlot] = {}
        self._generators: dict[tuple[int, str], Any] = {}
        self._resources: dict[str, Any] = {}
        self._resources_lock = threading.Lock()

    def variable_slot(self, op: Operation) -> VariableSlot:
        slot = self._variables.get(op.id)
        if slot is None:
            slot = self._variables[op.id] = VariableSlot(op)
        return slot

    def resource(self, key: str, make: Callable[[], Any]) -> Any:
        """The queue or accumulator named ``key``, made on first use: every plan, and every
        client of a cluster task (whose sessions share one state), gets the same object."""
        with self._resources_lock:
            found = self._resources.get(key)
            if found is None:
                found = self._resources[key] = make()
            return found

    def reset_resources(self) -> None:
        """Every queue and accumulator as made anew (plans keep the objects they took, so the
        objects stay and lose what they held)."""
        with self._resources_lock:
            for resource in self._resources.values():
                resource.reset()

    def generator(self, op: Operation, xp: Any) -> Any:
        """One generator per random op and backend: each run draws new numbers, seedably."""
        key = (op.id, xp.__name__)
        gen = self._generators.get(key)
        if gen is None:
            graph_seed, op_seed = op.graph.seed, op.attrs.get("seed")
            seed = None
            if graph_seed is not None or op_seed is not None:
                pair = [
                    DEFAULT_GRAPH_SEED if graph_seed is None else int(graph_seed),
                    op.id if op_seed is None else int(op_seed),
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

    def resource(self, key: str, make: Callable[[], Any]) -> Any:
        return self._session.resource(key, make)

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
