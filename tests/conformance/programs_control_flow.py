"""Conformance programs: TF1's control flow (issue 26): ``cond`` and ``case`` built from Switch
and Merge, values with the predicate fed both ways, nested conds, branches on other devices,
ref variables switched into a branch, gradients through conds and training steps."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []

X = np.array([1.0, -2.0, 3.0], dtype=np.float32)


def _fed(tf: Any, build: Any) -> Any:
    """A cond on a fed predicate, run once each way."""
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [3], name="x")
    result = build(tf, p, x)
    return Runs(Run(result, {p: True, x: X}), Run(result, {p: False, x: X}))


family(
    "cond_fed",
    {
        "mul_or_add": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: x * 2.0, lambda: x + 1.0)
        ),
        "outer_value": lambda tf: _fed(tf, lambda tf, p, x: tf.cond(p, lambda: x, lambda: -x)),
        "both_outer": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: x, lambda: tf.square(x))
        ),
        "constants": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
        ),
        "python_values": lambda tf: _fed(tf, lambda tf, p, x: tf.cond(p, lambda: 1.0, lambda: 2.0)),
        "tuple": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: (x, x * 2.0), lambda: (x * 3.0, x))
        ),
        "nested_structure": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(
                p, lambda: [x, (x + 1.0, x * x)], lambda: [x - 1.0, (x, tf.abs(x))]
            ),
        ),
        "singleton_list": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: [x], lambda: [-x])
        ),
        "strict_singleton": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: [x], lambda: [-x], strict=True)
        ),
        "named": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: x * 2.0, lambda: x, name="choose")
        ),
        "in_name_scope": lambda tf: _fed(
            tf, lambda tf, p, x: _in_scope(tf, "block", lambda: tf.cond(p, lambda: x, lambda: -x))
        ),
        "reduce_in_branch": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(p, lambda: tf.reduce_sum(x), lambda: tf.reduce_max(x)),
        ),
        "matmul_in_branch": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(
                p,
                lambda: tf.matmul(tf.reshape(x, [1, 3]), tf.ones([3, 2])),
                lambda: tf.zeros([1, 2]),
            ),
        ),
        "int_values": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(p, lambda: tf.constant([1, 2]), lambda: tf.constant([3, 4])),
        ),
        "pred_computed": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(
                tf.logical_and(p, tf.reduce_sum(x) > 0.0), lambda: x * 10.0, lambda: x
            ),
        ),
        "two_conds_one_pred": lambda tf: _fed(
            tf,
            lambda tf, p, x: [
                tf.cond(p, lambda: x + 1.0, lambda: x),
                tf.cond(p, lambda: x, lambda: x - 1.0),
            ],
        ),
        "merge_used_twice": lambda tf: _fed(
            tf, lambda tf, p, x: (lambda r: r * r + r)(tf.cond(p, lambda: x, lambda: x * 0.5))
        ),
        "shape_differs": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: x, lambda: tf.concat([x, x], 0))
        ),
        "nested_true": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(
                p,
                lambda: tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: x * 3.0),
                lambda: x,
            ),
        ),
        "nested_both": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(
                p,
                lambda: tf.cond(p, lambda: x + 1.0, lambda: x + 2.0),
                lambda: tf.cond(tf.logical_not(p), lambda: x + 3.0, lambda: x + 4.0),
            ),
        ),
        "nested_outer_value": lambda tf: _fed(
            tf,
            lambda tf, p, x: tf.cond(
                p, lambda: tf.cond(p, lambda: x, lambda: -x), lambda: tf.constant(X)
            ),
        ),
        "control_dependency_op": lambda tf: _fed(
            tf, lambda tf, p, x: tf.cond(p, lambda: tf.no_op(), lambda: tf.no_op())
        ),
    },
)


def _in_scope(tf: Any, name: str, build: Any) -> Any:
    with tf.name_scope(name):
        return build()


family(
    "cond_const_pred",
    {
        "true": lambda tf: tf.cond(
            tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2)
        ),
        "false": lambda tf: tf.cond(
            tf.constant(False), lambda: tf.constant(1), lambda: tf.constant(2)
        ),
        "comparison": lambda tf: tf.cond(
            tf.constant(3.0) < tf.constant(4.0),
            lambda: tf.constant(10.0),
            lambda: tf.constant(20.0),
        ),
    },
)


def _devices(tf: Any) -> Any:
    """Each branch asks for its own CPU: the ops follow their device scopes; the Switches of
    outer values stay with those values."""
    p = tf.placeholder(tf.bool, [], name="p")
    with tf.device("/cpu:0"):
        x = tf.constant(X, name="x")

    def on(device: str, fn: Any) -> Any:
        def branch() -> Any:
            with tf.device(device):
                return fn()

        return branch

    r = tf.cond(p, on("/cpu:1", lambda: x * 2.0), on("/cpu:0", lambda: x + 1.0))
    return Runs(Run(r, {p: True}), Run(r, {p: False}))


def _cond_in_device_scope(tf: Any) -> Any:
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.constant(X, name="x")
    with tf.device("/cpu:1"):
        r = tf.cond(p, lambda: x * 2.0, lambda: tf.constant(X) + 1.0)
    return Runs(Run(r, {p: True}), Run(r, {p: False}))


program(_devices, name="cond_branches_on_two_cpus", cpus=2)
program(_cond_in_device_scope, name="cond_inside_device_scope", cpus=2)


def _ref_assign(tf: Any) -> Any:
    """An assign in a branch reads the variable's reference through a RefSwitch, which stays
    with the variable."""
    with tf.device("/cpu:1"):
        v = tf.Variable([1.0, 2.0], name="v")
    p = tf.placeholder(tf.bool, [], name="p")
    r = tf.cond(p, lambda: tf.assign(v, [5.0, 6.0]), lambda: tf.identity(v))
    return Runs(
        tf.global_variables_initializer(),
        Run(r, {p: False}),
        Run(r, {p: True}),
        Run(v.value()),
    )


def _ref_assign_add(tf: Any) -> Any:
    v = tf.Variable(0.0, name="counter")
    p = tf.placeholder(tf.bool, [], name="p")
    r = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_sub(v, 2.0))
    return Runs(
        tf.global_variables_initializer(),
        Run(r, {p: True}),
        Run(r, {p: True}),
        Run(r, {p: False}),
        Run(v.value()),
    )


def _variable_read_in_branch(tf: Any) -> Any:
    v = tf.Variable([3.0, 4.0], name="v")
    p = tf.placeholder(tf.bool, [], name="p")
    r = tf.cond(p, lambda: v * 2.0, lambda: v.read_value())
    return Runs(tf.global_variables_initializer(), Run(r, {p: True}), Run(r, {p: False}))


program(_ref_assign, name="cond_ref_assign_on_other_cpu", cpus=2)
program(_ref_assign_add, name="cond_ref_assign_add_or_sub")
program(_variable_read_in_branch, name="cond_variable_read_in_branch")


def _initialized_value(tf: Any) -> Any:
    v = tf.Variable([1.0, 2.0], name="v")
    value = v.initialized_value()
    return Runs(Run(value), v.initializer, Run(tf.assign(v, [7.0, 8.0])), Run(value))


program(_initialized_value, name="cond_variable_initialized_value")


def _gradient(build: Any) -> Any:
    def run(tf: Any) -> Any:
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.placeholder(tf.float32, [3], name="x")
        v = tf.Variable([0.5, -1.0, 2.0], name="v")
        y = build(tf, p, x, v)
        loss = tf.reduce_sum(y * y)
        grads = tf.gradients(loss, [x, v])
        return Runs(
            tf.global_variables_initializer(),
            Run([loss, grads], {p: True, x: X}),
            Run([loss, grads], {p: False, x: X}),
        )

    return run


family(
    "cond_gradient",
    {
        "mul_or_const": _gradient(
            lambda tf, p, x, v: tf.cond(p, lambda: x * 2.0 + v, lambda: tf.constant(X))
        ),
        "both_use_inputs": _gradient(
            lambda tf, p, x, v: tf.cond(p, lambda: x * v, lambda: tf.square(x) - v)
        ),
        "outer_values": _gradient(lambda tf, p, x, v: tf.cond(p, lambda: x, lambda: v)),
        "tanh_sigmoid": _gradient(
            lambda tf, p, x, v: tf.cond(p, lambda: tf.tanh(x * v), lambda: tf.sigmoid(x + v))
        ),
        "nested": _gradient(
            lambda tf, p, x, v: tf.cond(
                p, lambda: tf.cond(p, lambda: x * v, lambda: x), lambda: v * 3.0
            )
        ),
        "used_after": _gradient(lambda tf, p, x, v: tf.cond(p, lambda: x * v, lambda: x + v) * v),
        "tuple": _gradient(
            lambda tf, p, x, v: tf.add_n(list(tf.cond(p, lambda: (x * v, v), lambda: (v, x - v))))
        ),
    },
)


def _train(optimizer: Any, steps: int = 3) -> Any:
    """A linear model whose loss a fed flag switches between two forms; values after steps."""

    def run(tf: Any) -> Any:
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.constant([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], name="x")
        y = tf.constant([[1.0], [2.0], [0.0]], name="y")
        w = tf.Variable([[0.1], [-0.2]], name="w")
        b = tf.Variable(0.3, name="b")
        pred = tf.matmul(x, w) + b
        loss = tf.cond(
            p,
            lambda: tf.reduce_mean(tf.square(pred - y)),
            lambda: tf.reduce_mean(tf.abs(pred - y)) + 0.1 * tf.reduce_sum(w * w),
        )
        train = optimizer(tf).minimize(loss)
        runs = [tf.global_variables_initializer()]
        for step in range(steps):
            runs.append(Run(train, {p: step % 2 == 0}))
        runs.append(Run([w.value(), b.value(), loss], {p: True}))
        return Runs(*runs)

    return run


family(
    "cond_train",
    {
        "sgd": _train(lambda tf: tf.train.GradientDescentOptimizer(0.1)),
        "momentum": _train(lambda tf: tf.train.MomentumOptimizer(0.1, 0.9)),
        "adam": _train(lambda tf: tf.train.AdamOptimizer(0.05)),
    },
)


def _case_program(tf: Any) -> Any:
    i = tf.placeholder(tf.int32, [], name="i")
    x = tf.constant(X, name="x")
    r = tf.case(
        [(tf.equal(i, 0), lambda: x * 2.0), (tf.equal(i, 1), lambda: x + 10.0)],
        default=lambda: -x,
    )
    return Runs(Run(r, {i: 0}), Run(r, {i: 1}), Run(r, {i: 5}))


def _case_first_true(tf: Any) -> Any:
    i = tf.placeholder(tf.int32, [], name="i")
    r = tf.case(
        [(i > 0, lambda: tf.constant(1)), (i > 1, lambda: tf.constant(2))],
        default=lambda: tf.constant(0),
        name="pick",
    )
    return Runs(Run(r, {i: 3}), Run(r, {i: 1}), Run(r, {i: -1}))


program(_case_program, name="case_three_ways")
program(_case_first_true, name="case_first_true_wins")


def _case_checked(tf: Any, i: int, default: bool, exclusive: bool) -> Any:
    """A case whose predicates TF checks with Asserts: at most one true (``exclusive``), or,
    without a default, the last pair's run only when its predicate is the one true."""
    index = tf.placeholder(tf.int32, [], name="i")
    x = tf.constant(X, name="x")
    r = tf.case(
        [(index > 0, lambda: x * 2.0), (index > 1, lambda: x + 10.0)],
        default=(lambda: -x) if default else None,
        exclusive=exclusive,
    )
    return Run(r, {index: i})


