"""TensorFlow's placer heuristics and reference edges, on four CPUs.

Every expected device below is what TensorFlow 2.21 printed for the same graph (TF1 graph mode,
``ConfigProto(device_count={'CPU': 4}, log_device_placement=True)``, Grappler off so that no op
is folded away before it is placed). placer.cc: generators (no inputs, one output, not a
reference) are placed last, with their consumers when all of those went to one device the
generator may take; ``Shape``/``Size``/``Rank`` and a lone unpinned ``Identity`` go with their
input; a reference edge overrides its consumer's contradicting request (colocation_graph.cc).
"""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import ReasonKind
from placeviz.events import document
from placeviz.graph.ops.shape_ops import shape, size

LOCAL = "/job:localhost/replica:0/task:0/device:"


def four_cpus(**options: object) -> pv.Session:
    return pv.Session(config=pv.ConfigProto(device_count={"CPU": 4}, **options))


def placed(sess: pv.Session, *ops: object) -> dict[str, str]:
    names = [getattr(op, "op", op).name for op in ops]
    return {name: sess.placement[name].removeprefix(LOCAL) for name in names}


# -- generators --------------------------------------------------------------------------------
def test_a_generator_goes_with_its_only_consumer() -> None:
    a = pv.constant(1.0, name="a")
    with pv.device("/cpu:2"):
        b = pv.identity(a, name="b")
    with four_cpus() as sess:
        sess.run(b)
        assert placed(sess, a, b) == {"a": "CPU:2", "b": "CPU:2"}
        reason = sess.placement.explain("a")
        assert reason.kind == "generator"
        assert reason.anchor == "b"
        assert reason.text.startswith("placed with its only consumer 'b' on CPU:2, as TensorFlow")


def test_a_generator_whose_consumers_disagree_takes_the_default() -> None:
    c = pv.constant([1.0, 2.0], name="c")
    with pv.device("/cpu:1"):
        d = pv.identity(c, name="d")
    with pv.device("/cpu:3"):
        e = pv.identity(c, name="e")
    f = pv.constant([1.0, 2.0], name="f")
    with pv.device("/cpu:3"):
        f1 = pv.negative(f, name="f1")
        f2 = pv.abs(f, name="f2")
    with four_cpus() as sess:
        sess.run([d, e, f1, f2])
        assert placed(sess, c, f) == {"c": "CPU:0", "f": "CPU:3"}
        assert sess.placement.explain("c").kind == "default"
        assert "all 2 of its consumers ('f1', 'f2')" in sess.placement.explain("f").text


def test_a_generator_stays_within_its_own_request() -> None:
    with pv.device("/device:CPU:*"):
        partly = pv.constant(1.0, name="pc")
    with pv.device("/cpu:3"):
        pcc = pv.negative(partly, name="pcc")
    with pv.device("/cpu:1"):
        fully = pv.constant(1.0, name="fc")
    with pv.device("/cpu:3"):
        fcc = pv.negative(fully, name="fcc")
    with four_cpus() as sess:
        sess.run([pcc, fcc])
        assert placed(sess, partly, fully) == {"pc": "CPU:3", "fc": "CPU:1"}
        assert sess.placement.explain("fc").kind == "pinned"


def test_generators_without_placed_consumers_take_the_default() -> None:
    z = pv.constant(5.0, name="z")  # no consumer at all
    h = pv.constant(2.0, name="h")
    with pv.device("/cpu:1"), pv.control_dependencies([h]):
        hh = pv.constant(1.0, name="hh")  # a generator too: placed after h, so h cannot follow it
    with four_cpus() as sess:
        sess.run([z, hh])
        assert placed(sess, z, h, hh) == {"z": "CPU:0", "h": "CPU:0", "hh": "CPU:1"}


def test_a_placeholder_is_a_generator() -> None:
    p = pv.placeholder(pv.float32, [None], name="p")
    with pv.device("/cpu:2"):
        x = pv.negative(p, name="x")
        x2 = pv.negative(p, name="x2")
    with four_cpus() as sess:
        sess.run([x, x2], feed_dict={p: [1.0, 2.0]})
        assert placed(sess, p)["p"] == "CPU:2"


def test_a_variable_is_not_a_generator() -> None:
    """Its output is a reference, so TensorFlow places it by its own request."""
    v = pv.Variable(1.0, name="v")
    with pv.device("/cpu:2"):
        n = pv.negative(v, name="n")
    with four_cpus() as sess:
        sess.run(v.initializer)
        sess.run(n)
        assert placed(sess, v, n) == {"v": "CPU:0", "n": "CPU:2"}


# -- metadata and identities -------------------------------------------------------------------
def test_shape_and_size_go_with_their_input() -> None:
    p = pv.placeholder(pv.float32, None, name="p")
    with pv.device("/cpu:2"):
        x = pv.negative(p, name="x")
    s = shape(x, name="s")
    sz = size(x, name="sz")
    y = pv.negative(x, name="y")  # not metadata: the default device
    with pv.device("/cpu:1"):
        m = shape(x, name="m")  # pinned: stays
    with pv.device("/cpu:*"):
        m2 = shape(x, name="m2")  # partly pinned: its input's CPU:2 is allowed
    with four_cpus() as sess:
        sess.run([s, sz, y, m, m2], feed_dict={p: [1.0, 2.0]})
        assert placed(sess, s, sz, y, m, m2) == {
            "s": "CPU:2",
            "sz": "CPU:2",
            "y": "CPU:0",
            "m": "CPU:1",
            "m2": "CPU:2",
        }
        reason = sess.placement.explain("s")
        assert reason.kind == "metadata"
        assert reason.text.startswith("placed with its input 'x' on CPU:2")


