"""The optimizers' fused update ops (ApplyGradientDescent, ApplyMomentum, ApplyAdam,
ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta), as TF1's.

Each takes its variable and slot variables by reference, so the placer keeps it on the variable's
device, and updates them in one kernel: one op per variable per step, as TensorFlow's placement
log shows them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops._build import make_op, require_dtype, same_dtype, single
from placeviz.graph.ops.state_ops import VARIABLE_KERNELS
from placeviz.graph.registry import Cost, OpDef
from placeviz.graph.shapes import ShapeError

# op type -> (names of its inputs, how many of them lead as variable references)
_SIGNATURES: dict[str, tuple[tuple[str, ...], int]] = {
    "ApplyGradientDescent": (("var", "alpha", "delta"), 1),
    "ApplyMomentum": (("var", "accum", "lr", "grad", "momentum"), 2),
    "ApplyAdam": (
        ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
        3,
    ),
    "ApplyRMSProp": (("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"), 3),
    "ApplyCenteredRMSProp": (
        ("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"),
        4,
    ),
    "ApplyAdagrad": (("var", "accum", "lr", "grad"), 2),
    "ApplyAdadelta": (("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"), 3),
}
# FLOPs per element of the variable, for the simulated timings.
_FLOPS_PER_ELEMENT = {
    "ApplyGradientDescent": 2.0,
    "ApplyMomentum": 4.0,
    "ApplyAdam": 12.0,
    "ApplyRMSProp": 10.0,
    "ApplyCenteredRMSProp": 14.0,
    "ApplyAdagrad": 6.0,
    "ApplyAdadelta": 16.0,
}


def _infer_apply(op_type: str) -> Any:
    names, refs = _SIGNATURES[op_type]

    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
        var = inputs[0]
        require_dtype(op_type, var.dtype, dtypes.FLOATS)
        same_dtype(op_type, inputs, names)
        for name, tensor in zip(names[:refs], inputs[:refs]):
            if not tensor.op.op_def.ref_output:
                raise TypeError(f"{op_type} needs a variable as input '{name}', got {tensor.name}")
        for name, tensor in zip(names[refs:], inputs[refs:]):
            same = tensor.shape.is_compatible_with(var.shape)
            if name in ("grad", "delta") and not same:
                raise ShapeError(
                    f"var and {name} do not have the same shape: {var.shape} vs {tensor.shape}"
                )
            if name not in ("grad", "delta") and tensor.shape.ndims not in (0, None):
                raise ShapeError(f"{name} is not a scalar: {tensor.shape}")
        return single(var.shape, var.dtype)

    return infer


# Elements per block of an update on the CPU: a block of the variable, its slots and gradient
# stays in the core's L2 cache through the update's passes, and its scratch arrays are reused. An
# update over whole arrays makes each pass stream them from memory and takes new scratch arrays of
# the variable's size, whose pages fault in again each step: ApplyAdam on a 784 x 256 float32
# variable took about twice as long.
_BLOCK = 1 << 16
_scratch = threading.local()  # per thread (kernels run on several): dtype -> two block arrays


def _blocks(xp: Any, updated: Sequence[Any], grad: Any) -> Iterator[list[Any]]:
    """``updated`` (the variable and slot buffers, one shape) and ``grad`` as matching blocks,
    each followed by two scratch arrays of its size: flat blocks of ``_BLOCK`` elements on the
    CPU, the arrays whole on a GPU (CuPy runs one kernel per pass, and pools its memory)."""
    if xp is not np or not all(a.flags.c_contiguous for a in updated):
        yield [*updated, grad, xp.empty_like(updated[0]), xp.empty_like(updated[0])]
        return
    flat = [a.reshape(-1) for a in updated]
    if grad.shape != updated[0].shape:  # np.broadcast_to costs ~5 us, as much as a pass
        grad = np.broadcast_to(grad, updated[0].shape)
    flat.append(grad.reshape(-1))
    size = flat[0].size
    first, second = _scratch_arrays(flat[0].dtype)
    for start in range(0, size, _BLOCK):
        stop = min(start + _BLOCK, size)
        yield [a[start:stop] for a in flat] + [first[: stop - start], second[: stop - start]]


def _scratch_arrays(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    arrays: dict[np.dtype, tuple[np.ndarray, np.ndarray]] | None = getattr(_scratch, "arrays", None)
    if arrays is None:
        arrays = _scratch.arrays = {}
    found = arrays.get(dtype)
    if found is None:
        found = arrays[dtype] = (np.empty(_BLOCK, dtype), np.empty(_BLOCK, dtype))
    return found


def _gradient_descent(xp: Any, op: Operation, state: Any) -> Any:
    def apply(var: Any, alpha: Any, delta: Any) -> Any:
        for weights, d, scratch, _ in _blocks(xp, [var.buffer()], delta):
            xp.multiply(d, alpha, out=scratch)
            weights -= scratch
        return var.read()

    return apply


def _momentum(xp: Any, op: Operation, state: Any) -> Any:
    nesterov = op.attrs.get("use_nesterov", False)

    def apply(var: Any, accum: Any, lr: Any, grad: Any, momentum: Any) -> Any:
        for a, weights, g, step, _ in _blocks(xp, [accum.buffer(), var.buffer()], grad):
            a *= momentum
            a += g
            if nesterov:  # lr * (grad + momentum * accum)
                xp.multiply(a, momentum, out=step)
                step += g
                step *= lr
            else:
                xp.multiply(a, lr, out=step)
            weights -= step
        return var.read()

    return apply


def _adam(xp: Any, op: Operation, state: Any) -> Any:
    """TF's ApplyAdam, in place, a block at a time (``_blocks``)."""

    def apply(*args: Any) -> Any:
        var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad = args
        lr_t = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        keep_m, keep_v = 1 - beta1, 1 - beta2
        buffers = [m.buffer(), v.buffer(), var.buffer()]
        for m_t, v_t, weights, g, scratch, denominator in _blocks(xp, buffers, grad):
            xp.subtract(g, m_t, out=scratch)  # m += (grad - m) * (1 - beta1)
            scratch *= keep_m
            m_t += scratch
            xp.multiply(g, g, out=scratch)  # v += (grad * grad - v) * (1 - beta2)
            scratch -= v_t
            scratch *= keep_v
            v_t += scratch
            xp.multiply(lr_t, m_t, out=scratch)  # var -= lr_t * m / (sqrt(v) + epsilon)
            xp.sqrt(v_t, out=denominator)
            denominator += epsilon
            scratch /= denominator
            weights -= scratch
        return var.read()

    return apply


