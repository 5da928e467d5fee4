"""placeviz against the facts real TensorFlow recorded for each conformance program (issue 11).

The facts come from ``scripts/record_tf_facts.py`` (see README.md); TensorFlow is not needed here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import placeviz as pv
from conformance.compare import differences
from conformance.harness import Backend, collect
from conformance.programs import PROGRAMS

RECORDED = json.loads((Path(__file__).parent / "facts.json").read_text())

# Why placeviz differs, one line per kind; "item N" is issue 11's list, "not listed" are
# differences this harness found outside it. Every program below fails for each reason it
# names (scripts/record_tf_facts.py records; the differences were read from each program's diff).

DENSE_GATHER_GRADIENT = (
    "documented difference: GatherV2's gradient is dense here (UnsortedSegmentSum); TensorFlow's "
    "is an IndexedSlices, fetched as (values, indices, dense_shape)"
)
DEVICE_SPEC_MERGE = (
    "documented difference: DeviceSpec is immutable (TF 2's), so merge_from returns the "
    "merged spec instead of changing it"
)
PLACE_WHOLE_GRAPH = (
    "documented difference: TensorFlow places the whole graph at the first run, so an "
    "unplaceable op fails every run; placeviz fails only the runs that need it"
)

FED_TRAINING_FLAG = (
    "not listed: a batch_normalization whose `training` is a tensor fed at run time needs "
    "tf.cond's Switch and Merge, which placeviz lacks; it raises NotImplementedError saying so"
)
EMA_INITIALIZED_VALUE = (
    "not listed: ExponentialMovingAverage starts a variable's shadow from its "
    "initialized_value() (a cond on IsVariableInitialized); placeviz's moving averages start it "
    "from the variable's initial value (values compared in train_ema_variables)"
)
KERAS_RESOURCE_VARIABLES = (
    "not listed: TF's Keras layers make resource variables (VarHandleOp, AssignVariableOp, "
    "ReadVariableOp); placeviz's make VariableV2 as tf.layers do (values compared in keras_layer_*)"
)
KERAS_LEARNING_PHASE = (
    "not listed: TF1 Keras picks training or inference at run time with a keras_learning_phase "
    "PlaceholderWithDefault and tf.cond; placeviz's Keras decides when building (fit "
    "builds for training, predict and evaluate for inference; values compared in keras_layer_*)"
)

# Where placeviz differs from TensorFlow today. Each entry fails strictly: when placeviz is fixed
# the test XPASSes, which fails the suite until the entry goes.
KNOWN_DIFFERENCES: dict[str, str] = {
    "bn_layer_training_placeholder": FED_TRAINING_FLAG,
    "cls_embedding_gradient_graph": DENSE_GATHER_GRADIENT,
    "device_spec_merge": DEVICE_SPEC_MERGE,
    "error_unused_op_on_missing_device_fails_the_run": PLACE_WHOLE_GRAPH,
    "keras_graph_dense": KERAS_RESOURCE_VARIABLES,
    "keras_graph_dropout": KERAS_LEARNING_PHASE,
    "gradients_of_gather": DENSE_GATHER_GRADIENT,
    "train_ema_variables_graph": EMA_INITIALIZED_VALUE,
}

# Known differences confined to some ops of a program: those ops' facts are set aside (a
# pattern matched from the start of the op's name) and every other fact is compared. Each
# pattern must still set some difference aside, else the entry must go.
KNOWN_OP_DIFFERENCES: dict[str, tuple[str, str]] = {
    # the embedding's dense gradient: its update, and the tensors the clipping and the global
    # norm read from it (shaped [vocab, width] here, [ids, width] in TF), Adam's control inputs
    "zoo_bert": (
        DENSE_GATHER_GRADIENT,
        r"Adam/update_embeddings/word_embeddings/|gradients/embeddings/embedding_lookup_grad/"
        r"|clip_by_global_norm/(clip_by_global_norm/_0|mul_1)$|global_norm/L2Loss$"
        r"|Adam(/mul(_1)?)?$",
    ),
    # the tied embedding's two gradients: TF sums a dense one and an IndexedSlices with add_n
    # under the variable's colocation, converting the slices first (AddN/inputs_1); here both
    # are dense, summed as dense gradients are, with the first summand's colocation
    "zoo_gpt": (
        DENSE_GATHER_GRADIENT,
        r"gradients/embeddings/embedding_lookup_grad/|gradients/AddN_13(/|$)",
    ),
    # the LSTM language model's embedding gradient, as zoo_bert's: its update, the clipping and
    # the global norm reading it, and the update's group (values, which agree, are compared)
    **{
        name: (
            DENSE_GATHER_GRADIENT,
            r"GradientDescent/update_lm/embedding/|gradients/lm/embedding_lookup_grad/"
            r"|clip_by_global_norm/(clip_by_global_norm/_0|mul_1)$|global_norm/L2Loss$"
            r"|GradientDescent(/NoOp)?$",
        )
        for name in (
            "zoo_lstm",
            "zoo_lstm_trained",
            "zoo_lstm_four_layers_trained",
            "zoo_lstm_layer_per_gpu_soft_placement",
            "zoo_lstm_variational_dropout",
            "zoo_lstm_dynamic",
            "zoo_lstm_dynamic_trained",
        )
    },
    # every shadow variable's initial value: TF's cond and its IsVariableInitialized ops
    "zoo_cifar10": (
        EMA_INITIALIZED_VALUE,
        r"(.*/)?IsVariableInitialized(_\d+)?$|(.*/)?cond(_\d+)?/"
        r"|.*/ExponentialMovingAverage/Assign$",
    ),
}


def _placement(sess: Any) -> dict[str, str]:
    return dict(sess.placement)


def _case(name: str) -> Any:
    reason = KNOWN_DIFFERENCES.get(name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, marks=marks, id=name)


def _confined(name: str) -> Callable[[str], bool]:
    entry = KNOWN_OP_DIFFERENCES.get(name)
    if entry is None:
        return lambda op: False
    pattern = re.compile(entry[1])
    return lambda op: pattern.match(op) is not None


@pytest.mark.parametrize("name", [_case(name) for name in PROGRAMS])
def test_placeviz_shows_what_tensorflow_showed(name: str) -> None:
    assert name in RECORDED["programs"], f"{name} has no recorded facts: re-record (README.md)"
    pv.config.simulate_gpus(0)
    program = PROGRAMS[name]
    facts = collect(program, Backend(pv, _placement))
    recorded = RECORDED["programs"][name]
    set_aside = _confined(name)
    found = differences(program, recorded, facts, set_aside)
    if name in KNOWN_OP_DIFFERENCES:
        unconfined = differences(program, recorded, facts)
        assert len(unconfined) > len(found), f"{name}: {KNOWN_OP_DIFFERENCES[name][0]} is gone"
    assert not found, f"{name} (programs.py:{program.line}) differs from TensorFlow " + (
        f"{RECORDED['tensorflow_version']}:\n  " + "\n  ".join(found)
    )


def test_every_recorded_program_is_declared() -> None:
    assert sorted(set(RECORDED["programs"]) - set(PROGRAMS)) == []


def test_known_differences_name_declared_programs() -> None:
    assert sorted((set(KNOWN_DIFFERENCES) | set(KNOWN_OP_DIFFERENCES)) - set(PROGRAMS)) == []
