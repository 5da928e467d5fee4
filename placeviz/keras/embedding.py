"""``Embedding``: each integer id's row of an ``[input_dim, output_dim]`` table."""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph import initializers
from placeviz.graph.core import Tensor
from placeviz.graph.ops import embedding_ops, math_ops
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import get_variable
from placeviz.layers.base import KerasLayer
from placeviz.layers.core import get_initializer


class Embedding(KerasLayer):
    base_name = "embedding"

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        embeddings_initializer: Any = "uniform",
        trainable: bool = True,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name, trainable=trainable)
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError(
                "Both `input_dim` and `output_dim` should be positive, Received "
                f"input_dim = {input_dim} and output_dim = {output_dim}"
            )
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        # Keras's "uniform" is U(-0.05, 0.05), not TF1's U(0, 1).
        self.embeddings_initializer = (
            initializers.RandomUniform(-0.05, 0.05)
            if embeddings_initializer == "uniform"
            else get_initializer(embeddings_initializer)
        )
        self.embeddings: Any = None

    def build(self, input_shape: TensorShape) -> None:
        self.embeddings = self.add_weight(
            get_variable(
                "embeddings",
                shape=[self.input_dim, self.output_dim],
                initializer=self.embeddings_initializer,
                trainable=self.trainable,
            )
        )

    def call(self, inputs: Tensor) -> Tensor:
        """As Keras's: ids that are not int32 or int64 are cast to int32 first."""
        if inputs.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            inputs = math_ops.cast(inputs, dtypes.int32)
        return embedding_ops.embedding_lookup(self.embeddings, inputs)
