"""Variable scopes, ``get_variable`` and the initializers, checked against TensorFlow 1's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import placeviz as pv
from placeviz.graph.initializers import compute_fans
from placeviz.graph.variables import GLOBAL_VARIABLES


def initialized(*fetches: object) -> list[object]:
    """Run the global initializer, then fetch."""
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    return sess.run(list(fetches))


def op_names() -> list[str]:
    return [op.name for op in pv.get_default_graph().get_operations()]


# -- names ---------------------------------------------------------------------------------------
def test_variable_named_by_nested_variable_scopes() -> None:
    with pv.variable_scope("foo"), pv.variable_scope("bar") as scope:
        v = pv.get_variable("v", [1])
    assert scope.name == "foo/bar"
    assert v.name == "foo/bar/v:0" and v.op.name == "foo/bar/v"
    assert v.op.type == "VariableV2"
    assert isinstance(v, pv.Variable)
    assert pv.global_variables() == [v] and pv.trainable_variables() == [v]


def test_variable_scope_opens_a_name_scope_and_reentering_opens_a_new_one() -> None:
    with pv.variable_scope("foo") as first:
        v = pv.get_variable("v", [1])
        x = v + 1.0
    with pv.variable_scope("foo", reuse=True) as second:
        y = pv.get_variable("v", [1]) + 1.0
    assert x.op.name == "foo/add" and y.op.name == "foo_1/add"
    assert first.original_name_scope == "foo/" and second.original_name_scope == "foo_1/"
    assert first.name == second.name == "foo"


def test_name_scopes_do_not_name_variables() -> None:
    with pv.name_scope("tower_0"):
        v = pv.get_variable("w", [2])
        x = v * 2.0
    assert v.op.name == "w"
    assert x.op.name == "tower_0/mul"


def test_initializer_ops_live_under_the_variable() -> None:
    with pv.variable_scope("layer"):
        w = pv.get_variable("w", [3, 1])
        z = pv.get_variable("z", [2], initializer=pv.zeros_initializer())
        c = pv.get_variable("c", initializer=3.0)
    assert op_names()[6:10] == [  # after the initializer's shape, min, max, draw, sub and mul
        "layer/w/Initializer/random_uniform",
        "layer/w",
        "layer/w/Assign",
        "layer/w/read",
    ]
    assert z.initial_value.op.name == "layer/z/Initializer/zeros"
    assert c.initial_value.op.name == "layer/c/initial_value"
    assert w.initializer.name == "layer/w/Assign"


def test_default_name_scopes_are_made_unique() -> None:
    names = []
    for _ in range(3):
        with pv.variable_scope(None, default_name="dense") as scope:
            names.append(scope.name)
            pv.get_variable("kernel", [2, 2])
    assert names == ["dense", "dense_1", "dense_2"]
    assert [v.op.name for v in pv.global_variables()] == [
        "dense/kernel",
        "dense_1/kernel",
        "dense_2/kernel",
    ]


def test_leaving_a_scope_resets_the_default_names_inside_it() -> None:
    with pv.variable_scope("a"), pv.variable_scope(None, default_name="l") as first:
        pass
    with pv.variable_scope("a"), pv.variable_scope(None, default_name="l") as again:
        pass
    assert first.name == again.name == "a/l"


def test_root_scope() -> None:
    root = pv.get_variable_scope()
    assert (root.name, root.reuse, root.original_name_scope) == ("", False, "")
    with pv.variable_scope("x"):
        assert pv.get_variable_scope().name == "x"
    assert pv.get_variable_scope() is root


# -- reuse ---------------------------------------------------------------------------------------
def test_reuse_true_returns_the_same_variable() -> None:
    with pv.variable_scope("foo"):
        v = pv.get_variable("v", [1])
    with pv.variable_scope("foo", reuse=True):
        assert pv.get_variable("v", [1]) is v
        assert pv.get_variable("v") is v  # no shape: any shape is compatible
    assert len(pv.global_variables()) == 1


def test_reuse_variables_switches_an_open_scope_to_reuse() -> None:
    with pv.variable_scope("foo") as scope:
        v = pv.get_variable("v", [1])
        scope.reuse_variables()
        assert scope.reuse is True
        assert pv.get_variable("v", [1]) is v


def test_existing_variable_without_reuse_is_an_error_naming_where_it_was_made() -> None:
    with pv.variable_scope("foo"):
        pv.get_variable("w", [1])
    with pv.variable_scope("foo"), pytest.raises(ValueError) as info:
        pv.get_variable("w", [1])
    message = str(info.value)
    assert message.startswith(
        "Variable foo/w already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=pv.AUTO_REUSE in VarScope?"
    )
    assert "Originally defined at:" in message and "test_variable_scope.py" in message


def test_missing_variable_with_reuse_true_is_an_error() -> None:
    with pv.variable_scope("foo", reuse=True), pytest.raises(ValueError) as info:
        pv.get_variable("w", [1])
    assert str(info.value) == (
        "Variable foo/w does not exist, or was not created with pv.get_variable(). "
        "Did you mean to set reuse=pv.AUTO_REUSE in VarScope?"
    )


def test_plain_variables_are_not_found_by_get_variable() -> None:
    pv.Variable(1.0, name="v")
    with pv.variable_scope(pv.get_variable_scope(), reuse=True), pytest.raises(ValueError):
        pv.get_variable("v", [])


def test_reuse_with_another_shape_or_dtype_is_an_error() -> None:
    with pv.variable_scope("foo"):
        pv.get_variable("w", [3, 1])
    with pv.variable_scope("foo", reuse=True):
        with pytest.raises(ValueError) as info:
            pv.get_variable("w", [3, 2])
        assert str(info.value) == (
            "Trying to share variable foo/w, but specified shape (3, 2) and found shape (3, 1)."
        )
        with pytest.raises(ValueError, match="specified dtype float64 and found dtype float32"):
            pv.get_variable("w", [3, 1], dtype=pv.float64)


def test_auto_reuse_creates_once_then_shares() -> None:
    def tower() -> pv.Variable:
        with pv.variable_scope("model", reuse=pv.AUTO_REUSE):
            return pv.get_variable("w", [2])

    first, second = tower(), tower()
    assert first is second
    assert pv.global_variables() == [first]


def test_reuse_is_inherited_and_false_does_not_switch_it_off() -> None:
    with pv.variable_scope("a", reuse=True):
        with pv.variable_scope("b"):
            assert pv.get_variable_scope().reuse is True
        with pv.variable_scope("c", reuse=False):
            assert pv.get_variable_scope().reuse is True
    with pv.variable_scope("d", reuse=pv.AUTO_REUSE), pv.variable_scope("e"):
        assert pv.get_variable_scope().reuse is pv.AUTO_REUSE


def test_jumping_back_to_a_scope_object() -> None:
    with pv.variable_scope("foo") as foo:
        v = pv.get_variable("v", [1])
    with pv.variable_scope("other"), pv.variable_scope(foo, reuse=True) as again:
        assert again.name == "foo" and again.original_name_scope == "foo/"
        assert pv.get_variable("v", [1]) is v
        x = v + 1.0
    # The name scope is a fresh one for the scope's last component, inside the current one.
    assert x.op.name == "other/foo/add"
    # The scope object keeps its own reuse: not shared with the reusing copy.
    assert foo.reuse is False


def test_make_parallel_shares_the_variable_across_towers() -> None:
    """Seed 003's make_parallel: the second tower reuses the first tower's variable "w"."""
    pv.config.simulate_gpus(2)

    def model(x: pv.Tensor) -> pv.Tensor:
        w = pv.get_variable("w", shape=[3, 1], initializer=pv.constant_initializer([1.0, 2.0, 3.0]))
        return pv.squeeze(pv.matmul(x, w), 1)

    x = pv.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    out_split = []
    for i, part in enumerate(pv.split(x, 2)):
        with pv.device(pv.DeviceSpec(device_type="GPU", device_index=i)):  # noqa: SIM117 (seed)
            with pv.variable_scope(pv.get_variable_scope(), reuse=pv.AUTO_REUSE):
                out_split.append(model(part))
    out = pv.concat(out_split, axis=0)
    assert [v.op.name for v in pv.global_variables()] == ["w"]
    assert pv.global_variables()[0].device == "/device:GPU:0"
    assert pv.get_variable_scope().reuse is False
    (value,) = initialized(out)
    np.testing.assert_array_equal(value, [8.0, 26.0, 44.0, 62.0])


def test_scope_errors() -> None:
    cases = [
        (TypeError, "If default_name is None then name_or_scope is required", (None,), {}),
        (
            ValueError,
            "reuse=True cannot be used without a name_or_scope",
            (None, "d"),
            {"reuse": True},
        ),
        (ValueError, "The reuse parameter must be True or False or None", ("s",), {"reuse": 1}),
        (TypeError, "name_or_scope must be a string or VariableScope", (3,), {}),
    ]
    for error, message, args, kwargs in cases:
        with pytest.raises(error, match=message), pv.variable_scope(*args, **kwargs):
            pass
    assert pv.get_variable_scope().name == ""


def test_scope_is_restored_after_an_exception() -> None:
    with pytest.raises(RuntimeError), pv.variable_scope("broken"):
        raise RuntimeError("boom")
    assert pv.get_variable_scope().name == ""
    assert pv.get_default_graph().get_name_scope() == ""


def test_each_graph_has_its_own_store() -> None:
    with pv.variable_scope("foo"):
        pv.get_variable("w", [1])
    graph = pv.Graph()
    with graph.as_default(), pv.variable_scope("foo"):
        other = pv.get_variable("w", [1])  # no "already exists": a new graph, a new store
    assert other.graph is graph
    pv.reset_default_graph()
    with pv.variable_scope("foo"):
        assert pv.get_variable("w", [1]).op.name == "foo/w"


# -- get_variable's arguments ----------------------------------------------------------------------
def test_value_initializers_give_shape_and_dtype() -> None:
    f = pv.get_variable("f", initializer=[1.0, 2.0])
    i = pv.get_variable("i", initializer=3)
    a = pv.get_variable("a", initializer=np.ones((2, 2)))
    t = pv.get_variable("t", initializer=pv.constant([[1.0], [2.0]]))
    assert (f.shape, f.dtype.base_dtype) == ([2], pv.float32)
    assert (i.shape, i.dtype.base_dtype) == ([], pv.int32)
    assert (a.shape, a.dtype) == ([2, 2], pv.float64_ref)
    assert t.shape == [2, 1]
    values = initialized(f, i, a, t)
    np.testing.assert_array_equal(values[0], [1.0, 2.0])
    assert values[1] == 3
    np.testing.assert_array_equal(values[3], [[1.0], [2.0]])


def test_value_initializer_errors() -> None:
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        pv.get_variable("a", [2], initializer=[1.0, 2.0])
    with pytest.raises(
        ValueError, match="Initializer type 'float32' and explicit dtype 'float64' don't match"
    ):
        pv.get_variable("b", initializer=1.0, dtype=pv.float64)
    with pytest.raises(ValueError, match="Variable c did not get an initializer, so its `shape`"):
        pv.get_variable("c")
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        pv.get_variable("d", [None, 2])
    assert pv.get_default_graph().get_operations() == []


def test_default_initializers_by_dtype() -> None:
    w = pv.get_variable("w", [4, 6])
    i = pv.get_variable("i", [3], dtype=pv.int32)
    b = pv.get_variable("b", [2], dtype=pv.bool)
    assert w.initial_value.op.type == "AddV2"  # TF's RandomUniform * (max - min) + min
    assert w.initial_value.op.inputs[0].op.inputs[0].op.type == "RandomUniform"
    w_val, i_val, b_val = initialized(w, i, b)
    limit = math.sqrt(6.0 / (4 + 6))
    assert w_val.dtype == np.float32 and np.all(np.abs(w_val) <= limit)
    np.testing.assert_array_equal(i_val, [0, 0, 0])
    np.testing.assert_array_equal(b_val, [False, False])


def test_scope_initializer_is_inherited_and_overridden() -> None:
    with pv.variable_scope("outer", initializer=pv.constant_initializer(0.3)):
        a = pv.get_variable("a", [2])
        with pv.variable_scope("inner"):
            b = pv.get_variable("b", [1])
        c = pv.get_variable("c", [1], initializer=pv.ones_initializer())
        with pv.variable_scope("other", initializer=pv.zeros_initializer()):
            d = pv.get_variable("d", [1])
    values = initialized(a, b, c, d)
    np.testing.assert_allclose(values[0], [0.3, 0.3])
    assert [float(v[0]) for v in values[1:]] == [pytest.approx(0.3), 1.0, 0.0]


def test_initializer_classes_and_plain_callables() -> None:
    z = pv.get_variable("z", [2], initializer=pv.zeros_initializer)  # a class is instantiated

    def halves(shape, dtype):  # no partition_info: get_variable does not pass it
        return pv.fill(shape, pv.constant(0.5, dtype=dtype))

    h = pv.get_variable("h", [3], initializer=halves)
    z_val, h_val = initialized(z, h)
    np.testing.assert_array_equal(z_val, [0.0, 0.0])
    np.testing.assert_array_equal(h_val, [0.5, 0.5, 0.5])


def test_collections_and_trainable() -> None:
    frozen = pv.get_variable("frozen", [1], trainable=False)
    mine = pv.get_variable("mine", [1], collections=["mine"])
    both = pv.get_variable("both", [1], collections=["mine", GLOBAL_VARIABLES])
    graph = pv.get_default_graph()
    assert pv.global_variables() == [frozen, both]
    assert pv.trainable_variables() == [mine, both]
    assert graph.get_collection("mine") == [mine, both]


def test_variable_follows_device_scopes_and_its_initializer_does_not() -> None:
    with pv.device("/cpu:0"):
        w = pv.get_variable("w", [2, 2])
    assert w.device == "/device:CPU:0"
    assert w.initializer.device == "/device:CPU:0"
    assert w.initial_value.device == ""


# -- initializers ----------------------------------------------------------------------------------
def test_glorot_uniform_limit_and_statistics() -> None:
    init = pv.glorot_uniform_initializer(seed=7)
    tensor = init([200, 300])
    limit = math.sqrt(6.0 / 500)
    graph = tensor.graph
    low = graph.get_operation_by_name(f"{tensor.op.name}/min").attrs["value"]
    high = graph.get_operation_by_name(f"{tensor.op.name}/max").attrs["value"]
    assert (float(low), float(high)) == (pytest.approx(-limit), pytest.approx(limit))
    (value,) = pv.Session().run([tensor])
    assert value.shape == (200, 300) and value.dtype == np.float32
    assert value.min() >= -limit and value.max() < limit
    assert abs(value.mean()) < 0.01 * limit
    assert value.std() == pytest.approx(limit / math.sqrt(3.0), rel=0.02)


@pytest.mark.parametrize(
    ("shape", "fans"),
    [([], (1, 1)), ([5], (5, 5)), ([3, 4], (3, 4)), ([3, 3, 16, 32], (144, 288))],
)
def test_compute_fans(shape: list[int], fans: tuple[int, int]) -> None:
    assert compute_fans(shape) == fans


def test_random_normal_and_uniform_initializers() -> None:
    normal = pv.random_normal_initializer(mean=1.0, stddev=0.5, seed=3)([400, 250])
    uniform = pv.random_uniform_initializer(-2.0, 4.0, seed=4)([400, 250])
    ints = pv.random_uniform_initializer(0, 10, dtype=pv.int32)([1000])
    n, u, i = pv.Session().run([normal, uniform, ints])
    assert n.mean() == pytest.approx(1.0, abs=0.01) and n.std() == pytest.approx(0.5, rel=0.02)
    assert u.min() >= -2.0 and u.max() < 4.0 and u.mean() == pytest.approx(1.0, abs=0.03)
    assert i.dtype == np.int32 and i.min() >= 0 and i.max() <= 9 and len(set(i.tolist())) == 10
    # A seeded initializer draws the same values in another session.
    np.testing.assert_array_equal(pv.Session().run(normal), n)


def test_constant_initializer_fills_and_pads_like_tf1() -> None:
    init = pv.constant_initializer([0, 1, 2, 3, 4, 5, 6, 7])
    exact, padded = init([2, 4]), init([3, 4])
    scalar = pv.constant_initializer(3)([2], dtype=pv.int32)
    values = pv.Session().run([exact, padded, scalar])
    np.testing.assert_array_equal(values[0], [[0, 1, 2, 3], [4, 5, 6, 7]])
    np.testing.assert_array_equal(values[1], [[0, 1, 2, 3], [4, 5, 6, 7], [7, 7, 7, 7]])
    assert values[0].dtype == np.float32
    np.testing.assert_array_equal(values[2], [3, 3])
    with pytest.raises(
        ValueError, match=r"Too many elements provided\. Takes at most 6, but got 8\."
    ):
        init([2, 3])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        pv.constant_initializer({"a": 1})


def test_float_only_initializers_reject_integer_dtypes() -> None:
    with pytest.raises(ValueError, match="`dtype` is expected to be floating point"):
        pv.random_normal_initializer(dtype=pv.int32)
    with pytest.raises(ValueError, match="`dtype` is expected to be floating point"):
        pv.truncated_normal_initializer(dtype=pv.int32)
    assert pv.glorot_uniform_initializer(dtype=pv.int32).dtype == pv.float32  # TF ignores it


def test_zeros_and_ones_initializers_take_the_call_dtype() -> None:
    zeros = pv.zeros_initializer(dtype=pv.int64)([2])
    ones = pv.ones_initializer()([2], dtype=pv.float64)
    assert (zeros.dtype, ones.dtype) == (pv.int64, pv.float64)
    z, o = pv.Session().run([zeros, ones])
    np.testing.assert_array_equal(z, [0, 0])
    np.testing.assert_array_equal(o, [1.0, 1.0])


def test_an_initializer_runs_where_its_variable_lives(gpus4: None) -> None:
    with pv.device("/cpu:0"):
        w = pv.get_variable("w", shape=[2, 2])  # glorot uniform: a RandomUniform and scaling
    with pv.device("/gpu:2"):
        v = pv.Variable(lambda: pv.ones([3]), name="v")
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    init_ops = [op for op in pv.get_default_graph().get_operations() if "/Initializer/" in op.name]
    assert {op.name.split("/")[0] for op in init_ops} == {"w", "v"}
    for op in init_ops:
        owner = w if op.name.startswith("w/") else v
        assert sess.placement[op.name] == sess.placement[owner.op.name], op.name
        assert sess.placement.explain(op.name).kind == "colocated"
    assert sess.placement["w"].endswith("CPU:0") and sess.placement["v"].endswith("GPU:2")


def test_variables_ignore_surrounding_control_dependencies() -> None:
    first = pv.no_op(name="first")
    x = pv.constant(2.0)
    with pv.control_dependencies([first]):
        v = pv.Variable(1.0, name="v")
        after = v * x  # its inputs come from outside the block, so it waits itself
    assert v.initializer.control_inputs == [] and v.op.control_inputs == []
    assert after.op.control_inputs == [first]


def test_reusing_a_variable_made_from_a_value_checks_the_scope_dtype() -> None:
    """TF compares the scope's dtype (float32 unless given) with the found variable's."""
    with pv.variable_scope("s", reuse=pv.AUTO_REUSE):
        first = pv.get_variable("v", initializer=[1, 2])
    with pv.variable_scope("s", reuse=pv.AUTO_REUSE):
        again = pv.get_variable("v", initializer=[1, 2], dtype=pv.int32)
        with pytest.raises(ValueError, match="specified dtype float32 and found dtype int32_ref"):
            pv.get_variable("v", initializer=[1, 2])
    assert again is first and first.dtype == pv.int32_ref
