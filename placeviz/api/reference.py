"""docs/api.md, written from the public namespaces and the op registry: every name placeviz has
per namespace and each op type's kernels per device type and dtype, so the reference cannot
drift from the code (scripts/generate_api_docs.py writes it; tests/test_api_docs.py fails when
the committed file is stale). ``import placeviz`` does not import this module.
"""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

from placeviz import dtypes
from placeviz.api import tf1_names
from placeviz.api.namespaces import NAMESPACES, module_name, public_names, tf_name
from placeviz.graph import registry

PATH = Path(__file__).resolve().parents[2] / "docs" / "api.md"
OWN = "†"

HEADER = f"""# placeviz's API

<!-- Written by scripts/generate_api_docs.py from placeviz/api/namespaces.py and the op
registry; tests/test_api_docs.py fails when this file is stale. Do not edit by hand. -->

Every public name placeviz has, per namespace, and every op type with the dtypes each device
type has a kernel for. A name TensorFlow 1 has (TensorFlow 2.21's `tf.compat.v1`, recorded in
`placeviz/api/tf1_names.txt`) that is not listed here raises an `AttributeError` saying placeviz
does not implement it yet; any other missing name (a typo) raises Python's usual one.
{OWN} marks a name `tf.compat.v1` does not have: placeviz's own, or TensorFlow 1.x's `contrib`.
"""


def markdown() -> str:
    """The whole of docs/api.md."""
    parts = [HEADER, "## Namespaces\n", *(_namespace(path) for path in NAMESPACES), _op_types()]
    return "\n".join(parts)


def _namespace(path: str) -> str:
    names = public_names(path, importlib.import_module(module_name(path)))
    tf_names = tf1_names.in_namespace(path)
    ours = [f"`{name}`" if name in tf_names else f"`{name}`{OWN}" for name in names]
    if tf_names:
        mirrored = sum(name in tf_names for name in names)
        counts = f"`{tf_name(path)}`: {mirrored} of TensorFlow 1's {len(tf_names)} names"
    else:
        counts = "no TensorFlow 2.21 counterpart"
    title = f"### `{module_name(path).replace('placeviz', 'pv', 1)}`"
    listed = textwrap.fill(", ".join(ours), 100, break_long_words=False, break_on_hyphens=False)
    return f"{title}\n\n{counts}.\n\n{listed}\n"


def _op_types() -> str:
    rows = ["| Op type | " + " | ".join(registry.DEVICE_TYPES) + " |"]
    rows.append("|---" * (1 + len(registry.DEVICE_TYPES)) + "|")
    for op_def in registry.op_defs():
        cells = [_dtypes(op_def.supported.get(device)) for device in registry.DEVICE_TYPES]
        rows.append(f"| `{op_def.type}` | " + " | ".join(cells) + " |")
    return (
        "## Op types\n\n"
        "The dtypes each device type has a kernel for, as TensorFlow registers them (the input's\n"
        "dtype for comparisons); an op asked for a device type without its kernel needs soft\n"
        "placement.\n\n" + "\n".join(rows) + "\n"
    )


def _dtypes(supported: frozenset[dtypes.DType] | None) -> str:
    if not supported:
        return "—"
    return ", ".join(d.name for d in dtypes.ALL if d in supported)