family(
    "case_checked",
    {
        "exclusive_one_true": lambda tf: _case_checked(tf, 1, True, True),
        "exclusive_none_true": lambda tf: _case_checked(tf, -1, True, True),
        "no_default_last_true": lambda tf: _case_checked(tf, 2, False, False),
        # the first pair is taken: the default's Asserts do not run
        "no_default_exclusive": lambda tf: _case_checked(tf, 3, False, True),
    },
)
family(
    "case_checked_fails",
    {
        "exclusive_two_true": lambda tf: _case_checked(tf, 3, True, True),
        "no_default_none_true": lambda tf: _case_checked(tf, -1, False, False),
    },
    error=("Input error",),
)


family(
    "cond_error",
    {
        "python_bool": lambda tf: tf.cond(True, lambda: tf.constant(1), lambda: tf.constant(2)),
        "float_pred": lambda tf: tf.cond(
            tf.constant(1.0), lambda: tf.constant(1), lambda: tf.constant(2)
        ),
        "vector_pred": lambda tf: tf.cond(
            tf.constant([True, False]), lambda: tf.constant(1), lambda: tf.constant(2)
        ),
        "different_dtypes": lambda tf: tf.cond(
            tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2.0)
        ),
        "different_structures": lambda tf: tf.cond(
            tf.constant(True),
            lambda: (tf.constant(1), tf.constant(2)),
            lambda: tf.constant(3),
        ),
        "different_lengths": lambda tf: tf.cond(
            tf.constant(True),
            lambda: [tf.constant(1), tf.constant(2)],
            lambda: [tf.constant(3), tf.constant(4), tf.constant(5)],
        ),
        "no_return": lambda tf: tf.cond(tf.constant(True), lambda: None, lambda: tf.constant(1)),
        "not_callable": lambda tf: tf.cond(tf.constant(True), tf.constant(1), lambda: 2),
    },
    error=(),
)


