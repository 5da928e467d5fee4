"""Conformance programs: TF1's TensorArray (issue 26): the handle and flow ops, their values,
names and colocation, dynamic size, shapes inferred from writes, reading an unwritten or a
cleared element, writing twice, gradients through each op, and arrays carried by while loops."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Run, Runs
from conformance.programs import family

__all__: list[str] = []

ROWS = np.arange(12, dtype=np.float32).reshape(4, 3) / 4.0 - 1.0


def _rows(tf: Any) -> Any:
    return tf.constant(ROWS, name="rows")


def _write_read(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    return [ta.read(2), ta.read(0)]


def _unstack_stack(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=4).unstack(_rows(tf))
    return ta.stack()


def _gather_scatter(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=5, element_shape=[3])
    ta = ta.scatter([4, 0, 2], tf.constant(ROWS[:3]))
    return ta.gather([0, 2, 4])


def _unwritten_zeros(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    ta = ta.write(0, [1.0, 2.0])
    return ta.stack()


def _dynamic(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    ta = ta.write(0, [1.0]).write(3, [4.0])
    return [ta.size(), ta.read(3)]


def _concat_split(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.split(tf.constant(np.arange(6, dtype=np.float32)), [1, 3, 2])
    return [ta.read(1), ta.size()]


def _concat(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    ta = ta.write(0, [[1.0, 2.0]]).write(1, [[3.0, 4.0], [5.0, 6.0]])
    return ta.concat()


def _keep_after_read(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False)
    ta = ta.write(0, 1.5).write(1, 2.5)
    return [ta.read(0), ta.read(0), ta.stack()]


def _int_elements(tf: Any) -> Any:
    ta = tf.TensorArray(tf.int32, size=2)
    ta = ta.write(0, 7).write(1, 9)
    return ta.stack()


def _close(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    value = ta.read(0)
    with tf.control_dependencies([value]):
        closed = ta.close()
    return Runs(Run(value), Run(closed))


def _named(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2, name="arr", tensor_array_name="store")
    ta = ta.write(0, 1.0, name="first").write(1, 2.0)
    return [ta.read(1, name="second"), ta.stack(name="all")]


def _on_devices(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        x = tf.constant([1.0, 2.0], name="x")
    with tf.device("/cpu:0"):
        ta = tf.TensorArray(tf.float32, size=2)
        ta = ta.write(0, x).write(1, x * 2.0)
        out = ta.stack()
    return out


family(
    "tensor_array",
    {
        "write_read": _write_read,
        "unstack_stack": _unstack_stack,
        "gather_scatter": _gather_scatter,
        "unwritten_zeros": _unwritten_zeros,
        "dynamic_size": _dynamic,
        "split": _concat_split,
        "concat": _concat,
        "clear_after_read_false": _keep_after_read,
        "int_elements": _int_elements,
        "close": _close,
        "named": _named,
    },
)
family("tensor_array", {"on_devices": _on_devices}, cpus=2)


# -- errors TF raises when building or running ---------------------------------------------------
def _write_twice(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2)
    ta = ta.write(0, 1.0).write(0, 2.0)
    return ta.read(0)


def _read_twice(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    return [ta.read(0), ta.read(0)]


def _read_unwritten_unknown_shape(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    ta = ta.write(0, 1.0)
    return ta.read(1)


def _write_past_size(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2)
    return ta.write(tf.constant(2), 1.0).flow


def _read_past_size(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(1, 2.0)
    return ta.read(tf.constant(5))


def _inconsistent_shapes(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2)
    return ta.write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])


def _scatter_count(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=3)
    indices = tf.placeholder(tf.int32, [None], name="indices")
    ta = ta.scatter(indices, tf.constant(ROWS[:2]))
    return Run(ta.flow, {indices: [0, 1, 2]})


def _split_lengths(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2)
    return ta.split(tf.constant([1.0, 2.0, 3.0]), [1, 1]).flow


family(
    "tensor_array_error_runtime",
    {
        "write_twice": _write_twice,
        "read_twice": _read_twice,
        "read_unwritten_unknown_shape": _read_unwritten_unknown_shape,
        "write_past_size": _write_past_size,
        "read_past_size": _read_past_size,
        "scatter_count": _scatter_count,
        "split_lengths": _split_lengths,
    },
    error=("TensorArray",),
)
family("tensor_array_error_build", {"inconsistent_shapes": _inconsistent_shapes}, error=("shapes",))


# -- gradients --------------------------------------------------------------------------------
def _grad(tf: Any, make: Any) -> Any:
    x = tf.constant(ROWS, name="x")
    y = make(tf, x)
    return [y, tf.gradients(tf.reduce_sum(y * y), x)]


def _grad_stack(tf: Any, x: Any) -> Any:
    return tf.TensorArray(tf.float32, size=4).unstack(x * 2.0).stack()


def _grad_read_write(tf: Any, x: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=4).unstack(x)
    out = tf.TensorArray(tf.float32, size=2)
    out = out.write(0, ta.read(3) * ta.read(1)).write(1, tf.tanh(ta.read(0)))
    return out.stack()


def _grad_gather(tf: Any, x: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=6).scatter([5, 1, 0, 3], x)
    return ta.gather([0, 3, 5, 2])


def _grad_concat(tf: Any, x: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=2).split(x, [1, 3])
    return tf.reshape(ta.concat(), [4, 3])


def _grad_dynamic(tf: Any, x: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[3])
    ta = ta.write(0, x[0]).write(2, x[1] + x[2])
    return ta.stack()


def _grad_read_kept(tf: Any, x: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=4, clear_after_read=False).unstack(x)
    return ta.read(1) + ta.read(1) * ta.read(2)


family(
    "tensor_array_gradient",
    {
        "stack": lambda tf: _grad(tf, _grad_stack),
        "read_write": lambda tf: _grad(tf, _grad_read_write),
        "gather_scatter": lambda tf: _grad(tf, _grad_gather),
        "concat_split": lambda tf: _grad(tf, _grad_concat),
        "dynamic_size": lambda tf: _grad(tf, _grad_dynamic),
        "read_twice_kept": lambda tf: _grad(tf, _grad_read_kept),
    },
)


# -- inside while loops -------------------------------------------------------------------------
def _loop_collect(tf: Any) -> Any:
    x = tf.constant(ROWS, name="x")
    inputs = tf.TensorArray(tf.float32, size=4).unstack(x)
    outputs = tf.TensorArray(tf.float32, size=4)

    def body(i: Any, acc: Any, out: Any) -> Any:
        v = inputs.read(i) * acc
        return i + 1, acc + v, out.write(i, v)

    _, acc, out = tf.while_loop(lambda i, *_: i < 4, body, [0, tf.ones([3]), outputs])
    return [out.stack(), acc]


def _loop_dynamic(tf: Any) -> Any:
    n = tf.placeholder(tf.int32, [], name="n")
    squares = tf.TensorArray(tf.int32, size=0, dynamic_size=True)

    def body(i: Any, ta: Any) -> Any:
        return i + 1, ta.write(i, i * i)

    _, squares = tf.while_loop(lambda i, ta: i < n, body, [0, squares])
    return Runs(Run(squares.stack(), {n: 5}), Run(squares.size(), {n: 2}))


def _loop_single_array(tf: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[]).write(0, 1.0)
    ta = tf.while_loop(lambda ta: ta.size() < 0, lambda ta: ta, [ta], return_same_structure=False)
    return ta.read(0)


def _loop_gradient(tf: Any) -> Any:
    x = tf.constant(ROWS, name="x")
    w = tf.constant([0.5, -1.0, 2.0], name="w")
    inputs = tf.TensorArray(tf.float32, size=4).unstack(x)
    outputs = tf.TensorArray(tf.float32, size=4)

    def body(i: Any, h: Any, out: Any) -> Any:
        h = tf.tanh(inputs.read(i) * w + h)
        return i + 1, h, out.write(i, h)

    _, h, out = tf.while_loop(lambda i, *_: i < 4, body, [0, tf.zeros([3]), outputs])
    loss = tf.reduce_sum(out.stack()) + tf.reduce_sum(h * h)
    return [loss, tf.gradients(loss, [x, w])]


family(
    "tensor_array_while",
    {
        "collect": _loop_collect,
        "dynamic_size": _loop_dynamic,
        "single_array": _loop_single_array,
    },
)
family("tensor_array_while", {"gradient": _loop_gradient})


def _read_under_other_device(tf: Any) -> Any:
    """A read asked for another device than its array: the resource edge wins (TF ignores the
    read's request), so the array, its ops and the read share the written value's device."""
    with tf.device("/cpu:1"):
        x = tf.constant(ROWS, name="x") * 2.0
    ta = tf.TensorArray(tf.float32, size=4).unstack(x)
    with tf.device("/cpu:0"):
        row = ta.read(1)
        size = ta.size()
    return [row, size, row + 1.0]


family("tensor_array", {"read_under_other_device": _read_under_other_device}, cpus=2)
