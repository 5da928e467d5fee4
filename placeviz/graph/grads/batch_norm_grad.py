"""The gradient of ``FusedBatchNormV3`` (TF's nn_grad ``_FusedBatchNormV3Grad``)."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.ops import array_ops
from placeviz.graph.ops.batch_norm_ops import fused_batch_norm_grad_v3

# channels-first format -> (its channels-last twin, the permutation to it, the one back)
_CHANNELS_LAST = {
    "NCHW": ("NHWC", [0, 2, 3, 1], [0, 3, 1, 2]),
    "NCDHW": ("NDHWC", [0, 2, 3, 4, 1], [0, 4, 1, 2, 3]),
}


@register_gradient("FusedBatchNormV3")
def _fused_batch_norm_v3_grad(op: Operation, *grads: Tensor) -> list[Tensor | None]:
    """Training passes the batch statistics the op saved; inference passes the population's,
    and TF's kernel for it takes channels-last data only, so channels-first data is transposed
    to it and the x gradient back."""
    x, scale = op.inputs[0], op.inputs[1]
    grad_y = grads[0]
    epsilon = op.attrs["epsilon"]
    data_format = op.attrs["data_format"]
    if op.attrs["is_training"]:
        saved = op.outputs[3:6]  # the batch mean, biased variance and cuDNN's reserve
        grad = fused_batch_norm_grad_v3(grad_y, x, scale, *saved, epsilon, data_format, True)
        return [*grad.outputs[:3], None, None]
    target, forward, back = _CHANNELS_LAST.get(data_format, (data_format, None, None))
    if forward is not None:
        x = array_ops.transpose(x, forward)
        grad_y = array_ops.transpose(grad_y, forward)
    grad = fused_batch_norm_grad_v3(
        grad_y, x, scale, op.inputs[3], op.inputs[4], op.outputs[5], epsilon, target, False
    )
    dx, dscale, doffset = grad.outputs[:3]
    if back is not None:
        dx = array_ops.transpose(dx, back)
    return [dx, dscale, doffset, None, None]
