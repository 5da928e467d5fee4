"""TensorFlow 1's ``tf.train``: optimizers (synchronous replicas too), the global step, device
setters, cluster specs, savers, monitored sessions, queue runners and their coordinator."""

from __future__ import annotations

from placeviz.cluster.cluster_spec import ClusterDef, ClusterSpec, JobDef
from placeviz.cluster.server import Server
from placeviz.train.adadelta import AdadeltaOptimizer
from placeviz.train.adagrad import AdagradOptimizer
from placeviz.train.adam import AdamOptimizer
from placeviz.train.coordinator import Coordinator
from placeviz.train.device_setter import replica_device_setter
from placeviz.train.gradient_descent import GradientDescentOptimizer
from placeviz.train.hooks import (
    CheckpointSaverHook,
    LoggingTensorHook,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StepCounterHook,
    StopAtStepHook,
)
from placeviz.train.learning_rate_decay import (
    exponential_decay,
    piecewise_constant,
    polynomial_decay,
)
from placeviz.train.momentum import MomentumOptimizer
from placeviz.train.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    WorkerSessionCreator,
)
from placeviz.train.moving_averages import ExponentialMovingAverage
from placeviz.train.optimizer import Optimizer
from placeviz.train.queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from placeviz.train.rmsprop import RMSPropOptimizer
from placeviz.train.saver import (
    CheckpointState,
    Saver,
    SaverDef,
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
    list_variables,
    load_variable,
    update_checkpoint_state,
)
from placeviz.train.sync_replicas_optimizer import SyncReplicasOptimizer
from placeviz.train.training_util import (
    create_global_step,
    get_global_step,
    get_or_create_global_step,
)
