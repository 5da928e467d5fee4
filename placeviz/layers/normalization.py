"""``BatchNormalization``: TF1's ``tf.layers.BatchNormalization`` (tf_keras's legacy layer).

4-D and 5-D inputs normalized along axis 1 or the last axis take one ``FusedBatchNormV3`` op;
other inputs are normalized with ``nn.moments`` and ``nn.batch_normalization``. In training
the layer adds two ``AssignMovingAvg`` ops to ``UPDATE_OPS`` that move the moving mean and
variance toward the batch's: ``moving -= (moving - batch) * (1 - momentum)``. As in TF the
fused path averages the batch's unbiased variance, the other path its biased one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import initializers
from placeviz.graph.core import Operation, Tensor, get_default_graph, is_tensor_like
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import array_ops, nn_impl, state_ops
from placeviz.graph.ops.batch_norm_ops import BATCH_DTYPES, fused_batch_norm
from placeviz.graph.ops.constant_op import constant, convert_to_tensor
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.shapes import TensorShape
from placeviz.graph.variable_scope import get_variable
from placeviz.graph.variables import Variable
from placeviz.layers.base import Layer

# (rank, normalized axis) -> the data format FusedBatchNormV3 takes such a batch in; any other
# input goes the non-fused way.
_FUSED_FORMATS = {(4, 1): "NCHW", (4, 3): "NHWC", (5, 1): "NCDHW", (5, 4): "NDHWC"}
# TF arguments placeviz does not implement, each with the value that switches it off.
_NOT_IMPLEMENTED: dict[str, Any] = {
    "renorm": False,
    "renorm_clipping": None,
    "virtual_batch_size": None,
    "adjustment": None,
    "beta_regularizer": None,
    "gamma_regularizer": None,
    "beta_constraint": None,
    "gamma_constraint": None,
}


class BatchNormalization(Layer):
    """Normalizes each feature with the batch's statistics in training and with the moving
    ones otherwise; ``training`` is given per call."""

    base_name = "batch_normalization"

    def __init__(
        self,
        axis: int | list[int] | tuple[int, ...] = -1,
        momentum: Any = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = None,
        gamma_initializer: Any = None,
        moving_mean_initializer: Any = None,
        moving_variance_initializer: Any = None,
        fused: bool | None = None,
        trainable: bool = True,
        name: str | None = None,
        _reuse: Any = None,
        **unsupported: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, _reuse=_reuse)
        _reject_unsupported(unsupported)
        if not isinstance(axis, int | list | tuple):
            raise TypeError(
                "Expected an int or a list/tuple of ints for the argument 'axis', but "
                f"received: {axis!r}"
            )
        self.axis: list[int] = [axis] if isinstance(axis, int) else list(axis)
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer or initializers.Zeros()
        self.gamma_initializer = gamma_initializer or initializers.Ones()
        self.moving_mean_initializer = moving_mean_initializer or initializers.Zeros()
        self.moving_variance_initializer = moving_variance_initializer or initializers.Ones()
        self.fused = True if fused is None else fused  # decided for good when built
        self.gamma: Variable | None = None
        self.beta: Variable | None = None
        self.moving_mean: Variable | None = None
        self.moving_variance: Variable | None = None
        self._updates: list[Operation] = []
        self.dtype: dtypes.DType | None = None
        self._data_format = ""
        self._param_dtype = dtypes.float32
        self._param_shape: list[Any] = []
        self._training = False

    @property
    def trainable_weights(self) -> list[Any]:
        return [w for w in (self.gamma, self.beta) if w is not None] if self.trainable else []

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self) -> list[Any]:
        trainable = self.trainable_weights
        return [w for w in self.weights if w not in trainable]

    non_trainable_variables = non_trainable_weights

    @property
    def updates(self) -> list[Operation]:
        """The moving-average updates; a frozen layer builds them but lists none (tf_keras)."""
        return list(self._updates) if self.trainable else []

    def __call__(self, inputs: Any, training: Any = False) -> Tensor:  # type: ignore[override]
        """``training`` is a Python bool (or 0/1, or a tensor whose value construction knows);
        a bool tensor fed at run time would need ``tf.cond``'s Switch and Merge ops."""
        self._training = _training_value(training)
        outputs = super().__call__(inputs)
        graph = outputs.graph
        collected = graph.get_collection_ref(GraphKeys.UPDATE_OPS)
        collected.extend(op for op in self.updates if op not in collected)
        return outputs

    def _build_and_call(self, tensor: Tensor) -> Tensor:
        if self.dtype is None:  # a Keras V1 layer takes its first input's dtype
            self.dtype = tensor.dtype.base_dtype
        return super()._build_and_call(tensor)

    def build(self, input_shape: TensorShape) -> None:
        rank = input_shape.ndims
        if not rank:
            raise ValueError(f"Input has undefined rank. Received: input_shape={input_shape}")
        self.axis = _validate_axis(self.axis, rank)
        dims = input_shape.dims or ()
        if any(dims[a] is None for a in self.axis):
            raise ValueError(
                "Input has undefined `axis` dimension. Received input with shape "
                f"{input_shape} and axis={tuple(self.axis)}"
            )
        # tf_keras's V1 rule: fused whenever FusedBatchNormV3 can take the input
        self._data_format = _FUSED_FORMATS.get((rank, self.axis[0]), "")
        fusable = len(self.axis) == 1 and self.dtype in BATCH_DTYPES and self._data_format
        self.fused = bool(self.fused and fusable)
        # float16 batches keep float32 statistics (TF's ``_param_dtype``)
        self._param_dtype = dtypes.float32 if self.dtype is dtypes.float16 else self.dtype
        if len(self.axis) == 1:
            self._param_shape = [dims[self.axis[0]]]
        else:
            self._param_shape = [dims[a] if a in self.axis else 1 for a in range(rank)]
        if self.scale:
            self.gamma = self._weight("gamma", self.gamma_initializer, True)
        if self.center:
            self.beta = self._weight("beta", self.beta_initializer, True)
        self.moving_mean = self._weight("moving_mean", self.moving_mean_initializer, False)
        self.moving_variance = self._weight(
            "moving_variance", self.moving_variance_initializer, False
        )

    def _weight(self, name: str, initializer: Any, trainable: bool) -> Variable:
        variable = get_variable(
            name,
            shape=self._param_shape,
            dtype=self._param_dtype,
            initializer=initializer,
            trainable=trainable and self.trainable,
        )
        return self.add_weight(variable)

    def call(self, inputs: Tensor) -> Tensor:
        if self.fused:
            return self._fused_call(inputs)
        return self._moments_call(inputs)

    def _fused_call(self, inputs: Tensor) -> Tensor:
        param = self._param_dtype
        beta = self.beta if self.center else constant(0.0, param, self._param_shape)
        gamma = self.gamma if self.scale else constant(1.0, param, self._param_shape)
        outputs, mean, variance = fused_batch_norm(
            inputs,
            gamma,
            beta,
            mean=self.moving_mean,
            variance=self.moving_variance,
            epsilon=self.epsilon,
            is_training=self._training,
            data_format=self._data_format,
        )
        if self._training:
            momentum = convert_to_tensor(self.momentum)
            self._update_moving_averages(mean, variance, momentum)
        return outputs

    def _moments_call(self, inputs: Tensor) -> Tensor:
        half = inputs.dtype.base_dtype is dtypes.float16
        batch = array_ops.cast(inputs, dtypes.float32) if half else inputs
        dims = batch.shape.dims or ()
        rank = len(dims)
        reduction_axes = [a for a in range(rank) if a not in self.axis]
        feature_last = reduction_axes == list(range(rank - 1))
        broadcast_shape = [1] * rank
        broadcast_shape[self.axis[0]] = dims[self.axis[0]]

        def broadcast(value: Any) -> Any:
            """A feature vector, shaped to broadcast against the batch (TF's ``_broadcast``)."""
            if value is None or feature_last or value.shape.ndims == rank:
                return value
            return array_ops.reshape(value, broadcast_shape)

        scale, offset = broadcast(self.gamma), broadcast(self.beta)
        if self._training:
            batch_param = array_ops.cast(batch, self._param_dtype)
            mean, variance = nn_impl.moments(
                batch_param, reduction_axes, keep_dims=len(self.axis) > 1
            )
            self._update_moving_averages(mean, variance, self.momentum)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        dtype = batch.dtype.base_dtype
        mean, variance = array_ops.cast(mean, dtype), array_ops.cast(variance, dtype)
        offset = array_ops.cast(offset, dtype) if offset is not None else None
        scale = array_ops.cast(scale, dtype) if scale is not None else None
        outputs = nn_impl.batch_normalization(
            batch, broadcast(mean), broadcast(variance), offset, scale, self.epsilon
        )
        return array_ops.cast(outputs, dtypes.float16) if half else outputs

    def _update_moving_averages(self, mean: Tensor, variance: Tensor, momentum: Any) -> None:
        for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            self._updates.append(_assign_moving_average(variable, value, momentum))