def _rms_prop(xp: Any, op: Operation, state: Any) -> Any:
    """TF's: ``ms += (g^2 - ms)(1 - rho)``, ``mom = mom momentum + lr g / sqrt(ms + epsilon)``,
    ``var -= mom``."""

    def apply(var: Any, ms: Any, mom: Any, *args: Any) -> Any:
        lr, rho, momentum, epsilon, grad = args
        ms_t, mom_t, weights = ms.buffer(), mom.buffer(), var.buffer()
        ms_t += (grad * grad - ms_t) * (1 - rho)
        mom_t *= momentum
        mom_t += lr * grad / xp.sqrt(ms_t + epsilon)
        weights -= mom_t
        return var.read()

    return apply


def _centered_rms_prop(xp: Any, op: Operation, state: Any) -> Any:
    """RMSProp over the variance: the mean gradient ``mg`` is tracked too and
    ``ms - mg^2`` replaces ``ms`` under the square root."""

    def apply(var: Any, mg: Any, ms: Any, mom: Any, *args: Any) -> Any:
        lr, rho, momentum, epsilon, grad = args
        mg_t, ms_t, mom_t, weights = mg.buffer(), ms.buffer(), mom.buffer(), var.buffer()
        ms_t += (grad * grad - ms_t) * (1 - rho)
        mg_t += (grad - mg_t) * (1 - rho)
        mom_t *= momentum
        mom_t += lr * grad / xp.sqrt(ms_t - mg_t * mg_t + epsilon)
        weights -= mom_t
        return var.read()

    return apply