def test_shape_of_a_generator_takes_the_default_and_the_generator_follows() -> None:
    """The generator is still unplaced when the Shape is decided."""
    cs = pv.constant([1.0], name="cs")
    css = shape(cs, name="css")
    with four_cpus() as sess:
        sess.run(css)
        assert placed(sess, cs, css) == {"cs": "CPU:0", "css": "CPU:0"}
        assert sess.placement.explain("css").kind == "default"


def test_a_lone_identity_between_ops_requesting_one_device_goes_with_its_input() -> None:
    p = pv.placeholder(pv.float32, [None], name="p")
    with pv.device("/cpu:2"):
        x = pv.negative(p, name="x")
        x2 = pv.negative(p, name="x2")
    i = pv.identity(x, name="i")  # no consumer: its out edge goes to the sink, which asks nothing
    i2 = pv.identity(x2, name="i2")
    with pv.device("/cpu:2"):
        k = pv.negative(i2, name="k")
    with four_cpus() as sess:
        sess.run([i, k], feed_dict={p: [1.0]})
        assert placed(sess, i, i2) == {"i": "CPU:0", "i2": "CPU:2"}
        assert sess.placement.explain("i2").kind == "identity"


# -- reference edges ---------------------------------------------------------------------------
@pytest.mark.parametrize("soft", [False, True])
def test_a_reference_edge_overrides_the_consumers_request(
    soft: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    with pv.device("/cpu:1"):
        v = pv.Variable(1.0, name="v")
    a = pv.assign(v, 3.0, name="a")
    a.op._set_device("/cpu:2")  # as a GraphDef without the colocation attribute would ask
    with four_cpus(allow_soft_placement=soft, log_device_placement=True) as sess:
        sess.run(v.initializer)
        assert sess.run(a) == 3.0
        assert placed(sess, a)["a"] == "CPU:1"
        reason = sess.placement.explain("a")
        assert reason.kind == "reference"
        assert reason.anchor == "v"
        assert "by reference" in reason.text and "'/cpu:2'" in reason.text
    assert (
        "Ignoring device specification /device:CPU:2 for node 'a' because the input edge from "
        "'v' is a reference connection and already has a device field set to /device:CPU:1"
    ) in capfd.readouterr().err


def test_a_compatible_request_on_a_reference_edge_is_merged() -> None:
    v = pv.Variable(1.0, name="v")
    a = pv.assign(v, 3.0, name="a")
    a.op._set_device("/cpu:2")
    with four_cpus() as sess:
        sess.run(a)
        np.testing.assert_equal(sess.run(v), 3.0)
        assert placed(sess, v, a) == {"v": "CPU:2", "a": "CPU:2"}
        assert sess.placement.explain("a").kind == "pinned"


# -- the kinds in the placement document -------------------------------------------------------
def reason_kind_enums(node: object) -> list[list[str]]:
    if isinstance(node, dict):
        found = [e for value in node.values() for e in reason_kind_enums(value)]
        kind = node.get("kind")
        if isinstance(kind, dict) and "pinned" in kind.get("enum", []):
            found.append(kind["enum"])
        return found
    if isinstance(node, list):
        return [e for value in node for e in reason_kind_enums(value)]
    return []


def test_the_schema_lists_exactly_the_declared_reason_kinds() -> None:
    assert reason_kind_enums(document.schema()) == [[k.value for k in ReasonKind]]


def test_a_document_with_heuristic_reasons_validates() -> None:
    p = pv.placeholder(pv.float32, [2], name="p")
    with pv.device("/cpu:2"):
        x = pv.negative(p, name="x")
    s = shape(x, name="s")
    with four_cpus() as sess:
        sess.run(s, feed_dict={p: [1.0, 2.0]})
        doc = sess.trace().to_document()
    document.validate(doc)
    kinds = {sess.placement.explain(name).kind for name in ("p", "x", "s")}
    assert kinds == {"generator", "pinned", "metadata"}


def test_the_placement_log_names_the_four_cpus(capfd: pytest.CaptureFixture[str]) -> None:
    a = pv.constant(1.0, name="a")
    with pv.device("/cpu:2"):
        b = pv.identity(a, name="b")
    with four_cpus(log_device_placement=True) as sess:
        sess.run(b)
    err = capfd.readouterr().err
    # TF 2.21 printed these two lines (and 'Device mapping: no known devices.' before them).
    assert "Device mapping:\nno known devices." in err
    lines = err.splitlines()
    # ... in this order: its placer decides generators ('a') after every other op.
    b_line = lines.index("b: (Identity): /job:localhost/replica:0/task:0/device:CPU:2")
    a_line = lines.index("a: (Const): /job:localhost/replica:0/task:0/device:CPU:2")
    assert b_line < a_line
