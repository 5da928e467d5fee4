"""Placeholders, variables' ops (VariableV2, Assign, AssignAdd), Identity, NoOp and group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError, describe_op
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, as_graph_element, get_default_graph
from placeviz.graph.ops._build import make_op, op_scope, same_dtype, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.registry import OpDef, free_cost, memory_cost
from placeviz.graph.shapes import ShapeError, as_shape

# TensorFlow registers no GPU kernel for int32 variables (they live in host memory); the seeds
# rely on it: `with device('/gpu:0'): Variable(3)` cannot be placed.
VARIABLE_KERNELS = {
    "CPU": frozenset(dtypes.ALL),
    "GPU": registry.except_dtypes(dtypes.int32, dtypes.string),
}


# -- Placeholder -------------------------------------------------------------------------------
def _infer_placeholder(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    return single(attrs["shape"], attrs["dtype"])


def _placeholder_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def unfed() -> Any:
        raise InvalidArgumentError(missing_feed_message(op), op=op)

    return unfed


def missing_feed_message(op: Operation) -> str:
    shape = op.attrs["shape"]
    dims = "<unknown>" if shape.dims is None else shape
    return (
        f"You must feed a value for placeholder tensor '{op.name}' with dtype "
        f"{op.attrs['dtype'].name} and shape {dims} ({describe_op(op)})"
    )


registry.register(
    OpDef(
        type="Placeholder",
        infer=_infer_placeholder,
        kernel=_placeholder_kernel,
        cost=free_cost,
        needs_feed=True,
    )
)


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Tensor:
    """A value fed at run time; ``shape`` may leave dimensions (or the rank) unknown."""
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)}
    return make_op("Placeholder", [], name or "Placeholder", attrs).outputs[0]


# -- Variable ----------------------------------------------------------------------------------
def _infer_variable(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    return single(attrs["shape"], attrs["dtype"]._as_ref)  # TF1: a variable is float32_ref


def _variable_kernel(xp: Any, op: Operation, state: Any) -> Any:
    slot = state.variable_slot(op)
    return lambda: slot


registry.register(
    OpDef(
        type="VariableV2",  # TF1's reference variable op since TF 1.0
        infer=_infer_variable,
        kernel=_variable_kernel,
        cost=free_cost,
        supported=VARIABLE_KERNELS,
        ref_output=True,
        stateful=True,
        fixed_output=True,
    )
)


def variable_op(shape: Any, dtype: Any, name: str | None = None) -> Operation:
    attrs = {"shape": as_shape(shape), "dtype": dtypes.as_dtype(dtype)}
    return make_op("VariableV2", [], name or "Variable", attrs)


# -- Assign, AssignAdd -------------------------------------------------------------------------
def _infer_assign(op_type: str) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        ref, value = inputs
        if not ref.op.op_def.ref_output:
            raise TypeError(f"{op_type} needs a variable as its first input, got '{ref.name}'")
        same_dtype(op_type, inputs, ("ref", "value"))
        if attrs.get("validate_shape", True) and not ref.shape.is_compatible_with(value.shape):
            ranks = (ref.shape.ndims, value.shape.ndims)
            equal = (
                "equal rank, but are {} and {}".format(*ranks) if ranks[0] != ranks[1] else "equal"
            )
            raise ShapeError(  # TF's words first
                f"Shapes must be {equal}: the variable has shape {ref.shape} and the value "
                f"{value.shape}"
            )
        if op_type != "Assign":
            return single(ref.shape, ref.dtype)
        if not attrs.get("validate_shape", True):
            return single(value.shape, ref.dtype)
        return single(ref.shape.merge_with(value.shape), ref.dtype)  # TF's: what either knows

    return infer


def _assign_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda slot, value: slot.assign(value)


def _assign_add_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda slot, value: slot.assign(xp.add(slot.read(), value))


def _assign_sub_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda slot, value: slot.assign(xp.subtract(slot.read(), value))


for _type, _kernel in (
    ("Assign", _assign_kernel),
    ("AssignAdd", _assign_add_kernel),
    ("AssignSub", _assign_sub_kernel),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_assign(_type),
            kernel=_kernel,
            cost=memory_cost,
            supported=VARIABLE_KERNELS,
            stateful=True,
        )
    )


def assign(ref: Any, value: Any, validate_shape: bool = True, name: str | None = None) -> Tensor:
    ref_tensor = _ref_tensor(ref)
    with op_scope(name or "Assign", (ref_tensor,)) as scope:
        tensor = convert_to_tensor(value, dtype=ref_tensor.dtype.base_dtype, name="value")
        with _colocated(ref_tensor.op):  # the op that takes the reference, not its value (TF)
            op = make_op("Assign", [ref_tensor, tensor], scope, {"validate_shape": validate_shape})
    return op.outputs[0]


def assign_add(ref: Any, value: Any, name: str | None = None) -> Tensor:
    return _assign_update("AssignAdd", ref, value, name)


def assign_sub(ref: Any, value: Any, name: str | None = None) -> Tensor:
    return _assign_update("AssignSub", ref, value, name)


def _assign_update(op_type: str, ref: Any, value: Any, name: str | None) -> Tensor:
    ref_tensor = _ref_tensor(ref)
    with op_scope(name or op_type, (ref_tensor,)) as scope:
        tensor = convert_to_tensor(value, dtype=ref_tensor.dtype.base_dtype, name="value")
        with _colocated(ref_tensor.op):
            op = make_op(op_type, [ref_tensor, tensor], scope)
    return op.outputs[0]


def _ref_tensor(ref: Any) -> Tensor:
    variable_ref = getattr(ref, "_ref", None)
    if variable_ref is not None:
        return variable_ref
    tensor = as_graph_element(ref)
    if not isinstance(tensor, Tensor) or not tensor.op.op_def.ref_output:
        raise TypeError(f"Expected a variable, got {ref!r}")
    return tensor


def _colocated(op: Operation) -> Any:
    return op.graph.colocate_with(op)


# -- IsVariableInitialized ---------------------------------------------------------------------
def _infer_is_initialized(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    if not inputs[0].op.op_def.ref_output:
        raise TypeError(f"IsVariableInitialized needs a variable, got '{inputs[0].name}'")
    return single(as_shape(()), dtypes.bool)


def _is_initialized_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda slot: xp.asarray(slot.value is not None)


registry.register(
    OpDef(
        type="IsVariableInitialized",
        infer=_infer_is_initialized,
        kernel=_is_initialized_kernel,
        cost=free_cost,
        supported=VARIABLE_KERNELS,
    )
)


def is_variable_initialized(ref: Any, name: str | None = None) -> Tensor:
    """Whether the variable holds a value yet (a bool scalar, computed when a run reaches it)."""
    ref_tensor = _ref_tensor(ref)
    with _colocated(ref_tensor.op):
        op = make_op("IsVariableInitialized", [ref_tensor], name or "IsVariableInitialized")
    return op.outputs[0]


# -- Identity ----------------------------------------------------------------------------------
def _infer_identity(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    return single(inputs[0].shape, inputs[0].dtype.base_dtype)  # `v/read` is a value


def _identity_kernel(xp: Any, op: Operation, state: Any) -> Any:
    if op.inputs[0].op.op_def.ref_output:
        return lambda slot: slot.read()
    return lambda x: x


registry.register(
    OpDef(
        type="Identity",
        infer=_infer_identity,
        kernel=_identity_kernel,
        cost=free_cost,
        forwards_input=0,
    )
)


def identity(input: Any, name: str | None = None) -> Tensor:
    """A copy of ``input``; of a variable, a copy of its current value (``variable/read``)."""
    tensor = convert_to_tensor(input)
    return make_op("Identity", [tensor], name or "Identity").outputs[0]


def read_variable(ref: Tensor, name: str = "read") -> Tensor:
    """An Identity of a variable's reference: reads the value at run time, colocated with it."""
    return make_op("Identity", [ref], name).outputs[0]


