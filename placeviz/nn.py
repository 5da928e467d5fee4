"""``pv.nn``: the neural-network ops TensorFlow keeps under ``tf.nn``."""

from placeviz.graph.ops.batch_norm_ops import fused_batch_norm
from placeviz.graph.ops.conv_ops import (
    atrous_conv2d,
    avg_pool,
    avg_pool2d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    convolution,
    depthwise_conv2d,
    depthwise_conv2d_native,
    local_response_normalization,
    lrn,
    max_pool,
    max_pool2d,
)
from placeviz.graph.ops.dropout import dropout
from placeviz.graph.ops.embedding_ops import embedding_lookup
from placeviz.graph.ops.loss_ops import (
    bias_add,
    l2_loss,
    log_softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)
from placeviz.graph.ops.math_ops import relu, sigmoid, tanh
from placeviz.graph.ops.nn_impl import (
    batch_normalization,
    gelu,
    l2_normalize,
    moments,
    sigmoid_cross_entropy_with_logits,
    xw_plus_b,
)
from placeviz.graph.ops.nn_ops import elu, leaky_relu, relu6, selu, softmax, softplus
from placeviz.graph.ops.selection_ops import top_k
from placeviz.rnn import rnn_cell
from placeviz.rnn.dynamic_rnn import bidirectional_dynamic_rnn, dynamic_rnn
from placeviz.rnn.static_rnn import static_bidirectional_rnn, static_rnn

__all__ = [
    "atrous_conv2d",
    "avg_pool",
    "avg_pool2d",
    "batch_normalization",
    "bias_add",
    "bidirectional_dynamic_rnn",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "convolution",
    "depthwise_conv2d",
    "depthwise_conv2d_native",
    "dropout",
    "dynamic_rnn",
    "elu",
    "embedding_lookup",
    "fused_batch_norm",
    "gelu",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "local_response_normalization",
    "log_softmax",
    "lrn",
    "max_pool",
    "max_pool2d",
    "moments",
    "relu",
    "relu6",
    "rnn_cell",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "softplus",
    "sparse_softmax_cross_entropy_with_logits",
    "static_bidirectional_rnn",
    "static_rnn",
    "tanh",
    "top_k",
    "xw_plus_b",
]
