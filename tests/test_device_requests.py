"""What op.device holds after device functions, _set_device and colocate_with (TF 2.21's values)."""

from __future__ import annotations

import pytest

import placeviz as pv


def made_under(function: object) -> pv.Operation:
    with pv.device(function):
        return pv.constant(1.0).op


@pytest.mark.parametrize(
    ("returned", "stored"),
    [
        ("/gpu:0", "/gpu:0"),  # kept as returned, not canonicalized
        ("gpu:0", "gpu:0"),
        ("/device:GPU:0", "/device:GPU:0"),
        ("/job:w/cpu:*", "/job:w/cpu:*"),
        (pv.DeviceSpec(device_type="GPU", device_index=0), "/device:GPU:0"),
        (pv.DeviceSpec(job="w"), "/job:w"),
        ("", ""),
    ],
)
def test_a_device_functions_result_is_stored_as_returned(returned: object, stored: str) -> None:
    op = made_under(lambda op: returned)
    assert op.device == stored
    assert op.requested_device == pv.DeviceSpec.coerce(returned)


def test_a_device_function_returning_none_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Expected binary or unicode string, got None") as info:
        made_under(lambda op: None)
    assert "device function <lambda>" in str(info.value) and "'Const'" in str(info.value)
    # as TF, which records the op before its device functions run: it stays, without a device
    (op,) = pv.get_default_graph().get_operations()
    assert (op.type, op.device) == ("Const", "")


def test_an_outer_string_scope_merges_and_canonicalizes() -> None:
    with pv.device("/job:outer/task:3/cpu:1"):
        assert made_under(lambda op: "/gpu:0").device == "/job:outer/task:3/device:GPU:0"
        assert made_under(lambda op: "").device == "/job:outer/task:3/device:CPU:1"
        assert made_under(lambda op: "/job:w/cpu:*").device == "/job:w/task:3/device:CPU:1"


def test_an_outer_device_function_overrides_inner_scopes() -> None:
    with pv.device(lambda op: "/gpu:0"):
        with pv.device("/cpu:1"):
            inner_string = pv.constant(1.0).op
        with pv.device(""):
            inner_empty = pv.constant(1.0).op
        with pv.device(None):
            cleared = pv.constant(1.0).op
    assert (inner_string.device, inner_empty.device, cleared.device) == ("/gpu:0", "/gpu:0", "")


def test_set_device_keeps_the_string_and_colocation_copies_it() -> None:
    d = pv.constant(2.0).op
    d._set_device("/gpu:0")
    with pv.colocate_with(d):
        e = pv.constant(3.0).op
    assert (d.device, e.device) == ("/gpu:0", "/gpu:0")


def test_a_device_function_result_places_the_op() -> None:
    with pv.device(lambda op: "/cpu:2"):
        x = pv.negative(pv.constant(1.0))
    with pv.Session(config=pv.ConfigProto(device_count={"CPU": 4})) as sess:
        sess.run(x)
        assert sess.placement[x.op.name].endswith("/device:CPU:2")


def test_colocate_with_none_needs_ignore_existing() -> None:
    with (
        pytest.raises(
            ValueError,
            match=r"^Trying to reset colocation \(op is None\) but ignore_existing is not",
        ),
        pv.colocate_with(None),
    ):
        pass


def test_colocate_with_none_clears_the_device_scopes_too() -> None:
    with pv.device("/cpu:1"), pv.colocate_with(None, ignore_existing=True):
        c = pv.constant(1.0).op
    assert c.device == ""


@pytest.mark.parametrize("name", ["/job:1a/cpu:0", "/task:-1", "/device:CPU:-1", "/job:a-b"])
def test_a_name_only_the_python_parser_accepts_fails_at_placement(name: str) -> None:
    """TF 2.21 keeps such a name on the op; the run says 'Malformed device specification'."""
    with pv.device(name):
        c = pv.constant(1.0)
    assert c.op.device == pv.DeviceSpec.from_string(name).to_string()
    with pytest.raises(pv.errors.InvalidArgumentError, match="Malformed device specification"):
        pv.Session(config=pv.ConfigProto(allow_soft_placement=True)).run(c)
