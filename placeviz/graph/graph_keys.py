"""Graph collections: TensorFlow's standard collection names (``tf.GraphKeys``), declared once for
every module, and the default graph's collection functions (``tf.add_to_collection``, ...)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from placeviz.graph.core import get_default_graph


class GraphKeys:
    """The keys TF1 code passes to ``add_to_collection``/``get_collection``, spelled as TF does."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES  # TF's deprecated alias
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    CONCATENATED_VARIABLES = "concatenated_variables"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"
    SUMMARIES = "summaries"
    SAVERS = "savers"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    TRAIN_OP = "train_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"


def add_to_collection(name: Any, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: str | Iterable[Any], value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: Any, scope: str | None = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: Any) -> list[Any]:
    return get_default_graph().get_collection_ref(key)
