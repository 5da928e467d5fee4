"""A while loop's gradient at run time: the forward body pushes the values the backward loop
reads onto stacks, one per iteration, and the backward loop pops them in reverse (values
against NumPy's backpropagation); the stack ops' errors are TensorFlow's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import placeviz as pv
from placeviz.errors import InvalidArgumentError
from placeviz.graph.ops import stack_ops

STEPS = 5


def _reference(x: np.ndarray, w: float) -> tuple[np.ndarray, float]:
    """d/dx and d/dw of sum(h * h) for h = tanh(h * w) repeated STEPS times from x."""
    hs = [x]
    for _ in range(STEPS):
        hs.append(np.tanh(hs[-1] * w))
    grad, grad_w = 2 * hs[-1], 0.0
    for h in reversed(hs[:-1]):
        through = grad * (1 - np.tanh(h * w) ** 2)
        grad_w += float(np.sum(through * h))
        grad = through * w
    return grad, grad_w


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_the_backward_loop_pops_what_each_forward_iteration_pushed(
    parallel_iterations: int,
) -> None:
    values = np.array([0.3, -1.2, 0.8], np.float32)
    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [3], name="x")
        w = pv.constant(1.5, name="w")
        _, h = pv.while_loop(
            lambda i, h: i < STEPS,
            lambda i, h: (i + 1, pv.tanh(h * w)),
            [0, x],
            parallel_iterations=parallel_iterations,
        )
        grad_x, grad_w = pv.gradients(pv.reduce_sum(h * h), [x, w])
        with pv.Session() as sess:
            found_x, found_w = sess.run([grad_x, grad_w], {x: values})
            compiled = next(iter(sess._plans.values()))[0]
            executions = list(compiled.executions)
    expected_x, expected_w = _reference(values.astype(np.float64), 1.5)
    np.testing.assert_allclose(found_x, expected_x, rtol=1e-5)
    np.testing.assert_allclose(found_w, expected_w, rtol=1e-5)
    for kind in ("StackPushV2", "StackPopV2"):
        ran = [e for e in executions if e.op.type == kind and e.ran]
        # one push (pop) per value kept per iteration, each iteration's after the previous one's
        per_op = {e.op.name for e in ran}
        assert per_op and len(ran) == STEPS * len(per_op)
        for name in per_op:
            mine = [e for e in ran if e.op.name == name]
            assert [e.iteration for e in mine] == list(range(STEPS))
            assert all(a.t0 <= b.t0 for a, b in itertools.pairwise(mine))
    pushes = {e.loop for e in executions if e.op.type == "StackPushV2"}
    pops = {e.loop for e in executions if e.op.type == "StackPopV2"}
    assert len(pushes) == len(pops) == 1 and pushes != pops  # the forward and backward frames


def test_a_stack_pops_its_last_push_and_raises_tensorflows_errors() -> None:
    with pv.Graph().as_default():
        handle = stack_ops.stack(pv.constant(1), pv.float32, "s")
        push = stack_ops.stack_push(handle, pv.constant(2.0), False)
        with pv.control_dependencies([push]):
            pop = stack_ops.stack_pop(handle, pv.float32)
        with pv.control_dependencies([pop]):
            again = stack_ops.stack_pop(handle, pv.float32)
        with pv.control_dependencies([push]):
            overflow = stack_ops.stack_push(handle, pv.constant(3.0), False)
        with pv.Session() as sess:
            assert sess.run(pop) == 2.0
            with pytest.raises(InvalidArgumentError, match=r"^Stack\[s\] is empty\."):
                sess.run(again)
            with pytest.raises(InvalidArgumentError, match=r"^Stack\[s\] overflowed its max_size"):
                sess.run(overflow)
