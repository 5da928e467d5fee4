"""The names TensorFlow 1 has in placeviz's namespaces, as recorded from TF 2.21's
``tf.compat.v1`` (scripts/record_tf_api.py writes ``tf1_names.txt`` beside this module).

Read on the first missing name, never by ``import placeviz``, and never from TensorFlow itself.
"""

from __future__ import annotations

import functools
from pathlib import Path

FILE = Path(__file__).with_name("tf1_names.txt")


@functools.cache
def recorded() -> frozenset[str]:
    """Every recorded name, dotted from ``tf.compat.v1`` (``"nn.conv3d"``, ``"image"``)."""
    lines = FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def in_namespace(path: str) -> frozenset[str]:
    """The names TensorFlow 1 has directly in one namespace (``"nn"`` -> ``{"conv3d", ...}``)."""
    prefix = f"{path}." if path else ""
    rest = (name[len(prefix) :] for name in recorded() if name.startswith(prefix))
    return frozenset(name for name in rest if "." not in name)
