"""``pv.nn.rnn_cell``: TF1's ``tf.nn.rnn_cell`` namespace."""

from placeviz.rnn.cell import LSTMStateTuple, RNNCell
from placeviz.rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell
from placeviz.rnn.multi_rnn_cell import MultiRNNCell
from placeviz.rnn.wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "MultiRNNCell",
    "RNNCell",
    "ResidualWrapper",
]
