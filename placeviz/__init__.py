"""placeviz: see where a TensorFlow-style computation runs, and why.

TensorFlow 1 code ports by renaming the module: ``import placeviz as pv`` in place of
``import tensorflow as tf``. CuPy is imported only when a session uses a real GPU.
"""

from __future__ import annotations

from placeviz import (
    config,
    contrib,
    debugging,
    distribute,
    errors,
    keras,
    layers,
    linalg,
    math,
    nn,
    random,
    test,
    train,
)
from placeviz.api import missing as _missing
from placeviz.devices.spec import DeviceSpec
from placeviz.dtypes import (
    DType,
    as_dtype,
    bool,
    bool_ref,
    float16,
    float16_ref,
    float32,
    float32_ref,
    float64,
    float64_ref,
    int32,
    int32_ref,
    int64,
    int64_ref,
    string,
    string_ref,
)
from placeviz.events.compare import Comparison, compare
from placeviz.events.trace import Trace
from placeviz.graph.control_flow import cond
from placeviz.graph.control_flow_case import case
from placeviz.graph.core import (
    Graph,
    Operation,
    Tensor,
    executing_eagerly,
    get_default_graph,
    get_default_session,
    reset_default_graph,
)
from placeviz.graph.gradients import gradients
from placeviz.graph.graph_keys import (
    GraphKeys,
    add_to_collection,
    add_to_collections,
    get_collection,
    get_collection_ref,
)
from placeviz.graph.initializers import (
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from placeviz.graph.ops.array_ops import (
    cast,
    concat,
    expand_dims,
    fill,
    gather,
    ones,
    ones_like,
    rank,
    reshape,
    shape,
    size,
    slice,
    split,
    squeeze,
    stack,
    tile,
    transpose,
    unstack,
    zeros,
    zeros_like,
)
from placeviz.graph.ops.clip_ops import (
    clip_by_global_norm,
    clip_by_norm,
    clip_by_value,
    global_norm,
)
from placeviz.graph.ops.constant_op import constant, convert_to_tensor
from placeviz.graph.ops.conv_ops import batch_to_space_nd, space_to_batch_nd
from placeviz.graph.ops.data_flow_ops import ConditionalAccumulator, FIFOQueue
from placeviz.graph.ops.io_ops import placeholder_with_default
from placeviz.graph.ops.linalg_ops import einsum, tensordot
from placeviz.graph.ops.logging_ops import Assert
from placeviz.graph.ops.loss_ops import stop_gradient
from placeviz.graph.ops.math_ops import (
    abs,
    add,
    add_n,
    arange,
    ceil,
    div,
    divide,
    equal,
    erf,
    erfc,
    exp,
    floor,
    floordiv,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matmul,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_sum,
    relu,
    rsqrt,
    sigmoid,
    sqrt,
    square,
    squared_difference,
    subtract,
    tanh,
    where_v2,
)
from placeviz.graph.ops.random_ops import (
    random_normal,
    random_uniform,
    set_random_seed,
    truncated_normal,
)
from placeviz.graph.ops.reverse_ops import reverse, reverse_sequence
from placeviz.graph.ops.selection_ops import argmax, argmin, boolean_mask, cumsum, one_hot, where
from placeviz.graph.ops.state_ops import (
    assign,
    assign_add,
    assign_sub,
    gated_tuple,
    group,
    identity,
    no_op,
    placeholder,
)
from placeviz.graph.scopes import (
    colocate_with,
    control_dependencies,
    device,
    get_name_scope,
    name_scope,
)
from placeviz.graph.shapes import TensorShape
from placeviz.graph.tensor_array import TensorArray
from placeviz.graph.variable_scope import (
    AUTO_REUSE,
    VariableScope,
    get_variable,
    get_variable_scope,
    variable_scope,
)
from placeviz.graph.variables import (
    Variable,
    global_variables,
    global_variables_initializer,
    local_variables,
    local_variables_initializer,
    model_variables,
    report_uninitialized_variables,
    trainable_variables,
    variables_initializer,
)
from placeviz.graph.while_loop import while_loop
from placeviz.runtime.config import ConfigProto, GPUOptions, RunMetadata, RunOptions
from placeviz.runtime.dry_run import ShapedArray
from placeviz.runtime.eager import disable_eager_execution, enable_eager_execution
from placeviz.runtime.remote import register_runner as _register_runner
from placeviz.runtime.session import Session
from placeviz.train.moving_averages import moving_average_variables

InteractiveSession = Session
truediv = divide
tuple = gated_tuple  # TF's names; they shadow the builtins only in this module's namespace
range = arange
reverse_v2 = reverse
sub = subtract
mul = multiply

__version__ = "0.1.0"

# Sessions on grpc://host:port run on a cluster's tasks (imported when a session first needs it).
_register_runner(("grpc", "tcp", "tls"), "placeviz.cluster.master:ClusterMaster")


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext placeviz``: registers the ``%%placement`` cell magic (imports IPython)."""
    from placeviz.magic import load_ipython_extension as load

    load(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab extension lies (for `jupyter labextension develop`)."""
    return [{"src": "labextension", "dest": "placeviz"}]


def __getattr__(name: str) -> object:
    """``pv.PlacementInspector`` imports ipywidgets on first use, not with ``import placeviz``;
    other missing names get ``placeviz.api.missing``'s error, which wraps this function."""
    if name == "PlacementInspector":
        from placeviz.inspector.widget import PlacementInspector

        return PlacementInspector
    raise AttributeError(f"module 'placeviz' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Lists the lazily imported ``PlacementInspector`` too (tab completion, docs/api.md)."""
    return sorted([*globals(), "PlacementInspector"])


_missing.install()  # last: every namespace is imported by now