def _fetch_branch_op(tf: Any) -> Any:
    p = tf.placeholder(tf.bool, [], name="p")
    tf.cond(p, lambda: tf.constant(1.0) * 2.0, lambda: tf.constant(3.0))
    return Run(tf.get_default_graph().get_tensor_by_name("cond/mul:0"), {p: True})


program(_fetch_branch_op, name="cond_error_fetch_branch_op", error=("not fetchable",))


def _names(tf: Any) -> Any:
    p = tf.placeholder(tf.bool, [], name="p")
    r = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    return Note(name=r.name, op=r.op.type, inputs=[t.name for t in r.op.inputs])


program(_names, name="cond_result_names")


# -- while loops ---------------------------------------------------------------------------------


def _loop(build: Any, feed: Any = None) -> Any:
    """A loop over a fed vector, run with two values."""

    def run(tf: Any) -> Any:
        x = tf.placeholder(tf.float32, [3], name="x")
        result = build(tf, x)
        return Runs(Run(result, {x: X}), Run(result, {x: X * 0.5}))

    return run


family(
    "while",
    {
        "count_to_ten": lambda tf: tf.while_loop(
            lambda i: i < 10, lambda i: i + 1, [tf.constant(0)]
        ),
        "count_scalar_not_list": lambda tf: tf.while_loop(
            lambda i: i < 5, lambda i: i + 2, [tf.constant(1)]
        ),
        "two_vars": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0 + x), [tf.constant(0), x]
            )
        ),
        "data_dependent": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: tf.reduce_sum(tf.abs(a)) < 100.0, lambda a: a * 3.0, [x]
            )
        ),
        "never_runs": _loop(
            lambda tf, x: tf.while_loop(lambda a: tf.reduce_sum(a) > 1e9, lambda a: a * 2.0, [x])
        ),
        "maximum_iterations": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: tf.reduce_sum(a) < 1e9, lambda a: a + 1.0, [x], maximum_iterations=4
            )
        ),
        "maximum_iterations_two_vars": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, a: i < 100,
                lambda i, a: (i + 1, a - 1.0),
                [tf.constant(0), x],
                maximum_iterations=3,
            )
        ),
        "maximum_iterations_tensor": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: True, lambda a: a * 2.0, [x], maximum_iterations=tf.constant(5)
            )
        ),
        "maximum_iterations_zero": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: True, lambda a: a * 2.0, [x], maximum_iterations=0
            )
        ),
        "outer_constant_in_body": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, s: i < 4, lambda i, s: (i + 1, s + x * 2.0), [tf.constant(0), x * 0.0]
            )
        ),
        "outer_value_in_cond": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: tf.reduce_sum(a) < tf.reduce_sum(x) * 8.0, lambda a: a + 1.0, [x]
            )
        ),
        "tuple_structure": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, ab: i < 3,
                lambda i, ab: (i + 1, (ab[0] + ab[1], ab[1] * 2.0)),
                (tf.constant(0), (x, x + 1.0)),
            )
        ),
        "list_structure": _loop(
            lambda tf, x: tf.while_loop(
                lambda a, b, c: tf.reduce_sum(a) < 50.0,
                lambda a, b, c: [a + b, b + c, c + 1.0],
                [x, x, x],
            )
        ),
        "return_same_structure": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: tf.reduce_sum(a) < 20.0,
                lambda a: a * 2.0,
                [x],
                return_same_structure=True,
            )
        ),
        "named": _loop(
            lambda tf, x: tf.while_loop(
                lambda a: tf.reduce_sum(a) < 20.0, lambda a: a * 2.0, [x], name="grow"
            )
        ),
        "parallel_iterations_1": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, a: i < 5,
                lambda i, a: (i + 1, a * 1.5),
                [tf.constant(0), x],
                parallel_iterations=1,
            )
        ),
        "constants_in_body": lambda tf: tf.while_loop(
            lambda i, s: i < 3,
            lambda i, s: (i + 1, s + tf.constant([1.0, 2.0])),
            [tf.constant(0), tf.zeros([2])],
        ),
        "matmul_body": lambda tf: tf.while_loop(
            lambda i, m: i < 3,
            lambda i, m: (i + 1, tf.matmul(m, tf.constant([[0.5, 1.0], [0.0, 1.0]]))),
            [tf.constant(0), tf.constant([[1.0, 2.0], [3.0, 4.0]])],
        ),
        "cond_in_body": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, a: i < 6,
                lambda i, a: (
                    i + 1,
                    tf.cond(tf.equal(i % 2, 0), lambda: a * 2.0, lambda: a - 1.0),
                ),
                [tf.constant(0), x],
            )
        ),
        "nested_loops": lambda tf: tf.while_loop(
            lambda i, total: i < 3,
            lambda i, total: (
                i + 1,
                total
                + tf.while_loop(lambda j, s: j < i + 2, lambda j, s: (j + 1, s + j), [0, 0])[1],
            ),
            [tf.constant(0), tf.constant(0)],
        ),
        "nested_outer_value": _loop(
            lambda tf, x: tf.while_loop(
                lambda i, a: i < 2,
                lambda i, a: (
                    i + 1,
                    tf.while_loop(lambda b: tf.reduce_sum(b) < 40.0, lambda b: b + x, [a]),
                ),
                [tf.constant(0), x],
            )
        ),
        "shape_invariant": lambda tf: tf.while_loop(
            lambda i, a: i < 3,
            lambda i, a: (i + 1, tf.concat([a, a], 0)),
            [tf.constant(0), tf.constant([1.0])],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])],
        ),
        "int64_counter": lambda tf: tf.while_loop(
            lambda i: i < 7, lambda i: i * 2, [tf.constant(1, dtype=tf.int64)]
        ),
        "loop_then_more_ops": _loop(
            lambda tf, x: (
                tf.reduce_sum(
                    tf.while_loop(lambda a: tf.reduce_max(a) < 10.0, lambda a: a + 2.0, [x])
                )
                * 3.0
            )
        ),
        "two_loops": _loop(
            lambda tf, x: [
                tf.while_loop(lambda a: tf.reduce_sum(a) < 10.0, lambda a: a + 1.0, [x]),
                tf.while_loop(lambda a: tf.reduce_sum(a) < 20.0, lambda a: a * 2.0, [x]),
            ]
        ),
        "loop_in_cond": lambda tf: _loop_in_cond(tf),
        "variable_read_in_body": lambda tf: _variable_in_loop(tf),
    },
)


