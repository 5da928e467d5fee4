"""Conformance programs: initializers, custom getters and collections (issue 24, item 6).

Random initial values differ from TensorFlow's, so the initializer programs fetch what is
deterministic instead: the scale constants TF computes from the fans, the variable's shape, and
whether every drawn value lies within its bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []


def _drawn(tf: Any, w: Any, consts: tuple[str, ...], bound: float) -> Runs:
    """Initialize ``w``, then fetch its initializer's named Consts, its shape, and whether every
    value lies strictly within ``bound`` of zero (truncated normals: two stddevs)."""
    graph = tf.get_default_graph()
    scope = w.op.name + "/Initializer/"
    fetched = [graph.get_tensor_by_name(f"{scope}{name}:0") for name in consts]
    within = tf.less(tf.reduce_max(tf.abs(w)), bound, name="within")
    return Runs(w.initializer, [*fetched, tf.shape(w), within])


_NORMAL = ("truncated_normal/mean", "truncated_normal/stddev")
_UNTRUNCATED = ("random_normal/mean", "random_normal/stddev")
_UNIFORM = ("random_uniform/min", "random_uniform/max")


# -- random initializers: their graphs, constants and bounds -------------------------------------
family(
    "vars_init",
    {
        "truncated_normal": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "w", [3, 4], initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1)
            ),
            _NORMAL,
            0.2,
        ),
        "truncated_normal_float64": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "w",
                [5],
                dtype=tf.float64,
                initializer=tf.truncated_normal_initializer(mean=0.0, stddev=2.0),
            ),
            _NORMAL,
            4.0,
        ),
        "random_normal": lambda tf: _drawn(
            tf,
            tf.get_variable("w", [4], initializer=tf.random_normal_initializer(0.5, 0.01)),
            _UNTRUNCATED,
            1.0,
        ),
        "glorot_normal_conv_kernel": lambda tf: _drawn(
            tf,
            tf.get_variable("k", [3, 3, 4, 8], initializer=tf.glorot_normal_initializer(seed=2)),
            _NORMAL,
            2 * np.sqrt(2.0 / (36 + 72)) / 0.87962566103423978,
        ),
        "glorot_uniform": lambda tf: _drawn(
            tf,
            tf.get_variable("w", [6, 10], initializer=tf.glorot_uniform_initializer()),
            _UNIFORM,
            np.sqrt(6.0 / 16) + 1e-6,
        ),
        "variance_scaling_defaults": lambda tf: _drawn(
            tf,
            tf.get_variable("w", [8, 3], initializer=tf.variance_scaling_initializer()),
            _NORMAL,
            2 * np.sqrt(1.0 / 8) / 0.87962566103423978,
        ),
        "variance_scaling_fan_out_uniform": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "w",
                [2, 2, 3, 5],
                initializer=tf.variance_scaling_initializer(2.0, "fan_out", "uniform"),
            ),
            _UNIFORM,
            np.sqrt(3 * 2.0 / 20) + 1e-6,
        ),
        "variance_scaling_fan_avg_untruncated": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "w",
                [4, 6],
                initializer=tf.variance_scaling_initializer(
                    mode="fan_avg", distribution="untruncated_normal"
                ),
            ),
            _UNTRUNCATED,
            100.0,
        ),
        "variance_scaling_normal_alias": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "w", [10], initializer=tf.variance_scaling_initializer(distribution="Normal")
            ),
            _NORMAL,
            2 * np.sqrt(1.0 / 10) / 0.87962566103423978,
        ),
        "variance_scaling_scalar_fans": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "b", [], initializer=tf.variance_scaling_initializer(distribution="uniform")
            ),
            _UNIFORM,
            np.sqrt(3.0) + 1e-6,
        ),
        "variance_scaling_call_dtype": lambda tf: _drawn(
            tf,
            tf.get_variable(
                "w", [3, 3], dtype=tf.float64, initializer=tf.variance_scaling_initializer()
            ),
            _NORMAL,
            2 * np.sqrt(1.0 / 3) / 0.87962566103423978,
        ),
    },
)


# -- tf.compat.v1.keras.initializers: Keras's defaults over TF1's classes -------------------------
def _keras(name: str, shape: list[int], consts: tuple[str, ...], bound: float) -> Any:
    def build(tf: Any) -> Any:
        init = getattr(tf.keras.initializers, name)()
        return _drawn(tf, tf.get_variable("w", shape, initializer=init), consts, bound)

    return build


family(
    "vars_keras_init",
    {
        "he_normal": _keras("he_normal", [6, 4], _NORMAL, 2 * np.sqrt(2 / 6) / 0.8796256610342398),
        "he_uniform": _keras("he_uniform", [3, 3, 2, 4], _UNIFORM, np.sqrt(6 / 18) + 1e-6),
        "lecun_normal": _keras("lecun_normal", [5, 2], _NORMAL, 2 * np.sqrt(1 / 5) / 0.87962566),
        "lecun_uniform": _keras("lecun_uniform", [8], _UNIFORM, np.sqrt(3 / 8) + 1e-6),
        "truncated_normal": _keras("TruncatedNormal", [4, 4], _NORMAL, 0.1),
        "random_normal": _keras("random_normal", [4], _UNTRUNCATED, 1.0),
        "random_uniform": _keras("RandomUniform", [4], _UNIFORM, 0.05 + 1e-7),
        "glorot_normal": _keras("glorot_normal", [3, 5], _NORMAL, 2 * np.sqrt(2 / 8) / 0.8796),
    },
)


@program(cpus=2, skip=("values",))
def vars_init_truncated_normal_pinned(tf: Any) -> Any:
    """The initializer's ops follow their variable to /cpu:1 (colocation), as TF places them."""
    with tf.device("/cpu:1"):
        w = tf.get_variable("w", [2, 3], initializer=tf.truncated_normal_initializer())
    y = tf.matmul(tf.ones([1, 2]), w)
    return Runs(w.initializer, y)


