"""Record the public names of TensorFlow 1's API in the namespaces placeviz mirrors, as
placeviz/api/tf1_names.txt (read by placeviz/api/tf1_names.py when a name is missing).

Run with TensorFlow's venv (TensorFlow is never a dependency of placeviz):

    /work/tfvenv/bin/python scripts/record_tf_api.py

TF 1 code reaches this API as ``tf.compat.v1``; its ``keras`` and ``layers`` are Keras 2's
(tf_keras, through TF_USE_LEGACY_KERAS=1), as TF 1 code knows them. A namespace TF 2.21 lacks
(placeviz's ``placement``, TF 1.x's ``contrib``) is named in the file's header.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "placeviz" / "api" / "tf1_names.txt"
sys.path.insert(0, str(ROOT))


def main() -> None:
    os.environ["TF_USE_LEGACY_KERAS"] = "1"  # read by TensorFlow's import, so set before it
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from placeviz.api.namespaces import NAMESPACES, child

    names: list[str] = []
    absent: list[str] = []
    for path in NAMESPACES:
        module = tf.compat.v1
        for part in filter(None, path.split(".")):
            module = getattr(module, part, None)
        if module is None:
            absent.append(path)
            continue
        names += [child(path, name) for name in dir(module) if not name.startswith("_")]
    header = [
        f"# The public names of TensorFlow {tf.__version__}'s tf.compat.v1 (Keras 2 for keras and",
        "# layers) in the namespaces placeviz mirrors, one per line, relative to tf.compat.v1.",
        "# Written by scripts/record_tf_api.py; placeviz/api/missing.py reads it.",
        f"# Not in this TensorFlow: {', '.join(absent) or 'none'}",
    ]
    OUT.write_text("\n".join([*header, *sorted(set(names))]) + "\n", encoding="utf-8")
    print(f"{len(set(names))} names in {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
