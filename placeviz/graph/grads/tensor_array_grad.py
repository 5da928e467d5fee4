"""Gradients of the TensorArray ops, as TensorFlow's tensor_array_grad.py builds them.

A TensorArray's gradient lives in a second array (``TensorArrayGradV3``), one per
``gradients()`` call (its ``source``, the name scope the gradient ops are made in): a read's
gradient writes there, a write's gradient reads from there; a gather's scatters, a scatter's
gathers, a concat's splits, a split's concats. The gradient of each op's flow is the flow of
the gradient array, so the backward ops run in the reverse order of the forward ones; a write's
gradient waits for the forward write (``write_barrier``) before it reads.
"""

from __future__ import annotations

from placeviz.dtypes import DType
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.grads.registry import not_differentiable, register_gradient
from placeviz.graph.ops import state_ops
from placeviz.graph.tensor_array import TensorArray

not_differentiable("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3")


def _grad_source(tensor: Tensor) -> str:
    """TF's ``_GetGradSource``: the name scope up to the last ``gradients*`` part."""
    tokens = tensor.name.split("/")
    positions = [i for i, token in enumerate(tokens) if token.startswith("gradients")]
    if not positions:
        raise ValueError(
            "Expected op/tensor name to start with gradients (excluding scope), got: "
            f"{tensor.name}. This means that a tf.gradients op with this op in its dependency "
            "path has a custom name that does not start with 'gradients'. Please make sure all "
            "calls to tf.gradients that have non-empty `name` arguments use names that start "
            "with 'gradients'."
        )
    return "/".join(tokens[: positions[-1] + 1])


def _gradient_array(op: Operation, grad: Tensor, flow: Tensor, dtype: DType) -> TensorArray:
    """The gradient array of the array ``op`` works on, after ``flow``; ``grad`` names it."""
    forward = TensorArray(
        dtype=dtype, handle=op.inputs[0], flow=flow, colocate_with_first_write_call=False
    )
    return forward.grad(source=_grad_source(grad), flow=flow)


def _after_forward(op: Operation, flow: Tensor) -> Tensor:
    """The incoming flow gradient, after the forward op's own flow (no race with it)."""
    flow_out = state_ops.identity(op.outputs[0], "flow_out")
    with get_default_graph().control_dependencies([flow_out]):
        return state_ops.identity(flow, "write_barrier")


@register_gradient("TensorArrayReadV3")
def _read_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    _, index, flow = op.inputs
    g = _gradient_array(op, grad, flow, op.attrs["dtype"])
    return [None, None, g.write(index, grad).flow]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op: Operation, flow: Tensor) -> list[Tensor | None]:
    index = op.inputs[1]
    source, flow = flow, _after_forward(op, flow)
    g = _gradient_array(op, source, flow, op.inputs[2].dtype.base_dtype)
    return [None, None, g.read(index), flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    _, indices, flow = op.inputs
    g = _gradient_array(op, grad, flow, op.attrs["dtype"])
    return [None, None, g.scatter(indices, grad).flow]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op: Operation, flow: Tensor) -> list[Tensor | None]:
    indices = op.inputs[1]
    source, flow = flow, _after_forward(op, flow)
    g = _gradient_array(op, source, flow, op.inputs[2].dtype.base_dtype)
    return [None, None, g.gather(indices), flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op: Operation, grad: Tensor, _lengths_grad: Tensor | None) -> list:
    flow = op.inputs[1]
    g = _gradient_array(op, grad, flow, op.attrs["dtype"])
    return [None, g.split(grad, lengths=op.outputs[1]).flow]


@register_gradient("TensorArraySplitV3")
def _split_grad(op: Operation, flow: Tensor) -> list[Tensor | None]:
    source, flow = flow, _after_forward(op, flow)
    g = _gradient_array(op, source, flow, op.inputs[1].dtype.base_dtype)
    return [None, g.concat(), None, flow]
