"""The models people study device placement on, written once against the TF1 module ``tf``.

Each builder takes the module it runs under (``placeviz``, or TensorFlow's ``tf.compat.v1``), so
the same code builds the same graph in both: the benchmark against TensorFlow runs them side by
side and the notebook draws them. Sizes are small enough for a CPU step in tens of milliseconds;
the structure is the original's.

- ``cifar10_towers``: tensorflow/models' ``cifar10_multi_gpu_train.py``: one tower per GPU, the
  variables on the CPU, the towers' gradients averaged on the CPU, a decayed learning rate and a
  moving average of every weight.
- ``resnet``: a ResNet v1 with batch norm (its moving averages updated through ``UPDATE_OPS``),
  its stages split over the GPUs.
- ``bert_encoder``: a BERT-style encoder (the embedding on the CPU, batched attention, dropout,
  layer norm, gelu), its layers split over the GPUs, Adam with clipped gradients.
- ``gpt_decoder``: OpenAI's GPT-2 (``gpt-2/src/model.py``): a decoder with causal attention,
  layer norm before each block, the token embedding tied to the output's weights, its layers
  split over the GPUs (the embeddings on the first, the output on the last), Adam.
- ``lstm_lm``: tensorflow/models' PTB word language model, model parallel as Google's NMT and
  tensorflow/nmt run it: the embedding on the CPU, each LSTM layer on its own GPU
  (``DeviceWrapper``), the softmax on the last layer's GPU, SGD with clipped gradients.

Every builder returns a ``Model``: the op a training step runs, its loss, and a feed of random
inputs of the right shapes.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Model:
    """One training step: run ``train_op`` (and ``loss``) with ``feed``."""

    train_op: Any
    loss: Any
    feed: dict[Any, np.ndarray]


def _gpu(tf: Any, index: int, gpus: int, pin: bool = True) -> Any:
    """The device scope of the ``index``-th part when there are ``gpus`` GPUs (the CPU without
    any); with ``pin=False`` no scope at all, so the placer decides."""
    if not pin:
        return contextlib.nullcontext()
    return tf.device(f"/gpu:{index % gpus}" if gpus else "/cpu:0")


# -- cifar10: towers, variables on the CPU -----------------------------------------------------
CIFAR_CLASSES = 10
CIFAR_IMAGE = 24  # the original crops its 32x32 images to 24x24


def _cifar_inference(tf: Any, images: Any, batch: int) -> Any:
    def variable_on_cpu(name: str, shape: list[int], initializer: Any) -> Any:
        with tf.device("/cpu:0"):
            return tf.get_variable(name, shape, initializer=initializer, dtype=tf.float32)

    def weights(name: str, shape: list[int], stddev: float, wd: float | None) -> Any:
        var = variable_on_cpu(name, shape, tf.truncated_normal_initializer(stddev=stddev))
        if wd is not None:
            tf.add_to_collection("losses", tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss"))
        return var

    with tf.variable_scope("conv1") as scope:
        kernel = weights("weights", [5, 5, 3, 64], 5e-2, None)
        conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding="SAME")
        biases = variable_on_cpu("biases", [64], tf.constant_initializer(0.0))
        conv1 = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
    pool1 = tf.nn.max_pool(conv1, [1, 3, 3, 1], [1, 2, 2, 1], padding="SAME", name="pool1")
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
    with tf.variable_scope("conv2") as scope:
        kernel = weights("weights", [5, 5, 64, 64], 5e-2, None)
        conv = tf.nn.conv2d(norm1, kernel, [1, 1, 1, 1], padding="SAME")
        biases = variable_on_cpu("biases", [64], tf.constant_initializer(0.1))
        conv2 = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm2")
    pool2 = tf.nn.max_pool(norm2, [1, 3, 3, 1], [1, 2, 2, 1], padding="SAME", name="pool2")
    with tf.variable_scope("local3") as scope:
        flat = tf.reshape(pool2, [batch, -1])
        dim = int(flat.shape[1])
        w = weights("weights", [dim, 384], 0.04, 0.004)
        b = variable_on_cpu("biases", [384], tf.constant_initializer(0.1))
        local3 = tf.nn.relu(tf.matmul(flat, w) + b, name=scope.name)
    with tf.variable_scope("local4") as scope:
        w = weights("weights", [384, 192], 0.04, 0.004)
        b = variable_on_cpu("biases", [192], tf.constant_initializer(0.1))
        local4 = tf.nn.relu(tf.matmul(local3, w) + b, name=scope.name)
    with tf.variable_scope("softmax_linear") as scope:
        w = weights("weights", [192, CIFAR_CLASSES], 1 / 192.0, None)
        b = variable_on_cpu("biases", [CIFAR_CLASSES], tf.constant_initializer(0.0))
        return tf.add(tf.matmul(local4, w), b, name=scope.name)


def _cifar_tower_loss(tf: Any, scope: str, images: Any, labels: Any, batch: int) -> Any:
    logits = _cifar_inference(tf, images, batch)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name="cross_entropy_per_example"
    )
    tf.add_to_collection("losses", tf.reduce_mean(cross_entropy, name="cross_entropy"))
    return tf.add_n(tf.get_collection("losses", scope), name="total_loss")


def _average_gradients(tf: Any, tower_grads: list[list[tuple[Any, Any]]]) -> list[tuple[Any, Any]]:
    """The original's: each variable's gradients stacked on a new axis and averaged."""
    averaged = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)
        averaged.append((grad, grad_and_vars[0][1]))
    return averaged


def cifar10_towers(
    tf: Any, gpus: int = 2, batch: int = 16, seed: int = 0, pin: bool = True
) -> Model:
    """``cifar10_multi_gpu_train.tower_loss`` on each GPU, averaged and applied on the CPU
    (``pin=False``: no device scopes but ``variable_on_cpu``'s, so the placer decides where the
    towers, the averaging and the schedule run)."""
    rng = np.random.default_rng(seed)
    feed: dict[Any, np.ndarray] = {}
    with tf.device("/cpu:0") if pin else contextlib.nullcontext():
        global_step = tf.get_variable(
            "global_step", [], initializer=tf.constant_initializer(0), trainable=False
        )
        lr = tf.train.exponential_decay(0.1, global_step, 350, 0.1, staircase=True)
        opt = tf.train.GradientDescentOptimizer(lr)
        tower_grads = []
        losses = []
        with tf.variable_scope(tf.get_variable_scope()):
            for i in range(max(gpus, 1)):
                with _gpu(tf, i, gpus, pin), tf.name_scope(f"tower_{i}") as scope:
                    images = tf.placeholder(tf.float32, [batch, CIFAR_IMAGE, CIFAR_IMAGE, 3])
                    labels = tf.placeholder(tf.int32, [batch])
                    feed[images] = rng.standard_normal(images.shape.as_list()).astype(np.float32)
                    feed[labels] = rng.integers(0, CIFAR_CLASSES, batch).astype(np.int32)
                    loss = _cifar_tower_loss(tf, scope, images, labels, batch)
                    tf.get_variable_scope().reuse_variables()
                    tower_grads.append(opt.compute_gradients(loss))
                    losses.append(loss)
        grads = _average_gradients(tf, tower_grads)
        apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)
        averages = tf.train.ExponentialMovingAverage(0.9999, global_step)
        averages_op = averages.apply(tf.trainable_variables())
        train_op = tf.group(apply_gradient_op, averages_op)
    return Model(train_op, tf.add_n(losses) if len(losses) > 1 else losses[0], feed)


# -- ResNet: batch norm, UPDATE_OPS, stages split over GPUs ----------------------------------
def _residual_block(tf: Any, x: Any, filters: int, strides: int, training: bool) -> Any:
    """ResNet v1's basic block: two 3x3 convolutions with batch norm, the shortcut projected
    where the shape changes."""
    shortcut = x
    if strides != 1 or int(x.shape[-1]) != filters:
        shortcut = tf.layers.conv2d(x, filters, 1, strides, use_bias=False, name="projection")
        shortcut = tf.layers.batch_normalization(shortcut, training=training, name="bn_projection")
    y = tf.layers.conv2d(x, filters, 3, strides, padding="same", use_bias=False, name="conv1")
    y = tf.nn.relu(tf.layers.batch_normalization(y, training=training, name="bn1"))
    y = tf.layers.conv2d(y, filters, 3, 1, padding="same", use_bias=False, name="conv2")
    y = tf.layers.batch_normalization(y, training=training, name="bn2")
    return tf.nn.relu(y + shortcut)


def resnet(
    tf: Any,
    gpus: int = 2,
    batch: int = 16,
    image: int = 32,
    stages: tuple[int, ...] = (16, 32, 64),
    blocks_per_stage: int = 2,
    classes: int = 10,
    seed: int = 0,
    pin: bool = True,
) -> Model:
    """A CIFAR-sized ResNet v1 trained with momentum; stage ``s`` on GPU ``s * gpus // len``
    (``pin=False``: no device scopes)."""
    rng = np.random.default_rng(seed)
    images = tf.placeholder(tf.float32, [batch, image, image, 3], name="images")
    labels = tf.placeholder(tf.int32, [batch], name="labels")
    with _gpu(tf, 0, gpus, pin):
        x = tf.layers.conv2d(images, stages[0], 3, padding="same", use_bias=False, name="stem")
        x = tf.nn.relu(tf.layers.batch_normalization(x, training=True, name="stem_bn"))
    for s, filters in enumerate(stages):
        with _gpu(tf, s * max(gpus, 1) // len(stages), gpus, pin):
            for b in range(blocks_per_stage):
                with tf.variable_scope(f"stage{s + 1}/block{b + 1}"):
                    strides = 2 if s > 0 and b == 0 else 1
                    x = _residual_block(tf, x, filters, strides, training=True)
    with _gpu(tf, gpus - 1, gpus, pin):
        pooled = tf.reduce_mean(x, [1, 2], name="global_pool")
        logits = tf.layers.dense(pooled, classes, name="logits")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
            name="loss",
        )
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
            loss, colocate_gradients_with_ops=True
        )
    feed = {
        images: rng.standard_normal((batch, image, image, 3)).astype(np.float32),
        labels: rng.integers(0, classes, batch).astype(np.int32),
    }
    return Model(train_op, loss, feed)


# -- BERT-style encoder: attention, layer norm, layers split over GPUs ------------------------
def _gelu(tf: Any, x: Any) -> Any:
    """BERT's tanh approximation."""
    cdf = 0.5 * (1.0 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def _layer_norm(tf: Any, x: Any, name: str) -> Any:
    with tf.variable_scope(name):
        width = int(x.shape[-1])
        gamma = tf.get_variable("gamma", [width], initializer=tf.ones_initializer())
        beta = tf.get_variable("beta", [width], initializer=tf.zeros_initializer())
        mean, variance = tf.nn.moments(x, [-1], keep_dims=True)
        return (x - mean) * tf.rsqrt(variance + 1e-12) * gamma + beta


def _split_heads(tf: Any, t: Any, heads: int, batch: int, seq: int) -> Any:
    """[batch, seq, width] -> [batch, heads, seq, width / heads]."""
    size = int(t.shape[-1]) // heads
    return tf.transpose(tf.reshape(t, [batch, seq, heads, size]), [0, 2, 1, 3])


def _merged_heads(tf: Any, t: Any, batch: int, seq: int) -> Any:
    """[batch, heads, seq, size] -> [batch, seq, heads * size]."""
    width = int(t.shape[1]) * int(t.shape[3])
    return tf.reshape(tf.transpose(t, [0, 2, 1, 3]), [batch, seq, width])


def _attention(tf: Any, x: Any, heads: int, dropout: float, batch: int, seq: int) -> Any:
    width = int(x.shape[-1])
    init = tf.truncated_normal_initializer(stddev=0.02)
    q, k, v = (
        _split_heads(
            tf, tf.layers.dense(x, width, name=name, kernel_initializer=init), heads, batch, seq
        )
        for name in ("query", "key", "value")
    )
    scores = tf.matmul(q, k, transpose_b=True) * (1.0 / math.sqrt(width // heads))
    probs = tf.nn.dropout(tf.nn.softmax(scores), rate=dropout)
    context = _merged_heads(tf, tf.matmul(probs, v), batch, seq)
    return tf.layers.dense(context, width, name="output", kernel_initializer=init)


def bert_encoder(
    tf: Any,
    gpus: int = 2,
    batch: int = 8,
    seq: int = 32,
    width: int = 64,
    heads: int = 4,
    layers: int = 4,
    vocab: int = 1000,
    classes: int = 2,
    dropout: float = 0.1,
    seed: int = 0,
    pin: bool = True,
) -> Model:
    """Token ids to a sentence class; layer ``l`` on GPU ``l * gpus // layers`` (``pin=False``:
    no GPU scopes, the embedding still on the CPU)."""
    rng = np.random.default_rng(seed)
    ids = tf.placeholder(tf.int32, [batch, seq], name="input_ids")
    labels = tf.placeholder(tf.int32, [batch], name="labels")
    init = tf.truncated_normal_initializer(stddev=0.02)
    with tf.device("/cpu:0"), tf.variable_scope("embeddings"):
        table = tf.get_variable("word_embeddings", [vocab, width], initializer=init)
        positions = tf.get_variable("position_embeddings", [seq, width], initializer=init)
        x = tf.nn.embedding_lookup(table, ids) + positions
    with _gpu(tf, 0, gpus, pin):
        x = tf.nn.dropout(_layer_norm(tf, x, "embeddings_norm"), rate=dropout)
    for layer in range(layers):
        device = _gpu(tf, layer * max(gpus, 1) // layers, gpus, pin)
        with device, tf.variable_scope(f"layer_{layer}"):
            with tf.variable_scope("attention"):
                attended = _attention(tf, x, heads, dropout, batch, seq)
                x = _layer_norm(tf, tf.nn.dropout(attended, rate=dropout) + x, "norm")
            with tf.variable_scope("feed_forward"):
                hidden = tf.layers.dense(x, 4 * width, name="intermediate")
                out = tf.layers.dense(_gelu(tf, hidden), width, name="output")
                x = _layer_norm(tf, tf.nn.dropout(out, rate=dropout) + x, "norm")
    with _gpu(tf, gpus - 1, gpus, pin), tf.variable_scope("classifier"):
        first = tf.squeeze(x[:, 0:1, :], axis=1)
        pooled = tf.layers.dense(first, width, activation=tf.tanh, name="pooler")
        logits = tf.layers.dense(pooled, classes, name="logits")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
    optimizer = tf.train.AdamOptimizer(1e-4)
    grads, variables = zip(*optimizer.compute_gradients(loss, colocate_gradients_with_ops=True))
    clipped, _ = tf.clip_by_global_norm(grads, 1.0)
    train_op = optimizer.apply_gradients(zip(clipped, variables))
    feed = {
        ids: rng.integers(0, vocab, (batch, seq)).astype(np.int32),
        labels: rng.integers(0, classes, batch).astype(np.int32),
    }
    return Model(train_op, loss, feed)


# -- GPT-2-style decoder: causal attention, tied embeddings, layers split over GPUs -----------
def _causal_attention(tf: Any, x: Any, heads: int, dropout: float, batch: int, seq: int) -> Any:
    """GPT-2's ``attn``: one projection to queries, keys and values, each position attending to
    itself and the ones before it (``attention_mask``: later scores pushed to -1e10)."""
    width = int(x.shape[-1])
    init = tf.truncated_normal_initializer(stddev=0.02)

    def split_heads(t: Any) -> Any:
        return _split_heads(tf, t, heads, batch, seq)

    q, k, v = tf.split(tf.layers.dense(x, 3 * width, name="c_attn", kernel_initializer=init), 3, 2)
    scores = tf.matmul(split_heads(q), split_heads(k), transpose_b=True) * (
        1.0 / math.sqrt(width // heads)
    )
    later = tf.range(seq)[:, None] >= tf.range(seq)[None, :]
    mask = tf.reshape(tf.cast(later, scores.dtype), [1, 1, seq, seq])
    scores = scores * mask - 1e10 * (1.0 - mask)
    probs = tf.nn.dropout(tf.nn.softmax(scores), rate=dropout)
    context = _merged_heads(tf, tf.matmul(probs, split_heads(v)), batch, seq)
    return tf.layers.dense(context, width, name="c_proj", kernel_initializer=init)


def gpt_decoder(
    tf: Any,
    gpus: int = 2,
    batch: int = 4,
    seq: int = 16,
    width: int = 64,
    heads: int = 4,
    layers: int = 4,
    vocab: int = 1000,
    dropout: float = 0.1,
    seed: int = 0,
    pin: bool = True,
) -> Model:
    """Next-token prediction at every position (GPT-2-XL: 48 layers, width 1600, 25 heads,
    sequence 1024, vocabulary 50257); layer ``l`` on GPU ``l * gpus // layers`` (``pin=False``:
    no scopes at all)."""
    rng = np.random.default_rng(seed)
    ids = tf.placeholder(tf.int32, [batch, seq], name="input_ids")
    targets = tf.placeholder(tf.int32, [batch, seq], name="targets")
    init = tf.truncated_normal_initializer(stddev=0.02)
    with _gpu(tf, 0, gpus, pin), tf.variable_scope("embeddings"):
        wte = tf.get_variable("wte", [vocab, width], initializer=init)
        wpe = tf.get_variable("wpe", [seq, width], initializer=init)
        x = tf.nn.dropout(tf.nn.embedding_lookup(wte, ids) + wpe, rate=dropout)
    for layer in range(layers):
        device = _gpu(tf, layer * max(gpus, 1) // layers, gpus, pin)
        with device, tf.variable_scope(f"h{layer}"):
            with tf.variable_scope("attn"):
                attended = _causal_attention(
                    tf, _layer_norm(tf, x, "ln_1"), heads, dropout, batch, seq
                )
                x = x + tf.nn.dropout(attended, rate=dropout)
            with tf.variable_scope("mlp"):
                hidden = tf.layers.dense(_layer_norm(tf, x, "ln_2"), 4 * width, name="c_fc")
                out = tf.layers.dense(_gelu(tf, hidden), width, name="c_proj")
                x = x + tf.nn.dropout(out, rate=dropout)
    with _gpu(tf, gpus - 1, gpus, pin), tf.variable_scope("output"):
        flat = tf.reshape(_layer_norm(tf, x, "ln_f"), [batch * seq, width])
        logits = tf.matmul(flat, wte, transpose_b=True)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.reshape(targets, [-1]), logits=logits
            ),
            name="loss",
        )
    train_op = tf.train.AdamOptimizer(1e-4).minimize(loss, colocate_gradients_with_ops=True)
    words = rng.integers(0, vocab, (batch, seq + 1)).astype(np.int32)
    return Model(train_op, loss, {ids: words[:, :-1], targets: words[:, 1:]})


# -- LSTM language model: a layer per GPU ------------------------------------------------------
def _lstm_layer(tf: Any, width: int, keep_prob: float, device: str | None) -> Any:
    """One layer of the stack: an LSTM cell, its output dropped with one mask for every time
    step (variational dropout) when ``keep_prob < 1``, all of it on ``device`` when given. The
    dropout's mask is drawn where the cell is built, so it is built under the device too."""
    with tf.device(device) if device else contextlib.nullcontext():
        cell = tf.nn.rnn_cell.BasicLSTMCell(width, forget_bias=0.0)
        if keep_prob < 1:
            cell = tf.nn.rnn_cell.DropoutWrapper(
                cell, output_keep_prob=keep_prob, variational_recurrent=True, dtype=tf.float32
            )
    return tf.nn.rnn_cell.DeviceWrapper(cell, device) if device else cell


def _unroll(tf: Any, cell: Any, embedded: Any, steps: int, dynamic: bool) -> Any:
    """The stack run over the time steps: ``static_rnn`` unrolls it into one copy of the cell's
    ops per step (no control flow) and gives a list of each step's output; ``dynamic_rnn``
    loops over the steps in a ``while_loop`` and gives one [batch, steps, width] tensor."""
    if dynamic:
        outputs, _ = tf.nn.dynamic_rnn(cell, embedded, dtype=tf.float32)
        return outputs
    inputs = tf.unstack(embedded, num=steps, axis=1)
    outputs, _ = tf.nn.static_rnn(cell, inputs, dtype=tf.float32)
    return outputs


def lstm_lm(
    tf: Any,
    gpus: int = 2,
    batch: int = 16,
    steps: int = 10,
    width: int = 128,
    layers: int = 2,
    vocab: int = 1000,
    keep_prob: float = 1.0,
    initializer: Any = None,
    seed: int = 0,
    pin: bool = True,
    dynamic: bool = False,
) -> Model:
    """Next-word prediction over ``steps`` words; layer ``l`` on GPU ``l * gpus // layers``
    (``pin=False``: no GPU scopes, the embedding still on the CPU), unrolled by ``static_rnn``
    or (``dynamic``) looped by ``dynamic_rnn``. Weights start uniform in [-0.1, 0.1] as the PTB
    model's, or from ``initializer``."""
    rng = np.random.default_rng(seed)
    ids = tf.placeholder(tf.int32, [batch, steps], name="input_ids")
    targets = tf.placeholder(tf.int32, [batch, steps], name="targets")
    init = initializer or tf.random_uniform_initializer(-0.1, 0.1)
    with tf.variable_scope("lm", initializer=init):
        with tf.device("/cpu:0"):
            embedding = tf.get_variable("embedding", [vocab, width])
            embedded = tf.nn.embedding_lookup(embedding, ids)
        cells = []
        for layer in range(layers):
            device = f"/gpu:{layer * gpus // layers}" if gpus else "/cpu:0"
            cells.append(_lstm_layer(tf, width, keep_prob, device if pin else None))
        with _gpu(tf, 0, gpus, pin):
            outputs = _unroll(tf, tf.nn.rnn_cell.MultiRNNCell(cells), embedded, steps, dynamic)
        with _gpu(tf, gpus - 1, gpus, pin), tf.variable_scope("softmax"):
            flat = tf.reshape(outputs if dynamic else tf.concat(outputs, 1), [-1, width])
            weights = tf.get_variable("w", [width, vocab])
            biases = tf.get_variable("b", [vocab])
            logits = tf.nn.bias_add(tf.matmul(flat, weights), biases)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=tf.reshape(targets, [-1]), logits=logits
                ),
                name="loss",
            )
    optimizer = tf.train.GradientDescentOptimizer(1.0)
    grads, variables = zip(*optimizer.compute_gradients(loss, colocate_gradients_with_ops=True))
    clipped, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = optimizer.apply_gradients(zip(clipped, variables))
    words = rng.integers(0, vocab, (batch, steps + 1)).astype(np.int32)
    return Model(train_op, loss, {ids: words[:, :-1], targets: words[:, 1:]})


ZOO: dict[str, Callable[..., Model]] = {
    "cifar10": cifar10_towers,
    "resnet": resnet,
    "bert": bert_encoder,
    "gpt": gpt_decoder,
    "lstm": lstm_lm,
    "lstm_dynamic": functools.partial(lstm_lm, dynamic=True),
}
