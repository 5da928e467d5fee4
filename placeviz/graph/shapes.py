"""Static shapes with unknown dimensions, and the broadcasting rule ops share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

Dim = int | None


class ShapeError(ValueError):
    """A shape rule failed; the graph turns it into an error that names the op."""


class TensorShape:
    """A shape whose rank or dimensions may be unknown (``None``), as ``tf.TensorShape``."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Iterable[Dim] | TensorShape | Dim | None) -> None:
        if isinstance(dims, TensorShape):
            self._dims: tuple[Dim, ...] | None = dims._dims
        elif dims is None:
            self._dims = None
        elif not isinstance(dims, Iterable):  # one dimension: TF's singleton shape
            self._dims = (_as_dim(dims),)
        else:
            self._dims = tuple(_as_dim(d) for d in dims)

    @property
    def dims(self) -> tuple[Dim, ...] | None:
        return self._dims

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    @property
    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def as_list(self) -> list[Dim]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined:
            return None
        n = 1
        for d in self._dims or ():
            n *= d  # type: ignore[operator]
        return n

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ShapeError(f"Shapes {self} and {other} are not compatible")
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape(a if a is not None else b for a, b in zip(self._dims, other._dims))

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[Dim]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return None if isinstance(key, int) else TensorShape(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorShape):
            return self._dims == other._dims
        if isinstance(other, list | tuple):
            return self._dims is not None and list(self._dims) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def _as_dim(d: Any) -> Dim:
    if d is None:
        return None
    if hasattr(d, "__index__"):
        value = int(d.__index__())
        if value < 0:
            if value == -1:
                return None
            raise ShapeError(f"Dimension {value} must be >= 0")
        return value
    raise ShapeError(f"Dimension {d!r} is not an integer or None")


def as_shape(value: Any) -> TensorShape:
    return value if isinstance(value, TensorShape) else TensorShape(value)


def unknown() -> TensorShape:
    return TensorShape(None)


def scalar() -> TensorShape:
    return TensorShape(())


def broadcast(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting over static shapes; unknown dims broadcast optimistically."""
    if a.dims is None or b.dims is None:
        return unknown()
    da, db = a.dims, b.dims
    n = max(len(da), len(db))
    da = (1,) * (n - len(da)) + da
    db = (1,) * (n - len(db)) + db
    out: list[Dim] = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None:
            out.append(x)
        else:
            raise ShapeError(f"Dimensions must be equal, but are {x} and {y}")  # TF's words
    return TensorShape(out)


def normalize_axis(axis: int, rank: int | None, what: str = "axis") -> int:
    if rank is None:
        return axis
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis % rank


def format_dims(dims: Sequence[Dim]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"
