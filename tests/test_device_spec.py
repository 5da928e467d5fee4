"""DeviceSpec: accepted spellings, malformed names, canonical printout, merge, match and order."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeviz.devices.spec import DeviceSpec

FIELDS = ("job", "replica", "task", "device_type", "device_index")


def fields_of(spec: DeviceSpec) -> tuple[object, ...]:
    return tuple(getattr(spec, name) for name in FIELDS)


# --- parsing: accepted forms ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", DeviceSpec()),
        ("/", DeviceSpec()),
        ("/GPU:0", DeviceSpec(device_type="GPU", device_index=0)),
        ("GPU:0", DeviceSpec(device_type="GPU", device_index=0)),
        ("/gpu:0", DeviceSpec(device_type="GPU", device_index=0)),
        ("/gpu:1", DeviceSpec(device_type="GPU", device_index=1)),
        ("/cpu:0", DeviceSpec(device_type="CPU", device_index=0)),
        ("/CPU:0", DeviceSpec(device_type="CPU", device_index=0)),
        ("/GPU:*", DeviceSpec(device_type="GPU")),
        ("/TPU:3", DeviceSpec(device_type="TPU", device_index=3)),
        ("/XLA_GPU:0", DeviceSpec(device_type="XLA_GPU", device_index=0)),
        ("/device:GPU:0", DeviceSpec(device_type="GPU", device_index=0)),
        ("/device:GPU:2", DeviceSpec(device_type="GPU", device_index=2)),
        ("/device:cpu:0", DeviceSpec(device_type="CPU", device_index=0)),
        ("/device:GPU", DeviceSpec(device_type="GPU")),
        ("/device:GPU:*", DeviceSpec(device_type="GPU")),
        ("/device:MyAccel:1", DeviceSpec(device_type="MyAccel", device_index=1)),
        ("/job:worker", DeviceSpec(job="worker")),
        ("/task:1", DeviceSpec(task=1)),
        ("/replica:0", DeviceSpec(replica=0)),
        ("/job:ps/task:0/cpu:0", DeviceSpec("ps", None, 0, "CPU", 0)),
        ("/job:worker/task:1/gpu:1", DeviceSpec("worker", None, 1, "GPU", 1)),
        ("/job:worker/task:0/gpu:1", DeviceSpec("worker", None, 0, "GPU", 1)),
        (
            "/job:localhost/replica:0/task:0/device:GPU:1",
            DeviceSpec("localhost", 0, 0, "GPU", 1),
        ),
        ("job:ps/replica:2", DeviceSpec(job="ps", replica=2)),
        ("/task:1/job:worker", DeviceSpec(job="worker", task=1)),
        ("/device:GPU:007", DeviceSpec(device_type="GPU", device_index=7)),
    ],
)
def test_from_string_accepts(text: str, expected: DeviceSpec) -> None:
    assert DeviceSpec.from_string(text) == expected


# --- parsing: malformed names -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("/gpu:zero", "device index 'zero' is not an integer"),
        ("/job:ps/task:x", "task 'x' is not an integer"),
        ("/device:GPU:1:2", "must be 'device:<TYPE>'"),
        ("nonsense", "unknown component 'nonsense'"),
        ("/job:", "job name '' does not match"),
        ("/replica:-1", "replica '-1' is negative"),
        ("/job:1abc", "job name '1abc' does not match"),
        ("/job:ps/job:worker", "job is given twice"),
        ("/gpu:0/device:CPU:1", "device is given twice"),
        ("/task:0/task:0", "task is given twice"),
        ("/job:ps//task:0", "empty component"),
        ("/job:ps/", "empty component"),
        ("//gpu:0", "empty component"),
        ("/job:ps:x", "must be 'job:<value>'"),
        ("/task", "must be 'task:<value>'"),
        ("/gpu", "unknown component 'gpu'"),
        ("/tsk:0", "unknown component 'tsk:0'"),
        ("/device:1GPU:0", "device type '1GPU' does not match"),
        ("/device:GPU:-2", "device index '-2' is negative"),
        ("/device:GPU:1.5", "device index '1.5' is not an integer"),
        (" /gpu:0", "unknown component"),
        ("/job:a b", "job name 'a b' does not match"),
    ],
)
def test_from_string_rejects_and_quotes_the_string(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as info:
        DeviceSpec.from_string(text)
    message = str(info.value)
    assert message.startswith(f"Malformed device specification '{text}': ")
    assert problem in message


def test_from_string_message_matches_documented_example() -> None:
    with pytest.raises(ValueError) as info:
        DeviceSpec.from_string("/gpu:zero")
    assert str(info.value) == (
        "Malformed device specification '/gpu:zero': device index 'zero' is not an integer"
    )


def test_from_string_rejects_non_strings() -> None:
    with pytest.raises(TypeError):
        DeviceSpec.from_string(0)  # type: ignore[arg-type]


# --- constructor ------------------------------------------------------------------------------


def test_constructor_normalizes_cpu_and_gpu_only() -> None:
    assert DeviceSpec(device_type="gpu").device_type == "GPU"
    assert DeviceSpec(device_type="Cpu").device_type == "CPU"
    assert DeviceSpec(device_type="tpu").device_type == "tpu"
    assert DeviceSpec(device_type="XLA_GPU").device_type == "XLA_GPU"


def test_constructor_accepts_integer_like_values_as_plain_ints() -> None:
    spec = DeviceSpec(replica=np.int64(1), task=np.int32(2), device_type="GPU", device_index=3)
    assert fields_of(spec) == (None, 1, 2, "GPU", 3)
    assert type(spec.replica) is int


@pytest.mark.parametrize(
    "kwargs",
    [
        {"job": "1abc"},
        {"job": ""},
        {"job": "a/b"},
        {"job": 3},
        {"replica": -1},
        {"task": True},
        {"replica": False},
        {"task": "0"},
        {"task": 1.0},
        {"device_type": "GPU", "device_index": -3},
        {"device_type": "GPU", "device_index": True},
        {"device_type": "GPU:0"},
        {"device_type": ""},
        {"device_index": 0},
    ],
)
def test_constructor_rejects_bad_fields(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="DeviceSpec"):
        DeviceSpec(**kwargs)  # type: ignore[arg-type]


# --- printing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("/gpu:1", "/device:GPU:1"),
        ("GPU:0", "/device:GPU:0"),
        ("/device:GPU", "/device:GPU:*"),
        ("/GPU:*", "/device:GPU:*"),
        ("/job:ps/task:0/cpu:0", "/job:ps/task:0/device:CPU:0"),
        ("/task:1/job:worker/gpu:1", "/job:worker/task:1/device:GPU:1"),
        (
            "/job:localhost/replica:0/task:0/device:GPU:1",
            "/job:localhost/replica:0/task:0/device:GPU:1",
        ),
    ],
)
def test_to_string_is_canonical(text: str, canonical: str) -> None:
    spec = DeviceSpec.from_string(text)
    assert spec.to_string() == canonical
    assert str(spec) == canonical


def test_repr_evaluates_back_to_the_spec() -> None:
    for spec in (DeviceSpec(), DeviceSpec.from_string("/job:ps/task:0/gpu:1")):
        assert eval(repr(spec)) == spec
    assert repr(DeviceSpec.from_string("/gpu:1")) == "DeviceSpec.from_string('/device:GPU:1')"
    assert repr(DeviceSpec()) == "DeviceSpec()"


# --- value semantics --------------------------------------------------------------------------


def test_equality_and_hash_are_on_fields_only() -> None:
    a = DeviceSpec.from_string("/gpu:0")
    b = DeviceSpec(device_type="GPU", device_index=0)
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b, DeviceSpec.from_string("/cpu:0")}) == 2
    assert a != "/device:GPU:0"
    assert a != DeviceSpec.from_string("/gpu:1")


def test_is_immutable() -> None:
    spec = DeviceSpec.from_string("/gpu:0")
    with pytest.raises(AttributeError):
        spec.device_index = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        spec._device_index = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del spec._job
    with pytest.raises(AttributeError):
        spec.extra = 1  # type: ignore[attr-defined]
    assert spec.device_index == 0


def test_survives_pickle_and_copy() -> None:
    spec = DeviceSpec.from_string("/job:ps/replica:1/task:2/device:XLA_GPU:3")
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert copy.copy(spec) == spec
    assert copy.deepcopy(spec) == spec


def test_empty_and_fully_specified() -> None:
    assert DeviceSpec().is_empty
    assert not DeviceSpec().is_fully_specified
    full = DeviceSpec.from_string("/job:localhost/replica:0/task:0/device:CPU:0")
    assert full.is_fully_specified
    assert not full.is_empty
    assert not full.replace(device_index=None).is_fully_specified


def test_coerce() -> None:
    spec = DeviceSpec.from_string("/gpu:0")
    assert DeviceSpec.coerce(spec) is spec
    assert DeviceSpec.coerce("/gpu:0") == spec
    assert DeviceSpec.coerce(None) == DeviceSpec()
    with pytest.raises(TypeError, match="int"):
        DeviceSpec.coerce(0)  # type: ignore[arg-type]


# --- merge, replace, match --------------------------------------------------------------------


def test_merge_follows_nested_scopes_from_the_reference() -> None:
    outer = DeviceSpec.from_string("/job:worker")
    inner = outer.merge_from("/gpu:1")
    assert inner.to_string() == "/job:worker/device:GPU:1"
    assert inner.merge_from("/task:1").to_string() == "/job:worker/task:1/device:GPU:1"


def test_merge_is_field_by_field_for_the_device_too() -> None:
    merged = DeviceSpec.from_string("/device:GPU:1").merge_from("/device:CPU")
    assert merged == DeviceSpec(device_type="CPU", device_index=1)


def test_merge_returns_a_new_spec_and_leaves_self_alone() -> None:
    spec = DeviceSpec.from_string("/job:ps")
    merged = spec.merge_from(DeviceSpec(task=0))
    assert spec == DeviceSpec(job="ps")
    assert merged == DeviceSpec(job="ps", task=0)
    assert spec.make_merged_spec("/task:0") == merged
    assert spec.merge_from(None) == spec


def test_replace() -> None:
    spec = DeviceSpec.from_string("/job:ps/task:0/gpu:1")
    assert spec.replace(task=3) == DeviceSpec.from_string("/job:ps/task:3/gpu:1")
    assert spec.replace(job=None) == DeviceSpec.from_string("/task:0/gpu:1")
    assert spec.replace(device_type="cpu") == DeviceSpec.from_string("/job:ps/task:0/cpu:1")
    assert spec.replace() == spec
    with pytest.raises(TypeError, match="unknown field"):
        spec.replace(device="GPU")
    with pytest.raises(ValueError):
        spec.replace(task=-1)


def test_matches() -> None:
    device = "/job:localhost/replica:0/task:0/device:GPU:1"
    assert DeviceSpec.from_string("/gpu:1").matches(device)
    assert DeviceSpec.from_string("/device:GPU").matches(device)
    assert DeviceSpec().matches(device)
    assert not DeviceSpec.from_string("/gpu:0").matches(device)
    assert not DeviceSpec.from_string("/cpu:1").matches(device)
    assert not DeviceSpec.from_string("/job:worker").matches(device)
    assert not DeviceSpec.from_string("/task:0").matches("/device:GPU:1")


# --- order ------------------------------------------------------------------------------------


def test_sort_key_orders_gpu_then_cpu_then_others_and_indices_numerically() -> None:
    names = [
        "/device:TPU:0",
        "/device:CPU:0",
        "/device:GPU:10",
        "/device:GPU:2",
        "/device:XLA_CPU:0",
        "/device:GPU:0",
    ]
    ordered = sorted((DeviceSpec.from_string(n) for n in names), key=DeviceSpec.sort_key)
    assert [s.to_string() for s in ordered] == [
        "/device:GPU:0",
        "/device:GPU:2",
        "/device:GPU:10",
        "/device:CPU:0",
        "/device:TPU:0",
        "/device:XLA_CPU:0",
    ]


def test_sort_key_puts_job_replica_task_first() -> None:
    names = [
        "/job:worker/replica:0/task:0/device:GPU:0",
        "/job:ps/replica:0/task:1/device:GPU:0",
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:ps/replica:0/task:0/device:GPU:3",
    ]
    ordered = sorted((DeviceSpec.from_string(n) for n in names), key=DeviceSpec.sort_key)
    assert [s.to_string() for s in ordered] == [
        "/job:ps/replica:0/task:0/device:GPU:3",
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:ps/replica:0/task:1/device:GPU:0",
        "/job:worker/replica:0/task:0/device:GPU:0",
    ]


# --- properties -------------------------------------------------------------------------------

job_names = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_]{0,11}\Z")
indices = st.integers(min_value=0, max_value=20)
device_types = st.sampled_from(["CPU", "GPU", "TPU", "XLA_GPU"])


@st.composite
def specs(draw: st.DrawFn) -> DeviceSpec:
    device_type = draw(st.none() | device_types)
    device_index = None if device_type is None else draw(st.none() | indices)
    return DeviceSpec(
        job=draw(st.none() | job_names),
        replica=draw(st.none() | indices),
        task=draw(st.none() | indices),
        device_type=device_type,
        device_index=device_index,
    )


full_specs = st.builds(DeviceSpec, job_names, indices, indices, device_types, indices)


@given(specs())
def test_to_string_round_trips(spec: DeviceSpec) -> None:
    text = spec.to_string()
    assert DeviceSpec.from_string(text) == spec
    assert DeviceSpec.from_string(text).to_string() == text
    assert DeviceSpec.from_string(text.lstrip("/")) == spec


@given(specs())
def test_merge_with_empty_is_identity(a: DeviceSpec) -> None:
    assert a.merge_from(DeviceSpec()) == a
    assert DeviceSpec().merge_from(a) == a


@given(specs(), specs())
def test_merge_takes_set_fields_from_other_and_the_rest_from_self(
    a: DeviceSpec, b: DeviceSpec
) -> None:
    merged = a.merge_from(b)
    for name in FIELDS:
        theirs = getattr(b, name)
        expected = getattr(a, name) if theirs is None else theirs
        assert getattr(merged, name) == expected
    assert merged == a.merge_from(b.to_string())
    assert merged.merge_from(b) == merged


@given(full_specs, st.lists(st.booleans(), min_size=5, max_size=5))
def test_a_full_spec_matches_itself_and_every_subset_of_it(
    full: DeviceSpec, keep: list[bool]
) -> None:
    assert full.matches(full)
    values = [value if kept else None for value, kept in zip(fields_of(full), keep, strict=True)]
    if values[3] is None:
        values[4] = None
    partial = DeviceSpec(*values)
    assert partial.matches(full)
    assert partial.matches(full.to_string())


@given(full_specs, full_specs)
def test_a_full_spec_matches_only_an_equal_full_spec(a: DeviceSpec, b: DeviceSpec) -> None:
    assert a.matches(b) == (a == b)


@given(
    specs(),
    st.sampled_from(["CPU", "GPU"]),
    st.none() | indices,
    st.sampled_from([str.lower, str.title, str.swapcase]),
)
def test_legacy_type_case_does_not_matter(
    base: DeviceSpec, device_type: str, device_index: int | None, recase: Callable[[str], str]
) -> None:
    prefix = base.replace(device_type=None, device_index=None).to_string()
    index = "*" if device_index is None else str(device_index)
    expected = base.replace(device_type=device_type, device_index=device_index)
    assert DeviceSpec.from_string(f"{prefix}/{device_type}:{index}") == expected
    assert DeviceSpec.from_string(f"{prefix}/{recase(device_type)}:{index}") == expected
