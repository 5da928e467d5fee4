"""Recurrent networks without control flow: TF1's RNN cells and the statically unrolled RNNs
(``pv.nn.rnn_cell``, ``pv.nn.static_rnn``, ``pv.nn.static_bidirectional_rnn``)."""