@program(cpus=2, skip=("values",))
def vars_init_glorot_normal_pinned_in_scope(tf: Any) -> Any:
    with tf.variable_scope("dense"), tf.device("/cpu:1"):
        w = tf.get_variable("kernel", [4, 2], initializer=tf.glorot_normal_initializer())
        b = tf.get_variable("bias", [2], initializer=tf.variance_scaling_initializer())
    return Runs(tf.global_variables_initializer(), tf.matmul(tf.ones([1, 4]), w) + b)


@program(cpus=2, skip=("values",))
def vars_init_random_normal_pinned(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.get_variable("w", [3], initializer=tf.random_normal_initializer(stddev=0.5))
    return Runs(w.initializer, w * 2.0)


# -- truncated_normal on its own ----------------------------------------------------------------
@program
def vars_truncated_normal_op(tf: Any) -> Any:
    t = tf.truncated_normal([200], mean=1.0, stddev=2.0, seed=3)
    return Run([tf.shape(t), tf.less(tf.reduce_max(tf.abs(t - 1.0)), 4.0)])


@program
def vars_truncated_normal_tf_random(tf: Any) -> Any:
    t = tf.random.truncated_normal([3, 2], dtype=tf.float16, name="tn")
    return Run([tf.shape(t), tf.less_equal(tf.reduce_max(tf.abs(t)), 2.0)])  # half rounds up


@program(cpus=2)
def vars_truncated_normal_pinned_with_gradient(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0], name="x")
    with tf.device("/cpu:1"):
        noise = tf.truncated_normal([2], stddev=0.5, seed=7)
    y = tf.reduce_sum(noise * x)
    (dx,) = tf.gradients(y, x)
    return Run(tf.less(tf.reduce_max(tf.abs(dx)), 1.0))


@program(error=["Expected int32"])
def vars_error_truncated_normal_int(tf: Any) -> Any:
    return tf.truncated_normal([2], dtype=tf.int32)


