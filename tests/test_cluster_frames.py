"""Tensors through a cluster message (``placeviz.cluster.frames``) and Dask's protocol: every
value comes back equal, with its dtype (byte order too) and shape, and a numeric array's bytes
travel as a frame of their own, outside the pickle."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("distributed")

from distributed.protocol import dumps, loads

from placeviz.cluster.frames import array_parts, as_frames, pickled, tensors_of


def _through_dask(message: object) -> object:
    """``message`` written and read as a Dask comm does (frames joined into bytes, as a
    socket would hand them over)."""
    frames = dumps({"values": message})
    return loads([bytes(f) for f in frames])["values"]


_numeric = hnp.arrays(
    st.sampled_from(["<f4", "<f8", "<i4", "<i8", "|u1", "|b1", "<c8", ">f4"]),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
)
_other = st.one_of(
    # not C-ordered (some are): copied on the way
    _numeric.map(lambda a: a.T if a.ndim > 1 else a[::-1] if a.ndim else a),
    st.lists(st.binary(max_size=4), max_size=4).map(lambda b: np.array(b, dtype=object)),
    st.lists(st.text(max_size=3), min_size=1, max_size=3).map(np.array),  # '<U'
    st.integers() | st.floats(allow_nan=False) | st.text(),
    st.just(np.float32(2.5)),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), _numeric | _other, max_size=5))
def test_tensors_come_back_equal_with_their_dtype_and_shape(tensors: dict) -> None:
    got = tensors_of(_through_dask(as_frames(tensors)))
    assert list(got) == list(tensors)
    for name, value in tensors.items():
        if isinstance(value, np.ndarray):
            assert got[name].dtype == value.dtype and got[name].shape == value.shape
            assert np.array_equal(got[name], value, equal_nan=value.dtype.kind in "fc")
        else:
            assert got[name] == value and type(got[name]) is type(value)


def test_a_numeric_arrays_bytes_are_a_frame_of_their_own() -> None:
    weights = np.arange(4096, dtype=np.float32).reshape(64, 64)
    message = as_frames({"w:0": weights, "names:0": np.array([b"a", b"bc"], dtype=object)})
    assert [bytes(f) for f in message.frames] == [weights.tobytes()]
    assert len(message.header["pickled-obj"]) < 200  # the parts, not the bytes


def test_an_array_received_in_a_writable_frame_is_writable() -> None:
    dtype, shape, buffer = array_parts(np.ones((2, 3), np.float32))
    received = bytearray(buffer.raw())  # as the comm hands over a frame it owns
    array = tensors_of([("x:0", dtype, shape, received)])["x:0"]
    array[0, 0] = 7
    assert array.flags.writeable and received[:4] == np.float32(7).tobytes()


def test_no_tensors_is_an_empty_list() -> None:
    assert as_frames({}) == [] and tensors_of(_through_dask(as_frames({}))) == {}


class Local(Exception):
    """An exception class of the test module, pickled by reference."""


def test_what_pythons_pickle_cannot_take_goes_to_dasks() -> None:
    def made_here(x: int) -> int:  # a local function: only cloudpickle pickles it
        return x + 1

    value = _through_dask(pickled({"f": made_here, "e": Local("x")}))
    assert value["f"](1) == 2 and isinstance(value["e"], Local)


def test_what_names_main_goes_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook's function pickles by reference to ``__main__``, which a task process does
    not have: it goes to Dask's pickle, by value."""
    main = sys.modules["__main__"]

    def notebook_function(x: int) -> int:
        return x * 3

    notebook_function.__module__, notebook_function.__qualname__ = "__main__", "notebook_function"
    monkeypatch.setattr(main, "notebook_function", notebook_function, raising=False)
    message = pickled(notebook_function)
    monkeypatch.delattr(main, "notebook_function")  # as in a task's process
    assert _through_dask(message)(2) == 6
