"""placeviz against the facts real TensorFlow recorded for each conformance program (issue 11).

The facts come from ``scripts/record_tf_facts.py`` (see README.md); TensorFlow is not needed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import placeviz as pv
from conformance.compare import differences
from conformance.harness import Backend, collect
from conformance.programs import PROGRAMS

RECORDED = json.loads((Path(__file__).parent / "facts.json").read_text())

# Why placeviz differs, one line per kind; "item N" is issue 11's list, "not listed" are
# differences this harness found outside it.
VARIABLE_READS = (
    "item 1: a read ordered after an assign by a control dependency sees the old value "
    "(TF's v/read forwards the variable's buffer)"
)
VARIABLE_TYPE = "item 4: variables are 'Variable' with float32 outputs, not VariableV2/float32_ref"
IMPLICIT_CONSTANTS = (
    "item 4: implicit constants are Const_N, or attributes, not add/y, Mul/x, transpose/perm, "
    "concat/axis, ExpandDims/dim, Reshape/shape, split/split_dim, Sum/reduction_indices, "
    "GatherV2/axis, Slice/begin, Assign/value inputs"
)
CPU_COUNT = "item 3: ConfigProto(device_count={'CPU': 4}) makes no CPU:1..3"
GROUP_PER_DEVICE = (
    "item 3: tf.group (global_variables_initializer, an optimizer's step) puts one NoOp per "
    "device, on the inputs' device, not in the caller's device scope"
)
DEVICE_FUNCTION_RESULT = (
    "item 5: a device function's result is stored canonicalised, not as returned; None from "
    "it raises TypeError in TF"
)
READ_VALUE_NAME = "item 4: read_value() is v/read_1, not read"
CONTROL_ON_VARIABLE = "item 4: control_dependencies([v]) adds v/read, not the variable op v"
TUPLE = "item 4: tf.tuple is missing (tuple/control_dependency, used by optimizers' gating)"
GRAD_YS = "item 4: gradients' seed is Const gradients/Fill, not Fill gradients/grad_ys_0"
ADAM_NAMES = "item 4: Adam's beta power updates are Adam/update_beta*, not Adam/Assign*"
GRADIENT_GRAPH = (
    "not listed: gradient graphs differ (Sum's gradient is BroadcastTo, not Reshape+Tile; "
    "Mul_1 input order; AddN colocation attr; broadcast add's gradient Sum keeps dims in TF)"
)
MISSING_OPERATORS = (
    "not listed: no //, %, <, <=, >, t[i], tf.logical_and, string constants, "
    "Variable.initialized_value, ClusterSpec.as_cluster_def"
)
RANDOM_OP_GRAPH = (
    "not listed: random_normal/uniform are one op, not RandomStandardNormal*stddev+mean (or "
    "RandomUniformInt for ints) under random_normal/ with shape/mean/stddev constants"
)
INT_TRUEDIV_CASTS = "not listed: int / int has no truediv/Cast ops to float64"
DIV_ON_INTS = "not listed: tf.div on ints is floor division to int32 in TF, true division here"
ADD_N_OF_ONE = "not listed: add_n([x]) returns x itself in TF, an AddN op here"
CONCAT_OF_ONE = "not listed: concat([x]) is an Identity concat/concat in TF, a ConcatV2 here"
LIKE_OPS = (
    "not listed: zeros_like of a constant is a Const in TF, ones_like a Fill of its Shape; "
    "ZerosLike/OnesLike here"
)
PLACE_WHOLE_GRAPH = (
    "not listed: TF places the whole graph at the first run, so an unplaceable op fails every "
    "run; placeviz fails only the runs that need it"
)
DEVICE_SPEC_MERGE = "not listed: DeviceSpec.merge_from does not update the spec in place"
SLOT_COLOCATION = (
    "not listed: a slot's initializer is colocated with the variable and the slot; TF: only "
    "the variable (loc:@w)"
)
ERROR_MESSAGES = (
    "not listed: error class or key words differ (shape/reshape/gather/fetch/feed messages, "
    "OperatorNotAllowedInGraphError, 'Expected int32', get_variable wording)"
)


def because(*reasons: str) -> str:
    return "; ".join(reasons)


# Where placeviz differs from TensorFlow today. Each entry fails strictly: when placeviz is fixed
# the test XPASSes, which fails the suite until the entry goes.
KNOWN_DIFFERENCES: dict[str, str] = {
    "array_concat_axis0": IMPLICIT_CONSTANTS,
    "array_concat_axis1": IMPLICIT_CONSTANTS,
    "array_concat_negative_axis": IMPLICIT_CONSTANTS,
    "array_concat_one": CONCAT_OF_ONE,
    "array_expand_dims_0": IMPLICIT_CONSTANTS,
    "array_expand_dims_last": IMPLICIT_CONSTANTS,
    "array_gather": IMPLICIT_CONSTANTS,
    "array_gather_axis1": IMPLICIT_CONSTANTS,
    "array_gather_rows": IMPLICIT_CONSTANTS,
    "array_getitem_index": MISSING_OPERATORS,
    "array_getitem_slice": MISSING_OPERATORS,
    "array_ones_like_int": LIKE_OPS,
    "array_reshape": IMPLICIT_CONSTANTS,
    "array_reshape_minus_one": IMPLICIT_CONSTANTS,
    "array_reshape_to_scalar": IMPLICIT_CONSTANTS,
    "array_slice": IMPLICIT_CONSTANTS,
    "array_slice_minus_one": IMPLICIT_CONSTANTS,
    "array_split_axis1": IMPLICIT_CONSTANTS,
    "array_split_num": IMPLICIT_CONSTANTS,
    "array_split_sizes": IMPLICIT_CONSTANTS,
    "array_transpose_default": IMPLICIT_CONSTANTS,
    "array_transpose_perm": IMPLICIT_CONSTANTS,
    "array_zeros_like": LIKE_OPS,
    "colocation_variable_assign_requested_elsewhere": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "const_string": because(IMPLICIT_CONSTANTS, MISSING_OPERATORS),
    "control_dependencies_run_side_effect": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "cpus4_device_function_returning_none": because(CPU_COUNT, DEVICE_FUNCTION_RESULT),
    "cpus4_unpinned_ops_go_to_cpu0": IMPLICIT_CONSTANTS,
    "device_setter_runs_locally": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, CPU_COUNT),
    "device_setter_variable_ops": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "device_spec_merge": DEVICE_SPEC_MERGE,
    "error_add_shapes": ERROR_MESSAGES,
    "error_assign_shape": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, ERROR_MESSAGES),
    "error_concat_scalars": IMPLICIT_CONSTANTS,
    "error_concat_shapes": because(IMPLICIT_CONSTANTS, ERROR_MESSAGES),
    "error_constant_float_to_int": ERROR_MESSAGES,
    "error_feed_unknown_name": ERROR_MESSAGES,
    "error_fetch_from_other_graph": ERROR_MESSAGES,
    "error_fetch_unknown_name": ERROR_MESSAGES,
    "error_gather_out_of_range": ERROR_MESSAGES,
    "error_get_variable_without_shape": ERROR_MESSAGES,
    "error_iterate_tensor": ERROR_MESSAGES,
    "error_reduce_axis": because(IMPLICIT_CONSTANTS, ERROR_MESSAGES),
    "error_reshape_at_run_time": ERROR_MESSAGES,
    "error_reshape_size": because(IMPLICIT_CONSTANTS, ERROR_MESSAGES),
    "error_split_uneven": IMPLICIT_CONSTANTS,
    "error_tensor_as_bool": ERROR_MESSAGES,
    "error_uninitialized_variable_fetched": VARIABLE_TYPE,
    "error_unused_op_on_missing_device_fails_the_run": PLACE_WHOLE_GRAPH,
    "gradients_add_broadcast": because(IMPLICIT_CONSTANTS, GRAD_YS, GRADIENT_GRAPH),
    "gradients_colocated_with_ops": because(IMPLICIT_CONSTANTS, CPU_COUNT, GRAD_YS, GRADIENT_GRAPH),
    "gradients_grad_ys": because(GRAD_YS, GRADIENT_GRAPH),
    "gradients_name_scope": because(GRAD_YS, GRADIENT_GRAPH),
    "gradients_not_colocated": because(IMPLICIT_CONSTANTS, CPU_COUNT, GRAD_YS, GRADIENT_GRAPH),
    "gradients_of_variable": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, GRAD_YS, GRADIENT_GRAPH),
    "gradients_relu_sigmoid": because(IMPLICIT_CONSTANTS, GRAD_YS, GRADIENT_GRAPH),
    "gradients_square": because(IMPLICIT_CONSTANTS, GRAD_YS, GRADIENT_GRAPH),
    "gradients_two_paths": because(GRAD_YS, GRADIENT_GRAPH),
    "gradients_unconnected_is_none": because(IMPLICIT_CONSTANTS, GRAD_YS, GRADIENT_GRAPH),
    "group_runs_all": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "math_add_n_one": ADD_N_OF_ONE,
    "math_div_fn_alias": DIV_ON_INTS,
    "math_floordiv_floats": MISSING_OPERATORS,
    "math_floordiv_ints": MISSING_OPERATORS,
    "math_greater": MISSING_OPERATORS,
    "math_less_equal": MISSING_OPERATORS,
    "math_mod_ints": MISSING_OPERATORS,
    "math_truediv_fn": INT_TRUEDIV_CASTS,
    "math_truediv_ints_gives_float64": INT_TRUEDIV_CASTS,
    "names_concat": IMPLICIT_CONSTANTS,
    "names_expand_dims": IMPLICIT_CONSTANTS,
    "names_gather": IMPLICIT_CONSTANTS,
    "names_reduce_mean_keepdims": IMPLICIT_CONSTANTS,
    "names_reduce_sum": IMPLICIT_CONSTANTS,
    "names_reshape": IMPLICIT_CONSTANTS,
    "names_split": IMPLICIT_CONSTANTS,
    "names_tensor_attributes": IMPLICIT_CONSTANTS,
    "names_tensor_names": IMPLICIT_CONSTANTS,
    "names_transpose": IMPLICIT_CONSTANTS,
    "names_tuple": TUPLE,
    "names_variable_assign": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "names_variable_assign_add": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "optimizer_adam_placement": because(
        VARIABLE_TYPE,
        IMPLICIT_CONSTANTS,
        CPU_COUNT,
        GROUP_PER_DEVICE,
        TUPLE,
        GRAD_YS,
        ADAM_NAMES,
        GRADIENT_GRAPH,
        RANDOM_OP_GRAPH,
        SLOT_COLOCATION,
    ),
    "optimizer_adam_step": because(
        VARIABLE_TYPE,
        IMPLICIT_CONSTANTS,
        TUPLE,
        GRAD_YS,
        ADAM_NAMES,
        GRADIENT_GRAPH,
        RANDOM_OP_GRAPH,
        SLOT_COLOCATION,
    ),
    "optimizer_adam_variables": because(
        VARIABLE_TYPE,
        IMPLICIT_CONSTANTS,
        TUPLE,
        GRAD_YS,
        ADAM_NAMES,
        GRADIENT_GRAPH,
        RANDOM_OP_GRAPH,
        SLOT_COLOCATION,
    ),
    "optimizer_colocate_gradients": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, CPU_COUNT, GROUP_PER_DEVICE, GRAD_YS, GRADIENT_GRAPH
    ),
    "optimizer_compute_and_apply": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS, GRADIENT_GRAPH
    ),
    "optimizer_global_step": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS, GRADIENT_GRAPH
    ),
    "optimizer_gradient_descent_step": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS, GRADIENT_GRAPH
    ),
    "optimizer_gradient_descent_two_steps": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS, GRADIENT_GRAPH
    ),
    "optimizer_momentum_step": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS, GRADIENT_GRAPH, SLOT_COLOCATION
    ),
    "optimizer_slot_names": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS, GRADIENT_GRAPH, SLOT_COLOCATION
    ),
    "optimizer_slots_follow_variable": because(
        VARIABLE_TYPE,
        IMPLICIT_CONSTANTS,
        CPU_COUNT,
        GROUP_PER_DEVICE,
        TUPLE,
        GRAD_YS,
        GRADIENT_GRAPH,
        SLOT_COLOCATION,
    ),
    "optimizer_under_device_scope": because(
        VARIABLE_TYPE,
        IMPLICIT_CONSTANTS,
        CPU_COUNT,
        GROUP_PER_DEVICE,
        TUPLE,
        GRAD_YS,
        GRADIENT_GRAPH,
    ),
    "optimizer_var_list": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, TUPLE, GRAD_YS),
    "placer_reference_edge_with_conflicting_pin": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, CPU_COUNT, DEVICE_FUNCTION_RESULT
    ),
    "placer_reference_edge_with_conflicting_pin_soft": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, CPU_COUNT, DEVICE_FUNCTION_RESULT
    ),
    "random_uniform_bounds": because(IMPLICIT_CONSTANTS, MISSING_OPERATORS, RANDOM_OP_GRAPH),
    "random_uniform_int": because(IMPLICIT_CONSTANTS, MISSING_OPERATORS, RANDOM_OP_GRAPH),
    "reduce_max_all": IMPLICIT_CONSTANTS,
    "reduce_max_axis0": IMPLICIT_CONSTANTS,
    "reduce_mean_all": IMPLICIT_CONSTANTS,
    "reduce_mean_axis1": IMPLICIT_CONSTANTS,
    "reduce_mean_ints_truncates": IMPLICIT_CONSTANTS,
    "reduce_min_axis1": IMPLICIT_CONSTANTS,
    "reduce_sum_all": IMPLICIT_CONSTANTS,
    "reduce_sum_axis0": IMPLICIT_CONSTANTS,
    "reduce_sum_axis1_keepdims": IMPLICIT_CONSTANTS,
    "reduce_sum_axis_list": IMPLICIT_CONSTANTS,
    "reduce_sum_ints": IMPLICIT_CONSTANTS,
    "reduce_sum_named": IMPLICIT_CONSTANTS,
    "reduce_sum_negative_axis": IMPLICIT_CONSTANTS,
    "session_eval_shape_attributes": IMPLICIT_CONSTANTS,
    "tuple_gates_values": TUPLE,
    "variable_add_after_assign_with_control_dependency": because(
        VARIABLE_READS, VARIABLE_TYPE, IMPLICIT_CONSTANTS
    ),
    "variable_assign_add_method": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "variable_assign_add_twice": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "variable_assign_method": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, READ_VALUE_NAME),
    "variable_assign_requested_elsewhere_follows_variable": because(
        VARIABLE_TYPE, IMPLICIT_CONSTANTS, CPU_COUNT
    ),
    "variable_assign_returns_new_value": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "variable_assign_then_read_in_next_run": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS),
    "variable_initialized_value": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, MISSING_OPERATORS),
    "variable_read_after_assign_with_control_dependency": because(
        VARIABLE_READS, VARIABLE_TYPE, IMPLICIT_CONSTANTS
    ),
    "variable_read_value_after_assign": because(VARIABLE_TYPE, IMPLICIT_CONSTANTS, READ_VALUE_NAME),
}


def _placement(sess: Any) -> dict[str, str]:
    return dict(sess.placement)


def _case(name: str) -> Any:
    reason = KNOWN_DIFFERENCES.get(name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_case(name) for name in PROGRAMS])
def test_placeviz_shows_what_tensorflow_showed(name: str) -> None:
    assert name in RECORDED["programs"], f"{name} has no recorded facts: re-record (README.md)"
    pv.config.simulate_gpus(0)
    program = PROGRAMS[name]
    facts = collect(program, Backend(pv, _placement))
    found = differences(program, RECORDED["programs"][name], facts)
    assert not found, f"{name} (programs.py:{program.line}) differs from TensorFlow " + (
        f"{RECORDED['tensorflow_version']}:\n  " + "\n  ".join(found)
    )


def test_every_recorded_program_is_declared() -> None:
    assert sorted(set(RECORDED["programs"]) - set(PROGRAMS)) == []


def test_known_differences_name_declared_programs() -> None:
    assert sorted(set(KNOWN_DIFFERENCES) - set(PROGRAMS)) == []
