"""TF1's divisions and comparisons: div floors integers, //, % and the comparison operators.

TensorFlow 2.21 (tf.compat.v1) gives: div(7, 2) = 3 as a FloorDiv named 'div', 7 // 2 = 3
('floordiv'), 7 % 2 = 1 ('mod', FloorMod), -7.0 // 2.0 = -4.0 and -7.0 % 2.0 = 1.0.
"""

from __future__ import annotations

import numpy as np

import placeviz as pv


def _run(*fetches: object) -> list:
    with pv.Session() as sess:
        return sess.run(list(fetches))


def test_div_floors_integers_and_divides_floats() -> None:
    ints = pv.div(pv.constant(7), pv.constant(2))
    floats = pv.div(pv.constant(7.0), 2.0)
    assert (ints.op.type, ints.op.name, ints.dtype) == ("FloorDiv", "div", pv.int32)
    assert (floats.op.type, floats.op.name) == ("RealDiv", "div_1")
    assert _run(ints, floats) == [3, 3.5]


def test_true_division_of_integers_casts_them_to_float64_first() -> None:
    """TF's truediv: int / int is RealDiv of truediv/Cast and truediv/Cast_1 (float64); floats
    divide as they are; a Python number on the left is truediv/x."""
    a = pv.constant(7)
    q = a / 2
    assert (q.op.type, q.dtype) == ("RealDiv", pv.float64)
    assert [(t.op.name, t.op.type, t.dtype) for t in q.op.inputs] == [
        ("truediv/Cast", "Cast", pv.float64),
        ("truediv/Cast_1", "Cast", pv.float64),
    ]
    assert q.op.inputs[1].op.inputs[0].op.name == "truediv/y"
    r = 3 / a
    assert r.op.inputs[0].op.inputs[0].op.name == "truediv_1/x"
    f = pv.truediv(pv.constant(7.0), 2.0)
    assert [t.op.type for t in f.op.inputs] == ["Const", "Const"]
    assert _run(q, r, f) == [3.5, 3 / 7, 3.5]


def test_floor_division_and_modulo_follow_the_divisors_sign() -> None:
    x = pv.constant([-7.0, 5.5])
    quotient, remainder = x // 2.0, x % -2.0
    assert (quotient.op.type, quotient.op.name) == ("FloorDiv", "floordiv")
    assert (remainder.op.type, remainder.op.name) == ("FloorMod", "mod")
    got_q, got_r = _run(quotient, remainder)
    np.testing.assert_array_equal(got_q, [-4.0, 2.0])
    np.testing.assert_array_equal(got_r, [-1.0, -0.5])
    assert pv.mod(pv.constant(7), 2).op.name == "FloorMod"


def test_comparison_operators_build_tensorflows_ops() -> None:
    a, b = pv.constant(1.0), pv.constant(2.0)
    ops = [a < b, a <= b, a > b, a >= b]
    assert [t.op.type for t in ops] == ["Less", "LessEqual", "Greater", "GreaterEqual"]
    assert [bool(v) for v in _run(*ops)] == [True, True, False, False]
    assert (2.0 < a).op.type == "Greater"  # noqa: SIM300 (Python reflects it into a > 2.0)


def test_floor_mod_gradient_is_tensorflows() -> None:
    x = pv.constant([-7.0, 5.5])
    y = pv.constant([2.0, -2.0])
    dx, dy = pv.gradients(pv.reduce_sum(x % y), [x, y])
    got_dx, got_dy = _run(dx, dy)
    np.testing.assert_array_equal(got_dx, [1.0, 1.0])
    np.testing.assert_array_equal(got_dy, [4.0, 3.0])  # -floor(x / y)
    assert pv.gradients(pv.reduce_sum(x // y), [x]) == [None]
