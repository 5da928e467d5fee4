"""Record which ops real TensorFlow runs in one training step of each zoo model, as
tests/conformance/step_ops.json.

Run with TensorFlow's venv (TensorFlow is never a dependency of placeviz):

    TF_USE_LEGACY_KERAS=1 /work/tfvenv/bin/python scripts/record_tf_step_ops.py

Each model of ``placeviz.examples.zoo`` is built against ``tf.compat.v1`` at its small default
size, on the CPU (``gpus=0``, no device scopes), and one step of its ``train_op`` is run with
``FULL_TRACE``: the op names in its step stats are what TensorFlow's executor ran after grappler
rewrote the graph (a NoOp that grappler made of an op whose outputs nothing read, or an op it
folded or removed, does not run). tests/test_unread_ops.py checks placeviz against them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "conformance" / "step_ops.json"


def _zoo():
    """placeviz's zoo module from its file (importing placeviz would import more than it)."""
    spec = importlib.util.spec_from_file_location("zoo", ROOT / "placeviz/examples/zoo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["zoo"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow

    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    zoo = _zoo()
    recorded = {}
    for name, build in zoo.ZOO.items():
        graph = tf.Graph()
        with graph.as_default():
            model = build(tf, gpus=0, pin=False)
            init = tf.global_variables_initializer()
        config = tf.ConfigProto(device_count={"GPU": 0})
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(init)
            metadata = tf.RunMetadata()
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            sess.run(model.train_op, model.feed, options=options, run_metadata=metadata)
        ran = {n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats}
        ops = {op.name for op in graph.get_operations()}
        recorded[name] = sorted(ran & ops)  # without the executor's own (_SOURCE, Recv...)
        print(f"{name}: {len(recorded[name])} of {len(ops)} ops ran")
    facts = {"tensorflow_version": tensorflow.__version__, "ran": recorded}
    OUT.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
