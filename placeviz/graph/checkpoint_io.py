"""placeviz's checkpoint files: what ``SaveV2`` writes and ``RestoreV2`` reads.

TensorFlow's tensor bundle is a binary format of its own; placeviz keeps the file names TF users
expect but fills them with formats any Python can read without placeviz, and never with pickles
(loading a checkpoint must not run code). A checkpoint with prefix ``P`` is two files:

- ``P.data-00000-of-00001``: a NumPy ``.npz`` archive holding each numeric tensor under the key
  ``t<i>`` (read with ``numpy.load(path, allow_pickle=False)``);
- ``P.index``: JSON ``{"format": "placeviz-checkpoint", "version": 1, "tensors": {name:
  {"dtype", "shape", "key"}}}``; string tensors keep their elements here instead, base64-encoded
  in ``"strings"`` (an ``.npz`` could only hold arbitrary bytes as pickled objects).

The data file is written first and the index last, each through a temporary file renamed into
place, so an index on disk always names a complete checkpoint: ``exists`` looks for the index.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError, NotFoundError

FORMAT = "placeviz-checkpoint"
VERSION = 1
DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
# TensorFlow's DataTypeString names, which its checkpoint errors use.
_TF_NAMES = {"float16": "half", "float32": "float", "float64": "double"}


def exists(prefix: str) -> bool:
    return os.path.isfile(prefix + INDEX_SUFFIX)


def files(prefix: str) -> list[str]:
    """The files one checkpoint occupies (what ``max_to_keep`` deletes)."""
    return [prefix + INDEX_SUFFIX, prefix + DATA_SUFFIX]


def write(prefix: str, tensors: Mapping[str, Any]) -> None:
    """Write ``{name: array}`` (NumPy arrays; strings as object arrays of bytes) as a checkpoint."""
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)  # as TF's SaveV2
    index: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for i, (name, value) in enumerate(tensors.items()):
        array = np.asarray(value)
        entry: dict[str, Any] = {"shape": list(array.shape)}
        if array.dtype == object:
            entry["dtype"] = dtypes.string.name
            entry["strings"] = [base64.b64encode(_as_bytes(s)).decode() for s in array.flat]
        else:
            entry["dtype"] = dtypes.as_dtype(array.dtype).name
            entry["key"] = key = f"t{i}"
            arrays[key] = array
        index[name] = entry
    write_atomically(prefix + DATA_SUFFIX, lambda f: np.savez(f, **arrays))
    document = {"format": FORMAT, "version": VERSION, "tensors": index}
    write_atomically(prefix + INDEX_SUFFIX, lambda f: f.write(json.dumps(document).encode()))


def read_index(prefix: str) -> dict[str, dict[str, Any]]:
    """Each tensor's entry (``dtype``, ``shape``) by name."""
    try:
        with open(prefix + INDEX_SUFFIX, "rb") as f:
            document = json.loads(f.read())
    except FileNotFoundError:
        raise NotFoundError(
            f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for "
            f"{prefix}"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidArgumentError(f"{prefix}{INDEX_SUFFIX} is not a placeviz checkpoint index")
    return document["tensors"]


def read(prefix: str, names: Sequence[str], expected: Sequence[dtypes.DType]) -> list[np.ndarray]:
    """The tensors ``names`` of a checkpoint, each checked against the dtype the graph expects."""
    index = read_index(prefix)
    out: list[np.ndarray] = []
    with np.load(prefix + DATA_SUFFIX, allow_pickle=False) as data:
        for name, dtype in zip(names, expected):
            entry = index.get(name)
            if entry is None:
                raise NotFoundError(f"Key {name} not found in checkpoint")
            if entry["dtype"] != dtype.name:
                raise InvalidArgumentError(
                    f"tensor_name = {name}; expected dtype {_tf_name(dtype.name)} does not equal "
                    f"original dtype {_tf_name(entry['dtype'])}"
                )
            out.append(_entry_value(entry, data))
    return out


def _tf_name(dtype_name: str) -> str:
    return _TF_NAMES.get(dtype_name, dtype_name)


def _entry_value(entry: Mapping[str, Any], data: Any) -> np.ndarray:
    if "strings" in entry:
        flat = np.empty(len(entry["strings"]), dtype=object)
        flat[:] = [base64.b64decode(s) for s in entry["strings"]]
        return flat.reshape(entry["shape"])
    return data[entry["key"]]


def _as_bytes(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def write_atomically(path: str, fill: Callable[[Any], Any]) -> None:
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            fill(f)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