# -- constant_initializer: values, padding, dtypes ------------------------------------------------
def _const(shape: Any, value: Any, **kwargs: Any) -> Any:
    def build(tf: Any) -> Any:
        w = tf.get_variable("w", shape, initializer=tf.constant_initializer(value), **kwargs)
        return Runs(w.initializer, w)

    return build


family(
    "vars_const_init",
    {
        "list_padded_with_last": _const([2, 3], [1, 2, 3]),
        "nested_list_into_flat": _const([4], [[1, 2], [3, 4]]),
        "numpy_matrix": _const([2, 2], np.arange(4.0)),
        "scalar_fills_int": _const([2, 2], 7, dtype="int32"),
        "empty_list_is_zeros": _const([2, 2], []),
        "scalar_shape": _const([], 3),
        "float64_list": _const([3], [0.5], dtype="float64"),
        "bool": _const([2], True, dtype="bool"),
    },
)


@program
def vars_const_init_own_dtype_overridden_by_get_variable(tf: Any) -> Any:
    """get_variable passes its dtype (float32 unless given) to the initializer."""
    w = tf.get_variable("w", [2], initializer=tf.constant_initializer(2, dtype=tf.int64))
    return Runs(w.initializer, w)


@program
def vars_const_init_called_directly(tf: Any) -> Any:
    init = tf.constant_initializer([1.0, 2.0])
    return Run([init([3]), init([2, 1], dtype=tf.float64)])


@program(error=["Too many elements provided", "Takes at most 2, but got 3"])
def vars_error_const_init_too_many_values(tf: Any) -> Any:
    return tf.get_variable("w", [2], initializer=tf.constant_initializer([1, 2, 3]))


@program(error=["Invalid type for initial value", "dict"])
def vars_error_const_init_dict(tf: Any) -> Any:
    return tf.constant_initializer({"a": 1})


# -- errors of the initializers and get_variable -------------------------------------------------
family(
    "vars_error",
    {
        "variance_scaling_mode": lambda tf: tf.variance_scaling_initializer(mode="fan_x"),
        "variance_scaling_distribution": lambda tf: tf.variance_scaling_initializer(
            distribution="gamma"
        ),
        "variance_scaling_scale": lambda tf: tf.variance_scaling_initializer(scale=0.0),
    },
    error=["Received"],
)


@program(error=["Argument `dtype` is expected to be floating point"])
def vars_error_truncated_normal_initializer_int(tf: Any) -> Any:
    return tf.truncated_normal_initializer(dtype=tf.int32)


@program
def vars_init_glorot_normal_ignores_constructor_dtype(tf: Any) -> Any:
    init = tf.glorot_normal_initializer(dtype=tf.int32)
    w = tf.get_variable("w", [2, 2], initializer=init)
    return _drawn(tf, w, _NORMAL, 2 * np.sqrt(1.0 / 2) / 0.87962566103423978)


@program(error=["did not get an initializer, so its `shape` argument must be specified"])
def vars_error_get_variable_without_shape(tf: Any) -> Any:
    with tf.variable_scope("s"):
        return tf.get_variable("w")


@program
def vars_get_variable_no_argument_initializer(tf: Any) -> Any:
    """Without a shape, an initializer taking no arguments gives the value, its dtype included."""
    n = tf.get_variable("n", initializer=lambda: tf.constant([1, 2]))
    return Runs(n.initializer, n)


@program(error=["The initializer passed is not valid"])
def vars_error_get_variable_partial_shape(tf: Any) -> Any:
    return tf.get_variable("w", [None, 3], initializer=tf.truncated_normal_initializer())