def _loop_in_cond(tf: Any) -> Any:
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.constant(X, name="x")
    r = tf.cond(
        p,
        lambda: tf.while_loop(lambda a: tf.reduce_sum(a) < 30.0, lambda a: a * 2.0 + 1.0, [x]),
        lambda: x,
    )
    return Runs(Run(r, {p: True}), Run(r, {p: False}))


def _variable_in_loop(tf: Any) -> Any:
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + v), [tf.constant(0), v * 0.0])
    return Runs(tf.global_variables_initializer(), Run(r))


def _loop_devices(tf: Any) -> Any:
    """The loop's body ops follow the device scope around them; the loop's own ops go with
    their data as TF places them."""
    x = tf.constant(X, name="x")
    with tf.device("/cpu:1"):
        r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [tf.constant(0), x])
    return Run(r)


def _loop_body_on_other_cpu(tf: Any) -> Any:
    x = tf.constant(X, name="x")

    def body(i: Any, a: Any) -> Any:
        with tf.device("/cpu:1"):
            doubled = a * 2.0
        return i + 1, doubled

    return Run(tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), x]))


def _loop_assigns(tf: Any, variable_device: str | None) -> Any:
    """The body assigns to a variable: its reference enters the loop through a RefEnter."""
    with tf.device(variable_device):
        v = tf.Variable(1.0, name="v")
        total = tf.Variable([0.0, 0.0], name="total")

    def body(i: Any) -> Any:
        grown = tf.assign(v, v * 2.0)
        added = tf.assign_add(total, tf.stack([tf.cast(i, tf.float32), grown]))
        with tf.control_dependencies([added]):
            return i + 1

    r = tf.while_loop(lambda i: i < 4, body, [tf.constant(0)])
    return Runs(tf.global_variables_initializer(), Run(r), Run([v, total]), Run(r), Run(total))


