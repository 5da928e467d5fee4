"""The public namespaces of placeviz, declared once.

Each is a dotted path both under ``placeviz`` and under TensorFlow's ``tf.compat.v1`` (``"nn"``
is ``pv.nn`` and ``tf.compat.v1.nn``; ``""`` is the top level), so one list serves the
missing-name hook (``missing.py``), the API reference (``reference.py``) and the recording of
TensorFlow's names (scripts/record_tf_api.py). ``contrib`` (TF 1.x's, gone from TF 2) and
``placement`` (placeviz's own) have no counterpart in TF 2.21.
"""

from __future__ import annotations
import __future__

import types

NAMESPACES: tuple[str, ...] = (
    "",
    "config",
    "config.experimental",
    "contrib",
    "contrib.framework",
    "debugging",
    "distribute",
    "errors",
    "keras",
    "keras.backend",
    "keras.initializers",
    "keras.layers",
    "keras.losses",
    "keras.models",
    "keras.optimizers",
    "layers",
    "linalg",
    "math",
    "nn",
    "placement",
    "random",
    "test",
    "train",
)


def module_name(path: str) -> str:
    """``"nn"`` -> ``"placeviz.nn"``."""
    return f"placeviz.{path}" if path else "placeviz"


def child(path: str, name: str) -> str:
    """The path of a name inside a namespace: ``("keras", "layers")`` -> ``"keras.layers"``."""
    return f"{path}.{name}" if path else name


def tf_name(path: str, name: str = "", compat: bool = False) -> str:
    """``("nn", "conv3d")`` -> ``"tf.nn.conv3d"`` (``"tf.compat.v1.nn.conv3d"`` with compat);
    without a name, the namespace's own (``"tf.nn"``)."""
    return ".".join(filter(None, ("tf.compat.v1" if compat else "tf", path, name)))


def public_names(path: str, module: types.ModuleType) -> list[str]:
    """The names a namespace offers its users, sorted: its ``__all__`` where it declares one,
    else every name it binds that is not private, a ``__future__`` import or a submodule other
    than a namespace (``pv.nn`` is one; ``pv.graph`` and ``pv.train.adam`` are placeviz's
    insides). A name only the module's ``__dir__`` lists (a class imported lazily) counts, and
    is not imported here."""
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted(declared)
    bound = vars(module)
    names = []
    for name in dir(module):
        value = bound.get(name)
        if name.startswith("_") or isinstance(value, _FUTURE_FEATURE):
            continue
        if isinstance(value, types.ModuleType) and child(path, name) not in NAMESPACES:
            continue
        names.append(name)
    return names


_FUTURE_FEATURE = type(__future__.annotations)
