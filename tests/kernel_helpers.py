"""Run one op's NumPy kernel directly, to check it against NumPy without a session."""

from __future__ import annotations

from typing import Any

import numpy as np

from placeviz.graph.core import Tensor


class _State:
    """The run state a kernel builder sees; random ops draw from a fixed generator."""

    def rng(self, op: Any) -> np.random.Generator:
        return np.random.default_rng(0)


def run_kernel(tensor: Tensor, *inputs: Any) -> Any:
    """``inputs`` for the op's first inputs; the rest must be Consts (a transpose's perm, an
    ExpandDims' dim, a Reshape's shape), which get their values, as in a run."""
    op = tensor.op
    constants = [t.op.attrs["value"] for t in op.inputs[len(inputs) :]]
    return op.op_def.kernel_for("numpy")(np, op, _State())(*inputs, *constants)