program(lambda tf: _loop_assigns(tf, None), name="while_ref_assigns_in_body")
program(lambda tf: _loop_assigns(tf, "/cpu:1"), name="while_ref_variable_on_other_cpu", cpus=2)
program(_loop_devices, name="while_in_device_scope", cpus=2)
program(_loop_body_on_other_cpu, name="while_body_op_on_other_cpu", cpus=2)


family(
    "while_error",
    {
        "shape_changes": lambda tf: tf.while_loop(
            lambda i, a: i < 3,
            lambda i, a: (i + 1, tf.concat([a, a], 0)),
            [tf.constant(0), tf.constant([1.0])],
        ),
        "invariant_incompatible": lambda tf: tf.while_loop(
            lambda a: tf.reduce_sum(a) < 3.0,
            lambda a: a + 1.0,
            [tf.constant([1.0, 2.0])],
            shape_invariants=[tf.TensorShape([3])],
        ),
        "body_returns_fewer": lambda tf: tf.while_loop(
            lambda i, a: i < 3, lambda i, a: i + 1, [tf.constant(0), tf.constant(1.0)]
        ),
        "no_loop_vars": lambda tf: tf.while_loop(lambda: True, lambda: 1, []),
        "cond_not_callable": lambda tf: tf.while_loop(True, lambda i: i + 1, [tf.constant(0)]),
        "parallel_iterations_0": lambda tf: tf.while_loop(
            lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], parallel_iterations=0
        ),
        "float_condition": lambda tf: tf.while_loop(
            lambda i: tf.cast(i, tf.float32), lambda i: i + 1, [tf.constant(0)]
        ),
        "fetch_body_op": lambda tf: _fetch_loop_op(tf),
        "feed_body_op": lambda tf: _feed_loop_tensor(tf, "while/mul:0"),
        "feed_loop_variable_enter": lambda tf: _feed_loop_tensor(tf, "while/Enter_1:0"),
        "feed_invariant_enter": lambda tf: _feed_loop_tensor(tf, "while/mul/Enter:0"),
    },
)