# -- NoOp and group ----------------------------------------------------------------------------
def _infer_no_op(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    return []


registry.register(
    OpDef(
        type="NoOp",
        infer=_infer_no_op,
        kernel=lambda xp, op, state: _nothing,
        cost=free_cost,
        control_only=True,
    )
)


def _nothing() -> None:
    return None


def no_op(name: str | None = None) -> Operation:
    return make_op("NoOp", [], name or "NoOp")


def group(*inputs: Any, name: str | None = None) -> Operation:
    """One op that runs after all ``inputs`` (tensors or ops), as TensorFlow builds it.

    Inputs are sorted by requested device; with several devices, each gets its own NoOp
    (``name/NoOp``, ``name/NoOp_1``, ... in device-string order) under that device, so only one
    control edge per device crosses to the final ``name`` NoOp.
    """
    deps = [_as_op(x) for x in _flatten(inputs)]
    graph = deps[0].graph if deps else get_default_graph()
    by_device: dict[str, list[Operation]] = {}
    for dep in deps:
        by_device.setdefault(dep.device, []).append(dep)
    with graph.as_default(), graph.name_scope(name or "group_deps") as scope:
        if len(by_device) == 1:
            ((device, same),) = by_device.items()
            with graph.control_dependencies(same), graph.device(device):
                return no_op(name=scope)
        per_device = []
        for device in sorted(by_device):
            with graph.control_dependencies(by_device[device]), graph.device(device):
                per_device.append(no_op())
        with graph.control_dependencies(per_device):
            return no_op(name=scope)


def gated_tuple(
    tensors: Sequence[Any], name: str | None = None, control_inputs: Sequence[Any] | None = None
) -> list[Any]:
    """TF's ``tuple`` (``pv.tuple``): each value comes back once all of them (and the
    ``control_inputs``) are computed: a ``tuple/group_deps`` NoOp after their ops, then a
    ``tuple/control_dependency[_i]`` Identity per tensor, colocated with it, after the NoOp;
    an op comes back as a group after the NoOp, None as None."""
    values = [v if v is None or isinstance(v, Operation) else convert_to_tensor(v) for v in tensors]
    graph = next((v.graph for v in values if v is not None), get_default_graph())
    with graph.as_default(), graph.name_scope(name or "tuple"):
        gating = [v if isinstance(v, Operation) else v.op for v in values if v is not None]
        gating += [_as_op(c) for c in control_inputs or ()]
        if not gating:
            raise ValueError(f"'tensors' must have at least one Tensor, but got {list(tensors)}")
        unique = sorted(set(gating), key=lambda op: op.id)  # creation order, as TF
        gate = group(*unique)
        out: list[Any] = []
        for value in values:
            if value is None:
                out.append(None)
            elif isinstance(value, Operation):
                with graph.control_dependencies([gate]):
                    out.append(group(value))
            else:
                with (
                    graph.name_scope("control_dependency") as scope,
                    graph.colocate_with(value.op),
                    graph.control_dependencies([gate]),
                ):
                    out.append(identity(value, name=scope))
        return out


def _as_op(value: Any) -> Operation:
    element = as_graph_element(value)
    return element.op if isinstance(element, Tensor) else element


def _flatten(values: Sequence[Any]) -> list[Any]:
    flat: list[Any] = []
    for value in values:
        if isinstance(value, list | tuple):
            flat.extend(_flatten(value))
        else:
            flat.append(value)
    return flat
