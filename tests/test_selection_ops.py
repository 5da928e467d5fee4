"""Selection ops (ArgMax, ArgMin, OneHot, TopKV2, Cumsum, Where, ScatterNd), dropout and
embedding_lookup: values against NumPy references, gradients against analytic ones, random
draws by their statistics and seeds, and placement of an embedding by colocation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz import errors as pv_errors
from placeviz.graph.ops import embedding_ops, selection_ops

LOCAL = "/job:localhost/replica:0/task:0/device:"
RNG = np.random.default_rng(24)


def _run(fetches: Any, feed: dict[Any, Any] | None = None) -> Any:
    return pv.Session().run(fetches, feed_dict=feed)


# -- ArgMax, ArgMin ----------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_argmax_and_argmin_match_numpy(axis: int, dtype: Any) -> None:
    x = RNG.integers(-5, 5, size=(3, 4, 5)).astype(dtype)
    hi, lo = _run([pv.argmax(x, axis), pv.argmin(x, axis, output_type=pv.int32)])
    np.testing.assert_array_equal(hi, np.argmax(x, axis))
    np.testing.assert_array_equal(lo, np.argmin(x, axis))
    assert hi.dtype == np.int64 and lo.dtype == np.int32


def test_argmax_skips_nans_and_shapes_follow_the_axis() -> None:
    x = np.array([[np.nan, 1.0, 3.0], [2.0, np.nan, -1.0]], dtype=np.float32)
    best = pv.argmax(x, 1)
    assert best.shape.as_list() == [2]
    np.testing.assert_array_equal(_run(best), np.nanargmax(x, 1))
    np.testing.assert_array_equal(_run(pv.argmin(x, 1)), np.nanargmin(x, 1))


def test_argmax_errors() -> None:
    with pytest.raises(ValueError, match=r"Dimension \(3\) must be in the range \[-2, 2\)"):
        pv.argmax(np.zeros((2, 2)), 3)
    axis = pv.placeholder(pv.int32, [])
    with pytest.raises(pv_errors.InvalidArgumentError, match=r"range \[-2, 2\), but got -3"):
        _run(pv.argmax(np.zeros((2, 2)), axis), {axis: -3})


# -- OneHot ------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_one_hot_matches_an_identity_matrix_reference(axis: int) -> None:
    indices = np.array([[0, 3, -1], [2, 5, 1]])
    depth = 4
    # rows of eye(depth) for valid indices, zeros outside [0, depth), the new axis moved
    eye = np.vstack([np.eye(depth), np.zeros((1, depth))])
    reference = eye[np.where((indices >= 0) & (indices < depth), indices, depth)]
    reference = np.moveaxis(reference * 7.0 + (1 - reference) * -2.0, -1, axis)
    hot = pv.one_hot(indices, depth, on_value=7.0, off_value=-2.0, axis=axis)
    assert hot.shape.as_list() == list(reference.shape)
    np.testing.assert_array_equal(_run(hot), reference)


def test_one_hot_dtype_rules() -> None:
    assert pv.one_hot([1], 2).dtype is pv.float32
    assert pv.one_hot([1], 2, on_value=3).dtype is pv.int32
    assert pv.one_hot([1], 2, dtype=pv.float64).dtype is pv.float64
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        pv.one_hot([1], 2, on_value=1.0, dtype=pv.int64)


# -- TopKV2 ------------------------------------------------------------------------------------
def _top_k_reference(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    rows = x.reshape(-1, x.shape[-1])
    order = [sorted(range(len(r)), key=lambda j, r=r: (-r[j], j))[:k] for r in rows]
    idx = np.array(order, dtype=np.int32).reshape(*x.shape[:-1], k)
    return np.take_along_axis(x, idx, -1), idx


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_top_k_matches_a_sorted_reference_with_ties_in_index_order(dtype: Any) -> None:
    x = RNG.integers(0, 4, size=(2, 3, 6)).astype(dtype)
    values, indices = _run(pv.nn.top_k(x, 3))
    ref_values, ref_indices = _top_k_reference(x, 3)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(indices, ref_indices)


def test_top_k_gradient_scatters_into_the_picked_positions() -> None:
    x = pv.constant(RNG.normal(size=(3, 5)).astype(np.float32))
    top = pv.nn.top_k(x, 2)
    weights = RNG.normal(size=(3, 2)).astype(np.float32)
    (grad,) = pv.gradients(pv.reduce_sum(top.values * weights), x)
    got, picked = _run([grad, top.indices])
    expected = np.zeros((3, 5), dtype=np.float32)
    for row in range(3):
        expected[row, picked[row]] = weights[row]
    np.testing.assert_allclose(got, expected)
    assert [op.type for op in grad.graph.get_operations()].count("ScatterNd") == 1


def test_top_k_errors() -> None:
    with pytest.raises(ValueError, match="last dimension >= k = 4 but is 3"):
        pv.nn.top_k(np.zeros((2, 3)), 4)
    k = pv.placeholder(pv.int32, [])
    with pytest.raises(pv_errors.InvalidArgumentError, match="Had 3, needed 5"):
        _run(pv.nn.top_k(np.zeros((2, 3)), k), {k: 5})


# -- Cumsum ------------------------------------------------------------------------------------
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_matches_numpy(exclusive: bool, reverse: bool, axis: int) -> None:
    x = RNG.integers(-9, 9, size=(3, 4, 2)).astype(np.int64)
    source = np.flip(x, axis) if reverse else x
    ref = np.cumsum(source, axis) - (source if exclusive else 0)
    ref = np.flip(ref, axis) if reverse else ref
    got = _run(pv.cumsum(x, axis, exclusive=exclusive, reverse=reverse))
    np.testing.assert_array_equal(got, ref)


def test_cumsum_gradient_is_a_reversed_cumsum_of_the_weights() -> None:
    x = pv.constant(RNG.normal(size=(2, 4)).astype(np.float32))
    weights = RNG.normal(size=(2, 4)).astype(np.float32)
    (grad,) = pv.gradients(pv.reduce_sum(pv.cumsum(x, 1, exclusive=True) * weights), x)
    # d/dx_j sum_i w_i * sum_{k<i} x_k = sum_{i>j} w_i
    expected = np.flip(np.cumsum(np.flip(weights, 1), 1), 1) - weights
    np.testing.assert_allclose(_run(grad), expected, rtol=1e-6, atol=1e-6)


# -- Where, ScatterNd --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_where_lists_nonzero_coordinates_in_row_major_order(shape: tuple[int, ...]) -> None:
    x = RNG.integers(0, 3, size=shape) * (RNG.random(shape) > 0.5)
    found = pv.where(x.astype(np.float32))
    assert found.shape.as_list() == [None, len(shape)]
    np.testing.assert_array_equal(_run(found), np.stack(np.nonzero(x), axis=1))


def test_where_with_values_is_tf1_select() -> None:
    chosen = pv.where([True, False], [1.0, 2.0], [3.0, 4.0])
    assert chosen.op.type == "Select"
    np.testing.assert_array_equal(_run(chosen), [1.0, 4.0])


def test_scatter_nd_sums_repeated_indices() -> None:
    indices = np.array([[0, 1], [2, 0], [0, 1]])
    updates = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
    expected = np.zeros((3, 2, 2), dtype=np.float32)
    for (a, b), u in zip(indices, updates):
        expected[a, b] += u
    got = _run(selection_ops.scatter_nd(indices, updates, [3, 2, 2]))
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(pv_errors.InvalidArgumentError, match="does not index into shape"):
        _run(selection_ops.scatter_nd([[4]], [1.0], [3]))


# -- DynamicPartition, ParallelDynamicStitch ---------------------------------------------------
def test_partition_then_stitch_restores_the_rows_and_its_gradient() -> None:
    data = RNG.normal(size=(6, 2)).astype(np.float32)
    parts = np.array([1, 0, 2, 1, 1, 0], dtype=np.int32)
    x = pv.constant(data)
    pieces = embedding_ops.dynamic_partition(x, parts, 3)
    positions = embedding_ops.dynamic_partition(np.arange(6, dtype=np.int32), parts, 3)
    restored = embedding_ops.parallel_dynamic_stitch(positions, pieces)
    got = _run([*pieces, restored])
    for p in range(3):
        np.testing.assert_array_equal(got[p], data[parts == p])
    np.testing.assert_array_equal(got[3], data)
    weights = RNG.normal(size=(6, 2)).astype(np.float32)
    (grad,) = pv.gradients(pv.reduce_sum(restored * weights), x)
    np.testing.assert_allclose(_run(grad), weights)


def test_dynamic_stitch_later_pieces_win() -> None:
    merged = embedding_ops.dynamic_stitch([[0, 2], [2, 1]], [[1.0, 2.0], [5.0, 6.0]])
    np.testing.assert_array_equal(_run(merged), [1.0, 6.0, 5.0])


def test_dynamic_partition_refuses_partitions_out_of_range() -> None:
    pieces = embedding_ops.dynamic_partition([1.0, 2.0], np.array([0, 3], np.int32), 2)
    with pytest.raises(pv_errors.InvalidArgumentError, match=r"partitions\[1\] = 3"):
        _run(pieces)


# -- dropout -----------------------------------------------------------------------------------
def test_dropout_drops_about_rate_and_scales_the_rest() -> None:
    x = np.ones((200, 100), dtype=np.float32)
    out = _run(pv.nn.dropout(x, rate=0.3))
    dropped = np.mean(out == 0)
    assert abs(dropped - 0.3) < 0.02  # 20000 draws: 5 standard deviations is 0.016
    np.testing.assert_allclose(out[out != 0], 1 / 0.7, rtol=1e-6)


def test_dropout_keep_prob_is_one_minus_rate_and_noise_shape_drops_whole_columns() -> None:
    x = np.ones((50, 400), dtype=np.float32)
    out = _run(pv.nn.dropout(x, keep_prob=0.75, noise_shape=[1, 400]))
    columns = out != 0
    assert (columns == columns[:1]).all()  # one decision per column
    assert abs(columns[0].mean() - 0.75) < 0.11
    np.testing.assert_allclose(out[columns], 1 / 0.75, rtol=1e-6)


def test_dropout_seeds_repeat_across_sessions_and_runs_draw_anew() -> None:
    pv.set_random_seed(11)
    drop = pv.nn.dropout(np.ones((64,), dtype=np.float32), rate=0.5, seed=3)
    first, again = pv.Session().run(drop), pv.Session().run(drop)
    np.testing.assert_array_equal(first, again)
    sess = pv.Session()
    assert not np.array_equal(sess.run(drop), sess.run(drop))


def test_dropout_rate_zero_and_errors() -> None:
    x = pv.constant([1.0, 2.0])
    assert pv.nn.dropout(x, rate=0.0) is x
    for rate in (1.0, -0.5):
        with pytest.raises(ValueError, match=r"range \[0, 1\)"):
            pv.nn.dropout(x, rate=rate)
    with pytest.raises(ValueError, match="must be provided"):
        pv.nn.dropout(x)


# -- embedding_lookup --------------------------------------------------------------------------
TABLE = RNG.normal(size=(7, 3)).astype(np.float32)
IDS = np.array([[6, 0, 3], [2, 2, 5]])


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_embedding_lookup_of_shards_equals_the_tables_rows(strategy: str, shards: int) -> None:
    # "mod" keeps row i in shard i % n at i // n; "div" keeps contiguous ranges, the first
    # shards one row longer (NumPy's array_split).
    if strategy == "mod":
        pieces = [TABLE[p::shards] for p in range(shards)]
    else:
        pieces = np.array_split(TABLE, shards)
    params = [pv.constant(p) for p in pieces] if shards > 1 else pv.constant(TABLE)
    found = pv.nn.embedding_lookup(params, IDS, partition_strategy=strategy)
    assert found.shape.as_list() == [2, 3, 3]
    np.testing.assert_array_equal(_run(found), TABLE[IDS])


def test_embedding_lookup_max_norm_clips_long_rows_only() -> None:
    norms = np.linalg.norm(TABLE, axis=1)
    limit = float(np.median(norms))
    found = _run(pv.nn.embedding_lookup(TABLE, np.arange(7), max_norm=limit))
    scale = np.minimum(1.0, limit / norms)[:, None]
    np.testing.assert_allclose(found, TABLE * scale, rtol=1e-5)


def test_embedding_gradient_is_dense_with_repeated_ids_summed() -> None:
    table = pv.Variable(TABLE)
    weights = RNG.normal(size=(2, 3, 3)).astype(np.float32)
    loss = pv.reduce_sum(pv.nn.embedding_lookup(table, IDS) * weights)
    (grad,) = pv.gradients(loss, [table])
    expected = np.zeros_like(TABLE)
    np.add.at(expected, IDS.reshape(-1), weights.reshape(-1, 3))
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    np.testing.assert_allclose(sess.run(grad), expected, rtol=1e-6)


def test_embedding_on_the_cpu_is_looked_up_there_for_a_reader_on_a_gpu() -> None:
    pv.config.simulate_gpus(2)
    with pv.device("/cpu:0"):
        table = pv.Variable(TABLE, name="emb")
    with pv.device("/gpu:1"):
        rows = pv.nn.embedding_lookup(table, pv.constant([1, 4], name="ids"))
        out = pv.multiply(rows, 2.0, name="out")
    sess = pv.Session()
    sess.run(table.initializer)
    np.testing.assert_allclose(sess.run(out), TABLE[[1, 4]] * 2.0)
    placement = sess.placement
    assert placement["embedding_lookup"] == f"{LOCAL}CPU:0"
    assert placement["embedding_lookup/axis"] == f"{LOCAL}CPU:0"
    assert placement.explain("embedding_lookup").kind == "colocated"
    assert placement["embedding_lookup/Identity"] == f"{LOCAL}GPU:1"
    assert placement["out"] == f"{LOCAL}GPU:1"


def test_embedding_shards_are_gathered_where_each_shard_lives() -> None:
    pv.config.simulate_gpus(2)
    with pv.device("/cpu:0"):
        first = pv.constant(TABLE[0::2], name="shard0")
    with pv.device("/gpu:1"):
        second = pv.constant(TABLE[1::2], name="shard1")
    with pv.device("/gpu:0"):
        found = pv.nn.embedding_lookup([first, second], IDS)
    sess = pv.Session()
    np.testing.assert_array_equal(sess.run(found), TABLE[IDS])
    assert sess.placement["embedding_lookup/GatherV2"] == f"{LOCAL}CPU:0"
    assert sess.placement["embedding_lookup/GatherV2_1"] == f"{LOCAL}GPU:1"
