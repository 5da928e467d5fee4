"""The dtypes placeviz supports, named as TensorFlow names them."""

from __future__ import annotations

from typing import Any

import numpy as np


class DType:
    """A tensor element type: a TF name over a NumPy dtype. Instances are singletons.

    Each has a reference twin (``float32_ref``), the dtype of a TF1 variable's own output: what
    an op that writes the variable (Assign, the optimizers' updates) takes and returns.
    """

    __slots__ = ("_base", "_np", "_ref", "name")

    def __init__(self, name: str, np_dtype: Any, base: DType | None = None) -> None:
        self.name = name
        self._np = np.dtype(np_dtype)
        self._base = base
        self._ref = self if base is not None else DType(f"{name}_ref", np_dtype, base=self)

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def np(self) -> np.dtype:
        return self._np

    @property
    def base_dtype(self) -> DType:
        """The value's dtype: ``float32`` for ``float32_ref`` and for ``float32`` itself."""
        return self._base or self

    @property
    def is_ref_dtype(self) -> bool:
        return self._base is not None

    @property
    def _as_ref(self) -> DType:
        """The reference twin (TF's name for it too)."""
        return self._ref

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    def __repr__(self) -> str:
        return f"pv.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
bool = DType("bool", np.bool_)
string = DType("string", np.object_)  # elements are bytes, as TF returns them
# a handle to a resource a run makes (a TensorArray): an object, never an array of elements
resource = DType("resource", np.object_)

ALL: tuple[DType, ...] = (float16, float32, float64, int32, int64, bool, string)
FLOATS: tuple[DType, ...] = (float16, float32, float64)
NUMBERS: tuple[DType, ...] = (float16, float32, float64, int32, int64)
_BY_NUMPY = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for base in ALL for d in (base, base._as_ref)}
_BY_NAME[resource.name] = resource
float16_ref, float32_ref, float64_ref = (d._as_ref for d in FLOATS)
int32_ref, int64_ref, bool_ref = int32._as_ref, int64._as_ref, bool._as_ref
string_ref = string._as_ref


def as_dtype(value: Any) -> DType:
    """Accept a DType, its name, a NumPy dtype or a Python type; reject anything else by name."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        found = _BY_NUMPY.get(np.dtype(value))
    except TypeError:
        found = None
    if found is None:
        names = ", ".join(d.name for d in ALL)
        raise TypeError(f"Unsupported dtype {value!r}; placeviz supports {names}")
    return found


def infer_dtype(value: Any) -> DType:
    """The dtype TensorFlow infers for a Python or NumPy value: ints are int32, floats float32."""
    if isinstance(value, np.ndarray | np.generic):
        return as_dtype(value.dtype)
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind == "b":
        return bool
    if kind in "iu":
        return int32
    if kind == "f":
        return float32
    if kind in "SU":
        return string
    raise TypeError(f"Cannot convert {value!r} to a tensor: unsupported element type {array.dtype}")
