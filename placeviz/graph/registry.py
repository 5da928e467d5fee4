"""Op declarations: each op type is declared once, with everything every layer needs to know.

Like JAX's primitives: the shape/dtype rule (graph construction), the kernels per backend and the
dtypes each device type supports (placer), and the cost in FLOPs and bytes (runtime, simulated
timing) all hang off one ``OpDef`` keyed by the op type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from placeviz import dtypes
from placeviz.dtypes import DType
from placeviz.graph.shapes import TensorShape

if TYPE_CHECKING:
    from placeviz.graph.core import Operation, Tensor

OutputSpec = tuple[TensorShape, DType]
ShapeRule = Callable[[Sequence["Tensor"], Mapping[str, Any]], list[OutputSpec]]
# A kernel builder gets the array module (numpy or cupy), the op and the run state (variables,
# random generators) and returns the callable that computes the op's outputs from its inputs.
KernelBuilder = Callable[[Any, "Operation", Any], Callable[..., Any]]
# A cost rule gets the op and the concrete shapes of one execution's inputs and outputs.
CostRule = Callable[["Operation", Sequence[tuple[int, ...]], Sequence[tuple[int, ...]]], "Cost"]

BACKENDS = ("numpy", "cupy")
DEVICE_TYPES = ("CPU", "GPU")


class Cost(NamedTuple):
    flops: float
    bytes: float


def _elements(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def itemsize(op: Operation) -> int:
    dtype = op.dtype
    return dtype.size if dtype is not None else 4


def elementwise_cost(
    op: Operation,
    in_shapes: Sequence[tuple[int, ...]],
    out_shapes: Sequence[tuple[int, ...]],
    flops_per_element: float = 1.0,
) -> Cost:
    """One FLOP per output element; every input and output element read or written once."""
    out = sum(_elements(s) for s in out_shapes)
    moved = out + sum(_elements(s) for s in in_shapes)
    return Cost(flops_per_element * out, float(moved * itemsize(op)))


def per_element(flops: float) -> CostRule:
    """The elementwise cost rule of an op that spends ``flops`` FLOPs on each output element."""
    return lambda op, ins, outs: elementwise_cost(op, ins, outs, flops_per_element=flops)


def memory_cost(
    op: Operation, in_shapes: Sequence[tuple[int, ...]], out_shapes: Sequence[tuple[int, ...]]
) -> Cost:
    """Data movement only (reshapes, copies, concatenation)."""
    return elementwise_cost(op, in_shapes, out_shapes, flops_per_element=0.0)


ANY_INPUT = -1  # OpDef.forwards_input of an op whose outputs are whichever input is live


def free_cost(
    op: Operation, in_shapes: Sequence[tuple[int, ...]], out_shapes: Sequence[tuple[int, ...]]
) -> Cost:
    """An op that launches no kernel on a GPU: it forwards a buffer (Identity, Reshape), hands
    out a tensor made once (Const, a variable), or reads shapes on the host (Shape)."""
    return Cost(0.0, 0.0)


# placeviz keeps strings on the CPU (TF registers no GPU Const for them): a string op asked for
# a GPU needs soft placement.
ALL_DEVICES: Mapping[str, frozenset[DType]] = {
    "CPU": frozenset((*dtypes.ALL, dtypes.resource)),
    "GPU": frozenset(d for d in (*dtypes.ALL, dtypes.resource) if d is not dtypes.string),
}


@dataclass(frozen=True)
class OpDef:
    """Everything placeviz knows about one op type."""

    type: str
    infer: ShapeRule
    kernel: KernelBuilder
    cost: CostRule = elementwise_cost
    # device type -> dtypes that have a kernel there; a device type absent here has no kernel.
    supported: Mapping[str, frozenset[DType]] = field(default_factory=lambda: ALL_DEVICES)
    # backend-specific kernel builders that replace ``kernel`` (e.g. a CuPy RNG).
    kernel_overrides: Mapping[str, KernelBuilder] = field(default_factory=dict)
    # the op's output is a reference to mutable state (a variable) rather than a value.
    ref_output: bool = False
    # the input whose buffer the outputs are, as TF's kernel forwards it (0: Identity, Reshape;
    # ANY_INPUT: a Merge's live one): nothing is allocated, and the buffer lives until the last
    # reader of any of them; None: the outputs are new buffers.
    forwards_input: int | None = None
    # takes a variable's reference only by value (TF's non-ref input args, e.g. SaveV2's): the
    # placer does not colocate it with the variable, as it does Assign.
    value_inputs: bool = False
    stateful: bool = False
    # the kernel returns a tuple of outputs (split, unstack), even when there is only one.
    multi_output: bool = False
    # no kernel computes the output: it must be fed (a placeholder).
    needs_feed: bool = False
    # computes nothing: it only orders other ops through control edges (NoOp).
    control_only: bool = False
    # the kernel's result is fixed once it is built (a constant, a variable's slot): a plan takes
    # it when compiled, so running the op costs nothing (TensorFlow folds such constants).
    fixed_output: bool = False
    # the kernel is chosen by its first input's dtype (TF's ``T`` of a comparison, whose output
    # is bool): string comparisons have no GPU kernel even though bool tensors may live there.
    kernel_dtype_from_input: bool = False
    # the kernel may wait for another run to act (a queue's dequeue waits for an enqueue): a
    # cluster task runs a partition holding such an op on a thread, never on its event loop.
    waits: bool = False
    # the kernel is an elementwise ufunc: it can write its one output into a buffer given as
    # ``out=`` and keeps no reference to its inputs, so plans can reuse buffers around it.
    ufunc: bool = False
    # the shapes the kernel makes where they are fuller than ``infer``'s, which keeps what
    # TensorFlow's static rule says (a dry run specializes shapes with this one).
    run_infer: ShapeRule | None = None

    def kernel_for(self, backend: str) -> KernelBuilder:
        if backend not in BACKENDS:
            raise ValueError(f"Unknown backend {backend!r}; known backends: {', '.join(BACKENDS)}")
        return self.kernel_overrides.get(backend, self.kernel)

    def supports(self, device_type: str, dtype: DType | None) -> bool:
        allowed = self.supported.get(device_type)
        if allowed is None:
            return False
        return dtype is None or dtype in allowed


_REGISTRY: dict[str, OpDef] = {}


def register(op_def: OpDef) -> OpDef:
    if op_def.type in _REGISTRY:
        raise ValueError(f"Op type {op_def.type!r} is already registered")
    unknown = set(op_def.supported) - set(DEVICE_TYPES)
    if unknown:
        raise ValueError(
            f"Op type {op_def.type!r} declares kernels for unknown device types {sorted(unknown)}; "
            f"known device types: {', '.join(DEVICE_TYPES)}"
        )
    _REGISTRY[op_def.type] = op_def
    return op_def


def get(op_type: str) -> OpDef:
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise KeyError(f"No op type {op_type!r} is registered") from None


def op_defs() -> list[OpDef]:
    """Every registered op type, sorted by type (docs/api.md lists them)."""
    return [_REGISTRY[op_type] for op_type in sorted(_REGISTRY)]


def except_dtypes(*excluded: DType) -> frozenset[DType]:
    return frozenset(d for d in dtypes.ALL if d not in excluded)