def _feed_loop_tensor(tf: Any, name: str) -> Any:
    """A tensor made inside the loop (once per iteration) cannot be fed; the loop's result can."""
    scale = tf.constant(2.0, name="scale")
    _, r = tf.while_loop(
        lambda i, a: i < 3, lambda i, a: (i + 1, a * scale), [tf.constant(0), tf.constant(1.0)]
    )
    inside = tf.get_default_graph().get_tensor_by_name(name)
    return Runs(Run(r, {r: 5.0}), Run(r, {inside: 5.0}))


def _fetch_loop_op(tf: Any) -> Any:
    tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    return Run(tf.get_default_graph().get_tensor_by_name("while/add:0"))


# -- while loops: gradients and training ---------------------------------------------------------


def _loop_gradient(build: Any) -> Any:
    """The gradient of a loss of a loop's result with respect to the fed value and a variable
    the body reads."""

    def run(tf: Any) -> Any:
        x = tf.placeholder(tf.float32, [3], name="x")
        v = tf.Variable([0.5, -1.5, 0.25], name="v")
        result = build(tf, x, v)
        loss = tf.reduce_sum(result * result)
        grads = tf.gradients(loss, [x, v])
        return Runs(
            tf.global_variables_initializer(),
            Run([loss, grads], {x: X * 0.3}),
            Run([loss, grads], {x: X * 0.1}),
        )

    return run