def _adagrad(xp: Any, op: Operation, state: Any) -> Any:
    """``accum += g^2``, ``var -= lr g / sqrt(accum)``."""

    def apply(var: Any, accum: Any, lr: Any, grad: Any) -> Any:
        accum_t, weights = accum.buffer(), var.buffer()
        accum_t += grad * grad
        weights -= lr * grad / xp.sqrt(accum_t)
        return var.read()

    return apply


def _adadelta(xp: Any, op: Operation, state: Any) -> Any:
    """TF's: ``accum = rho accum + (1 - rho) g^2``, ``update = sqrt(accum_update + epsilon) /
    sqrt(accum + epsilon) g``, ``accum_update = rho accum_update + (1 - rho) update^2``,
    ``var -= lr update``."""

    def apply(var: Any, accum: Any, accum_update: Any, *args: Any) -> Any:
        lr, rho, epsilon, grad = args
        accum_t, update_t, weights = accum.buffer(), accum_update.buffer(), var.buffer()
        accum_t *= rho
        accum_t += grad * grad * (1 - rho)
        update = xp.sqrt(update_t + epsilon) / xp.sqrt(accum_t + epsilon) * grad
        update_t *= rho
        update_t += update * update * (1 - rho)
        weights -= update * lr
        return var.read()

    return apply


def _cost(op_type: str) -> Any:
    flops = _FLOPS_PER_ELEMENT[op_type]
    slots = _SIGNATURES[op_type][1]

    def cost(op: Operation, ins: Sequence[tuple[int, ...]], outs: Sequence[tuple[int, ...]]):
        elements = math.prod(ins[0])
        # Each variable and slot is read and written, the gradient read once.
        moved = (2 * slots + 1) * elements * registry.itemsize(op)
        return Cost(flops * elements, float(moved))

    return cost


for _type, _kernel in (
    ("ApplyGradientDescent", _gradient_descent),
    ("ApplyMomentum", _momentum),
    ("ApplyAdam", _adam),
    ("ApplyRMSProp", _rms_prop),
    ("ApplyCenteredRMSProp", _centered_rms_prop),
    ("ApplyAdagrad", _adagrad),
    ("ApplyAdadelta", _adadelta),
):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_apply(_type),
            kernel=_kernel,
            cost=_cost(_type),
            supported=VARIABLE_KERNELS,
            stateful=True,
        )
    )


def apply_gradient_descent(var: Tensor, alpha: Tensor, delta: Tensor, name: str) -> Operation:
    return make_op("ApplyGradientDescent", [var, alpha, delta], name)


def apply_momentum(
    var: Tensor,
    accum: Tensor,
    lr: Tensor,
    grad: Tensor,
    momentum: Tensor,
    use_nesterov: bool,
    name: str,
) -> Operation:
    attrs = {"use_nesterov": use_nesterov}
    return make_op("ApplyMomentum", [var, accum, lr, grad, momentum], name, attrs)


def apply_adam(inputs: Sequence[Tensor], name: str) -> Operation:
    """``inputs`` in TensorFlow's order: var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
    epsilon, grad."""
    return make_op("ApplyAdam", list(inputs), name)


def apply_update(op_type: str, inputs: Sequence[Tensor]) -> Operation:
    """One of the other Apply ops (RMSProp, centered RMSProp, Adagrad, Adadelta), ``inputs`` in
    TensorFlow's order (``_SIGNATURES``)."""
    return make_op(op_type, list(inputs), None)