# -- custom getters ------------------------------------------------------------------------------
def _renaming(suffix: str, calls: list[str] | None = None) -> Any:
    def getter(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        if calls is not None:
            calls.append(f"{suffix}:{name}")
        return getter(name + suffix, *args, **kwargs)

    return getter


@program
def vars_getter_renames(tf: Any) -> Any:
    with tf.variable_scope("layer", custom_getter=_renaming("_r")) as scope:
        w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
    return Runs(
        Note(name=w.name, getter_set=scope.custom_getter is not None),
        tf.global_variables_initializer(),
        w,
    )


@program
def vars_getter_nested_compose_inner_first(tf: Any) -> Any:
    """The inner scope's getter runs first; its ``getter`` is the outer one."""
    calls: list[str] = []
    with tf.variable_scope("a", custom_getter=_renaming("_outer", calls)):
        with tf.name_scope("ns"), tf.variable_scope("b", custom_getter=_renaming("_inner", calls)):
            w = tf.get_variable("w", [1])
        v = tf.get_variable("v", [1])
    return Note(calls=calls, names=[w.name, v.name])


@program
def vars_getter_argument_replaces_scope_getter(tf: Any) -> Any:
    calls: list[str] = []
    with tf.variable_scope("s", custom_getter=_renaming("_scope", calls)):
        w = tf.get_variable("w", [1], custom_getter=_renaming("_arg", calls))
    return Note(calls=calls, name=w.name)


@program
def vars_getter_sees_tfs_arguments(tf: Any) -> Any:
    seen: dict[str, Any] = {}

    def getter(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        seen.update(name=name, args=len(args), **kwargs)
        return getter(name, *args, **kwargs)

    with tf.variable_scope("s", custom_getter=getter):
        tf.get_variable("w", [2, 3])
    return Note(
        name=seen["name"],
        args=seen["args"],
        shape=list(seen["shape"]),
        dtype=seen["dtype"].name,
        initializer=seen["initializer"],
        reuse=seen["reuse"],
        trainable=seen["trainable"],
        collections=seen["collections"],
        validate_shape=seen["validate_shape"],
    )


@program(cpus=2)
def vars_getter_places_variables_on_cpu(tf: Any) -> Any:
    """tf_cnn_benchmarks' pattern: the getter wraps the store's in a device scope."""

    def on_cpu(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        with tf.device("/cpu:1"):
            return getter(name, *args, **kwargs)

    x = tf.constant([[1.0, 2.0]], name="x")
    with tf.variable_scope("fc", custom_getter=on_cpu):
        w = tf.get_variable("w", [2, 2], initializer=tf.constant_initializer([1.0, 0.5]))
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        y = tf.matmul(x, w) + b
    return Runs(Note(devices=[w.device, b.device]), tf.global_variables_initializer(), y)


@program(cpus=2)
def vars_getter_on_cpu_with_gradients(tf: Any) -> Any:
    def on_cpu(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        with tf.device("/cpu:1"):
            return getter(name, *args, **kwargs)

    x = tf.constant([[1.0, 2.0]], name="x")
    with tf.variable_scope("fc", custom_getter=on_cpu):
        w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer([3.0, 4.0]))
        loss = tf.reduce_sum(tf.matmul(x, w))
    (grad,) = tf.gradients(loss, [w])
    return Runs(tf.global_variables_initializer(), [loss, grad])


@program
def vars_getter_returns_cast_tensor(tf: Any) -> Any:
    """A mixed-precision getter: its ops are built outside every name scope, as in TF."""

    def as_half(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        return tf.cast(getter(name, *args, **kwargs), tf.float16)

    with tf.variable_scope("h", custom_getter=as_half), tf.name_scope("inner"):
        w = tf.get_variable("w", [2], initializer=tf.constant_initializer(1.5))
        y = w * tf.constant(2.0, dtype=tf.float16)
    return Runs(Note(name=w.name, dtype=w.dtype.name), tf.global_variables_initializer(), y)


@program
def vars_getter_float32_storage(tf: Any) -> Any:
    """tf_cnn_benchmarks' float32 storage for float16 models: create float32, read as float16."""

    def storage(getter: Any, name: str, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
        variable = getter(name, shape, dtype=tf.float32, **kwargs)
        return tf.cast(variable, dtype) if dtype != tf.float32 else variable

    with tf.variable_scope("m", custom_getter=storage):
        w = tf.get_variable("w", [2], dtype=tf.float16, initializer=tf.ones_initializer())
    return Runs(
        Note(var=[v.name for v in tf.global_variables()], out=w.dtype.name),
        tf.global_variables_initializer(),
        w,
    )


@program
def vars_getter_marks_untrainable(tf: Any) -> Any:
    def frozen(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    with tf.variable_scope("frozen", custom_getter=frozen):
        tf.get_variable("w", [1])
    tf.get_variable("v", [1])
    return Note(
        all=[v.name for v in tf.global_variables()],
        trainable=[v.name for v in tf.trainable_variables()],
    )


@program
def vars_getter_with_reuse_returns_same_variable(tf: Any) -> Any:
    calls: list[str] = []
    with tf.variable_scope("s", custom_getter=_renaming("", calls)):
        first = tf.get_variable("w", [2])
    with tf.variable_scope("s", reuse=True, custom_getter=_renaming("", calls)):
        again = tf.get_variable("w", [2])
    return Note(calls=calls, same=first is again, count=len(tf.global_variables()))


@program
def vars_getter_jump_back_into_captured_scope(tf: Any) -> Any:
    calls: list[str] = []
    with tf.variable_scope("a", custom_getter=_renaming("_a", calls)) as captured:
        pass
    with tf.variable_scope("b"):
        with tf.variable_scope(captured, custom_getter=_renaming("_j", calls)):
            w = tf.get_variable("w", [1])
        v = tf.get_variable("v", [1])
    return Note(calls=calls, names=[w.name, v.name])


@program(error=["Passed a custom_getter which is not callable"])
def vars_error_getter_not_callable(tf: Any) -> Any:
    return tf.get_variable("w", [1], custom_getter=3)


# -- collections ---------------------------------------------------------------------------------
@program
def vars_collections_scope_filter_is_a_regex_match(tf: Any) -> Any:
    for tower in ("tower_1", "tower_10", "tower_2"):
        with tf.variable_scope(tower):
            tf.get_variable("w", [1])
            tf.get_variable("b", [1], trainable=False)
    names = lambda found: [v.name for v in found]  # noqa: E731
    return Note(
        prefix=names(tf.global_variables("tower_1")),
        exact=names(tf.global_variables("tower_1/")),
        trainable=names(tf.trainable_variables("tower_1")),
        char_class=names(tf.trainable_variables("tower_[12]/")),
        anywhere=names(tf.global_variables(".*/b")),
        not_searched=names(tf.global_variables("w")),
        by_key=names(tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="tower_2")),
    )


@program
def vars_collections_add_and_get(tf: Any) -> Any:
    x = tf.constant(1.0, name="x")
    y = tf.constant(2.0, name="y")
    tf.add_to_collection("mine", x)
    tf.add_to_collections(["a", "b", "a"], y)
    tf.add_to_collections("c", x)
    copy = tf.get_collection("mine")
    copy.append(y)
    ref = tf.get_collection_ref("made_by_ref")
    ref.append(x)
    graph = tf.get_default_graph()
    names = lambda key: [t.name for t in tf.get_collection(key)]  # noqa: E731
    return Note(
        mine=names("mine"),
        a=names("a"),
        b=names("b"),
        c=names("c"),
        by_ref=names("made_by_ref"),
        missing=tf.get_collection("nothing"),
        graph_scoped=[t.name for t in graph.get_collection("mine", "x")],
        keys=sorted(graph.get_all_collection_keys()),
    )


@program
def vars_collections_items_without_names_filtered_out(tf: Any) -> Any:
    tf.add_to_collection("mixed", 3)
    tf.add_to_collection("mixed", "text")
    tf.add_to_collection("mixed", tf.constant(1.0, name="c"))
    return Note(
        everything=len(tf.get_collection("mixed")),
        scoped=[t.name for t in tf.get_collection("mixed", scope="")],
    )


@program
def vars_collections_store_key_hidden(tf: Any) -> Any:
    with tf.variable_scope("s"):
        tf.get_variable("w", [1])
    tf.Variable(1.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return Note(keys=sorted(tf.get_default_graph().get_all_collection_keys()))


@program
def vars_collections_trainable_false(tf: Any) -> Any:
    tf.Variable(1.0, name="a", trainable=False)
    tf.get_variable("b", [1], trainable=False)
    tf.get_variable("c", [1])
    return Note(
        all=[v.name for v in tf.global_variables()],
        trainable=[v.name for v in tf.trainable_variables()],
    )


@program
def vars_collections_argument(tf: Any) -> Any:
    tf.Variable(1.0, name="only_mine", collections=["mine"])
    tf.Variable(2.0, name="both", collections=[tf.GraphKeys.GLOBAL_VARIABLES, "mine"])
    tf.get_variable(
        "model", [1], collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES]
    )
    tf.Variable(3.0, name="frozen", trainable=False, collections=("mine",))
    names = lambda found: [v.name for v in found]  # noqa: E731
    return Note(
        all=names(tf.global_variables()),
        trainable=names(tf.trainable_variables()),
        mine=names(tf.get_collection("mine")),
        model=names(tf.model_variables()),
    )


@program
def vars_collections_local_variables(tf: Any) -> Any:
    count = tf.Variable(0, name="count", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    tf.get_variable(
        "total", [2], initializer=tf.ones_initializer(), collections=["local_variables"]
    )
    return Runs(
        Note(
            local=[v.name for v in tf.local_variables()],
            local_scoped=[v.name for v in tf.local_variables("to")],
            all=[v.name for v in tf.global_variables()],
        ),
        tf.local_variables_initializer(),
        tf.assign_add(count, 2),
    )


@program(error=["collections argument to Variable constructor must be a list, tuple, or set"])
def vars_error_collections_string(tf: Any) -> Any:
    return tf.Variable(1.0, collections="mine")


@program
def vars_graph_keys(tf: Any) -> Any:
    keys = tf.GraphKeys
    return Note(
        {
            name: getattr(keys, name)
            for name in (
                "GLOBAL_VARIABLES",
                "VARIABLES",
                "LOCAL_VARIABLES",
                "METRIC_VARIABLES",
                "MODEL_VARIABLES",
                "TRAINABLE_VARIABLES",
                "MOVING_AVERAGE_VARIABLES",
                "CONCATENATED_VARIABLES",
                "TRAINABLE_RESOURCE_VARIABLES",
                "REGULARIZATION_LOSSES",
                "LOSSES",
                "UPDATE_OPS",
                "SUMMARIES",
                "SAVERS",
                "SAVEABLE_OBJECTS",
                "RESOURCES",
                "LOCAL_RESOURCES",
                "QUEUE_RUNNERS",
                "TABLE_INITIALIZERS",
                "ASSET_FILEPATHS",
                "TRAIN_OP",
                "GLOBAL_STEP",
                "EVAL_STEP",
                "INIT_OP",
                "LOCAL_INIT_OP",
                "READY_OP",
                "READY_FOR_LOCAL_INIT_OP",
                "SUMMARY_OP",
                "COND_CONTEXT",
                "WHILE_CONTEXT",
                "ACTIVATIONS",
                "WEIGHTS",
                "BIASES",
            )
        }
    )


@program
def vars_assign_unknown_value_keeps_variable_shape(tf: Any) -> Any:
    v = tf.Variable(tf.zeros([2, 3]), name="v")
    p = tf.placeholder(tf.float32, name="p")
    checked, unchecked = tf.assign(v, p), tf.assign(v, p, validate_shape=False)
    return Note(checked=checked.shape.as_list(), unchecked=str(unchecked.shape))