family(
    "while_gradient",
    {
        "tanh_recurrence": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda i, a: i < 3, lambda i, a: (i + 1, tf.tanh(a * v + x)), [0, x]
            )[1]
        ),
        "square_repeatedly": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda i, a: i < 2, lambda i, a: (i + 1, a * a), [0, x + v]
            )[1]
        ),
        "data_dependent_trip_count": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda a: tf.reduce_sum(tf.abs(a)) < 5.0, lambda a: a * 1.5 + v * 0.1, [x + 0.5]
            )
        ),
        "maximum_iterations": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda a: True, lambda a: tf.tanh(a) * v, [x], maximum_iterations=4
            )
        ),
        "no_iterations": _loop_gradient(
            lambda tf, x, v: tf.while_loop(lambda a: tf.reduce_sum(a) > 100.0, lambda a: a * v, [x])
        ),
        "two_float_vars": _loop_gradient(
            lambda tf, x, v: tf.add_n(
                list(
                    tf.while_loop(
                        lambda i, a, b: i < 3,
                        lambda i, a, b: (i + 1, a * b, b + a * v),
                        [0, x, v],
                    )[1:]
                )
            )
        ),
        "cond_in_body": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda i, a: i < 4,
                lambda i, a: (
                    i + 1,
                    tf.cond(tf.equal(i % 2, 0), lambda: a * v, lambda: tf.sigmoid(a + x)),
                ),
                [0, x],
            )[1]
        ),
        # a body whose gradient reads no value of the forward loop, only its trip count
        "outer_value_added": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda i, a: i < 3, lambda i, a: (i + 1, a + v), [0, x], name="added"
            )[1]
        ),
        # a loop in a loop's body: its trip count follows the outer loop's counter, and it
        # reads the outer loop's variable and the variable v
        "loop_in_loop": _loop_gradient(
            lambda tf, x, v: tf.while_loop(
                lambda i, a: i < 3,
                lambda i, a: (
                    i + 1,
                    tf.while_loop(
                        lambda j, b: j < i + 1,
                        lambda j, b: (j + 1, tf.tanh(b * v + a)),
                        [0, a],
                    )[1],
                ),
                [0, x],
            )[1]
        ),
        "loop_after_ops": _loop_gradient(
            lambda tf, x, v: (
                tf.while_loop(
                    lambda i, a: i < 3, lambda i, a: (i + 1, a + tf.exp(-a * a)), [0, x * v]
                )[1]
                * 2.0
            )
        ),
    },
)


