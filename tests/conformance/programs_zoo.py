"""Conformance programs: the model zoo's whole training graphs (``placeviz.examples.zoo``), each
built on the CPU and run for one step. Every op's name, type, inputs, devices, colocation and
output shapes are compared; values are not (the weights start random)."""

from __future__ import annotations

from typing import Any

from conformance.harness import Run, Runs, program
from placeviz.examples.zoo import ZOO

__all__: list[str] = []


def _one_step(name: str) -> Any:
    def build(tf: Any) -> Runs:
        model = ZOO[name](tf, gpus=0)
        return Runs(tf.global_variables_initializer(), Run(model.train_op, model.feed))

    return build


for _name in ZOO:
    program(_one_step(_name), name=f"zoo_{_name}", skip=("values",))
