"""Record which ops real TensorFlow runs in one training step of each zoo model, as
tests/conformance/step_ops.json.

Run with TensorFlow's venv (TensorFlow is never a dependency of placeviz):

    TF_USE_LEGACY_KERAS=1 /work/tfvenv/bin/python scripts/record_tf_step_ops.py

Each model of ``placeviz.examples.zoo`` is built against ``tf.compat.v1`` at its small default
size, on the CPU (``gpus=0``, no device scopes), as is each of tests/conformance/step_programs.py,
and one step of its ``train_op`` is run with
``FULL_TRACE``: the op names in its step stats are what TensorFlow's executor ran after grappler
rewrote the graph (a NoOp that grappler made of an op whose outputs nothing read, or an op it
removed, does not run), and those whose kernel there was ``Const`` are the ones it folded into
constants. tests/test_unread_ops.py and tests/test_folded_ops.py check placeviz against them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "conformance" / "step_ops.json"


def _module(name: str, path: Path) -> Any:
    """A module from its file (importing placeviz would import more than the zoo needs)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _ran(tf: Any, graph: Any, train_op: Any, feed: dict[Any, Any]) -> tuple[list[str], list[str]]:
    """The ops of ``graph`` that TensorFlow's executor ran in one step of ``train_op``, and
    those of them it ran as a constant (grappler folded them: the step stats' label names the
    kernel that ran, ``concat_1 = Const()``)."""
    with graph.as_default():
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_count={"GPU": 0})
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        metadata = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        sess.run(train_op, feed, options=options, run_metadata=metadata)
    types = {op.name: op.type for op in graph.get_operations()}  # not _SOURCE, Recv...
    ran, folded = set(), set()
    for device in metadata.step_stats.dev_stats:
        for node in device.node_stats:
            if node.node_name not in types:
                continue
            ran.add(node.node_name)
            kernel = node.timeline_label.partition(" = ")[2].partition("(")[0]
            if kernel == "Const" and types[node.node_name] != "Const":
                folded.add(node.node_name)
    return sorted(ran), sorted(folded)


def main() -> None:
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow

    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    zoo = _module("zoo", ROOT / "placeviz/examples/zoo.py")
    steps = _module("step_programs", ROOT / "tests/conformance/step_programs.py")
    recorded, folded = {}, {}
    for name, build in zoo.ZOO.items():
        graph = tf.Graph()
        with graph.as_default():
            model = build(tf, gpus=0, pin=False)
        recorded[name], folded[name] = _ran(tf, graph, model.train_op, model.feed)
    for name, program in steps.STEP_PROGRAMS.items():
        graph = tf.Graph()
        with graph.as_default():
            train_op, _loss, feed = program(tf)
        recorded[name], folded[name] = _ran(tf, graph, train_op, feed)
    for name, ran in recorded.items():
        print(f"{name}: {len(ran)} ops ran, {len(folded[name])} of them folded into constants")
    facts = {"tensorflow_version": tensorflow.__version__, "ran": recorded, "folded": folded}
    OUT.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