def _rnn_like(tf: Any) -> Any:
    """A recurrence written with while_loop (an Elman RNN over three steps), its weights
    trained by plain gradient descent: values after three steps."""
    inputs = tf.constant(np.cos(np.arange(3 * 2 * 3) * 0.9).reshape(3, 2, 3).astype(np.float32))
    w = tf.Variable(np.sin(np.arange(9) * 0.7).reshape(3, 3).astype(np.float32) * 0.5, name="w")
    u = tf.Variable(np.cos(np.arange(9) * 0.3).reshape(3, 3).astype(np.float32) * 0.5, name="u")

    def body(t: Any, h: Any) -> Any:
        return t + 1, tf.tanh(tf.matmul(tf.gather(inputs, t), w) + tf.matmul(h, u))

    _, h = tf.while_loop(lambda t, h: t < 3, body, [tf.constant(0), tf.zeros([2, 3])])
    loss = tf.reduce_mean(tf.square(h - 0.25))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(
        tf.global_variables_initializer(), train, train, train, Run([w.value(), u.value(), loss])
    )


def _train_loop(optimizer: Any, nested: bool = False) -> Any:
    """``nested``: the body's step is a loop of its own, two steps of ``a * v + x``."""

    def run(tf: Any) -> Any:
        x = tf.constant([1.0, -0.5], name="x")
        v = tf.Variable([0.3, 0.7], name="v")

        def step(a: Any) -> Any:
            if not nested:
                return a * v + x
            return tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, b * v + x), [0, a])[1]

        _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, step(a)), [0, x])
        loss = tf.reduce_sum(tf.square(y - 1.0))
        train = optimizer(tf).minimize(loss)
        return Runs(tf.global_variables_initializer(), train, train, Run([v.value(), loss]))

    return run


program(_rnn_like, name="while_train_elman_rnn")
family(
    "while_train",
    {
        "sgd": _train_loop(lambda tf: tf.train.GradientDescentOptimizer(0.05)),
        "adam": _train_loop(lambda tf: tf.train.AdamOptimizer(0.05)),
        "momentum": _train_loop(lambda tf: tf.train.MomentumOptimizer(0.02, 0.9)),
        "sgd_loop_in_loop": _train_loop(lambda tf: tf.train.GradientDescentOptimizer(0.02), True),
    },
)


# -- Assert: on the host when its data are strings and int32, else behind a cond -------------------
def _assert(tf: Any, guarded: bool, summarize: Any = None) -> Any:
    x = tf.placeholder(tf.float32, [4], name="x")
    data = ["x must be positive:", x] if guarded else ["size", tf.shape(x), tf.constant(7)]
    check = tf.Assert(tf.reduce_all(x > 0), data, summarize=summarize, name="check")
    with tf.control_dependencies([check]):
        y = tf.identity(x * 2.0, name="y")
    return check, x, y


def _assert_passes(tf: Any, guarded: bool) -> Any:
    _, x, y = _assert(tf, guarded)
    return Run(y, {x: [1.0, 2.0, 3.0, 4.0]})


def _assert_fails(tf: Any, guarded: bool, summarize: Any = None) -> Any:
    _, x, y = _assert(tf, guarded, summarize)
    return Run(y, {x: [1.0, -2.0, 3.0, 4.0]})


family(
    "assert",
    {
        "host_passes": lambda tf: _assert_passes(tf, False),
        "guarded_passes": lambda tf: _assert_passes(tf, True),
        "reduce_any": lambda tf: [
            tf.reduce_any(tf.constant([[True, False], [False, False]]), axis=1),
            tf.reduce_all(tf.constant([[True, False], [True, True]]), axis=0, keepdims=True),
        ],
    },
)
family(
    "assert_fails",
    {
        "host": lambda tf: _assert_fails(tf, False),
        "guarded": lambda tf: _assert_fails(tf, True),
        "guarded_summarize": lambda tf: _assert_fails(tf, True, summarize=2),
    },
    error=("assertion failed",),
)
