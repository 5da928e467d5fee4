"""The seeds' multi-tower example (TensorFlow's GPU guide): a matmul per GPU, summed on the CPU."""

from __future__ import annotations

import placeviz as pv


def build_towers() -> pv.Tensor:
    c = []
    for d in ["/device:GPU:2", "/device:GPU:3"]:
        with pv.device(d):
            a = pv.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
            b = pv.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2])
            c.append(pv.matmul(a, b))
    with pv.device("/cpu:0"):
        return pv.add_n(c)
