"""Random draws carry no gradient (TF declares them NotDifferentiable in random_ops.py)."""

from placeviz.graph.grads.registry import not_differentiable

not_differentiable("TruncatedNormal")
