"""A transformer block without device scopes: attention heads side by side, then a feed-forward
layer — independent branches a placer may spread over GPUs, joined where every head's output
is needed. Used by the automatic-placement notebook and the cost placer's benchmark."""

from __future__ import annotations

import math

import numpy as np

import placeviz as pv


def build_transformer_block(
    tokens: int = 1024, width: int = 512, heads: int = 8, seed: int = 0
) -> tuple[pv.Tensor, pv.Tensor]:
    """The block's input placeholder ([tokens, width]) and output, in the default graph."""
    rng = np.random.default_rng(seed)
    scale = 1.0 / math.sqrt(width)

    def weight(name: str, shape: tuple[int, int]) -> pv.Tensor:
        return pv.constant(rng.normal(0.0, scale, shape).astype(np.float32), name=name)

    x = pv.placeholder(pv.float32, [tokens, width], name="tokens")
    size = width // heads
    outputs = []
    for h in range(heads):
        with pv.name_scope(f"head{h}"):
            q = pv.matmul(x, weight("wq", (width, size)), name="query")
            k = pv.matmul(x, weight("wk", (width, size)), name="key")
            v = pv.matmul(x, weight("wv", (width, size)), name="value")
            scores = pv.matmul(q, k, transpose_b=True) * (1.0 / math.sqrt(size))
            outputs.append(pv.matmul(pv.nn.softmax(scores), v, name="attention"))
    with pv.name_scope("mix"):
        attended = pv.matmul(pv.concat(outputs, axis=1), weight("wo", (width, width))) + x
    with pv.name_scope("feed_forward"):
        hidden = pv.nn.relu(pv.matmul(attended, weight("w1", (width, 4 * width))))
        out = pv.matmul(hidden, weight("w2", (4 * width, width))) + attended
    return x, out