def _assign_moving_average(variable: Any, value: Tensor, momentum: Any) -> Operation:
    """TF's ``AssignMovingAvg``: ``variable -= (variable - value) * (1 - momentum)``, all next
    to the variable."""
    graph = get_default_graph()
    with graph.name_scope("AssignMovingAvg") as scope, graph.colocate_with(variable):
        decay = convert_to_tensor(1.0 - momentum, name="decay")
        base = variable.dtype.base_dtype
        decay = array_ops.cast(decay, base)
        delta = (variable - array_ops.cast(value, base)) * decay
        return state_ops.assign_sub(variable, delta, name=scope).op


def _training_value(training: Any) -> bool:
    """TF's ``smart_cond`` predicate: a Python bool, 1 or 0, or a tensor."""
    if isinstance(training, bool | int | np.bool_ | np.integer) and training in (0, 1):
        return bool(training)
    if isinstance(training, Tensor):
        known = constant_value(training)
        if known is not None:
            return bool(known)
    if training is None or is_tensor_like(training):
        raise NotImplementedError(
            "placeviz builds batch normalization for a Python bool `training` (or a tensor "
            "whose value is known when the graph is built); a `training` tensor fed at run "
            "time needs tf.cond's Switch and Merge ops, which placeviz does not implement yet. "
            f"Received: training={training!r}"
        )
    raise TypeError(
        f"`pred` must be a Tensor, or a Python bool, or 1 or 0. Found instead: {type(training)}"
    )


