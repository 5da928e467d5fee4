"""TensorFlow's error types (``pv.errors``).

Each error raised about an op carries ``.op`` (the Operation) and names the op, the file:line where
the user created it and the devices involved, so a student can find the line to change.
"""

from __future__ import annotations

from typing import Any


class OpError(Exception):
    """Base of placeviz's runtime errors, as ``tf.errors.OpError``."""

    def __init__(self, message: str, op: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op

    def __reduce__(self) -> tuple[type, tuple[str]]:
        """Pickled without its op (a cluster task raises it in another process)."""
        return type(self), (self.message,)

    @property
    def node_def(self) -> Any:
        return self.op


class InvalidArgumentError(OpError, ValueError):
    """Bad input: an unknown device, a shape or dtype mismatch, a missing feed.

    Also a ValueError, so TensorFlow code that catches ValueError around graph construction works.
    """


class DTypeMismatchError(InvalidArgumentError, TypeError):
    """An op got inputs of the wrong dtype; also a TypeError, as TensorFlow raises."""


class NotFoundError(OpError):
    """Something named does not exist (a kernel, a device)."""


class ResourceExhaustedError(OpError):
    """A device ran out of memory."""


class FailedPreconditionError(OpError):
    """The op's state is not ready, e.g. reading a variable before initializing it."""


class InternalError(OpError):
    """A bug in placeviz, not in the user's program."""


class CancelledError(OpError):
    """The run was cancelled."""


class DeadlineExceededError(OpError):
    """Waited too long: a worker's session whose model the chief never made ready."""


class OutOfRangeError(OpError):
    """Iteration past the end: a dequeue from a queue that is closed and has too few
    elements."""


class UnavailableError(OpError):
    """A cluster task cannot be reached: its process ended, or never started."""


class UnimplementedError(OpError):
    """placeviz does not do this yet (e.g. run a cluster of servers)."""


class InaccessibleTensorError(ValueError):
    """A fetch of an op inside a cond's branch, which has a value only when that branch runs:
    TF's class, a ValueError as there."""


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation on a graph tensor that needs its value (``bool(t)``, ``for x in t``):
    TF's class, a TypeError as there."""


def describe_op(op: Any) -> str:
    """``'MatMul' (MatMul) created at cell.py:3`` — the op as an error message names it."""
    where = f" created at {op.source}" if getattr(op, "source", None) else ""
    return f"'{op.name}' ({op.type}){where}"


__all__ = [
    "CancelledError",
    "DTypeMismatchError",
    "FailedPreconditionError",
    "InaccessibleTensorError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OpError",
    "OperatorNotAllowedInGraphError",
    "ResourceExhaustedError",
    "UnavailableError",
    "UnimplementedError",
]
