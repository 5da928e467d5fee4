"""CuPy on real GPUs. Only imported when a session has a real GPU device."""

from __future__ import annotations

from typing import Any

from placeviz.devices import cuda


def cupy() -> Any:
    module = cuda.cupy_module()
    if module is None:
        raise RuntimeError("A real GPU device needs CuPy: pip install 'placeviz[cuda12]'")
    return module
