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
    """``inputs`` for the op's data inputs, in order; its other inputs must be Consts, which get
    their values as in a run: those its builder made in its scope (``split/split_dim``,
    ``transpose/perm``) and every input after the ones given (a SplitV's sizes)."""
    op = tensor.op
    given = list(inputs)
    values = []
    for t in op.inputs:
        own = t.op.type == "Const" and t.op.name.startswith(f"{op.name}/")
        values.append(given.pop(0) if given and not own else t.op.attrs["value"])
    return op.op_def.kernel_for("numpy")(np, op, _State())(*values)
