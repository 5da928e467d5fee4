"""The AttributeError of a name placeviz lacks: one TensorFlow 1 has is reported as not
implemented yet, pointing to the API reference; any other (a typo) keeps Python's own wording.

Installed as each public namespace's module ``__getattr__`` (PEP 562), which Python calls only
for names the module does not bind, so ``hasattr`` and ``getattr(..., default)`` work as before
and found names cost nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

from placeviz.api import tf1_names
from placeviz.api.namespaces import NAMESPACES, child, module_name, tf_name

API_DOCS = "docs/api.md"


def attribute_error(path: str, name: str) -> AttributeError:
    """The error for ``name`` missing from the namespace at ``path``."""
    plain = f"module {module_name(path)!r} has no attribute {name!r}"
    if name.startswith("_") or child(path, name) not in tf1_names.recorded():
        # name and obj let Python's traceback suggest the name the user may have meant.
        return AttributeError(plain, name=name, obj=sys.modules[module_name(path)])
    return AttributeError(
        f"{plain}: placeviz does not implement TensorFlow 1's {tf_name(path, name)} "
        f"({tf_name(path, name, compat=True)}) yet; {API_DOCS} in placeviz's repository "
        "lists what it implements",
        name=name,
    )


class MissingName:
    """A namespace's ``__getattr__``: asks the module's own first (a lazy import), if it had one."""

    def __init__(self, path: str, own: Callable[[str], object] | None) -> None:
        self.path = path
        self.own = own

    def __call__(self, name: str) -> object:
        if self.own is not None:
            try:
                return self.own(name)
            except AttributeError:
                pass
        raise attribute_error(self.path, name)


def install() -> None:
    """Give every public namespace the hook (``import placeviz`` calls this last; idempotent)."""
    for path in NAMESPACES:
        module = importlib.import_module(module_name(path))
        own = vars(module).get("__getattr__")
        if not isinstance(own, MissingName):
            module.__getattr__ = MissingName(path, own)