def _validate_axis(axis: list[int], rank: int) -> list[int]:
    """tf_keras's ``validate_axis``: non-negative, in range, no duplicates."""
    normalized = [a + rank if a < 0 else a for a in axis]
    if any(not 0 <= a < rank for a in normalized):
        raise ValueError(
            "Invalid value for `axis` argument. Expected 0 <= axis < inputs.rank (with "
            f"inputs.rank={rank}). Received: axis={tuple(normalized)}"
        )
    if len(normalized) != len(set(normalized)):
        raise ValueError(f"Duplicate axis: {tuple(normalized)}")
    return normalized


def _reject_unsupported(arguments: dict[str, Any]) -> None:
    for key, value in arguments.items():
        if key not in _NOT_IMPLEMENTED:
            raise TypeError(f"BatchNormalization got an unexpected keyword argument '{key}'")
        if value != _NOT_IMPLEMENTED[key]:
            raise NotImplementedError(
                f"placeviz's BatchNormalization does not implement `{key}` (got {value!r})"
            )


def batch_normalization(
    inputs: Any,
    axis: int | list[int] = -1,
    momentum: Any = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = None,
    gamma_initializer: Any = None,
    moving_mean_initializer: Any = None,
    moving_variance_initializer: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    fused: bool | None = None,
    **unsupported: Any,
) -> Tensor:
    """TF1's ``tf.layers.batch_normalization``: a BatchNormalization layer made and called at
    once; in training, run ``UPDATE_OPS`` with the train op to move the moving statistics."""
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        fused=fused,
        trainable=trainable,
        name=name,
        _reuse=reuse,
        **unsupported,
    )
    return layer(inputs, training=training)
